/// Reads a JSON object field by field for a typed data file: every key is looked up by name,
/// wrong types and ranges are reported with line, column and key path, and `finish()` rejects keys
/// nobody asked for (so a typo in a board file is an error, not a silently ignored setting).
public struct JSONObjectReader {
    /// The file, for errors.
    public let file: String
    /// Key path of this object (`""` for the root, `fields[0]`…).
    public let path: String
    /// The object node.
    public let node: JSONNode
    private let members: [String: JSONNode]
    private var used: Set<String> = []

    /// Wraps `node`, which must be an object.
    public init(_ node: JSONNode, file: String, path: String = "") throws(DataFileError) {
        guard case .object(let list) = node.value else {
            throw DataFileError(
                file: file, line: node.line, column: node.column, keyPath: path,
                message: "expected an object, found \(node.kindDescription)")
        }
        self.file = file
        self.path = path
        self.node = node
        var members: [String: JSONNode] = [:]
        for member in list { members[member.key] = member.value }
        self.members = members
    }

    /// The key path of a member.
    public func path(of key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// An error about a member (or about this object when the member is absent).
    public func error(_ key: String, _ message: String) -> DataFileError {
        let at = members[key] ?? node
        return DataFileError(file: file, line: at.line, column: at.column, keyPath: path(of: key), message: message)
    }

    /// The member node, or `nil` when absent (`null` counts as absent).
    public mutating func optionalNode(_ key: String) -> JSONNode? {
        used.insert(key)
        guard let value = members[key] else { return nil }
        if case .null = value.value { return nil }
        return value
    }

    /// The member node; an error when absent.
    public mutating func requiredNode(_ key: String) throws(DataFileError) -> JSONNode {
        guard let value = optionalNode(key) else { throw error(key, "is missing") }
        return value
    }

    /// A string member of visible text: one holding a hidden character (`HiddenCharacters` — a
    /// line break, an escape, a bidirectional control) is an error at its position, since such
    /// text ends up in terminal lines and tables it could break or disguise.
    public mutating func string(_ key: String) throws(DataFileError) -> String {
        try visible(key, try anyString(key))
    }

    /// An optional string member of visible text (see `string`).
    public mutating func optionalString(_ key: String) throws(DataFileError) -> String? {
        try optionalAnyString(key).map { text throws(DataFileError) in try visible(key, text) }
    }

    /// A string member, whatever it holds: for data ccbeacon wrote itself and must read back
    /// whole (the outcome journal).
    public mutating func anyString(_ key: String) throws(DataFileError) -> String {
        let value = try requiredNode(key)
        guard case .string(let text) = value.value else { throw typeError(key, value, "a string") }
        return text
    }

    /// An optional string member, whatever it holds (see `anyString`).
    public mutating func optionalAnyString(_ key: String) throws(DataFileError) -> String? {
        guard let value = optionalNode(key) else { return nil }
        guard case .string(let text) = value.value else { throw typeError(key, value, "a string") }
        return text
    }

    /// `text`, or an error at `key` naming its first hidden character.
    func visible(_ key: String, _ text: String) throws(DataFileError) -> String {
        guard let hidden = HiddenCharacters.describeFirst(in: text, allowingTab: false) else { return text }
        throw error(key, "holds \(hidden); write it without control or invisible characters")
    }

    /// An integer member within `range`: a JSON number, or a string holding decimal or `0x` hex
    /// (hex addresses read better as strings).
    public mutating func integer(_ key: String, in range: ClosedRange<Int>) throws(DataFileError) -> Int {
        try Self.integer(try requiredNode(key), in: range) { message in error(key, message) }
    }

    /// An optional integer member.
    public mutating func optionalInteger(_ key: String, in range: ClosedRange<Int>) throws(DataFileError) -> Int? {
        guard let value = optionalNode(key) else { return nil }
        return try Self.integer(value, in: range) { message in error(key, message) }
    }

    /// A member that is an object.
    public mutating func object(_ key: String) throws(DataFileError) -> JSONObjectReader {
        try JSONObjectReader(try requiredNode(key), file: file, path: path(of: key))
    }

    /// An optional member that is an object.
    public mutating func optionalObject(_ key: String) throws(DataFileError) -> JSONObjectReader? {
        guard let value = optionalNode(key) else { return nil }
        return try JSONObjectReader(value, file: file, path: path(of: key))
    }

    /// A member that is an array.
    public mutating func array(_ key: String) throws(DataFileError) -> [JSONNode] {
        let value = try requiredNode(key)
        guard case .array(let elements) = value.value else { throw typeError(key, value, "an array") }
        return elements
    }

    /// An optional member that is an array.
    public mutating func optionalArray(_ key: String) throws(DataFileError) -> [JSONNode]? {
        guard optionalNode(key) != nil else { return nil }
        return try array(key)
    }

    /// Rejects any key that was not read.
    public func finish() throws(DataFileError) {
        guard case .object(let list) = node.value else { return }
        if let unknown = list.first(where: { !used.contains($0.key) }) {
            let known = used.sorted().joined(separator: ", ")
            throw DataFileError(
                file: file, line: unknown.value.line, column: unknown.value.column, keyPath: path(of: unknown.key),
                message: "unknown key; the keys here are: \(known)")
        }
    }

    private func typeError(_ key: String, _ value: JSONNode, _ expected: String) -> DataFileError {
        DataFileError(
            file: file, line: value.line, column: value.column, keyPath: path(of: key),
            message: "expected \(expected), found \(value.kindDescription)")
    }

    /// Reads an integer from a number or a decimal/`0x` string.
    public static func integer(
        _ node: JSONNode, in range: ClosedRange<Int>, error: (String) -> DataFileError
    ) throws(DataFileError) -> Int {
        let text: String
        switch node.value {
        case .number(let raw): text = raw
        case .string(let raw): text = raw
        default: throw error("expected a number, found \(node.kindDescription)")
        }
        let allowed =
            "\(range.lowerBound)…\(range.upperBound)" + (range.upperBound > 255 ? " (or a \"0x…\" string)" : "")
        guard let value = parseInteger(text) else {
            throw error("'\(text)' is not a whole number; allowed: \(allowed)")
        }
        guard range.contains(value) else { throw error("\(text) is out of range; allowed: \(allowed)") }
        return value
    }

    /// Decimal (optionally negative) or `0x` hex, at most 15 digits; `nil` otherwise.
    public static func parseInteger(_ text: String) -> Int? {
        var digits = Substring(text)
        var negative = false
        if digits.hasPrefix("-") {
            negative = true
            digits = digits.dropFirst()
        }
        let hex = digits.hasPrefix("0x") || digits.hasPrefix("0X")
        if hex { digits = digits.dropFirst(2) }
        guard !digits.isEmpty, digits.count <= 15 else { return nil }
        var value = 0
        for character in digits {
            guard character.isASCII, let digit = hex ? character.hexDigitValue : character.wholeNumberValue else {
                return nil
            }
            value = value * (hex ? 16 : 10) + digit
        }
        return negative ? -value : value
    }
}
