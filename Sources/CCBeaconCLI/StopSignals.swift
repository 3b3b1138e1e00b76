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
    /// The process group of the hook running now, 0 for none, -1 while one is being started: a
    /// second stop kills it before the process ends, so that no hook outlives its run and runs
    /// beside its own retry.
    let hookGroup = Atomic<Int32>(0)
    /// When that hook's process started (`ProcessTree.startTicks`): the sweep takes no other
    /// process that has its ID.
    let hookStarted = Atomic<Int>(0)
    /// Set once the second stop has handed the hook to `HookSweeper`, which ends the process:
    /// a later stop then waits for it (exiting at once would leave what it stopped stopped).
    /// Claimed by compare-and-swap, so that of two handlers at once one hands over.
    let sweeping = Atomic<Bool>(false)
    /// The signal that handed the hook over (the process ends with 128 plus it), and when
    /// (`MonotonicClock`, nanoseconds), for `HookSweeper.deadline`.
    let sweepSignal = Atomic<Int32>(0)
    let sweepClaimed = Atomic<Int>(0)
    /// Whether `HookSweeper`'s thread runs, to end the hook in hand at a second stop.
    let sweeper = Atomic<Bool>(false)

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
/// handler must not — so it claims the sweep and posts this thread's semaphore instead (a
/// semaphore of the process's memory: no descriptor another process could read the wake-up from).
/// What waits on a sweep (the hook's wait, `exit()`) waits at most `deadline` seconds, then ends
/// the hook's group and the process itself (`giveUp`). A member that traces this process is never
/// stopped (`ProcessTree`): this process would wait on it at its next system call — the sweeper
/// and every waiter alike, past any deadline.
enum HookSweeper {
    /// How long a sweep may take before what waits on it ends the process itself.
    static let deadline = 10.0

    /// The semaphore the handler posts (`sem_post` is async-signal-safe).
    nonisolated(unsafe) static let wakeUp: UnsafeMutablePointer<sem_t> = {
        let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
        return semaphore
    }()

    /// Starts the thread, once; whether it runs.
    static let started: Bool = {
        _ = wakeUp
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
                    while sem_wait(HookSweeper.wakeUp) != 0 {}  // EINTR
                    // A hook being started: its ID comes in a moment.
                    let spawning = MonotonicClock.now + 2
                    while stopSignals.hookGroup.load(ordering: .relaxed) < 0, MonotonicClock.now < spawning {
                        usleep(1_000)
                    }
                    let hook = stopSignals.hookGroup.load(ordering: .relaxed)
                    if hook > 0 {
                        let started = stopSignals.hookStarted.load(ordering: .relaxed)
                        ProcessTree.stop(Int(hook), startTicks: started == 0 ? nil : started).signal(SIGKILL)
                        kill(-hook, SIGKILL)
                    }
                    _exit(128 + stopSignals.sweepSignal.load(ordering: .relaxed))
                }, nil) == 0
        else { return false }
        pthread_detach(thread)
        stopSignals.sweeper.store(true, ordering: .relaxed)
        // Nor does the process exit with a sweep half done, whatever thread calls exit().
        atexit { HookSweeper.waitForSweep() }
        return true
    }()

    /// Waits while a sweep runs, at most until `deadline` after it was claimed; then `giveUp`.
    static func waitForSweep() {
        while stopSignals.sweeping.load(ordering: .relaxed) {
            // 0: claimed this moment, its time not yet stored.
            let claimed = stopSignals.sweepClaimed.load(ordering: .relaxed)
            if claimed > 0, MonotonicClock.now - Double(claimed) / 1e9 > deadline { giveUp() }
            usleep(50_000)
        }
    }

    /// Ends the hook's process group and the process, as a second stop without a sweeper does.
    static func giveUp() -> Never {
        let hook = stopSignals.hookGroup.load(ordering: .relaxed)
        if hook > 0 { kill(-hook, SIGKILL) }
        _exit(128 + stopSignals.sweepSignal.load(ordering: .relaxed))
    }
}
