import CommandLineKit

extension VerifyCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon verify out/Hall_A.hex --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 3 --template cc2541-ibeacon
            MISMATCH: out/Hall_A.hex
              minor: expected 3, found 2
            ```
            """#,
        sections: [
            ManualSection(
                "What is checked",
                #"""
                Exit 0 only when the image carries exactly that identity: with a template, at the template's
                payload address, with the template's header bytes, every other byte equal to the template, and a
                valid OAD CRC where there is one; without a template, the image must hold exactly one iBeacon
                block. Without `--power` the power is not checked (and the note says so). `--json` for machines;
                without `--power` its `expected` has no `power`, `powerChecked` is false, and `found` shows the
                power the image carries.
                With a template that has them, `--address`, `--interval` and `--tx-power` are checked too; without
                them the image's values only have to be valid (a random static address, one of the chip's power
                steps) and are printed as notes.
                """#)
        ])
}
