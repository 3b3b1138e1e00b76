import BeaconPayload
import BeaconScan
import CCDebugger
import CommandLineKit
import FirmwareTemplate
import PostgresLedger
import Provisioning
import StationLedger
import Storage
import StructuredText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The stop signals (SIGINT, SIGTERM, SIGHUP) a provisioning run has received. The signal handler
/// only does atomic operations on it — no lock, no allocation, nothing else is async-signal-safe —
/// and the run polls it.
final class StopSignals: Sendable {
    let count = Atomic<Int>(0)
    let first = Atomic<Int32>(0)
    /// The process group of the hook running now, 0 for none: a second stop kills it before the
    /// process ends, so that no hook outlives its run and runs beside its own retry.
    let hookGroup = Atomic<Int32>(0)

    /// Records a signal; returns how many have arrived, this one included.
    func received(_ number: Int32) -> Int {
        _ = first.compareExchange(expected: 0, desired: number, ordering: .relaxed)
        return count.add(1, ordering: .relaxed).newValue
    }

    /// Forgets earlier signals, before a run installs the handler.
    func reset() {
        count.store(0, ordering: .relaxed)
        first.store(0, ordering: .relaxed)
    }

    /// Whether a stop was asked for.
    var requested: Bool { count.load(ordering: .relaxed) > 0 }
    /// The first signal received, 0 for none.
    var signal: Int32 { first.load(ordering: .relaxed) }
}

/// The process's stop signals: a handler is a C function and can reach only globals.
let stopSignals = StopSignals()
