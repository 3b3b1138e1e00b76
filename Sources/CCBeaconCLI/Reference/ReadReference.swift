import CommandLineKit

extension ReadCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon read -o dump.hex
            …
            read 256 KiB from the CC2541F256 on 1:10 to dump.hex
            ```
            """#)
}
