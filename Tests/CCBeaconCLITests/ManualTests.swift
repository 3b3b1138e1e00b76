import Foundation
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// The man pages and completions come from the option tables: every command and option is in
/// them, groff finds nothing to warn about, and the shells read the scripts — bash's is driven
/// with real prefixes.
struct ManualTests {
    static func installed(_ path: String) -> Bool { FileManager.default.isExecutableFile(atPath: path) }

    @Test func everyCommandHasAPageWithEveryOption() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let run = ToolRun(["man-pages", "-o", scratch.path("man")])
        #expect(run.status == 0, "\(run.diagnostics)")
        let pages = try FileManager.default.contentsOfDirectory(atPath: scratch.path("man")).sorted()
        #expect(pages.count == CommandLineTool.commands.count + 1)
        for spec in CommandLineTool.commands {
            let page = try String(
                contentsOfFile: scratch.path("man/\(CommandLineTool.manual.pageName(spec.name)).1"), encoding: .utf8)
            #expect(page.contains(".TH \(Manual.text(CommandLineTool.manual.pageName(spec.name).uppercased())) 1"))
            #expect(page.contains(Manual.text(spec.summary)))
            for option in spec.options {
                #expect(page.contains("\\fB\(Manual.text(option.name))\\fR"), "\(spec.name): \(option.name)")
            }
            #expect(page.unicodeScalars.allSatisfy { $0.isASCII }, "ASCII whatever the locale")
        }
        let overview = try String(contentsOfFile: scratch.path("man/ccbeacon.1"), encoding: .utf8)
        #expect(CommandLineTool.commands.allSatisfy { overview.contains(".B " + Manual.text($0.name)) })
    }

    /// groff -ww (every warning) and man --warnings find nothing in any page.
    @Test(.enabled(if: installed("/usr/bin/groff"), "needs groff (groff-base)"))
    func groffFindsNothingToWarnAbout() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        #expect(ToolRun(["man-pages", "-o", scratch.path("man")]).status == 0)
        for page in try FileManager.default.contentsOfDirectory(atPath: scratch.path("man")) {
            let groff = try ChildProcess.run(
                "/usr/bin/groff", ["-ww", "-man", "-Tutf8", scratch.path("man/" + page)], in: scratch.url)
            #expect(groff.status == 0 && groff.errors.isEmpty, "\(page): \(groff.errors)")
            if Self.installed("/usr/bin/man") {
                let man = try ChildProcess.run(
                    "/usr/bin/man", ["--warnings", "-l", scratch.path("man/" + page)], in: scratch.url,
                    environment: ["MANPAGER": "cat", "MANWIDTH": "80", "PATH": "/usr/bin:/bin"])
                #expect(man.errors.isEmpty, "\(page): \(man.errors)")
            }
        }
    }

    /// The Markdown of the man pages' examples and reference sections, as roff: each construct
    /// of the subset with the exact request it becomes.
    @Test(arguments: [
        ("one\ntwo", ".PP\none two\n"),
        ("a\n\nb", ".PP\na\n.PP\nb\n"),
        ("`--json` for **machines**", ".PP\n\\fB\\-\\-json\\fR for \\fBmachines\\fR\n"),
        ("**`ledger check`** on a server", ".PP\n\\fBledger check\\fR on a server\n"),
        ("code `across\nlines` ok", ".PP\ncode \\fBacross lines\\fR ok\n"),
        ("a lone ` stays", ".PP\na lone ` stays\n"),
        ("see [Testing](docs/testing.md).", ".PP\nsee Testing.\n"),
        (". not a request", ".PP\n\\&. not a request\n"),
        ("- first\n  goes on\n- second", ".IP \\(bu 2\nfirst goes on\n.IP \\(bu 2\nsecond\n"),
        ("### Title", ".SS Title\n"),
        ("```console\n$ ccbeacon x --y\n.dot\n```", ".PP\n.nf\n.RS 2\n$ ccbeacon x \\-\\-y\n\\&.dot\n.RE\n.fi\n"),
        (
            "| option | accepts | default |\n|---|---|---|\n| `--a` | 1 \\| 2 | `x|y` |",
            ".TP\n\\fB\\-\\-a\\fR\n1 | 2; default: \\fBx|y\\fR\n"
        ),
        ("text\n| h | i |\n|---|---|\n| a | b |\nafter", ".PP\ntext\n.TP\na\nb\n.PP\nafter\n"),
        // Found by the review: code keeps its stars and brackets; a line starting with `|` that
        // is no table stays text; numbered lists; a backslash escape shows its character.
        ("`**/*.hex` and `2**8`", ".PP\n\\fB**/*.hex\\fR and \\fB2**8\\fR\n"),
        ("`a[0](b)`", ".PP\n\\fBa[0](b)\\fR\n"),
        ("Some text\n| tee out.log\nand more", ".PP\nSome text | tee out.log and more\n"),
        ("1. one\n2. two\n   goes on", ".IP 1. 4\none\n.IP 2. 4\ntwo goes on\n"),
        ("a \\* b", ".PP\na * b\n"),
    ])
    func markdownBecomesRoff(markdown: String, roff: String) {
        #expect(Manual.roff(markdown: markdown) == roff)
    }

    /// `man` escaping: what could end a line's text early or start a request is written so that
    /// the text reads as given.
    @Test func roffTextIsEscaped() {
        #expect(Manual.text(".SH NOT A HEADING") == "\\&.SH NOT A HEADING")
        #expect(Manual.text("'quote first") == "\\&'quote first")
        #expect(Manual.text("back\\slash --flag") == "back\\eslash \\-\\-flag")
        #expect(Manual.text("caf\u{E9} \u{2014}") == "caf\\[u00E9] \\[u2014]")
    }

    /// The bash completion, sourced by bash and driven as bash does at each prefix.
    @Test(
        .enabled(if: installed("/bin/bash"), "needs bash"),
        arguments: [
            ("ccbeacon pro", ["provision"]),
            ("ccbeacon provision --ver", ["--verify"]),
            ("ccbeacon provision --verify ", ["crc", "read"]),
            ("ccbeacon provision --address-mode ", ["template", "secondary"]),
            ("ccbeacon ledger ", ["show", "export", "check", "migrate"]),
            ("ccbeacon ledger show --le", ["--ledger"]),
            ("ccbeacon completions ", ["bash", "zsh", "fish"]),
            ("ccbeacon labels --sheet a4", ["a4-3x8", "a4-3x7"]),
            ("ccbeacon help led", ["ledger"]),
            ("ccbeacon provision --bench ", []),
        ])
    func bashCompletesEachPrefix(line: String, expected: [String]) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let script = try scratch.write("ccbeacon.bash", ToolRun(["completions", "bash"]).output)
        let driver = try scratch.write(
            "drive.sh",
            """
            source "$1"
            COMP_WORDS=($2)
            case "$2" in *" ") COMP_WORDS+=("") ;; esac
            COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            _ccbeacon
            printf '%s\\n' "${COMPREPLY[@]}"
            """)
        let run = try ChildProcess.run("/bin/bash", [driver, script, line], in: scratch.url)
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.split(separator: "\n").map(String.init) == expected, "\(line)")
    }

    /// Every option of every command is offered after its command, in all three scripts.
    @Test func everyOptionIsInEveryScript() {
        let bash = CommandLineTool.manual.bash()
        let zsh = CommandLineTool.manual.zsh()
        let fish = CommandLineTool.manual.fish()
        for spec in CommandLineTool.commands {
            // The command's own case in the bash script: its options' word list.
            let section =
                bash.components(separatedBy: "        \"\(spec.name)\")\n").dropFirst().first?
                .components(separatedBy: "\n            ;;\n").first ?? ""
            let words =
                section.split(separator: "\n").first { $0.contains("compgen -W \"--") }.map {
                    Set($0.split(whereSeparator: { $0 == " " || $0 == "\"" }).map(String.init))
                } ?? []
            for option in spec.options {
                #expect(words.contains(option.name), "bash \(spec.name) \(option.name)")
                #expect(zsh.contains("'\(option.name)["), "zsh \(spec.name) \(option.name)")
                #expect(fish.contains("-l \(option.name.dropFirst(2))"), "fish \(spec.name) \(option.name)")
            }
        }
    }

    @Test(arguments: [("zsh", "/usr/bin/zsh"), ("fish", "/usr/bin/fish")])
    func theShellReadsItsScript(shell: String, path: String) throws {
        guard Self.installed(path) else { return }  // scripts/test installs both
        let scratch = try Scratch()
        defer { scratch.remove() }
        let script = try scratch.write("ccbeacon.\(shell)", ToolRun(["completions", shell]).output)
        let check = try ChildProcess.run(path, ["-n", script], in: scratch.url)
        #expect(check.status == 0 && check.errors.isEmpty, "\(check.errors)")
    }

    @Test func anUnknownShellIsAUsageError() {
        let run = ToolRun(["completions", "tcsh"])
        #expect(run.status == 64 && run.diagnostics.contains("give bash, zsh or fish"))
    }

    @Test func theVersionComesFromTheVersionFile() throws {
        let file = try String(
            contentsOf: SharedFixtures.checkout.appendingPathComponent("VERSION"), encoding: .utf8)
        #expect(CommandLineTool.version == file.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(ToolRun(["--version"]).output == "ccbeacon \(CommandLineTool.version)\n")
    }
}
