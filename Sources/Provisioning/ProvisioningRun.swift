import BeaconPayload
import CCDebugger
import Checksums
import Dispatch
public import FirmwareTemplate
import HexText
import IntelHex
public import StationLedger
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
        return StationTemplate.advertiserAddress(given: options.addresses[station.name], identity: station.identity)
            .bytes
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
        let threads = debuggers.map { debugger in
            Self.startThread { DebuggerWorker(run: self, debugger: debugger).work() }
        }
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
    func workLeft(givenUp: Set<String>) -> Bool {
        let outside = outsideList.withLock { $0 }
        if (try? recalibratedLeft(except: outside.union(givenUp))) ?? false {
            return true  // a calibrated station's chip may still come
        }
        return (try? ledger.hasWork(excluding: outside.union(givenUp))) ?? true
    }
}
