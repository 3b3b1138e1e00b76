import BeaconPayload
import StructuredText
import Synchronization

extension LedgerCore {
    // MARK: - Reading

    /// The station a chip carries (verified), if any.
    package func verifiedStation(forChip chip: String) throws(LedgerError) -> String? {
        try driver.reading("looking up a chip") { () throws(LedgerError) -> String? in
            try driver.rows(
                "SELECT station FROM attempts WHERE chip = ? AND outcome = 'verified'", [.text(chip)],
                "looking up a chip"
            ).first?.first?.string
        }
    }

    /// The interrupted attempt whose chip this is, if any.
    package func interruptedAttempt(forChip chip: String) throws(LedgerError) -> Attempt? {
        try driver.reading("looking up a chip") { () throws(LedgerError) -> Attempt? in
            try driver.rows(
                "SELECT \(attemptSelect) FROM attempts WHERE chip = ? AND outcome = 'interrupted' ORDER BY id LIMIT 1",
                [.text(chip)], "looking up a chip"
            ).map(Self.attempt).first
        }
    }

    /// Whether a station not in `excluding` is pending (`taken` 0, by its index) or held (an
    /// interrupted attempt, by its index).
    package func hasWork(excluding: Set<String>) throws(LedgerError) -> Bool {
        let names = dialect.listParameter(excluding.sorted())
        let found = try driver.reading("looking for stations left") { () throws(LedgerError) -> Bool in
            try !driver.rows(
                """
                SELECT 1 FROM stations WHERE taken = 0 AND \(dialect.notInList("name"))
                UNION ALL SELECT 1 FROM attempts WHERE outcome = 'interrupted' AND \(dialect.notInList("station"))
                LIMIT 1
                """, [names, names], "looking for stations left"
            ).isEmpty
        }
        // Before a debugger stops for want of work: `taken` left set by a hand-made change is put
        // right (the station is pending after all).
        if found { return true }
        return try driver.inTransaction("looking for stations left") { () throws(LedgerError) -> Bool in
            try repairTaken() > 0
        }
    }

    /// One station, if the ledger has one of that name.
    package func station(named name: String) throws(LedgerError) -> Station? {
        try driver.reading("reading a station") { () throws(LedgerError) -> Station? in
            try driver.rows(
                "SELECT \(stationSelect) FROM stations WHERE name = ?", [.text(name)],
                "reading station '\(name)'"
            ).first.map(Self.station)
        }
    }

    /// Whether any chip is recorded as verified and debug-locked.
    package func hasLockedChips() throws(LedgerError) -> Bool {
        try driver.reading("looking for locked chips") { () throws(LedgerError) -> Bool in
            try !driver.rows(
                "SELECT 1 FROM attempts WHERE outcome = 'verified' AND debug_locked = ? LIMIT 1", [.integer(1)],
                "looking for locked chips"
            ).isEmpty
        }
    }

    /// Adds the list's stations in one transaction; a station already known must keep its
    /// identity (a calibrated one keeps its calibrated power when the list gives none of its own).
    /// A shared pool (not `soleRunner`) that holds stations takes only the list it was registered
    /// with (`LedgerRefusal.otherList`); a file may hold several lists. Registrations run one
    /// after the other where the dialect orders them.
    package func register(_ stations: [Station]) throws(LedgerError) {
        try driver.inTransaction("registering the station list") { () throws(LedgerError) in
            // Benches starting with one list register it one after the other, each seeing what
            // the one before added.
            if let serialize = dialect.serializeRuns { try driver.rows(serialize, [], "locking the station list") }
            let count =
                try driver.rows("SELECT count(*) FROM stations", [], "counting stations").first?.first?.int ?? 0
            if !soleRunner, count > 0 { try attach(stations) }
            var mismatches: [String] = []
            for (index, station) in stations.enumerated() {
                let identity = station.identity
                let keepsAttributes = tables.contains(.stationAttributes)
                if let row = try driver.rows(
                    "SELECT uuid, major, minor, power\(keepsAttributes ? ", attributes" : "") FROM stations WHERE name = ?",
                    [.text(station.name)],
                    "reading station '\(station.name)'"
                ).first {
                    guard
                        row[0].string == identity.uuid.uuidString && row[1].int == Int(identity.major)
                            && row[2].int == Int(identity.minor)
                    else { throw LedgerRefusal.otherIdentity(station.name) }
                    // The list says where its stations are: their attributes follow it.
                    let attributes = Self.attributesValue(station)
                    if keepsAttributes, !station.attributes.isEmpty, row[4] != attributes {
                        try driver.rows(
                            "UPDATE stations SET attributes = ? WHERE name = ?", [attributes, .text(station.name)],
                            "recording the attributes of station '\(station.name)'")
                    }
                    if let recorded = row[3].int, recorded != Int(identity.measuredPower) {
                        // A calibrated station keeps its calibrated power when the list gives it
                        // none of its own (the board's figure stands in for it).
                        let listGivesPower = station.powerOrigin == .list || station.powerOrigin == .explicit
                        if !listGivesPower, try latestCalibration(of: station.name) == recorded { continue }
                        // Since measured power follows the TX power, a list without power values
                        // registered before may now come out with another: every such station is
                        // named at once.
                        mismatches.append(
                            "\(station.name) (ledger \(recorded) dBm, list \(identity.measuredPower) dBm)")
                    }
                    continue
                }
                do throws(LedgerError) {
                    try insertStation(station, position: count + index, "registering station '\(station.name)'")
                } catch  where error.isConstraint {
                    let holder = try? driver.rows(
                        "SELECT name FROM stations WHERE uuid = ? AND major = ? AND minor = ?",
                        [
                            .text(identity.uuid.uuidString), .integer(Int(identity.major)),
                            .integer(Int(identity.minor)),
                        ],
                        "reading the station with the identity of '\(station.name)'"
                    ).first?.first?.string
                    throw LedgerRefusal.identityTaken(station.name, identity, holder: holder)
                }
            }
            if !mismatches.isEmpty { throw LedgerRefusal.otherPowers(mismatches) }
        }
    }

    /// A pool registers one list: a list attaches only when it is the pool's (the same names with
    /// the same identities); otherwise every difference is named and nothing is registered.
    func attach(_ stations: [Station]) throws(LedgerError) {
        let pool = try driver.rows(
            "SELECT name, uuid, major, minor FROM stations ORDER BY position", [], "reading the pool's stations")
        var known: [String: [SQLValue]] = [:]
        for row in pool { if let name = row[0].string { known[name] = Array(row[1...]) } }
        let listed = Set(stations.map(\.name))
        var onlyInList: [String] = []
        var otherIdentity: [String] = []
        for station in stations {
            guard let identity = known[station.name] else {
                onlyInList.append(station.name)
                continue
            }
            let wanted = station.identity
            if identity != [.text(wanted.uuid.uuidString), .integer(Int(wanted.major)), .integer(Int(wanted.minor))] {
                let shown = identity.map { $0.string ?? $0.int.map(String.init) ?? "?" }
                otherIdentity.append(
                    "\(station.name) (pool \(shown.joined(separator: "/")), list \(wanted.uuid.uuidString)/\(wanted.major)/\(wanted.minor))"
                )
            }
        }
        let onlyInPool = pool.compactMap { $0[0].string }.filter { !listed.contains($0) }
        guard onlyInList.isEmpty, onlyInPool.isEmpty, otherIdentity.isEmpty else {
            throw LedgerRefusal.otherList(
                onlyInList: onlyInList, onlyInPool: onlyInPool, otherIdentity: otherIdentity, pool: name)
        }
    }

    /// Every station with its state, in list order, read in one snapshot where the database gives
    /// one.
    package func states() throws(LedgerError) -> [StationState] {
        try driver.reading("reading the ledger") { () throws(LedgerError) -> [StationState] in
            if let snapshot = dialect.snapshot { try driver.rows(snapshot, [], "reading the ledger") }
            let stations = try driver.rows(
                "SELECT \(stationSelect) FROM stations ORDER BY position", [], "reading stations"
            ).map(Self.station)
            return StationState.states(of: stations, attempts: try attempts())
        }
    }

    /// Records a calibration and makes its power the station's, in one transaction; a station the
    /// ledger does not know is refused.
    package func recordCalibration(_ calibration: CalibrationRecord) throws(LedgerError) {
        let operation = "recording a calibration of '\(calibration.station)'"
        try driver.inTransaction(operation) { () throws(LedgerError) in
            let updated = try driver.rows(
                "UPDATE stations SET power = ? WHERE name = ? RETURNING name",
                [.integer(calibration.power), .text(calibration.station)], operation)
            guard updated.count == 1 else { throw LedgerRefusal.unknownStation(calibrating: calibration.station) }
            try driver.rows(
                "INSERT INTO calibrations(station, recorded_at, power, samples, used, source) VALUES (?, \(now), ?, ?, ?, ?)",
                [
                    .text(calibration.station), .integer(calibration.power), .integer(calibration.samples),
                    .integer(calibration.used), .text(calibration.source),
                ], operation)
        }
    }

    /// Every calibration, oldest first (none when the ledger has no calibrations table: an
    /// earlier schema read without migrating).
    package func calibrations() throws(LedgerError) -> [CalibrationRecord] {
        guard tables.contains(.calibrations) else { return [] }
        return try driver.reading("reading calibrations") { () throws(LedgerError) -> [CalibrationRecord] in
            try driver.rows(
                "SELECT station, recorded_at, power, samples, used, source FROM calibrations ORDER BY id", [],
                "reading calibrations"
            ).map { row throws(LedgerError) -> CalibrationRecord in
                guard let station = row[0].string, let at = row[1].string, let power = row[2].int,
                    let samples = row[3].int, let used = row[4].int, let source = row[5].string
                else { throw Self.unreadable("a calibration has values that are not a calibration's") }
                return CalibrationRecord(
                    station: station, recordedAt: at, power: power, samples: samples, used: used, source: source)
            }
        }
    }

    /// Every attempt, oldest first.
    package func attempts() throws(LedgerError) -> [Attempt] {
        try driver.reading("reading attempts") { () throws(LedgerError) -> [Attempt] in
            try driver.rows("SELECT \(attemptSelect) FROM attempts ORDER BY id", [], "reading attempts")
                .map(Self.attempt)
        }
    }

    // MARK: - Rows

    /// A row that cannot be read as what it should be: the ledger is damaged.
    package static func unreadable(_ what: String) -> LedgerError {
        LedgerError(
            operation: "reading the ledger", message: "a record cannot be read: \(what)",
            kind: .refused(.damaged(report: [what])))
    }

    /// A value from the database in a report: text quoted with control characters escaped (a
    /// damaged or tampered ledger can hold anything), numbers as they are.
    package static func text(_ value: SQLValue) -> String {
        switch value {
        case .integer(let number): String(number)
        case .real(let number): String(number)
        case .text(let text): text.debugDescription
        case .null: "NULL"
        }
    }

    /// Inserts `station` at `position`, with its attributes where the ledger keeps them.
    package func insertStation(_ station: Station, position: Int, _ operation: String) throws(LedgerError) {
        let identity = station.identity
        let withAttributes = tables.contains(.stationAttributes)
        try driver.rows(
            "INSERT INTO stations(position, name, uuid, major, minor, power, note\(withAttributes ? ", attributes" : "")) VALUES (?, ?, ?, ?, ?, ?, ?\(withAttributes ? ", ?" : ""))",
            [
                .integer(position), .text(station.name), .text(identity.uuid.uuidString),
                .integer(Int(identity.major)), .integer(Int(identity.minor)),
                .integer(Int(identity.measuredPower)), station.note.map { .text($0) } ?? .null,
            ] + (withAttributes ? [Self.attributesValue(station)] : []), operation)
    }

    /// Attributes as the ledger keeps them: a JSON object, members in the list's order (NULL for
    /// none).
    package static func attributesValue(_ station: Station) -> SQLValue {
        station.attributes.isEmpty ? .null : .text(station.attributesObject.compact())
    }

    /// Attributes read back from `attributesValue`'s text; one that is no such object (a damaged
    /// or hand-edited ledger) is an error naming the station.
    package static func attributes(_ value: SQLValue, station: String) throws(LedgerError) -> [StationAttribute] {
        guard let text = value.string else { return [] }
        guard let node = try? JSONParser.parse(Array(text.utf8), file: "attributes"),
            case .object(let members) = node.value
        else {
            throw unreadable(
                "station \(station.debugDescription) has attributes \(text.debugDescription), not a JSON object")
        }
        var attributes: [StationAttribute] = []
        for member in members {
            guard case .string(let value) = member.value.value else {
                throw unreadable(
                    "station \(station.debugDescription) has attributes \(text.debugDescription), whose values are not all text"
                )
            }
            // What a list could never bring in (a hand edit) is refused where it is read: a name
            // twice, or a hidden character, which would break or disguise the registry's rows.
            if let hidden = HiddenCharacters.describeFirst(in: member.key, allowingTab: false)
                ?? HiddenCharacters.describeFirst(in: value, allowingTab: true)
            {
                throw unreadable("station \(station.debugDescription) has an attribute that holds \(hidden)")
            }
            guard !attributes.contains(where: { $0.name.lowercased() == member.key.lowercased() }) else {
                throw unreadable("station \(station.debugDescription) has the attribute '\(member.key)' twice")
            }
            attributes.append(StationAttribute(name: member.key, value: value))
        }
        return attributes
    }

    /// A station row (name, uuid, major, minor, power, note); a row whose values cannot be a
    /// station (a damaged or hand-edited ledger: a major of 70000, a power of 200, no UUID) is an
    /// error naming it — never a crash, and never a station silently left out.
    package static func station(_ row: [SQLValue]) throws(LedgerError) -> Station {
        let name = row[0].string
        guard let name, let uuidText = row[1].string, let uuid = try? IdentityParser.uuid(uuidText),
            let major = row[2].int.flatMap(UInt16.init(exactly:)),
            let minor = row[3].int.flatMap(UInt16.init(exactly:)),
            let power = row[4].int.flatMap(Int8.init(exactly:))
        else {
            throw unreadable(
                "station \(name.map(\.debugDescription) ?? "without a name") has \(row.prefix(5).map(text).joined(separator: ", ")), not a name, UUID, major and minor 0…65535 and power −128…127"
            )
        }
        var station = Station(
            name: name, identity: IBeacon(uuid: uuid, major: major, minor: minor, measuredPower: power),
            note: row[5].string)
        if row.count > 6 { station.attributes = try attributes(row[6], station: name) }
        return station
    }

    /// An attempt row in `attemptColumns`' order; one that cannot be an attempt is an error
    /// naming it.
    package static func attempt(_ row: [SQLValue]) throws(LedgerError) -> Attempt {
        guard row.count == attemptColumns.count, let id = row[0].int, let station = row[1].string,
            let chip = row[2].string, let debugger = row[3].string, let template = row[4].string,
            let templateSHA = row[5].string, let imageSHA = row[6].string, let started = row[7].string,
            let outcome = row[9].string.flatMap(AttemptOutcome.init), let method = row[11].string
        else { throw unreadable("attempt \(row.first.map(text) ?? "?") has values that are not an attempt's") }
        return Attempt(
            id: id, station: station, chip: chip, debugger: debugger, template: template, templateSHA256: templateSHA,
            imageSHA256: imageSHA, startedAt: started, finishedAt: row[8].string, outcome: outcome,
            reason: row[10].string, verifyMethod: method, advertiserAddress: row[12].string, readBack: row[13].string,
            power: row[14].int,
            onAir: row[15].int.map { OnAirCheck(heard: $0 == 1, rssiCount: row[16].int ?? 0, rssiMedian: row[17].int) },
            powerSource: row[18].string, bench: row[19].string, debugLocked: row[20].int == 1, run: row[21].string)
    }

    /// A run row in `runColumns`' order.
    package static func run(_ row: [SQLValue]) throws(LedgerError) -> RunRecord {
        guard row.count >= 10, let id = row[0].string, let host = row[2].string, let process = row[3].int,
            let machine = row[4].string, let started = row[5].string, let seconds = row[6].double,
            let until = row[7].double
        else { throw unreadable("run \(row.first.map(text) ?? "?") has values that are not a run's") }
        return RunRecord(
            id: id, bench: row[1].string, host: host, process: process, machine: machine, startedAt: started,
            leaseSeconds: seconds, leaseUntil: until, endedAt: row[8].string, endedBecause: row[9].string)
    }
}
