/// A JSON value to write, with ordered object keys, so machine-readable output is stable across runs.
public enum JSONValue: Equatable, Sendable {
    /// A string.
    case string(String)
    /// An integer.
    case integer(Int)
    /// A number with a fraction, written in the shortest form that reads back as the same value
    /// (`0.5`, `-60.45`); one that is not finite is written `null`, as JSON has no such number.
    case number(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// An array.
    case array([JSONValue])
    /// An object with members in this order.
    case object([(String, JSONValue)])

    /// Equal when they render the same.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.rendered() == rhs.rendered() }

    /// Pretty-printed with two-space indentation.
    public func rendered(indent: String = "") -> String {
        let inner = indent + "  "
        switch self {
        case .string(let text): return Self.quote(text)
        case .integer(let value): return String(value)
        case .number(let value):
            guard value.isFinite else { return "null" }
            return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        case .array(let values):
            if values.isEmpty { return "[]" }
            return "[\n" + values.map { inner + $0.rendered(indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            return "{\n"
                + members.map { inner + Self.quote($0.0) + ": " + $0.1.rendered(indent: inner) }.joined(
                    separator: ",\n")
                + "\n\(indent)}"
        }
    }

    /// On one line, without spaces: one record of a JSON Lines file.
    public func compact() -> String {
        switch self {
        case .array(let values): return "[" + values.map { $0.compact() }.joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.map { Self.quote($0.0) + ":" + $0.1.compact() }.joined(separator: ",") + "}"
        default: return rendered()
        }
    }

    static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            // Every hidden character (`HiddenCharacters`: controls, the line and paragraph
            // separators JavaScript takes for line ends, bidirectional controls and the other
            // invisible ones) as \u escapes, a pair for those above U+FFFF: a JSON line stays one
            // line, a terminal showing it never receives a raw control, and the data is kept whole.
            case _ where HiddenCharacters.isHidden(scalar):
                for unit in String(scalar).utf16 {
                    let digits = String(unit, radix: 16)
                    result += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
                }
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
