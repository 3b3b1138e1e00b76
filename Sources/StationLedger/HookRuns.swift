public import BeaconPayload

/// One run of a hook (`provision --on-verified CMD`, `--on-failed CMD`) the ledger keeps: recorded
/// in the transaction that records its outcome, and kept — with every try's status — until the
/// hook ran and exited 0. A run killed between the two, or a hook that failed, leaves it pending,
/// and the next `provision` of the same bench runs it first: delivery is at least once, and the
/// event id, the same on every try, tells a retry apart.
public struct HookRun: Sendable, Equatable {
    /// The event id: 32 lower-case hex digits, random, the same on every try.
    public var eventID: String
    /// The hook: `.verified` or `.failed`.
    public var hook: AttemptOutcome
    /// The attempt whose outcome it reports (as the ledger has it now).
    public var attempt: Attempt
    /// The station's identity (as the ledger has it now).
    public var identity: IBeacon
    /// The bench whose run recorded it (and whose next runs deliver it).
    public var bench: String?
    /// When it was recorded (ISO 8601, UTC).
    public var createdAt: String
    /// Tries so far.
    public var tries: Int
    /// The last try's status in words (`exit 0`, `exit 3`, `timed out after 30 s`…).
    public var lastStatus: String?
    /// When a try exited 0; `nil` while pending.
    public var deliveredAt: String?

    /// Whether it still waits for a try that exits 0.
    public var isPending: Bool { deliveredAt == nil }

    /// The outcomes a hook can be given for.
    public static let hookable: Set<AttemptOutcome> = [.verified, .failed]
}

extension LedgerCore {
    /// Every hook run (or the pending ones), oldest first; none when the ledger has no hook runs
    /// (an earlier schema read without migrating).
    package func hookRuns(pendingOnly: Bool) throws(LedgerError) -> [HookRun] {
        guard tables.contains(.hookRuns) else { return [] }
        let prefixed = attemptSelect.split(separator: ", ").map { column in
            column.hasPrefix("NULL AS ") ? String(column) : "a." + column
        }.joined(separator: ", ")
        return try driver.reading("reading hook runs") { () throws(LedgerError) -> [HookRun] in
            try driver.rows(
                """
                SELECT h.event_id, h.hook, h.bench, h.created_at, h.tries, h.last_status, h.delivered_at,
                    s.uuid, s.major, s.minor, s.power, \(prefixed)
                FROM hook_runs AS h JOIN attempts AS a ON a.id = h.attempt JOIN stations AS s ON s.name = a.station
                \(pendingOnly ? "WHERE h.delivered_at IS NULL" : "") ORDER BY h.created_at, h.attempt, h.hook
                """, [], "reading hook runs"
            ).map { row throws(LedgerError) -> HookRun in
                let attempt = try Self.attempt(Array(row.dropFirst(11)))
                let station = try Self.station([.text(attempt.station), row[7], row[8], row[9], row[10], .null])
                guard let eventID = row[0].string, let hook = row[1].string.flatMap(AttemptOutcome.init),
                    let created = row[3].string, let tries = row[4].int
                else { throw Self.unreadable("hook run \(Self.text(row[0])) has values that are not a hook run's") }
                return HookRun(
                    eventID: eventID, hook: hook, attempt: attempt, identity: station.identity, bench: row[2].string,
                    createdAt: created, tries: tries, lastStatus: row[5].string, deliveredAt: row[6].string)
            }
        }
    }

    /// Records attempt `attempt`'s hook run for `hook` unless it is there already.
    package func ensureHookRun(attempt: Int, hook: AttemptOutcome) throws(LedgerError) {
        try driver.inTransaction("recording a hook run") { () throws(LedgerError) in
            try driver.rows(
                "INSERT INTO hook_runs(event_id, attempt, hook, bench, created_at) VALUES (\(dialect.randomID), ?, ?, ?, \(now)) ON CONFLICT (attempt, hook) DO NOTHING",
                [.integer(attempt), .text(hook.rawValue), bench.map { .text($0) } ?? .null], "recording a hook run")
        }
    }

    /// Records one try of a hook run (repeated after a lost COMMIT, the try is counted twice: at
    /// least once).
    package func recordHookTry(eventID: String, status: String, delivered: Bool) throws(LedgerError) {
        try driver.inTransaction("recording a hook run") { () throws(LedgerError) in
            try driver.rows(
                "UPDATE hook_runs SET tries = tries + 1, last_status = ?, delivered_at = CASE WHEN ? = 1 THEN \(now) END WHERE event_id = ? AND delivered_at IS NULL",
                [.text(status), .integer(delivered ? 1 : 0), .text(eventID)], "recording hook run \(eventID)")
        }
    }
}
