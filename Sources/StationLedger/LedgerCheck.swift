/// One problem `SQLiteLedger.check()` found.
public struct LedgerProblem: Sendable, Equatable {
    /// What was checked.
    public enum Check: String, Sendable, Equatable, CaseIterable {
        /// The file can be read as a ccbeacon ledger at all: SQLite reads its schema, and its
        /// tables and columns are there. When it cannot, nothing else could be checked.
        case readable = "readable"
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
        /// Every station's attributes are an object of text as a list brings them in (no name
        /// twice, no hidden character).
        case stationAttributes = "station-attributes"
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
    /// Checks the whole ledger without trusting its indexes: SQLite's full `PRAGMA
    /// integrity_check`, the indexes and triggers its promises rest on (for a ledger of the current
    /// schema), and each invariant (`LedgerInvariant`) by a query that scans the tables. Returns
    /// every problem found (empty when the ledger is sound); a check that cannot run is itself a
    /// problem.
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
        return problems + core.invariantProblems()
    }
}
