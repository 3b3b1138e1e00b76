import CommandLineKit

extension GenerateCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon generate --template cc2541-ibeacon --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 2 --interval 250 --tx-power -6 -o hall-a.hex
            wrote hall-a.hex: iBeacon 7634A485-1732-4B7D-AB44-D505D8A24C60 major 1 minor 2 power -65 dBm at 0x7F08, template 'cc2541-ibeacon', rewrote lines 111, 112, 113, 114
            advertiser address C7:D5:60:AD:5D:5A (random static)
            advertising interval 8189 ticks at 32753 Hz ≈ 250.0 ms
            TX power -6 dBm (TXPOWER 0xB1)
            measured power -65 dBm (generic default: -59 dBm at 0 dBm, shifted by the -6 dBm TX power)
            ```

            How long a CR2032 lasts that station at one event a second (the model of docs/battery-life.md,
            never measured on a board):

            ```console
            $ ccbeacon generate --template cc2541-ibeacon --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 2 --interval 1000 -o hall-a.hex --battery cr2032
            wrote hall-a.hex: iBeacon 7634A485-1732-4B7D-AB44-D505D8A24C60 major 1 minor 2 power -59 dBm at 0x7F08, template 'cc2541-ibeacon', rewrote lines 111, 112, 113, 114
            advertiser address C7:D5:60:AD:5D:5A (random static)
            advertising interval 32753 ticks at 32753 Hz ≈ 1000.0 ms
            TX power 0 dBm (TXPOWER 0xE1)
            measured power -59 dBm (generic default: -59 dBm at 0 dBm, shifted by the 0 dBm TX power)
            battery: about 243 days on CR2032, average 34.3 µA (an event every 1005.0 ms at 0 dBm; a model, never measured on a board)
            ```
            """#,
        sections: [
            ManualSection(
                "Template and settings",
                #"""
                The template's image sha256 and placeholder bytes are checked first. The output differs from the
                template only in the records that hold the payload (and, for OAD templates, the header's CRC,
                which is recomputed). `--bin OUT.bin` also writes a flat binary from address 0. `--board hm10`
                instead of `--template` uses the board's default template. A template or board that does not exist
                is a usage error (exit 64) for every command that takes one, and the message lists those there are.

                Templates that expose them (the bundled `cc2541-ibeacon` does; imported TI-stack images do not)
                also take the advertising settings, each checked before anything is written:

                | option | accepts | default |
                |---|---|---|
                | `--address XX:XX:XX:XX:XX:XX` | a random static address: top two bits 1 (first byte C0…FF), the other 46 bits neither all 0 nor all 1 | an address derived from the station's identity (SHA-256), so every station has its own and a re-run gives the same |
                | `--interval MS` | 20 … 10240 ms in the spec's 0.625 ms steps (`100`, `152.5`), written in decimal with any number of digits (`0100.625` and `100.6250` are 100.625; no sign, exponent or comma); ADV_NONCONN_IND needs ≥ 100 ms on Bluetooth 4.x scanners, ≥ 20 ms from 5.0 | the template's (100 ms) |
                | `--tx-power DBM` | one of the chip's steps from `boards/chips.json`: 0, −2 … −20, −23 dBm on the CC2541 | the template's (0 dBm) |

                Anything else is refused with exit 64 and the reason ("101 ms is not a multiple of 0.625 ms; the
                nearest are 100.625 and 101.25", also for `100.0625`: "the nearest are 100 and 100.625", "−5 dBm is not a TX power step of the CC2541F256; its steps are
                …"). A setting the template has no field for is refused, never silently dropped.
                """#)
        ])
}
