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
    /// When that hook's process started (`ProcessTree.startTicks`): the sweep takes no other
    /// process that has its ID.
    let hookStarted = Atomic<Int>(0)
    /// Set once the second stop has handed the hook to `HookSweeper`, which ends the process:
    /// a later stop then waits for it (exiting at once would leave what it stopped stopped).
    let sweeping = Atomic<Bool>(false)
    /// Where the handler asks `HookSweeper`'s thread to end the hook in hand (the write end of its
    /// pipe), -1 while it has none.
    let sweeper = Atomic<Int32>(-1)

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

/// The thread that ends the hook in hand at a second stop: the hook and everything it started,
/// also what left its process group (`ProcessTree`), then the process. A signal handler may only
/// signal a process group — finding a process's descendants reads `/proc` and allocates, which a
/// handler must not — so it writes the signal's number into this thread's pipe instead.
enum HookSweeper {
    /// Starts the thread, once; whether it runs.
    static let started: Bool = {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        reading.store(ends[0], ordering: .relaxed)
        var thread = pthread_t()
        guard
            pthread_create(
                &thread, nil,
                { _ in
                    // Never the handler's thread: the stop signals go to the others.
                    var blocked = sigset_t()
                    sigemptyset(&blocked)
                    for number in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&blocked, number) }
                    pthread_sigmask(SIG_BLOCK, &blocked, nil)
                    var number: UInt8 = 0
                    while true {
                        let count = read(HookSweeper.reading.load(ordering: .relaxed), &number, 1)
                        if count == 1 { break }
                        if count < 0, errno == EINTR { continue }
                        // Should the pipe ever fail, the handler ends the hook's group itself.
                        stopSignals.sweeper.store(-1, ordering: .relaxed)
                        return nil
                    }
                    let hook = stopSignals.hookGroup.load(ordering: .relaxed)
                    if hook > 0 {
                        let started = stopSignals.hookStarted.load(ordering: .relaxed)
                        ProcessTree.stop(Int(hook), startTicks: started).signal(SIGKILL)
                        kill(-hook, SIGKILL)
                    }
                    _exit(128 + Int32(number))
                }, nil) == 0
        else {
            close(ends[0])
            close(ends[1])
            return false
        }
        pthread_detach(thread)
        stopSignals.sweeper.store(ends[1], ordering: .relaxed)
        // Nor does the process exit with a sweep half done, whatever thread calls exit().
        atexit { while stopSignals.sweeping.load(ordering: .relaxed) { usleep(50_000) } }
        return true
    }()

    /// The read end of the pipe, for the thread (which can reach only globals).
    static let reading = Atomic<Int32>(-1)
}
