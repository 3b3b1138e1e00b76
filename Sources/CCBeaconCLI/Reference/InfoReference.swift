import CommandLineKit

extension InfoCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon info
            debugger 1:10: CC Debugger
            target: CC2541F256 (chip ID 0x41, revision 0x13)
            flash: 256 KiB, RAM: 8 KiB, debug lock: off
            primary IEEE address: 00:12:4B:00:25:41
            secondary address: none (erased)
            ```
            """#)
}
