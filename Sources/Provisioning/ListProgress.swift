public import BeaconPayload
public import StationLedger

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

/// A station verified on a chip: the station as the ledger has it now, the attempt that burned
/// it, and the identity the chip carries — the power that attempt burned (a calibration recorded
/// since changes the station, not the chip).
public struct BurnedStation: Sendable, Equatable {
    /// The station, as the ledger has it now.
    public var station: Station
    /// Its verified attempt.
    public var attempt: Attempt
    /// The identity on the chip.
    public var carried: IBeacon

    /// Calibrated since its burn: the ledger's power is not the one the chip carries (never for
    /// attempts recorded before ledgers kept the burned power).
    public var isRecalibrated: Bool { carried.measuredPower != station.identity.measuredPower }
}

extension ProvisioningLedger {
    /// The progress of the list of `names`.
    public func progress(of names: Set<String>) throws(LedgerError) -> ListProgress {
        ListProgress(try states(), list: names)
    }

    /// Every station verified on a chip, in list order, with what the chip carries.
    public func burnedStations() throws(LedgerError) -> [BurnedStation] {
        var verified: [String: Attempt] = [:]
        for attempt in try attempts() where attempt.outcome == .verified { verified[attempt.station] = attempt }
        return try states().compactMap { state in
            guard case .done = state.state, let attempt = verified[state.station.name] else { return nil }
            var carried = state.station.identity
            if let power = attempt.power.flatMap(Int8.init(exactly:)) { carried.measuredPower = power }
            return BurnedStation(station: state.station, attempt: attempt, carried: carried)
        }
    }

    /// The stations calibrated since their burn (`BurnedStation.isRecalibrated`), with their
    /// chips: what `--reprovision` burns again.
    public func recalibratedStations() throws(LedgerError) -> [String: String] {
        var result: [String: String] = [:]
        for burned in try burnedStations() where burned.isRecalibrated {
            result[burned.station.name] = burned.attempt.chip
        }
        return result
    }

    /// Releases every held station of the list of `names` (its interrupted attempt becomes failed
    /// and the station pending); returns each held station with the chip it was held on and what
    /// its release did (on a pool, a station whose outcome may wait in a journal elsewhere is
    /// kept; `givingUpJournals`: not this bench's, see `release(station:givingUpJournals:)`).
    public func releaseHeld(in names: Set<String>, givingUpJournals: Bool = false) throws(LedgerError) -> [(
        station: String, chip: String, result: ReleaseResult
    )] {
        var held: [(station: String, chip: String, result: ReleaseResult)] = []
        for state in try states() where names.contains(state.station.name) {
            guard case .held(let chip) = state.state else { continue }
            held.append(
                (state.station.name, chip, try release(station: state.station.name, givingUpJournals: givingUpJournals))
            )
        }
        return held
    }
}
