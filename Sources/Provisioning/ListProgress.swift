/// Where one station list stands in a ledger that may hold other lists too: its own stations'
/// states, counted. What a run of that list claims, releases and reports on.
public struct ListProgress: Sendable, Equatable {
    /// The list's stations with their states, in ledger (list) order.
    public var states: [StationState]

    /// The states of `list`'s stations among `all`.
    public init(_ all: [StationState], list: Set<String>) {
        states = all.filter { list.contains($0.station.name) }
    }

    /// Stations verified on a chip.
    public var done: Int { states.filter { if case .done = $0.state { true } else { false } }.count }
    /// Stations waiting for a chip (failed ones included).
    public var pending: Int { states.filter { if case .pending = $0.state { true } else { false } }.count }
    /// Stations held: interrupted on a chip, waiting for that chip or a release.
    public var held: [String] {
        states.compactMap { if case .held = $0.state { $0.station.name } else { nil } }
    }
    /// Stations with an attempt still open. At the end of a run (one run per ledger) that is an
    /// attempt whose outcome could not be recorded.
    public var inProgress: Int { states.filter { if case .inProgress = $0.state { true } else { false } }.count }
    /// Stations not done.
    public var left: Int { states.count - done }
    /// Whether every station of the list is done.
    public var isComplete: Bool { left == 0 }
}

extension ProvisioningLedger {
    /// The progress of the list of `names`.
    public func progress(of names: Set<String>) throws(LedgerError) -> ListProgress {
        ListProgress(try states(), list: names)
    }

    /// The stations done on a chip whose power in the ledger (a calibration since) is not the one
    /// their verified attempt burned, with their chips: what `--reprovision` burns again.
    public func recalibratedStations() throws(LedgerError) -> [String: String] {
        var burned: [String: Attempt] = [:]
        for attempt in try attempts() where attempt.outcome == .verified { burned[attempt.station] = attempt }
        var result: [String: String] = [:]
        for state in try states() {
            guard case .done(let chip, _) = state.state, let attempt = burned[state.station.name],
                let power = attempt.power, power != Int(state.station.identity.measuredPower)
            else { continue }
            result[state.station.name] = chip
        }
        return result
    }

    /// Releases every held station of the list of `names` (its interrupted attempt becomes failed
    /// and the station pending); returns each released station with the chip it was held on.
    public func releaseHeld(in names: Set<String>) throws(LedgerError) -> [(station: String, chip: String)] {
        var released: [(station: String, chip: String)] = []
        for state in try states() where names.contains(state.station.name) {
            guard case .held(let chip) = state.state else { continue }
            try release(station: state.station.name)
            released.append((state.station.name, chip))
        }
        return released
    }
}
