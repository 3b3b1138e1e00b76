import StructuredText

/// One problem `SQLiteLedger.check()` found.
public struct LedgerProblem: Sendable, Equatable {
    /// What was checked.
    public enum Check: String, Sendable, Equatable, CaseIterable {
        /// SQLite's `PRAGMA integrity_check` (pages, records, and indexes against their tables).
        case integrity = "integrity"
        /// The indexes and triggers that keep the ledger's promises are all there.
        case schema = "schema"
        /// At most one verified attempt per station.
        case oneVerifiedPerStation = "one-verified-per-station"
        /// At most one verified attempt per chip.
        case oneVerifiedPerChip = "one-verified-per-chip"
        /// At most one attempt in progress or interrupted per station.
        case oneActivePerStation = "one-active-per-station"
        /// At most one attempt verified, in progress or interrupted per station: none starts while
        /// the station is verified anywhere.
        case oneLivePerStation = "one-live-per-station"
        /// Every attempt that is no longer in progress has the time it ended.
        case endedWithoutTime = "ended-without-time"
        /// No verified attempt without a verification method.
        case verifiedWithoutMethod = "verified-without-method"
        /// No chip id that cannot identify a chip (`ChipID`).
        case invalidChipID = "invalid-chip-id"
        /// Every attempt's station is in the ledger.
        case unknownStation = "unknown-station"
        /// No two stations with one name, or with one identity.
        case duplicateStation = "duplicate-station"
        /// Every station row holds a name, a UUID, a major and minor 0…65535 and a power −128…127.
        case stationValues = "station-values"
        /// Every calibration is of a station in the ledger, with a power −128…127 from at least
        /// 20 samples.
        case calibrationValues = "calibration-values"
        /// Every station's `taken` says whether it has an attempt verified, in progress or
        /// interrupted (what claims find pending stations by).
        case stationState = "station-state"
    }

    /// What was checked.
    public var check: Check
    /// What is wrong, in words.
    public var detail: String

    /// A problem `check` found, told in `detail`.
    public init(check: Check, detail: String) {
        self.check = check
        self.detail = detail
    }
}

extension SQLiteLedger {
    /// The invariants, each a query for the rows that break it. `NOT INDEXED` makes SQLite scan
    /// the tables themselves: the unique indexes are what could be damaged or missing, so they
    /// must not be the ones answering.
    static let invariants:
        [(check: LedgerProblem.Check, sql: String, describe: @Sendable ([SQLiteDatabase.Value]) -> String)] = [
            (
                .oneVerifiedPerStation,
                "SELECT station, group_concat(id, ', ') FROM attempts NOT INDEXED WHERE outcome = 'verified' GROUP BY station HAVING count(*) > 1",
                { "station \(text($0[0])) has verified attempts \($0[1].string ?? "")" }
            ),
            (
                .oneVerifiedPerChip,
                "SELECT chip, group_concat(id, ', ') FROM attempts NOT INDEXED WHERE outcome = 'verified' GROUP BY chip HAVING count(*) > 1",
                { "chip \(text($0[0])) has verified attempts \($0[1].string ?? "")" }
            ),
            (
                .oneActivePerStation,
                "SELECT station, group_concat(id, ', ') FROM attempts NOT INDEXED WHERE outcome IN ('in-progress', 'interrupted') GROUP BY station HAVING count(*) > 1",
                { "station \(text($0[0])) has attempts \($0[1].string ?? "") in progress or interrupted at once" }
            ),
            (
                .oneLivePerStation,
                "SELECT station, group_concat(id, ', ') FROM attempts NOT INDEXED WHERE outcome IN ('verified', 'in-progress', 'interrupted') GROUP BY station HAVING count(*) > 1 AND count(*) > sum(outcome <> 'verified')",
                {
                    "station \(text($0[0])) has attempts \($0[1].string ?? "") verified and in progress or interrupted at once"
                }
            ),
            (
                .endedWithoutTime,
                "SELECT id, outcome FROM attempts NOT INDEXED WHERE outcome <> 'in-progress' AND finished_at IS NULL",
                { "attempt \(text($0[0])) is \(text($0[1])) without the time it ended" }
            ),
            (
                .verifiedWithoutMethod,
                "SELECT id, verify_method FROM attempts NOT INDEXED WHERE outcome = 'verified' AND coalesce(verify_method NOT IN ('crc', 'read'), 1)",
                { "attempt \(text($0[0])) is verified with verification method \(text($0[1]))" }
            ),
            (
                .invalidChipID,
                "SELECT id, chip FROM attempts NOT INDEXED WHERE NOT \(ChipID.sqlCondition("chip"))",
                { "attempt \(text($0[0])) has chip id \(text($0[1])), which cannot identify a chip" }
            ),
            (
                .unknownStation,
                "SELECT a.id, a.station FROM attempts AS a NOT INDEXED WHERE NOT EXISTS (SELECT 1 FROM stations AS s NOT INDEXED WHERE s.name = a.station)",
                { "attempt \(text($0[0])) is for station \(text($0[1])), which is not in the ledger" }
            ),
            (
                .stationValues,
                """
                SELECT name, uuid, major, minor, power FROM stations NOT INDEXED WHERE NOT coalesce(
                    typeof(name) = 'text' AND name <> '' AND typeof(uuid) = 'text'
                    AND uuid GLOB '\(visible: uuidPattern)'
                    AND typeof(major) = 'integer' AND major BETWEEN 0 AND 65535
                    AND typeof(minor) = 'integer' AND minor BETWEEN 0 AND 65535
                    AND typeof(power) = 'integer' AND power BETWEEN -128 AND 127, 0)
                """,
                {
                    "station \(text($0[0])) has UUID \(text($0[1])), major \(text($0[2])), minor \(text($0[3])), power \(text($0[4]))"
                }
            ),
            (
                .duplicateStation,
                "SELECT name, count(*) FROM stations NOT INDEXED GROUP BY name HAVING count(*) > 1",
                { "station name \(text($0[0])) is in the ledger \(text($0[1])) times" }
            ),
            (
                .duplicateStation,
                "SELECT uuid, major, minor, group_concat(name, ', ') FROM stations NOT INDEXED GROUP BY uuid, major, minor HAVING count(*) > 1",
                { "stations \(text($0[3])) share UUID \(text($0[0])), major \(text($0[1])), minor \(text($0[2]))" }
            ),
        ]

    /// The invariant of the stations' state (schema version 5 on).
    static let stateInvariants:
        [(check: LedgerProblem.Check, sql: String, describe: @Sendable ([SQLiteDatabase.Value]) -> String)] = [
            (
                .stationState,
                "SELECT s.name, s.taken FROM stations AS s NOT INDEXED WHERE s.taken IS NOT CASE WHEN EXISTS (SELECT 1 FROM attempts AS a NOT INDEXED WHERE a.station = s.name AND a.outcome IN ('verified', 'in-progress', 'interrupted')) THEN 1 ELSE 0 END",
                { "station \(text($0[0])) has taken \(text($0[1])), which its attempts do not say" }
            )
        ]

    /// The invariants of the calibrations table (schema version 2 on).
    static let calibrationInvariants:
        [(check: LedgerProblem.Check, sql: String, describe: @Sendable ([SQLiteDatabase.Value]) -> String)] = [
            (
                .calibrationValues,
                """
                SELECT c.id, c.station, c.power, c.samples, c.used FROM calibrations AS c NOT INDEXED WHERE NOT coalesce(
                    EXISTS (SELECT 1 FROM stations AS s NOT INDEXED WHERE s.name = c.station)
                    AND typeof(c.power) = 'integer' AND c.power BETWEEN -128 AND 127
                    AND typeof(c.samples) = 'integer' AND c.samples >= 20
                    AND typeof(c.used) = 'integer' AND c.used BETWEEN 1 AND c.samples, 0)
                """,
                {
                    "calibration \(text($0[0])) of station \(text($0[1])) has power \(text($0[2])) from \(text($0[4])) of \(text($0[3])) samples"
                }
            )
        ]

    /// A UUID as the ledger stores it (upper-case 8-4-4-4-12), as a GLOB pattern.
    static let uuidPattern = [8, 4, 4, 4, 12].map { String(repeating: "[0-9A-F]", count: $0) }.joined(separator: "-")

    /// A value from the file in a report (see `LedgerCore.text`).
    static func text(_ value: SQLiteDatabase.Value) -> String { LedgerCore.text(value) }

    /// Checks the whole ledger without trusting its indexes: SQLite's full `PRAGMA
    /// integrity_check`, the indexes and triggers its promises rest on (for a ledger of the current
    /// schema), and each invariant by a query that scans the tables. Returns every problem found (empty when the ledger is sound);
    /// a check that cannot run is itself a problem.
    public func check() -> [LedgerProblem] {
        var problems: [LedgerProblem] = []
        do {
            let report = try database.query("PRAGMA integrity_check", [], "checking integrity").compactMap {
                $0.first?.string
            }
            if report != ["ok"] { problems += report.map { LedgerProblem(check: .integrity, detail: $0) } }
        } catch { problems.append(LedgerProblem(check: .integrity, detail: error.message)) }
        // An earlier ccbeacon's ledger lacks the triggers (and may lack indexes) until provisioning
        // migrates it; that is not damage. Its records are checked all the same.
        if fileSchemaVersion == Self.schemaVersion {
            do {
                problems += try LedgerFile.schemaGaps(database, database.path).map {
                    LedgerProblem(check: .schema, detail: $0)
                }
            } catch { problems.append(LedgerProblem(check: .schema, detail: error.message)) }
        }
        for invariant in Self.invariants + (hasCalibrations ? Self.calibrationInvariants : [])
            + (hasTaken ? Self.stateInvariants : [])
        {
            do {
                problems += try database.query(invariant.sql, [], "checking \(invariant.check.rawValue)").map {
                    LedgerProblem(check: invariant.check, detail: invariant.describe($0))
                }
            } catch {
                problems.append(LedgerProblem(check: invariant.check, detail: "cannot be checked: \(error.message)"))
            }
        }
        return problems
    }
}
