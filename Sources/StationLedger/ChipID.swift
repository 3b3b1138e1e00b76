/// The rule for the chip ids a ledger records: a chip's primary IEEE address as ccbeacon reads it
/// from the info page, `XX:XX:XX:XX:XX:XX` in upper-case hex, most significant byte first.
///
/// All-FF (`FF:FF:FF:FF:FF:FF`, an erased or unprogrammed info page) and all-zero
/// (`00:00:00:00:00:00`, an invalid IEEE address) are refused: many chips can show them, so they
/// cannot tell one chip from another, and recording one would make the next such chip look like it
/// already carries a station. The ledger's database enforces the same rule (`sqlCondition`), so a
/// caller that skips `isValid` is still refused, with `LedgerError.Kind.invalidChipID`.
public enum ChipID {
    /// True when `text` can identify a chip: six upper-case hex byte pairs separated by colons,
    /// neither all `00` nor all `FF`.
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 17 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index % 3 == 2 {
                guard byte == UInt8(ascii: ":") else { return false }
            } else {
                guard
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                        || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
                else { return false }
            }
        }
        return !reserved.contains(text)
    }

    /// The two well-formed ids that identify no chip.
    static let reserved = ["00:00:00:00:00:00", "FF:FF:FF:FF:FF:FF"]

    /// The same rule as an SQL condition over `column` in `dialect`: true for a valid id, false
    /// otherwise (also for NULL and, in SQLite, values that are not text). Case-sensitive, so
    /// lower-case hex fails too.
    package static func sqlCondition(_ column: String, _ dialect: SQLDialect) -> String {
        let refused = reserved.map { "'\($0)'" }.joined(separator: ", ")
        let conditions = [
            dialect.isText(column), dialect.matchesHex(column, Array(repeating: 2, count: 6), ":"),
            "\(column) NOT IN (\(refused))",
        ]
        return "coalesce(\(conditions.compactMap { $0 }.joined(separator: " AND ")), \(dialect.falseValue))"
    }

    /// The message the schema's triggers raise; SQLite reports it as the error message, which is
    /// how a refusal of this rule is told from other constraint failures.
    public static let refusal = "invalid chip id: not XX:XX:XX:XX:XX:XX in upper-case hex, or all 00 or all FF"
}
