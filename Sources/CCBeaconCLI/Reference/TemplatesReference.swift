import CommandLineKit

extension TemplatesCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon templates --templates my-templates
            ```
            """#)
}
