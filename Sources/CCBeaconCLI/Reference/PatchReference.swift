import CommandLineKit

extension PatchCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon patch template.hex --at 0x333 --bytes 7634A48517324B7DAB44D505D8A24C6000030004C5 -o station.hex
            wrote station.hex: rewrote lines 50, 51
            ```
            """#,
        sections: [
            ManualSection(
                "What changes",
                #"""
                Only the records that hold a changed byte are rewritten (data digits and checksum). Line endings,
                digit case, record order and lengths, blank lines and the start record stay byte for byte, so a
                21-byte iBeacon payload in a real IAR image is a two-line diff, where intelhex and srec_cat
                rewrite about 4,000 lines. The bytes must already be in the file.

                All output files are written atomically (temporary file, `fsync`, rename): a crash leaves the old
                file or the new one, never half of one.
                """#)
        ])
}
