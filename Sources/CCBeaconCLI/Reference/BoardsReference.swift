import CommandLineKit

extension BoardsCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon boards
            BOARD                 CHIP        DEBUGGER                                   TEMPLATE        DESCRIPTION
            cc2541-keyfob         CC2541F256  CC Debugger (0451:16A2)                    cc2541-ibeacon  TI CC2541 keyfob (CC2541DK-MINI)
            …
            hm10                  CC2541F256  CC Debugger (0451:16A2)                    cc2541-ibeacon  HM-10 BLE module (JNHuaMao, CC2541)
            …
            ```
            """#)
}
