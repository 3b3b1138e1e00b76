/// One of the ledger's invariants as `ledger check` tests it, written once for both databases: a
/// query for the rows that break it, over tables read without their indexes (the unique indexes
/// are what could be damaged or missing, so they must not be the ones answering).
package struct LedgerInvariant: Sendable {
    /// What the invariant is.
    package var check: LedgerProblem.Check
    /// What the ledger must have for the query to run.
    package var requires: LedgerTables
    /// The query, in the dialect's SQL.
    package var sql: @Sendable (SQLDialect) -> String
    /// Whether rows that agree on all but their last column are one problem, their last columns
    /// listed (in the query's order) as one text value: "1, 4, 9".
    package var listsLastColumn: Bool
    /// The problem, in words, from one row (or one group of rows).
    package var describe: @Sendable ([SQLValue]) -> String

    /// Every invariant, in the order `ledger check` reports them.
    package static let all: [LedgerInvariant] = [
        LedgerInvariant(
            check: .oneVerifiedPerStation, listing: "station", of: "outcome = 'verified'",
            describe: { "station \(text($0[0])) has verified attempts \(list($0[1]))" }),
        LedgerInvariant(
            check: .oneVerifiedPerChip, listing: "chip", of: "outcome = 'verified'",
            describe: { "chip \(text($0[0])) has verified attempts \(list($0[1]))" }),
        LedgerInvariant(
            check: .oneActivePerStation, listing: "station", of: "outcome IN ('in-progress', 'interrupted')",
            describe: { "station \(text($0[0])) has attempts \(list($0[1])) in progress or interrupted at once" }),
        LedgerInvariant(
            check: .oneLivePerStation, listing: "station", of: "outcome IN ('verified', 'in-progress', 'interrupted')",
            having: "sum(CASE WHEN g.outcome = 'verified' THEN 1 ELSE 0 END) > 0",
            describe: {
                "station \(text($0[0])) has attempts \(list($0[1])) verified and in progress or interrupted at once"
            }),
        LedgerInvariant(
            check: .endedWithoutTime,
            sql: {
                "SELECT id, outcome FROM \($0.tableScan("attempts", "a")) WHERE outcome <> 'in-progress' AND finished_at IS NULL ORDER BY id"
            }, describe: { "attempt \(text($0[0])) is \(text($0[1])) without the time it ended" }),
        LedgerInvariant(
            check: .verifiedWithoutMethod,
            sql: {
                "SELECT id, verify_method FROM \($0.tableScan("attempts", "a")) WHERE outcome = 'verified' AND NOT coalesce(verify_method IN ('crc', 'read'), FALSE) ORDER BY id"
            }, describe: { "attempt \(text($0[0])) is verified with verification method \(text($0[1]))" }),
        LedgerInvariant(
            check: .invalidChipID,
            sql: {
                "SELECT id, chip FROM \($0.tableScan("attempts", "a")) WHERE NOT \(ChipID.sqlCondition("chip", $0)) ORDER BY id"
            }, describe: { "attempt \(text($0[0])) has chip id \(text($0[1])), which cannot identify a chip" }),
        LedgerInvariant(
            check: .unknownStation,
            sql: {
                "SELECT a.id, a.station FROM \($0.tableScan("attempts", "a")) LEFT JOIN (SELECT s.name AS name FROM \($0.tableScan("stations", "s")) GROUP BY s.name) AS known ON known.name = a.station WHERE known.name IS NULL ORDER BY a.id"
            }, describe: { "attempt \(text($0[0])) is for station \(text($0[1])), which is not in the ledger" }),
        LedgerInvariant(
            check: .stationValues,
            sql: {
                "SELECT name, uuid, major, minor, power FROM \($0.tableScan("stations", "s")) WHERE NOT \(stationValues("s.", $0)) ORDER BY position, name"
            },
            describe: {
                "station \(text($0[0])) has UUID \(text($0[1])), major \(text($0[2])), minor \(text($0[3])), power \(text($0[4]))"
            }),
        LedgerInvariant(
            check: .duplicateStation,
            sql: {
                "SELECT name, count(*) FROM \($0.tableScan("stations", "s")) GROUP BY name HAVING count(*) > 1 ORDER BY name"
            }, describe: { "station name \(text($0[0])) is in the ledger \(text($0[1])) times" }),
        LedgerInvariant(
            check: .duplicateStation, listsLastColumn: true,
            sql: {
                "SELECT s.uuid, s.major, s.minor, s.name FROM \($0.tableScan("stations", "s")) JOIN (SELECT d.uuid, d.major, d.minor FROM \($0.tableScan("stations", "d")) GROUP BY d.uuid, d.major, d.minor HAVING count(*) > 1) AS twice ON \(["uuid", "major", "minor"].map { "(twice.\($0) = s.\($0) OR (twice.\($0) IS NULL AND s.\($0) IS NULL))" }.joined(separator: " AND ")) ORDER BY s.uuid, s.major, s.minor, s.name"
            },
            describe: {
                "stations \(list($0[3])) share UUID \(text($0[0])), major \(text($0[1])), minor \(text($0[2]))"
            }),
        LedgerInvariant(
            check: .calibrationValues, requires: .calibrations,
            sql: {
                """
                SELECT c.id, c.station, c.power, c.samples, c.used FROM \($0.tableScan("calibrations", "c"))
                    LEFT JOIN (SELECT s.name AS name FROM \($0.tableScan("stations", "s")) GROUP BY s.name) AS known
                    ON known.name = c.station WHERE NOT coalesce(
                    known.name IS NOT NULL
                    AND \($0.isInteger("c.power") ?? "TRUE") AND c.power BETWEEN -128 AND 127
                    AND \($0.isInteger("c.samples") ?? "TRUE") AND c.samples >= 20
                    AND \($0.isInteger("c.used") ?? "TRUE") AND c.used BETWEEN 1 AND c.samples, FALSE) ORDER BY c.id
                """
            },
            describe: {
                "calibration \(text($0[0])) of station \(text($0[1])) has power \(text($0[2])) from \(text($0[4])) of \(text($0[3])) samples"
            }),
        LedgerInvariant(
            check: .stationState, requires: .stationState,
            sql: {
                "SELECT s.name, s.taken FROM \($0.tableScan("stations", "s")) LEFT JOIN (SELECT a.station AS station FROM \($0.tableScan("attempts", "a")) WHERE a.outcome IN ('verified', 'in-progress', 'interrupted') GROUP BY a.station) AS live ON live.station = s.name WHERE coalesce(s.taken, -1) <> CASE WHEN live.station IS NULL THEN 0 ELSE 1 END ORDER BY s.position, s.name"
            }, describe: { "station \(text($0[0])) has taken \(text($0[1])), which its attempts do not say" }),
    ]

    /// An invariant whose query is written out.
    init(
        check: LedgerProblem.Check, requires: LedgerTables = [], listsLastColumn: Bool = false,
        sql: @escaping @Sendable (SQLDialect) -> String, describe: @escaping @Sendable ([SQLValue]) -> String
    ) {
        self.check = check
        self.requires = requires
        self.sql = sql
        self.listsLastColumn = listsLastColumn
        self.describe = describe
    }

    /// "At most one attempt `of` per `column` value" (and, with `having`, only groups for which
    /// it holds): the value with its attempts' ids listed.
    init(
        check: LedgerProblem.Check, listing column: String, of condition: String, having: String? = nil,
        describe: @escaping @Sendable ([SQLValue]) -> String
    ) {
        self.init(
            check: check, listsLastColumn: true,
            sql: { dialect in
                // The values held more than once, joined back to their attempts (a NULL value is one
                // group, as GROUP BY makes it).
                let groups =
                    "SELECT g.\(column) AS grouped FROM \(dialect.tableScan("attempts", "g")) WHERE g.\(condition) GROUP BY g.\(column) HAVING count(*) > 1"
                    + (having.map { " AND \($0)" } ?? "")
                return
                    "SELECT a.\(column), a.id FROM \(dialect.tableScan("attempts", "a")) JOIN (\(groups)) AS twice ON twice.grouped = a.\(column) OR (twice.grouped IS NULL AND a.\(column) IS NULL) WHERE a.\(condition) ORDER BY a.\(column), a.id"
            }, describe: describe)
    }

    /// The problems the rows of this invariant's query show.
    package func problems(in rows: [[SQLValue]]) -> [LedgerProblem] {
        guard listsLastColumn else { return rows.map { LedgerProblem(check: check, detail: describe($0)) } }
        var groups: [(key: [SQLValue], listed: [String])] = []
        for row in rows where !row.isEmpty {
            let key = Array(row.dropLast())
            let item = row.last.map(Self.list) ?? ""
            if let last = groups.indices.last, Self.same(groups[last].key, key) {
                groups[last].listed.append(item)
            } else {
                groups.append((key, [item]))
            }
        }
        return groups.map {
            LedgerProblem(check: check, detail: describe($0.key + [.text($0.listed.joined(separator: ", "))]))
        }
    }

    /// Whether two rows' values are the same as the database keeps them: text byte for byte
    /// (Swift's `==` would take canonically equivalent names, two stations, for one).
    static func same(_ left: [SQLValue], _ right: [SQLValue]) -> Bool {
        left.count == right.count
            && zip(left, right).allSatisfy { pair in
                switch pair {
                case (.text(let a), .text(let b)): Array(a.utf8) == Array(b.utf8)
                default: pair.0 == pair.1
                }
            }
    }

    /// A value from the ledger in a report (see `LedgerCore.text`).
    static func text(_ value: SQLValue) -> String { LedgerCore.text(value) }

    /// A listed value (ids, names) as plain text: numbers as digits, text as it is without quotes
    /// (escaped for the terminal later).
    static func list(_ value: SQLValue) -> String {
        switch value {
        case .text(let text): text
        default: LedgerCore.text(value)
        }
    }

    /// A station row's values as an SQL condition over the columns behind `prefix` (`NEW.` in a
    /// trigger, `s.` in a check): a name, an upper-case 8-4-4-4-12 UUID, major and minor integers
    /// 0…65535, a power integer −128…127; false for anything else, NULLs included.
    package static func stationValues(_ prefix: String, _ dialect: SQLDialect) -> String {
        let conditions = [
            dialect.isText("\(prefix)name"), "\(prefix)name <> ''", dialect.isText("\(prefix)uuid"),
            dialect.matchesHex("\(prefix)uuid", [8, 4, 4, 4, 12], "-"),
            dialect.isInteger("\(prefix)major"), "\(prefix)major BETWEEN 0 AND 65535",
            dialect.isInteger("\(prefix)minor"), "\(prefix)minor BETWEEN 0 AND 65535",
            dialect.isInteger("\(prefix)power"), "\(prefix)power BETWEEN -128 AND 127",
        ]
        return "coalesce(\(conditions.compactMap { $0 }.joined(separator: " AND ")), \(dialect.falseValue))"
    }
}

extension LedgerCore {
    /// Every invariant the ledger's tables can be checked for, each in its own read with the
    /// dialect's table scans; an invariant that cannot be checked is itself a problem.
    package func invariantProblems() -> [LedgerProblem] {
        var problems: [LedgerProblem] = []
        for invariant in LedgerInvariant.all where tables.isSuperset(of: invariant.requires) {
            let operation = "checking \(invariant.check.rawValue)"
            do throws(LedgerError) {
                let rows = try driver.reading(operation) { () throws(LedgerError) -> [[SQLValue]] in
                    for statement in driver.dialect.scanTablesOnly { try driver.rows(statement, [], operation) }
                    return try driver.rows(invariant.sql(driver.dialect), [], operation)
                }
                problems += invariant.problems(in: rows)
            } catch {
                problems.append(LedgerProblem(check: invariant.check, detail: "cannot be checked: \(error.message)"))
            }
        }
        // Attributes are JSON text: read as every command reads them, each station's on its own.
        if tables.contains(.stationAttributes) {
            do throws(LedgerError) {
                let rows = try driver.reading("checking station-attributes") { () throws(LedgerError) -> [[SQLValue]] in
                    try driver.rows(
                        "SELECT name, attributes FROM stations WHERE attributes IS NOT NULL ORDER BY position", [],
                        "checking station-attributes")
                }
                for row in rows {
                    do throws(LedgerError) { _ = try Self.attributes(row[1], station: row[0].string ?? "") } catch {
                        problems.append(LedgerProblem(check: .stationAttributes, detail: error.message))
                    }
                }
            } catch {
                problems.append(LedgerProblem(check: .stationAttributes, detail: "cannot be checked: \(error.message)"))
            }
        }
        return problems
    }
}
