import BeaconPayload
import CCDebugger
import Checksums
import Dispatch
public import FirmwareTemplate
import HexText
import IntelHex
public import StationLedger
import StructuredText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Walks a bench through the ledger's pending stations, one worker per debugger, each burning the
/// chip it is given, verifying it and recording every attempt — so that no identity is burned
/// twice, no chip gets two identities by accident, and a crash loses nothing.
public final class ProvisioningRun: Sendable {
    let template: StationTemplate
    let ledger: any ProvisioningLedger & Sendable
    let options: ProvisionOptions
    let events: @Sendable (ProvisionEvent) -> Void
    let stopFlag = Atomic<Bool>(false)
    /// Asked whenever the workers check for a stop: a stop requested from outside the run (a
    /// signal handler's atomic flag) without the handler touching the run.
    let stopRequested: @Sendable () -> Bool
    /// The ledger's stations that are not on the run's list (`options.stations`): never claimed.
    let outsideList = Mutex<Set<String>>([])
    let summary = Mutex(ProvisionSummary())

    /// A run over `ledger`'s stations with `template`; it also stops once `stopRequested` says so.
    public init(
        template: StationTemplate, ledger: any ProvisioningLedger & Sendable, options: ProvisionOptions,
        stopRequested: @escaping @Sendable () -> Bool = { false },
        events: @escaping @Sendable (ProvisionEvent) -> Void
    ) {
        self.template = template
        self.ledger = ledger
        self.options = options
        self.stopRequested = stopRequested
        self.events = events
    }

    /// The image a station gets in this run.
    func image(for station: Station) -> StationImage {
        template.stationImage(
            for: station.identity,
            settings: (options.settings ?? template.defaultSettings).with(
                address: options.secondaryAddresses ? nil : options.addresses[station.name]))
    }

    /// With `secondaryAddresses`: the address written as the station's chip's secondary address
    /// (the list's, or the one derived from its identity), most significant byte first.
    func writtenSecondaryAddress(for station: Station) -> [UInt8]? {
        guard options.secondaryAddresses else { return nil }
        return (options.addresses[station.name] ?? StationTemplate.derivedAddress(for: station.identity)).bytes
    }

    /// The address a station advertises with, as the ledger records it.
    func advertiserAddress(of station: Station, image: StationImage) -> String? {
        (writtenSecondaryAddress(for: station) ?? image.settings.address).map(RandomStaticAddress.format)
    }

    /// Asks every worker to stop after the chip it is burning.
    public func requestStop() { stopFlag.store(true, ordering: .relaxed) }

    var stopping: Bool { stopFlag.load(ordering: .relaxed) || stopRequested() }

    /// Runs one worker per debugger in parallel until the stations run out, the debuggers stop or
    /// a stop is requested.
    public func run(_ debuggers: [ProvisioningDebugger]) -> ProvisionSummary {
        if let listed = options.stations {
            // Which stations are another list's must be known before any is claimed: a ledger
            // that cannot be read stops the run (read as empty, it let the workers burn other
            // lists' stations).
            let all: [String]
            do { all = try ledger.states().map(\.station.name) } catch {
                for debugger in debuggers { stop(debugger.name, error.description) }
                return summary.withLock { $0 }
            }
            outsideList.withLock { $0 = Set(all).subtracting(listed) }
        }
        // A thread per debugger: each spends most of its time waiting on the device or for a chip,
        // so they must all run at once. (`concurrentPerform` runs as many at a time as there are
        // cores: on two cores, debuggers 3–8 began only after the first two had stopped.)
        let heartbeatDone = Atomic<Bool>(false)
        let heartbeat = Self.startThread { self.renewLease(until: heartbeatDone) }
        let threads = debuggers.map { debugger in Self.startThread { self.work(debugger) } }
        for case let thread? in threads { pthread_join(thread, nil) }
        heartbeatDone.store(true, ordering: .relaxed)
        if let heartbeat { pthread_join(heartbeat, nil) }
        return summary.withLock { $0 }
    }

    /// The run's heartbeat: renews the ledger's lease every sixth of it until `done`, so that a
    /// server away for most of a lease still finds it held. A lease found over stops the run
    /// (the workers' next change of the ledger is refused, and they erase the chip in hand); a
    /// server that does not answer is tried again until the lease runs out by itself.
    func renewLease(until done: borrowing Atomic<Bool>) {
        let interval = max(0.05, ledger.lease.seconds / 6)
        while !done.load(ordering: .relaxed) {
            var waited = 0.0
            while waited < interval, !done.load(ordering: .relaxed) {
                usleep(50_000)
                waited += 0.05
            }
            if done.load(ordering: .relaxed) { return }
            do { try ledger.renewLease() } catch  where error.kind == .leaseLost {
                loseLease(ProvisioningError.leaseLost(error, station: nil, chip: nil, erased: false).description)
                return
            } catch {
                continue
            }
        }
    }

    /// Records why the lease was lost (the first reason) and stops every worker.
    func loseLease(_ reason: String) {
        note { if $0.leaseLost == nil { $0.leaseLost = reason } }
        requestStop()
    }

    /// A thread of its own running `body`, to join with `pthread_join`; `nil` when no thread could
    /// be made and `body` ran on the caller's thread instead.
    static func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
        final class Body: Sendable {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let started = pthread_create(
            &thread, nil,
            { context in
                let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
                body.run()
                return nil
            }, context)
        // Out of threads: the work runs here, on the caller's thread, one debugger after another.
        guard started == 0 else {
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }
        return thread
    }

    func note(_ update: (inout ProvisionSummary) -> Void) { summary.withLock { update(&$0) } }

    func stop(_ debugger: String, _ reason: String) {
        note { $0.stopped[debugger] = reason }
        events(.debuggerStopped(debugger: debugger, reason: reason))
    }

    /// Seconds as the user wrote them: `600`, `0.5`.
    public static func seconds(_ value: Double) -> String { RunLease.seconds(value) }

    /// One debugger's loop.
    func work(_ debugger: ProvisioningDebugger) {
        var lastChip: String?
        // The last chip was left debug-locked (by its burn, or set aside locked): while no chip
        // was taken off since, a locked chip on the debugger is that one.
        var lastChipLocked = false
        var waitingSince: Double?
        var lastWorkCheck = 0.0
        var sawTargetWhileWaiting = false
        var tally = RetryTally()
        var session: CC254xSession?
        var transportFailures = 0
        // A chip whose outcome is recorded but whose reset to run failed: reset before anything else.
        var unreleased: String?
        while !stopping {
            do throws(ProvisioningError) {
                if session == nil {
                    do {
                        session = CC254xSession(transport: try debugger.open(), chips: [template.chip])
                        session?.framing = options.usbFraming
                    } catch {
                        throw .debugger(error)
                    }
                }
                guard let active = session else { continue }
                let state = try device { () throws(DebuggerError) in try active.open() }
                var chip: String?
                var secondary: [UInt8]?
                var unusable: String?
                var erasedOnArrival = false
                var setAsideReason: SetAsideReason?
                if state.targetID != 0 {
                    var identity = try device { () throws(DebuggerError) in
                        try active.connect(targetID: state.targetID)
                    }
                    if identity.locked, lastChip != nil, lastChipLocked {
                        // Still the chip this debugger left locked: no chip was taken off since.
                        chip = lastChip
                    } else if identity.locked, !options.reprovision, try lockedChipsRecorded() {
                        // It may be a chip this pool locked, carrying its station: erasing it
                        // (the only way to read it) is for --reprovision.
                        if lastChip != Self.lockedChip {
                            events(.setAside(debugger: debugger.name, address: "locked", reason: .debugLocked))
                            note { $0.setAside += 1 }
                            try release(
                                Self.lockedChip, session: active, debugger: debugger.name, unreleased: &unreleased)
                        }
                        lastChip = Self.lockedChip
                        lastChipLocked = true
                        chip = lastChip
                    } else {
                        if identity.locked {
                            // The lock hides everything, the address and the size too; only an
                            // erase lifts it.
                            identity = try device { () throws(DebuggerError) in
                                try active.chipErase(targetID: state.targetID)
                            }
                            erasedOnArrival = true
                        }
                        chip = try identify(
                            identity, session: active, erasedOnArrival: erasedOnArrival, secondary: &secondary,
                            unusable: &unusable, setAsideReason: &setAsideReason)
                    }
                } else {
                    lastChip = nil  // the chip was taken off: whatever comes next is a new chip
                }
                if state.targetID != 0 { sawTargetWhileWaiting = true }
                if let address = unusable, let reason = setAsideReason {
                    if address != lastChip {
                        events(.setAside(debugger: debugger.name, address: address, reason: reason))
                        note { $0.setAside += 1 }
                        lastChip = address
                        try release(address, session: active, debugger: debugger.name, unreleased: &unreleased)
                    }
                    chip = nil
                }
                if unreleased != nil, chip != unreleased { unreleased = nil }  // taken off meanwhile
                if let chip, chip == unreleased {
                    try release(chip, session: active, debugger: debugger.name, unreleased: &unreleased)
                    lastChip = chip
                    transportFailures = 0
                    continue
                }
                guard let chip, chip != lastChip else {
                    // No chip, or still the one just done: wait for the next — unless nothing is
                    // left that a chip could take.
                    let now = MonotonicClock.now
                    // Asked when the wait begins and every second of it: the other debuggers may
                    // take the last stations meanwhile, and then this one has nothing to wait for.
                    if waitingSince == nil || now - lastWorkCheck >= 1 {
                        lastWorkCheck = now
                        if !workLeft(givenUp: tally.givenUp) {
                            stop(debugger.name, Self.nothingLeft(givenUp: tally.givenUp))
                            return
                        }
                    }
                    if waitingSince == nil {
                        waitingSince = now
                        sawTargetWhileWaiting = state.targetID != 0
                        events(.waitingForChip(debugger: debugger.name))
                    }
                    if now - (waitingSince ?? now) > options.targetTimeoutSeconds {
                        let wait = Self.seconds(options.targetTimeoutSeconds)
                        stop(
                            debugger.name,
                            sawTargetWhileWaiting
                                ? "no new chip within \(wait) s"
                                : "no target chip within \(wait) s (none attached, or check the wiring and power)")
                        return
                    }
                    usleep(UInt32(options.pollIntervalSeconds * 1_000_000))
                    continue
                }
                waitingSince = nil
                transportFailures = 0
                events(.chipAttached(debugger: debugger.name, chip: chip))
                var locked = false
                let disposition = try handle(
                    chip: chip, secondaryAddress: secondary, erasedOnArrival: erasedOnArrival, session: active,
                    debugger: debugger.name, tally: &tally, locked: &locked)
                lastChipLocked = locked
                guard case .release = disposition else {
                    stop(debugger.name, Self.nothingLeft(givenUp: tally.givenUp))
                    return
                }
                lastChip = chip
                try release(chip, session: active, debugger: debugger.name, unreleased: &unreleased)
            } catch {
                if case .debugger(.transport) = error {
                    // The debugger may be gone: open it again, but give up after three failures in
                    // a row (an unplugged debugger can still "open" and then fail every transfer).
                    session = nil
                    transportFailures += 1
                    if transportFailures >= 3 || (try? debugger.open()) == nil {
                        let chipLeft = unreleased.map { "; chip \($0) is done but was not reset to run" } ?? ""
                        stop(debugger.name, error.description + chipLeft)
                        return
                    }
                    usleep(UInt32(options.pollIntervalSeconds * 1_000_000))
                    continue
                }
                stop(debugger.name, error.description)
                return
            }
        }
    }

    /// Names the chip just connected (unlocked, or unlocked by an erase): its primary address, or
    /// with `ChipIdentitySource.secondary` its secondary one (returned in `secondary`); `nil`
    /// with `unusable` and `setAsideReason` set when it is to be set aside.
    func identify(
        _ identity: ChipIdentity, session active: CC254xSession, erasedOnArrival: Bool, secondary: inout [UInt8]?,
        unusable: inout String?, setAsideReason: inout SetAsideReason?
    ) throws(ProvisioningError) -> String? {
        let primary = HexText.colonSeparated(
            try device { () throws(DebuggerError) in try active.primaryAddress(chip: template.chip) })
        if identity.flashSizeCode != template.chip.flashSizeCode {
            // Another part of the family (its flash size says so): the template's addresses,
            // pages and lock bits are not this chip's.
            unusable = primary
            setAsideReason = .notTheTemplatesChip(
                flashSizeCode: identity.flashSizeCode, templateChip: template.chip.name, erased: erasedOnArrival)
        } else if ChipID.isValid(primary) {
            return primary
        } else if options.chipIdentity == .secondary,
            let address = try device({ () throws(DebuggerError) in try active.secondaryAddress(chip: template.chip) }),
            ChipID.isValid(HexText.colonSeparated(address))
        {
            secondary = address
            return HexText.colonSeparated(address)
        } else {
            unusable = primary
            setAsideReason = .indistinguishable(secondaryTried: options.chipIdentity == .secondary)
        }
        return nil
    }

    /// What `lastChip` holds while a locked chip set aside is on the debugger (it has no name).
    static let lockedChip = "debug-locked"

    /// Whether the ledger records a chip this pool locked (then a locked chip arriving may be one).
    func lockedChipsRecorded() throws(ProvisioningError) -> Bool {
        do { return try ledger.hasLockedChips() } catch { throw .ledger(error) }
    }

    /// Runs a step on the debugger; its failure is the debugger's.
    func device<T>(_ step: () throws(DebuggerError) -> T) throws(ProvisioningError) -> T {
        do { return try step() } catch { throw .debugger(error) }
    }

    /// True while a station of the run's list could still take a chip: one pending (and not given
    /// up on) or one held (its chip may come back). A ledger that cannot be read counts as work
    /// left: the next claim reports the error.
    /// Why a debugger stops when no station is left for it to try: the stations it gave up on
    /// (failed more often than `--retries` allows, or not heard without `--retry-unheard`) are
    /// still pending, and the reason says so rather than that none is left.
    static func nothingLeft(givenUp: Set<String>) -> String {
        guard !givenUp.isEmpty else { return "no pending stations left" }
        let names = givenUp.sorted()
        return
            "no pending stations left but \(names.count) given up after failing (\(names.prefix(5).joined(separator: ", "))\(names.count > 5 ? ", …" : ""); see --retries and --retry-unheard)"
    }

    func workLeft(givenUp: Set<String>) -> Bool {
        let outside = outsideList.withLock { $0 }
        if (try? recalibratedLeft(except: outside.union(givenUp))) ?? false {
            return true  // a calibrated station's chip may still come
        }
        return (try? ledger.hasWork(excluding: outside.union(givenUp))) ?? true
    }

    /// Resets a chip the run is done with, so that it runs and the bench can take it off. A failed
    /// reset is reported and remembered (`unreleased`), never swallowed: the error goes to the
    /// worker, which opens the debugger again and retries the reset before it takes another chip.
    func release(_ chip: String, session: CC254xSession, debugger: String, unreleased: inout String?)
        throws(ProvisioningError)
    {
        do {
            try session.resetAndRun()
            unreleased = nil
        } catch {
            unreleased = chip
            events(.resetFailed(debugger: debugger, chip: chip, reason: error.description))
            throw .debugger(error)
        }
    }
}
