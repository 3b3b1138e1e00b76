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

            A station `batch` made (1000 ms, −8 dBm), with the battery life its interval and TX power give
            (the template found by the image's code; `--template` or `--board` names it):

            ```console
            $ ccbeacon inspect out/Hall_A.hex --battery cr2032
            out/Hall_A.hex: 1840 data bytes, 0x0-0x7F2C
              0x7F08: iBeacon 7634A485-1732-4B7D-AB44-D505D8A24C60 major 1 minor 2 power -59 dBm (flags 0x06)
            found by the image's code: template 'cc2541-ibeacon'
            template 'cc2541-ibeacon': payload at 0x7F08 is iBeacon 7634A485-1732-4B7D-AB44-D505D8A24C60 major 1 minor 2 power -59 dBm
              advertiser address C7:D5:60:AD:5D:5A (random static)
              advertising interval 32753 ticks at 32753 Hz ≈ 1000.0 ms
              TX power -8 dBm (TXPOWER 0xA1)
              measured power -59 dBm: not the default -67 dBm for this TX power (generic default: -59 dBm at 0 dBm, TX power -8 dBm); given or calibrated
              the rest of the image equals the template
              battery: about 243 days on CR2032, average 34.3 µA (an event every 1005.0 ms at -8 dBm; a model, never measured on a board)
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
                """#),
            ManualSection(
                "Battery life",
                #"""
                `--battery cr2032|cr2450|2xaa|MAH` (inspect, generate, plan) estimates how long the
                battery lasts a station of ccbeacon's reference firmware: per advertising event the CPU cycles
                measured in the s51 simulation of that firmware (the template's `advertisingEvent`), the
                crystal's start-up and three packets' radio start-up and time on air, times the CC2541's
                currents, spread over the interval plus the firmware's mean random delay, on top of the PM2
                sleep current; against the battery's usable capacity less its self-discharge. A number
                (`1000`, `1000mah`) is a capacity in mAh, all of it usable; `2032` alone is refused as
                ambiguous. The figures, which are from TI's data sheets and which are
                assumed, are in docs/battery-life.md; the estimate has never been measured on a board. Images
                of other firmware (imported templates), an image whose code is not the template's, or a TX
                power register that is no step of the chip get no estimate, and the line says why. Without
                `--template`, inspect looks for the templates whose code the image holds (user folders
                first; a folder that does not load is noted and skipped), takes one that says what its
                advertising costs before one that does not, and shows it as with `--template` (its folder
                too when it is a user's). `--json` gives `battery` with `template` and `batteryLifeDays`
                (null, with `reason`, when there is none); the `template` object says `foundByCode` and
                its `folder`.
                """#),
        ])
}
