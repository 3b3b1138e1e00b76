/// The part of a command's man page beyond its help (`details`): worked examples and reference
/// sections, written in the small Markdown subset `Manual.roff(markdown:)` renders. Every
/// ` ```console ` block in them is run by the tests (`ReadmeExampleTests`), as the README's are.
public struct ManualPage: Sendable {
    /// The EXAMPLES section: paragraphs and console blocks.
    public var examples: String
    /// Further sections after OPTIONS, in order (EVENTS, ENVIRONMENT, FILES, …).
    public var sections: [ManualSection]

    /// A page part; empty when the help says everything.
    public init(examples: String = "", sections: [ManualSection] = []) {
        self.examples = examples
        self.sections = sections
    }

    /// Every text of the page part, examples first.
    package var texts: [String] { [examples] + sections.map(\.text) }
}

/// One section of a man page: its title (upper case on the page) and its text in Markdown.
public struct ManualSection: Sendable {
    /// The heading, as `.SH` shows it.
    public var title: String
    /// The body, in the subset `Manual.roff(markdown:)` renders.
    public var text: String

    /// A section called `title`.
    public init(_ title: String, _ text: String) {
        self.title = title
        self.text = text
    }
}

extension Manual {
    /// `markdown` as roff. The subset: paragraphs parted by blank lines; ` ``` ` fenced blocks
    /// (shown as they are); `### Title` subsections; `- ` bullets (indented lines continue
    /// them); `1. ` numbered items; tables of `|` rows after a header row and a `|---|` delimiter
    /// row (each row becomes a tagged paragraph: the first cell as tag, the second as text, later
    /// cells as `Header: cell`; a `|` line without them is text); inline `` `code` `` (as it
    /// is) and `**strong**` in bold, `[text](link)` as its text, `\*` as `*`.
    package static func roff(markdown: String) -> String {
        var result = ""
        var fenced = false
        var table: [[String]] = []
        // The paragraph or bullet being gathered: its request and its text so far (inline markup
        // may span its lines, so it is rendered whole).
        var running: (request: String, text: String)?
        func flush() {
            if let (request, text) = running { result += request + inline(text) + "\n" }
            running = nil
            guard table.count > 1 else {
                table = []
                return
            }
            let header = table[0]
            for row in table.dropFirst(2) {
                var text = row.count > 1 ? row[1] : ""
                for (index, cell) in row.enumerated().dropFirst(2) where !cell.isEmpty {
                    text += "; " + (index < header.count ? header[index] + ": " : "") + cell
                }
                result += ".TP\n" + inline(row.first ?? "") + "\n" + inline(text) + "\n"
            }
            table = []
        }
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        for (number, line) in lines.enumerated() {
            // A `|` line is a table's only where one is open or a delimiter row follows it
            // (`|---|`); else it is text.
            let delimiterFollows =
                number + 1 < lines.count && lines[number + 1].hasPrefix("|") && lines[number + 1].contains("---")
            let listNumber = line.prefix { $0.isASCII && $0.isNumber }
            if line.hasPrefix("```") {
                flush()
                result += fenced ? ".RE\n.fi\n" : ".PP\n.nf\n.RS 2\n"
                fenced.toggle()
            } else if fenced {
                result += text(line) + "\n"
            } else if line.hasPrefix("|"), !table.isEmpty || delimiterFollows {
                if running != nil { flush() }
                table.append(cells(of: line))
            } else if line.allSatisfy(\.isWhitespace) {
                flush()
            } else if line.hasPrefix("### ") {
                flush()
                result += ".SS " + text(line.dropFirst(4)) + "\n"
            } else if line.hasPrefix("- ") {
                flush()
                running = (".IP \\(bu 2\n", String(line.dropFirst(2)))
            } else if !listNumber.isEmpty, line.dropFirst(listNumber.count).hasPrefix(". ") {
                flush()
                running = (".IP \(listNumber). 4\n", String(line.dropFirst(listNumber.count + 2)))
            } else if let gathered = running {
                running = (gathered.request, gathered.text + " " + line.drop { $0 == " " })
            } else {
                flush()
                running = (".PP\n", String(line))
            }
        }
        flush()
        if fenced { result += ".RE\n.fi\n" }
        return result
    }

    /// A table row's cells, trimmed; a `|` inside backticks, or written `\\|`, belongs to the cell.
    package static func cells<S: StringProtocol>(of line: S) -> [String] {
        var cells: [String] = []
        var current = ""
        var inCode = false
        var escaped = false
        for character in line.dropFirst() {
            if escaped {
                current.append(character)
                escaped = false
                continue
            }
            if character == "\\", !inCode {
                escaped = true
                continue
            }
            if character == "`" { inCode.toggle() }
            if character == "|", !inCode {
                cells.append(String(current.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()))
                current = ""
            } else {
                current.append(character)
            }
        }
        return cells
    }

    /// Running text: code and strong text in bold, links as their text, the rest
    /// escaped as `text` does.
    package static func inline<S: StringProtocol>(_ line: S) -> String {
        var result = ""
        var plain = ""
        var strong = false
        var characters = Substring(line)
        func flushPlain() {
            result += escaped(plain)
            plain = ""
        }
        while let character = characters.first {
            // Code is shown as it is (no markup inside it), in bold — already bold inside strong
            // text. A lone backtick is text.
            if character == "`", let close = characters.dropFirst().firstIndex(of: "`") {
                flushPlain()
                let code = escaped(String(characters[characters.index(after: characters.startIndex)..<close]))
                result += strong ? code : "\\fB" + code + "\\fR"
                characters = characters[characters.index(after: close)...]
                continue
            }
            // Strong text opens only where it closes in the same text; a lone `**` is text.
            if characters.hasPrefix("**"), strong || characters.dropFirst(2).firstRange(of: "**") != nil {
                flushPlain()
                result += strong ? "\\fR" : "\\fB"
                strong.toggle()
                characters = characters.dropFirst(2)
                continue
            }
            // A backslash before punctuation shows that character (`\*`, `\|`).
            if character == "\\", let next = characters.dropFirst().first, next.isASCII,
                next.isPunctuation || next.isSymbol
            {
                plain.append(next)
                characters = characters.dropFirst(2)
                continue
            }
            if character == "[", let close = characters.firstIndex(of: "]"),
                characters[characters.index(after: close)...].hasPrefix("("),
                let end = characters[close...].firstIndex(of: ")")
            {
                plain += characters[characters.index(after: characters.startIndex)..<close]
                characters = characters[characters.index(after: end)...]
                continue
            }
            plain.append(character)
            characters = characters.dropFirst()
        }
        flushPlain()
        if strong { result += "\\fR" }
        if result.hasPrefix(".") || result.hasPrefix("'") { result = "\\&" + result }
        return result
    }

    /// `piece` escaped as `text` does, without its rule for a line's first character.
    package static func escaped(_ piece: String) -> String {
        let result = text(piece)
        return result.hasPrefix("\\&") ? String(result.dropFirst(2)) : result
    }
}
