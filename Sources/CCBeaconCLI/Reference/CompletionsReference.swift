import CommandLineKit

extension CompletionsCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon completions bash > ccbeacon.bash
            ```
            """#)
}
