import CommandLineKit

extension TemplatesCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon templates --templates my-templates
            TEMPLATE                    CHIP        PAYLOAD  SOURCE  …  DESCRIPTION
            lab13                       CC2541F256  0x32A    my-templates  imported from SimpleBLEPeripheral_ibeacon.hex
            cc2541-ibeacon              CC2541F256  0x7F08   bundled …ccbeacon reference firmware (SDCC): stack-free BLE advertising on 37/38/39, PDU block at 0x7F00
            …
            ```
            """#)
}
