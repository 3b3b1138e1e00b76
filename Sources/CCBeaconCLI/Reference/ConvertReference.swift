import CommandLineKit

extension ConvertCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon convert firmware.hex -o firmware.bin --range 0:0x40000
            wrote firmware.bin: 107903 data bytes in 11 segments, 0x00000-0x1A602, 262144 bytes
            ```
            """#,
        sections: [
            ManualSection(
                "Formats",
                #"""
                Formats follow the extensions (`.hex`/`.ihx`/`.ihex`, `.bin`). `.bin` output covers the lowest to
                the highest address, or `--range START:END` (END exclusive), with gaps filled by `--fill`
                (default 0xFF, erased flash). A `.bin` input loads at `--base` (default 0). HEX output uses
                `--record-length` bytes per record (default 16), aligned, never across a 64 KiB boundary, an 04
                record per 64 KiB page when the image goes above 64 KiB, and keeps the start address. `--fill` on
                HEX output closes the gaps inside the range. A `.bin` export larger than 64 MiB is refused (it
                usually means a stray byte far away; give a range). `convert`, `inspect`, `verify` and `flash` read
                a HEX file's records straight into memory, keeping no table of its lines (only `patch` and
                templates need one): a 184 MB HEX file peaks at 1.5× its size (256 MiB), where it took 3.6×.
                """#)
        ])
}
