import CommandLineKit

extension EraseCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon erase
            erased the chip on 1:10
            ```
            """#)
}
