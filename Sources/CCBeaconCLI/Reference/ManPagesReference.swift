import CommandLineKit

extension ManPagesCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon man-pages -o man
            wrote … man pages into man
            ```
            """#,
        sections: [
            ManualSection(
                "What they hold",
                #"""
                `completions bash|zsh|fish` prints a completion script; `man-pages -o DIR` writes `ccbeacon.1` and
                a page per command (`ccbeacon-provision.1`, `ccbeacon-ledger-show.1`, …). Both are made from the
                same option tables as the parser and `--help`, so a new option is in them with nothing written
                twice: commands and a group's subcommands, every option with its help, the values of options with a
                fixed set (`--verify crc|read`, `--address-mode template|secondary`, the named sheets of
                `labels --sheet`), and files where files go. The pages are ASCII roff (anything else as
                `\[uXXXX]`), checked by `groff -ww` and `man --warnings` in the tests; the bash script is sourced
                and driven at real prefixes, and zsh and fish read theirs (`ManualTests`). `ccbeacon --version`
                prints the version from the `VERSION` file, compiled in by the `VersionFile` build plugin — the
                one place it is written. It is one line, a native Debian version: `1.2.3`, or `1.2.3~rc1` for a
                release candidate (which sorts before `1.2.3`); anything else, a `-` included, fails the build.
                """#)
        ])
}
