public import BeaconPayload
public import CCDebugger
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

/// Why a provisioning step failed, in the terms of the layer that failed. A worker acts on the
/// layer: a failed USB transfer opens the debugger again; a ledger failure stops the run (nothing
/// more may be burned that cannot be recorded); an image that cannot be flashed stops the worker.
public enum ProvisioningError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The debugger or the chip failed.
    case debugger(DebuggerError)
    /// The ledger could not read or record.
    case ledger(LedgerError)
    /// A station's image cannot be flashed into the template's chip (nothing was written).
    case image(station: String, FlashError)
    /// The run's lease was lost (`LedgerError.Kind.leaseLost`) with `station` burned, or being
    /// burned, into `chip`: its outcome was not recorded, so the chip was erased (`erased`) or,
    /// when that failed, is to be set aside.
    case leaseLost(LedgerError, station: String?, chip: String?, erased: Bool)

    /// The error as the layer that raised it.
    init(_ error: DebuggerError) { self = .debugger(error) }

    /// Plain-words reason.
    public var description: String {
        switch self {
        case .debugger(let error): return error.description
        case .ledger(let error): return error.description
        case .image(let station, let error): return "the image of '\(visible: station)' cannot be flashed: \(error)"
        case .leaseLost(let error, let station, let chip, let erased):
            let inHand: String
            if let station, let chip {
                inHand =
                    erased
                    ? "; '\(visible: station)' was not recorded on chip \(chip), so the chip was erased (the station stays where the ledger has it)"
                    : "; chip \(chip) may carry '\(visible: station)' unrecorded and could not be erased: set it aside and erase it (ccbeacon erase) before it is used"
            } else {
                inHand = ""
            }
            return "lease lost: \(error.operation): \(error.message)\(inHand)"
        }
    }
}

/// Settings of a provisioning run.
public struct ProvisionOptions: Sendable {
    /// Verification after each burn.
    /// How each chip's whole image is checked after its identity bytes are read back: `.crc` or
    /// `.read`. A provisioned station is always verified: `.none` is taken as `.crc`.
    public var verify: VerifyMode = .crc
    /// The verification a burn runs: `verify`, with `.none` taken as `.crc`.
    var burnVerification: VerifyMode { verify == .none ? .crc : verify }
    /// Further attempts for a station after a failure (each on a fresh chip after a chip fault).
    public var retries = 1
    /// Burn chips that already carry a verified identity (their old station becomes pending).
    public var reprovision = false
    /// Seconds a debugger waits for a (new) chip before it stops.
    public var targetTimeoutSeconds = 600.0
    /// Seconds between looks for a new chip.
    public var pollIntervalSeconds = 0.25
    /// Advertising settings (interval, TX power) for every station, checked for the run's template;
    /// `nil` keeps the template's. Each station keeps its own derived advertiser address.
    public var settings: CheckedSettings?
    /// Stations' own advertiser addresses from the list, by station name (checked with
    /// `AddressPlan` against the template); the others get the address derived from their identity.
    public var addresses: [String: RandomStaticAddress] = [:]
    /// How a chip is told apart from the others.
    public var chipIdentity: ChipIdentitySource = .primary
    /// The stations of the run's list, by name; `nil` for every station of the ledger. A ledger may
    /// hold several lists (the default ledger sits beside the list): a run claims only its own
    /// list's stations, burned with its own settings, and leaves chips that carry — or were
    /// interrupted with — another list's station alone.
    public var stations: Set<String>?
    /// Listens on air for each station after its burn (`--scan-verify`); `nil`: nobody listens.
    /// The chip is reset to run, and a station not heard sending exactly its image's advertising
    /// data (from its address) within `scanSeconds` is failed and its chip erased.
    public var onAir: (any OnAirListener)?
    /// How long the listener listens for each station.
    public var scanSeconds = 5.0
    /// Whether a station not heard goes to another chip in this run (counting against
    /// `retries`); without it, it waits for the next run (an antenna or a board fault would make
    /// every chip fail alike).
    public var retryUnheard = false
    /// Locks each chip's debug interface once its burn is verified (and heard, with `onAir`):
    /// the lock bits are written, read back, and the lock seen taking effect after a reset; the
    /// ledger records it on the attempt (`Attempt.debugLocked`). A chip whose lock does not take
    /// is erased and its attempt failed.
    public var lockDebug = false
    /// How each burn lays out its frames in USB transfers (`USBFraming`).
    public var usbFraming = USBFraming.proven
    /// Writes each station's address (`addresses`, or the one derived from its identity) as the
    /// chip's secondary address in the last flash page, reads it back and records it as the
    /// attempt's advertiser address: for templates (TI's BLE stack) that advertise with the
    /// chip's address rather than one of their own.
    public var secondaryAddresses = false

    /// Default settings.
    public init() {}
}

/// What a station just burned should be heard sending.
public struct OnAirExpectation: Sendable, Equatable {
    /// Its advertiser address, most significant byte first; `nil` for a template without an
    /// address field (any address).
    public var address: [UInt8]?
    /// Its advertising data as the image carries it.
    public var advertisingData: [UInt8]
    /// Whether `advertisingData` is the whole advertising data; otherwise (a template whose field
    /// is the manufacturer data alone) the advertising data must contain it.
    public var isWhole: Bool

    /// An expectation.
    public init(address: [UInt8]?, advertisingData: [UInt8], isWhole: Bool) {
        self.address = address
        self.advertisingData = advertisingData
        self.isWhole = isWhole
    }

    /// Whether an advertisement from `address` with `data` is the station's.
    public func matches(address heard: [UInt8], data: [UInt8]) -> Bool {
        guard address.map({ $0 == heard }) ?? true else { return false }
        return isWhole
            ? data == advertisingData
            : data.count >= advertisingData.count
                && data.indices.contains {
                    data[$0...].starts(with: advertisingData)
                }
    }
}

/// Listens on air for a station just burned (`provision --scan-verify`).
public protocol OnAirListener: Sendable {
    /// Listens up to `seconds` for `expected` and says what was heard; throws when it cannot
    /// listen at all (no radio, no permission).
    func listen(for expected: OnAirExpectation, seconds: Double) throws(OnAirError) -> OnAirCheck
}

/// Why a listener cannot listen.
public struct OnAirError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What happened.
    public var message: String

    /// An error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// Which address names a chip in the ledger.
public enum ChipIdentitySource: String, Sendable, CaseIterable {
    /// The factory IEEE address in the info page; a chip whose address is erased (all FF) or all
    /// zero cannot be told apart from others and is set aside.
    case primary
    /// As `primary`, but a chip with an unusable primary address is named by its secondary
    /// address (last flash page) when that one is usable; the burn keeps it.
    case secondary
}

/// What a provisioning run reports as it goes.
public enum ProvisionEvent: Sendable, Equatable {
    /// A debugger waits for a chip to be attached (or swapped).
    case waitingForChip(debugger: String)
    /// A chip was found.
    case chipAttached(debugger: String, chip: String)
    /// A station is being burned.
    case started(debugger: String, station: String, chip: String)
    /// A station's attempt ended.
    case finished(debugger: String, station: String, chip: String, outcome: AttemptOutcome, reason: String?)
    /// A chip already carries a verified identity and was left alone.
    case refused(debugger: String, chip: String, carries: String)
    /// A chip arrived debug-locked, so it was erased to read its address, and the ledger says it
    /// carried `station`: that station is pending again.
    case erasedOnArrival(debugger: String, chip: String, station: String)
    /// A chip interrupted in an earlier run with a station of another list came back: only a run
    /// of that list can check it, so it was left alone.
    case interruptedForAnotherList(debugger: String, chip: String, station: String)
    /// A chip interrupted in an earlier run came back and was checked.
    case resumed(debugger: String, station: String, chip: String, verified: Bool)
    /// A debugger stopped working.
    case debuggerStopped(debugger: String, reason: String)
    /// A chip was not burned and the bench must set it aside, for `reason`; `address` is its
    /// factory address as read.
    case setAside(debugger: String, address: String, reason: SetAsideReason)
    /// A chip the run is done with could not be reset to run (its outcome is already recorded);
    /// the debugger is opened again and the reset retried before anything else.
    case resetFailed(debugger: String, chip: String, reason: String)
    /// A station just burned and verified runs, and the run listens for it on air.
    case listening(debugger: String, station: String, chip: String, seconds: Double)
    /// A chip carries a station burned with `burned` dBm whose calibration says `calibrated`:
    /// with reprovisioning, it is burned again with the calibrated value.
    case burningAgain(debugger: String, station: String, chip: String, burned: Int, calibrated: Int)
    /// A burn's progress: `done` of `total` bytes of its erase, programming or verification.
    case progress(debugger: String, station: String, chip: String, progress: FlashProgress)
}

/// Why a chip was set aside unburned.
public enum SetAsideReason: Sendable, Equatable {
    /// Its factory address (erased or all zero) cannot tell it apart from other chips;
    /// `secondaryTried`: the run names chips by a valid secondary address too, and it has none.
    case indistinguishable(secondaryTried: Bool)
    /// Its CHIPINFO0.FLASHSIZE code is not that of the template's chip `templateChip`: another
    /// part, whose flash layout the template does not fit. `erased`: it arrived debug-locked, and
    /// only an erase shows the size.
    case notTheTemplatesChip(flashSizeCode: UInt8, templateChip: String, erased: Bool)
    /// It arrived debug-locked, which hides its address, and the ledger records chips this pool
    /// locked: it may be one of them, carrying its station. Only `reprovision` erases it.
    case debugLocked
}

/// What a worker does with a chip after dealing with it.
enum ChipDisposition {
    /// Reset it to run, so the bench can take it off (it is done, refused or bad).
    case release
    /// Nothing is left to burn: the worker stops.
    case nothingLeft
}

/// The outcome of a run.
public struct ProvisionSummary: Sendable, Equatable {
    /// Stations verified in this run.
    public var verified: [String] = []
    /// Stations whose attempts failed in this run, with the last reason.
    public var failed: [String: String] = [:]
    /// Chips refused because they already carried a station.
    public var refused: [String] = []
    /// Debuggers that stopped, with why.
    public var stopped: [String: String] = [:]
    /// Chips set aside because their address cannot tell them apart.
    public var setAside = 0
    /// Why the run stopped when its lease was lost (`ProvisioningError.leaseLost`): it recorded
    /// nothing more and burned nothing more.
    public var leaseLost: String?

    /// An empty summary.
    public init() {}
}

/// A debugger a run may use: its name for the ledger and how to open it.
public struct ProvisioningDebugger: Sendable {
    /// `bus:address` or serial.
    public var name: String
    /// Opens a fresh transport.
    public var open: @Sendable () throws(DebuggerError) -> any DebuggerTransport

    /// Creates an entry.
    public init(name: String, open: @escaping @Sendable () throws(DebuggerError) -> any DebuggerTransport) {
        self.name = name
        self.open = open
    }
}

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
        var failures: [String: Int] = [:]
        var givenUp: Set<String> = []
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
                        if !workLeft(givenUp: givenUp) {
                            stop(debugger.name, Self.nothingLeft(givenUp: givenUp))
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
                    debugger: debugger.name, failures: &failures, givenUp: &givenUp, locked: &locked)
                lastChipLocked = locked
                guard case .release = disposition else {
                    stop(debugger.name, Self.nothingLeft(givenUp: givenUp))
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

    /// Deals with one attached chip (the worker resets it afterwards): refuses it, settles an
    /// interrupted attempt on it, or burns the next pending station into it.
    func handle(
        chip: String, secondaryAddress: [UInt8]?, erasedOnArrival: Bool, session: CC254xSession, debugger: String,
        failures: inout [String: Int], givenUp: inout Set<String>, locked: inout Bool
    ) throws(ProvisioningError) -> ChipDisposition {
        // The station whose burn (or check) is on this chip now: if the lease is lost before its
        // outcome is recorded, the chip is erased so that the identity is only where the ledger
        // says.
        var inHand: String?
        do {
            let outside = outsideList.withLock { $0 }
            var skipping = givenUp.union(outside)
            var reprovisioning = false
            var burningAgain: String?
            let carried = try ledger.verifiedStation(forChip: chip)
            if let carried, erasedOnArrival {
                // Unlocking erased the chip: it no longer carries its station, which is pending
                // again (and may well come back to this very chip).
                try ledger.supersede(chip: chip, reason: "the chip arrived debug-locked; unlocking it erased its flash")
                events(.erasedOnArrival(debugger: debugger, chip: chip, station: carried))
            } else if let carried {
                if !options.reprovision {
                    note { $0.refused.append(chip) }
                    events(.refused(debugger: debugger, chip: chip, carries: carried))
                    return .release  // untouched
                }
                if !outside.contains(carried), let change = try recalibration(of: carried, on: chip) {
                    // Calibrated since it was burned: the same station again, on its own chip.
                    burningAgain = carried
                    events(
                        .burningAgain(
                            debugger: debugger, station: carried, chip: chip, burned: change.burned,
                            calibrated: change.calibrated))
                } else {
                    // Reprovisioning gives the chip another station (its old one becomes pending) —
                    // but only once there is one to give: the record changes after the claim.
                    reprovisioning = true
                    skipping.insert(carried)
                }
            }
            if let interrupted = try ledger.interruptedAttempt(forChip: chip) {
                if outside.contains(interrupted.station) {
                    // Another list's station, burned with that list's settings: only a run of that
                    // list can check it. Leave the chip as it is.
                    note { $0.refused.append(chip) }
                    events(.interruptedForAnotherList(debugger: debugger, chip: chip, station: interrupted.station))
                    return .release
                }
                // Only a chip that may hold the interrupted station is erased when the lease is
                // lost; one that still carries another verified station keeps it.
                if carried == nil { inHand = interrupted.station }
                switch try resume(interrupted, carrying: carried, session: session, debugger: debugger, locked: &locked)
                {
                case .verified, .leftHeld: return .release
                case .notOnChip:
                    // A burn that was cut off (a failed transfer, a crash) and left the chip
                    // without the station counts as a failure of it: a debugger that cuts off
                    // every burn of it must not burn it again without end.
                    failures[interrupted.station, default: 0] += 1
                    if failures[interrupted.station, default: 0] > options.retries {
                        givenUp.insert(interrupted.station)
                        skipping.insert(interrupted.station)
                    }
                case .notHeard(let station, let erased):
                    failures[station, default: 0] += 1
                    if !options.retryUnheard || failures[station, default: 0] > options.retries {
                        givenUp.insert(station)
                        skipping.insert(station)
                    }
                    // A chip not erased may carry the identity (or is another chip now): nothing
                    // more goes into it.
                    if !erased { return .release }
                }
                inHand = nil  // settled and recorded
            }
            // A stop asked for meanwhile (a radio that failed, a signal): no new station.
            if stopping { return .release }
            do {
                // The image whose digest the ledger records is the one burned.
                var claimedImage: StationImage?
                let record = { (station: Station) -> (sha256: String, advertiserAddress: String?) in
                    let image = self.image(for: station)
                    claimedImage = image
                    return (SHA256.hexDigest(image.file.text), self.advertiserAddress(of: station, image: image))
                }
                let claimed =
                    if let burningAgain {
                        try ledger.claimAgain(
                            station: burningAgain, chip: chip, debugger: debugger, template: template.manifest.name,
                            templateSHA256: template.manifest.imageSHA256,
                            verifyMethod: options.burnVerification.rawValue,
                            reason: "burned again with its calibrated measured power", image: record)
                    } else {
                        try ledger.claimNextStation(
                            chip: chip, debugger: debugger, template: template.manifest.name,
                            templateSHA256: template.manifest.imageSHA256,
                            verifyMethod: options.burnVerification.rawValue, skipping: skipping, image: record)
                    }
                guard let (station, attempt) = claimed else {
                    // Nothing pending; with --reprovision a calibrated station's chip may still
                    // come, so this chip is let go and the worker waits.
                    return try recalibratedLeft(except: outsideList.withLock { $0 }) ? .release : .nothingLeft
                }
                // Superseded first: until then the chip still carries its old station, verified.
                if reprovisioning { try ledger.supersede(chip: chip) }
                inHand = station.name
                events(.started(debugger: debugger, station: station.name, chip: chip))
                var burnError: DebuggerError?
                var burned: BurnReport?
                do throws(FlashError) {
                    burned = try burn(
                        station, image: claimedImage ?? image(for: station),
                        keeping: writtenSecondaryAddress(for: station) ?? secondaryAddress, session: session
                    ) { progress in
                        self.events(
                            .progress(debugger: debugger, station: station.name, chip: chip, progress: progress))
                    }
                } catch {
                    let debuggerFailure: DebuggerError? =
                        switch error {
                        case .debugger(let failure), .flashChanged(let failure): failure
                        default: nil
                        }
                    guard let failure = debuggerFailure else {
                        // Refused before the chip was touched: the template's image does not fit
                        // its own chip. Every station would fail alike: record it and stop.
                        try ledger.finish(
                            attempt.id, outcome: .failed, reason: "\(error); nothing was written to the chip")
                        throw ProvisioningError.image(station: station.name, error)
                    }
                    burnError = failure
                }
                if let burnError {
                    throw try failBurn(
                        burnError, attempt: attempt, station: station.name, chip: chip, session: session,
                        debugger: debugger, failures: &failures, givenUp: &givenUp)
                }
                var onAir: OnAirCheck?
                if let listener = options.onAir {
                    let heard = try hear(
                        claimedImage ?? image(for: station), with: listener, station: station.name, chip: chip,
                        secondary: writtenSecondaryAddress(for: station), session: session, debugger: debugger)
                    guard case .heard(let check) = heard.result else {
                        let reason = heard.reason ?? "not heard on air"
                        try ledger.finish(
                            attempt.id, outcome: heard.erased ? .failed : .interrupted, reason: reason,
                            readBack: burned?.readBackText, onAir: heard.check)
                        failures[station.name, default: 0] += 1
                        if !options.retryUnheard || failures[station.name, default: 0] > options.retries {
                            givenUp.insert(station.name)
                        }
                        note { $0.failed[station.name] = reason }
                        events(
                            .finished(
                                debugger: debugger, station: station.name, chip: chip,
                                outcome: heard.erased ? .failed : .interrupted, reason: reason))
                        if let failure = heard.failure { throw failure }
                        return .release
                    }
                    onAir = check
                }
                var verifiedReason: String?
                var readBack = burned?.readBack ?? []
                if options.lockDebug {
                    do throws(DebuggerError) {
                        if let gone = try lockDebugInterface(chip: chip, session: session) {
                            verifiedReason = gone
                        } else {
                            readBack.append(template.chip.lockBits)
                        }
                    } catch {
                        throw try failBurn(
                            error, attempt: attempt, station: station.name, chip: chip, session: session,
                            debugger: debugger, failures: &failures, givenUp: &givenUp,
                            step: "locking the debug interface")
                    }
                }
                try ledger.finish(
                    attempt.id, outcome: .verified, reason: verifiedReason,
                    readBack: burned.map { _ in BurnReport.describe(readBack) }, onAir: onAir,
                    debugLocked: options.lockDebug && verifiedReason == nil)
                if options.lockDebug, verifiedReason == nil { locked = true }
                note {
                    $0.verified.append(station.name)
                    $0.failed[station.name] = nil
                }
                events(
                    .finished(debugger: debugger, station: station.name, chip: chip, outcome: .verified, reason: nil))
                return .release
            }
        } catch let error as LedgerError {
            // Nothing more may be burned that could not be recorded.
            requestStop()
            if error.kind == .leaseLost {
                let erased = inHand != nil && eraseUnrecorded(chip, session: session)
                let lost = ProvisioningError.leaseLost(
                    error, station: inHand, chip: inHand.map { _ in chip }, erased: erased)
                loseLease(lost.description)
                throw lost
            }
            throw .ledger(error)
        } catch let error as DebuggerError {
            if case .transport = error { throw .debugger(error) }
            return .release  // a chip fault: reset it and wait for the next chip
        } catch let error as ProvisioningError {
            throw error
        } catch {
            // Every step above throws one of the three; Swift cannot see that through `do`.
            throw .ledger(LedgerError(operation: "provisioning", message: "\(error)", kind: .database))
        }
    }

    /// Erases `chip`, which holds (or may hold) a station whose outcome can no longer be recorded
    /// (the run's lease was lost): only if it is still the chip attached. Whether it was erased.
    func eraseUnrecorded(_ chip: String, session: CC254xSession) -> Bool {
        do throws(DebuggerError) {
            let state = try session.open()
            guard state.targetID != 0 else { return false }
            _ = try session.connect(targetID: state.targetID)
            guard try attachedChip(session, expecting: chip) == chip else { return false }
            try erase(chip, session: session)
            return true
        } catch {
            return false
        }
    }

    /// Erases `chip` (attached and connected). A chip the run names by its secondary address
    /// (`ChipIdentitySource.secondary`: its primary one cannot name it) gets that address back
    /// at once, read back: the erase takes the chip's only name with it, and a chip without one
    /// is set aside for good the next time it is attached. Only the erase can fail this: once it
    /// is done the identity is gone, whatever becomes of the name (a chip whose name could not be
    /// written back is set aside, and says why, when it is attached again).
    func erase(_ chip: String, session: CC254xSession) throws(DebuggerError) {
        _ = try session.chipErase(targetID: template.chip.debuggerTargetID)
        try? writeBackName(chip, session: session)
    }

    /// See `erase`.
    func writeBackName(_ chip: String, session: CC254xSession) throws(DebuggerError) {
        guard options.chipIdentity == .secondary,
            !ChipID.isValid(HexText.colonSeparated(try session.primaryAddress(chip: template.chip))),
            let name = HexText.parseColonSeparated(chip, count: 6),
            let image = try? FlashPlan.withLastPage(
                MemoryImage(), chip: template.chip, secondaryAddress: name, lockDebug: false),
            let plan = try? FlashPlan(image: image, chip: template.chip, allowLastPage: true)
        else { return }
        try session.program(plan)
        try session.verifyRanges([template.chip.secondaryAddress], of: image)
    }

    /// Records a burn (or the lock after it) that failed on `chip` with `burnError` and returns
    /// the error the worker goes on with. A failed burn may have left the identity on the chip. A
    /// chip fault: erase the chip, so that only a chip recorded as verified can ever carry it,
    /// then record the failure (the station may go to another chip). A failed transfer — here or
    /// in that erase — leaves the chip's content unknown: the attempt is recorded as interrupted,
    /// and the station is held until this chip is back and checked (or released), whoever swaps
    /// what meanwhile.
    func failBurn(
        _ burnError: DebuggerError, attempt: Attempt, station: String, chip: String, session: CC254xSession,
        debugger: String, failures: inout [String: Int], givenUp: inout Set<String>, step: String? = nil
    ) throws(LedgerError) -> DebuggerError {
        var cause = burnError
        var erased = false
        if case .transport = burnError {
        } else {
            do {
                try erase(chip, session: session)
                erased = true
            } catch { cause = error }
        }
        // Not erased — a failed transfer, or an erase that failed in any way — leaves the chip's
        // content unknown.
        let unknown = !erased
        let eraseFailed: Bool = if case .transport = burnError { false } else { !erased }
        let what = step.map { "\($0): " } ?? ""
        let reason =
            unknown
            ? "\(what)\(burnError.description)\(eraseFailed ? "; erasing it then failed: \(cause)" : ""); the chip may carry the identity, so the station is held until it is attached again"
            : "\(what)\(burnError.description); the chip was erased"
        try ledger.finish(attempt.id, outcome: unknown ? .interrupted : .failed, reason: reason)
        if !unknown {
            failures[station, default: 0] += 1
            if failures[station, default: 0] > options.retries { givenUp.insert(station) }
        }
        note { $0.failed[station] = reason }
        events(
            .finished(
                debugger: debugger, station: station, chip: chip, outcome: unknown ? .interrupted : .failed,
                reason: reason))
        // A bad chip gets no further station and is reset so the bench (or the operator, told by
        // the event) swaps it; after a failed transfer the worker opens the debugger again.
        return cause
    }

    /// Locks the debug interface of `chip`, whose burn was just verified: the lock bits are
    /// written (over the last page as it is: writing ones changes nothing) and read back, and a
    /// reset into debug mode must then find the interface locked. A chip heard running (with an
    /// on-air check) is halted first and must still be `chip`; when another is attached, nothing
    /// is written and the reason is returned (the station stays verified on the chip that left,
    /// unlocked). `nil`: locked.
    func lockDebugInterface(chip: String, session: CC254xSession) throws(DebuggerError) -> String? {
        let targetID = template.chip.debuggerTargetID
        if options.onAir != nil {
            guard try session.open().targetID != 0 else {
                return "the chip was taken off before its debug interface could be locked"
            }
            _ = try session.connect(targetID: targetID)
            let attached = try attachedChip(session, expecting: chip)
            guard attached == chip else {
                return "the chip was taken off before its debug interface could be locked (\(attached) is attached now)"
            }
        }
        guard
            let lock = try? FlashPlan.withLastPage(
                MemoryImage(), chip: template.chip, secondaryAddress: nil, lockDebug: true),
            let plan = try? FlashPlan(image: lock, chip: template.chip, allowLastPage: true)
        else { throw .lockNotTaken }
        try session.program(plan)
        try session.verifyRanges([template.chip.lockBits], of: lock)
        guard try session.connect(targetID: targetID).locked else { throw .lockNotTaken }
        return nil
    }

    /// With reprovisioning: whether a station calibrated since its burn, other than `except`,
    /// waits for its chip.
    func recalibratedLeft(except: Set<String>) throws(LedgerError) -> Bool {
        guard options.reprovision else { return false }
        return try ledger.recalibratedStations().keys.contains { !except.contains($0) }
    }

    /// The station a chip carries, when its power in the ledger (a calibration) is no longer the
    /// power its verified attempt burned: both values; `nil` when they agree or the attempt was
    /// recorded before ledgers kept the burned power.
    func recalibration(of station: String, on chip: String) throws(LedgerError) -> (burned: Int, calibrated: Int)? {
        guard
            let burned = try ledger.burnedStations().first(where: {
                $0.station.name == station && $0.attempt.chip == chip
            }), burned.isRecalibrated
        else { return nil }
        return (Int(burned.carried.measuredPower), Int(burned.station.identity.measuredPower))
    }

    /// What checking a chip from an interrupted run found.
    enum ResumeOutcome: Equatable {
        /// It holds the image (and was heard, with `--scan-verify`): the attempt is verified.
        case verified
        /// It does not hold the image: the chip was erased and the attempt failed; the chip is
        /// free for a station.
        case notOnChip
        /// It holds the image but was not heard on air; `erased`: the chip was erased (free for
        /// another station), else it may carry the identity or was swapped meanwhile.
        case notHeard(station: String, erased: Bool)
        /// It does not hold the image and could not be erased: the attempt stays interrupted and
        /// nothing goes into the chip.
        case leftHeld
    }

    /// A chip whose burn was interrupted came back: check what it holds. `carried`: the station
    /// the ledger records as verified on it, if any.
    func resume(
        _ attempt: Attempt, carrying carried: String?, session: CC254xSession, debugger: String, locked: inout Bool
    ) throws -> ResumeOutcome {
        guard let station = try ledger.station(named: attempt.station) else { return .notOnChip }
        if let carried, carried != attempt.station {
            // Reprovisioning claims the new station first and supersedes the old one before it
            // burns: an attempt interrupted while the old one is still recorded never reached
            // the chip, which still holds the old station. Nothing is erased.
            let reason = "interrupted before its burn began; the chip still carries '\(visible: carried)'"
            try ledger.finish(attempt.id, outcome: .failed, reason: reason, readBack: nil, onAir: nil)
            events(
                .finished(
                    debugger: debugger, station: station.name, chip: attempt.chip, outcome: .failed, reason: reason))
            return .notOnChip
        }
        let image = image(for: station)
        var verified = false
        var readBack = template.identityRanges
        var memory = image.file.memory
        // The address the attempt wrote as the chip's secondary address, if it did (a template
        // without an address field whose attempt recorded one): the chip must hold it — whatever
        // this run is given — and it must be what this run would write.
        let recorded =
            template.manifest.field(.advertiserAddress) == nil
            ? attempt.advertiserAddress.flatMap(RandomStaticAddress.bytes(parsing:)) : nil
        if let recorded,
            let withAddress = try? FlashPlan.withLastPage(
                memory, chip: template.chip, secondaryAddress: recorded, lockDebug: false)
        {
            // The station's address is on the chip too: read back like its identity.
            memory = withAddress
            readBack.append(template.chip.secondaryAddress)
        }
        if SHA256.hexDigest(image.file.text) == attempt.imageSHA256, recorded == writtenSecondaryAddress(for: station) {
            // The same proof as a fresh burn: identity bytes read back, then the CRC of the rest.
            do {
                _ = try FlashProgrammer(session: session).check(memory, readBack: readBack, verify: .crc)
                verified = true
            } catch {
                // A failed transfer says nothing about the chip: the attempt stays interrupted, the
                // worker opens the debugger again and the chip is checked once more.
                if case .transport = error { throw error }
            }
        }
        var onAir: OnAirCheck?
        if verified, let listener = options.onAir {
            // Confirmed on the chip, and with --scan-verify on air too, as a fresh burn is.
            let heard = try hear(
                image, with: listener, station: station.name, chip: attempt.chip,
                secondary: writtenSecondaryAddress(for: station), session: session, debugger: debugger)
            guard case .heard(let check) = heard.result else {
                // A chip that could not be erased stays interrupted: its station stays held.
                if heard.erased {
                    try ledger.finish(
                        attempt.id, outcome: .failed, reason: heard.reason, readBack: nil, onAir: heard.check)
                }
                events(
                    .finished(
                        debugger: debugger, station: station.name, chip: attempt.chip,
                        outcome: heard.erased ? .failed : .interrupted, reason: heard.reason))
                if let failure = heard.failure { throw failure }
                return .notHeard(station: station.name, erased: heard.erased)
            }
            onAir = check
        }
        if !verified {
            // Not the recorded image — another one (other settings, a calibration since), a part
            // of it, or a check that failed on the chip — yet the identity may be on it: the chip
            // is erased before the station may go anywhere else. An erase that fails leaves the
            // attempt interrupted, and the station held for this chip.
            do throws(DebuggerError) {
                // The chip checked must still be the one attached: a chip swapped in meanwhile is
                // another one (it may carry a station of its own) and is not erased.
                guard try attachedChip(session, expecting: attempt.chip) == attempt.chip else {
                    events(
                        .finished(
                            debugger: debugger, station: station.name, chip: attempt.chip, outcome: .interrupted,
                            reason: "the chip was taken off during its check; the station stays held for it"))
                    return .leftHeld
                }
                try erase(attempt.chip, session: session)
            } catch {
                if case .transport = error { throw error }
                events(
                    .finished(
                        debugger: debugger, station: station.name, chip: attempt.chip, outcome: .interrupted,
                        reason:
                            "the chip does not hold the recorded image, and erasing it failed (\(error)); the station stays held"
                    ))
                return .leftHeld
            }
        }
        var lockNote = ""
        if verified, options.lockDebug {
            // Locked as a fresh burn would be.
            do throws(DebuggerError) {
                if let gone = try lockDebugInterface(chip: attempt.chip, session: session) {
                    lockNote = "; \(gone)"
                } else {
                    locked = true
                    readBack.append(template.chip.lockBits)
                }
            } catch {
                var failures: [String: Int] = [:]
                var givenUp: Set<String> = []
                throw try failBurn(
                    error, attempt: attempt, station: station.name, chip: attempt.chip, session: session,
                    debugger: debugger, failures: &failures, givenUp: &givenUp, step: "locking the debug interface")
            }
        }
        try ledger.finish(
            attempt.id, outcome: verified ? .verified : .failed,
            reason: verified
                ? "confirmed on the chip after the interruption\(lockNote)"
                : "the chip did not hold the recorded image after the interruption; it was erased",
            readBack: verified ? BurnReport.describe(readBack) : nil, onAir: onAir, debugLocked: locked)
        events(.resumed(debugger: debugger, station: station.name, chip: attempt.chip, verified: verified))
        if verified { note { $0.verified.append(station.name) } }
        return verified ? .verified : .notOnChip
    }

    /// What listening for a station found, and what became of its chip.
    struct Hearing {
        enum Result {
            case heard(OnAirCheck)
            case notHeard
        }
        var result: Result
        /// What was heard (nil when the listener could not listen).
        var check: OnAirCheck?
        /// Why it is not verified.
        var reason: String?
        /// Whether the chip was erased (else the identity may still be on it).
        var erased = true
        /// A debugger failure the worker handles once the outcome is recorded (a transfer that
        /// failed: the debugger is opened again; a chip fault: the chip is reset and let go).
        var failure: DebuggerError?
    }

    /// Resets the chip to run and listens for the station on air with `listener`. Not heard (or
    /// no radio to listen with): the chip is halted again and erased, so that only a chip
    /// recorded as verified ever carries the identity; a radio that cannot listen stops the run.
    func hear(
        _ image: StationImage, with listener: any OnAirListener, station: String, chip: String, secondary: [UInt8]?,
        session: CC254xSession, debugger: String
    ) throws(ProvisioningError) -> Hearing {
        let seconds = Self.seconds(options.scanSeconds)
        var hearing: Hearing
        do {
            try session.resetAndRun()
            events(.listening(debugger: debugger, station: station, chip: chip, seconds: options.scanSeconds))
            let check = try listener.listen(
                for: expectation(image, secondary: secondary), seconds: options.scanSeconds)
            if check.heard { return Hearing(result: .heard(check), check: check) }
            let others =
                check.othersFromAddress > 0
                ? " (\(check.othersFromAddress) advertisement(s) from its address with other bytes)" : ""
            hearing = Hearing(
                result: .notHeard, check: check, reason: "not heard on air within \(seconds) s\(others)")
        } catch let error as OnAirError {
            requestStop()
            stop(debugger, "the on-air check cannot run: \(error.message)")
            hearing = Hearing(result: .notHeard, check: nil, reason: "the on-air check could not run: \(error.message)")
        } catch let error as DebuggerError {
            hearing = Hearing(
                result: .notHeard, check: nil,
                reason: "the chip could not be reset to run for the on-air check: \(error)")
            if case .transport = error {
                hearing.erased = false
                hearing.reason! +=
                    "; the chip may carry the identity, so the station is held until it is attached again"
                hearing.failure = error
                return hearing
            }
        } catch {
            hearing = Hearing(result: .notHeard, check: nil, reason: "\(error)")
        }
        do throws(DebuggerError) {
            let state = try session.open()
            guard state.targetID != 0 else { throw .noTarget }
            _ = try session.connect(targetID: state.targetID)
            // Only the chip that was burned is erased: one swapped in while the run listened is
            // another chip, and the burned one is gone with the identity on it.
            let attached = try attachedChip(session, expecting: chip)
            guard attached == chip else {
                hearing.erased = false
                hearing.reason =
                    (hearing.reason ?? "")
                    + "; the chip was taken off before it could be erased (\(attached) is attached now): it carries the identity, so the station is held until it is attached again"
                return hearing
            }
            try erase(chip, session: session)
            hearing.reason = (hearing.reason ?? "") + "; the chip was erased"
        } catch {
            hearing.erased = false
            hearing.reason =
                (hearing.reason ?? "")
                + "; erasing it then failed (\(error)): the chip may carry the identity, so the station is held until it is attached again"
            hearing.failure = error
        }
        return hearing
    }

    /// The name of the chip attached now (connected): its primary address, or — when chips are
    /// named by their secondary address and the primary is not `expected` — its secondary one.
    func attachedChip(_ session: CC254xSession, expecting expected: String) throws(DebuggerError) -> String {
        var attached = HexText.colonSeparated(try session.primaryAddress(chip: template.chip))
        if attached != expected, options.chipIdentity == .secondary,
            let secondary = try session.secondaryAddress(chip: template.chip)
        {
            attached = HexText.colonSeparated(secondary)
        }
        return attached
    }

    /// The advertisement the station's image makes: the advertising data field's bytes, from the
    /// image's advertiser address (or the chip's secondary address `secondary`, written for it).
    func expectation(_ image: StationImage, secondary: [UInt8]? = nil) -> OnAirExpectation {
        let field = template.manifest.fields.first { $0.address == image.payloadAddress }
        let length = field?.kind.length ?? PatchField.Kind.iBeaconAdvertisingData.length
        return OnAirExpectation(
            address: secondary ?? image.settings.address,
            advertisingData: image.file.memory.bytes(in: image.payloadAddress..<(image.payloadAddress + length)),
            isWhole: field?.kind != .iBeaconManufacturerData)
    }

    /// Erase, program and verify `image` (the station's, as recorded in the ledger): the
    /// template's identity bytes (fields and OAD header) are always read back byte for byte, the
    /// rest is checked as `options.verify` says.
    /// A chip named by its secondary address keeps it (`keeping`): it is written back into the
    /// last page and read back like the identity.
    func burn(
        _ station: Station, image: StationImage, keeping secondaryAddress: [UInt8]?, session: CC254xSession,
        progress: (FlashProgress) -> Void = { _ in }
    ) throws(FlashError) -> BurnReport {
        let flashOptions = FlashOptions(
            verify: options.burnVerification, readBack: template.identityRanges,
            secondaryAddress: secondaryAddress.map { .write($0) } ?? .leave, resetToRun: false)
        return try FlashProgrammer(session: session).flash(
            image.file.memory, chip: template.chip, options: flashOptions
        ) {
            event in
            switch event {
            case .erasing(let step), .programming(let step), .verifying(let step): progress(step)
            default: break
            }
        }
        .report
    }

}

/// A thread of its own (a pthread: the run's workers wait on devices and chips, so each needs one
/// rather than a share of a pool) that can be waited for.
public struct JoinableThread: Sendable {
    let thread: pthread_t?

    /// Starts `body` on a new thread (on the caller's, when none can be made).
    public static func start(_ body: @escaping @Sendable () -> Void) -> JoinableThread {
        JoinableThread(thread: ProvisioningRun.startThread(body))
    }

    /// Waits until the thread's body returned.
    public func join() { if let thread { pthread_join(thread, nil) } }
}
