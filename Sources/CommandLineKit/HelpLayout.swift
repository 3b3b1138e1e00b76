/// Help as a terminal shows it: no line wider than `width` columns, a long line broken at its
/// spaces with its continuation indented. Lines already short enough are left as written, so
/// hand-made layout (lists) stays as it is, and an example command line is never broken, so it
/// can be copied whole.
public enum HelpLayout {
    /// The columns help is laid out for.
    public static let width = 100

    /// `line` broken at spaces into lines of at most `width` columns; the lines after the first
    /// begin with `indent` spaces (by default as many as `line` begins with). With
    /// `keepingGroups` (a usage line), a space inside `[…]` or `(…)`, or after an option's name,
    /// is no place to break: each term (`[--verify crc|read]`, `--uuid UUID`) stays whole. A word
    /// (or term) wider than the room left stands on a line of its own, whole.
    public static func wrap(_ line: String, width: Int = width, indent: Int? = nil, keepingGroups: Bool = false)
        -> [String]
    {
        let characters = Array(line)
        guard characters.count > width else { return [line] }
        let leading = characters.prefix { $0 == " " }.count
        let prefix = [Character](repeating: " ", count: indent ?? leading)
        var lines: [String] = []
        var rest = characters
        // A break is looked for past the line's own indentation, so it never yields a blank line.
        var start = leading
        while rest.count > width, start < width {
            let breaks = breakPoints(rest, from: start, keepingGroups: keepingGroups)
            guard let space = breaks.last(where: { $0 <= width }) ?? breaks.first else { break }
            lines.append(String(rest[..<space]))
            rest = prefix + rest[space...].drop { $0 == " " }
            start = prefix.count
        }
        lines.append(String(rest))
        return lines
    }

    /// Every line of `text` wrapped as `wrap(_:width:indent:keepingGroups:)` does with its
    /// default indent, but for example command lines (`ccbeacon …` or `$ …` after any
    /// indentation), which stay whole.
    public static func wrap(text: String, width: Int = width) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .flatMap { line -> [String] in
                let content = line.drop { $0 == " " }
                if content.hasPrefix("ccbeacon ") || content.hasPrefix("$ ") { return [String(line)] }
                return wrap(String(line), width: width)
            }
            .joined(separator: "\n")
    }

    /// Where `line` may break after `start`: the first space of each run of spaces (outside
    /// brackets, with `keepingGroups`).
    static func breakPoints(_ line: [Character], from start: Int, keepingGroups: Bool) -> [Int] {
        var depth = 0
        var points: [Int] = []
        for index in line.indices {
            switch line[index] {
            case "[", "(": depth += 1
            case "]", ")": depth = max(0, depth - 1)
            case " " where index > start && line[index - 1] != " ":
                guard keepingGroups else {
                    points.append(index)
                    continue
                }
                // The word before the space: an option's name keeps its value beside it.
                let word = line[..<index].reversed().prefix { $0 != " " }
                if depth == 0, word.last != "-" { points.append(index) }
            default: break
            }
        }
        return points
    }
}
