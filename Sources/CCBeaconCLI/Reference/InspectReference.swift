import CommandLineKit

extension InspectCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon inspect 01_ghostyu-SimpleBLEPeripheral-ibeacon-CC2541-IAR.hex
            01_ghostyu-SimpleBLEPeripheral-ibeacon-CC2541-IAR.hex: 107903 data bytes, 0x0-0x1A602
              0x32A: iBeacon E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 major 1 minor 2 power -51 dBm (flags 0x06)
            ```
            """#,
        sections: [
            ManualSection(
                "What it finds",
                #"""
                Finds every iBeacon, AltBeacon and Eddystone payload in the image's memory, and an OAD header with
                its CRC state: the header is found by its structure (a set CRC, an unset or equal shadow CRC, a
                length that fits the flash, erased reserved bytes), so an image changed after its header was made
                shows `CRC 0x… does not match the image (computed 0x…)` (`"crcValid": false` with `--json`). With `--template` it also says whether the rest of the image equals the template,
                and shows the advertiser address, interval and TX power of templates that have them.
                """#)
        ])
}
