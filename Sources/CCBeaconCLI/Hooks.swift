import CCDebugger
import CommandLineKit
import Dispatch
import Provisioning
import StationLedger
import Storage
import StructuredText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+): the Glibc module does not export it.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32

/// `provision --on-verified CMD` and `--on-failed CMD`: a command run for each outcome once it is
/// committed to the ledger, with the facts in environment variables — never spliced into the
/// command line, so a station's name cannot become shell syntax. The ledger keeps every hook run
/// (`HookRun`) until a try exits 0: a run killed before its hooks ran, or a hook that failed or
/// timed out, leaves them pending, and the next `provision` of the same bench runs them first.
/// One hook runs at a time, in the order the outcomes were recorded, on a thread of its own, so
/// burning goes on meanwhile.
final class HookRunner: Sendable {
    /// The commands (`sh -c CMD`) by outcome, and how long a try may take.
    struct Hooks: Sendable {
        /// `--on-verified`.
        var verified: String?
        /// `--on-failed`.
        var failed: String?
        /// `--hook-timeout` (seconds).
        var timeout = 30.0

        /// The outcomes that have a hook.
        var outcomes: Set<AttemptOutcome> {
            Set([verified.map { _ in AttemptOutcome.verified }, failed.map { _ in .failed }].compactMap { $0 })
        }

        /// The command for `outcome`.
        func command(for outcome: AttemptOutcome) -> String? {
            switch outcome {
            case .verified: verified
            case .failed: failed
            default: nil
            }
        }

        /// Bench `bench`'s pending hook runs in `ledger`, oldest first: those these hooks run, and
        /// those that wait for a run with their hook. (Another bench's are its own.) A file ledger
        /// is one run's at a time: what a run without a bench left (its host name named none) is
        /// the next run's, whatever its bench.
        func pending(in ledger: any ProvisioningLedger, bench: String?) throws(LedgerError) -> (
            runnable: [HookRun], waiting: [HookRun]
        ) {
            let takesBenchless = ledger is SQLiteLedger
            let own = try ledger.hookRuns(pendingOnly: true).filter {
                $0.bench == bench || (takesBenchless && $0.bench == nil)
            }
            return (own.filter { command(for: $0.hook) != nil }, own.filter { command(for: $0.hook) == nil })
        }
    }

    /// How one try of a hook ended.
    struct Try: Sendable, Equatable {
        /// The hook run, as it was before this try.
        var run: HookRun
        /// How the hook process ended.
        var outcome: Outcome
        /// Set when the try could not be recorded in the ledger (it stays pending there).
        var notRecorded: String?

        /// Which try this was (1 for the first).
        var number: Int { run.tries + 1 }
        /// `on-verified` or `on-failed`.
        var hook: String { "on-\(run.hook.rawValue)" }
        /// Exited 0 and recorded so.
        var delivered: Bool { outcome.exitedZero && notRecorded == nil }
    }

    /// What the runner tells as it works.
    enum Report: Sendable, Equatable {
        /// A hook run was tried.
        case tried(Try)
        /// The pending hook runs could not be read (told once until they can be again).
        case unreadable(String)
        /// A stop was asked for while a hook ran: the run waits for it, at most `secondsLeft`.
        case waitingOnStop(HookRun, secondsLeft: Double)
    }

    let hooks: Hooks
    let ledger: any ProvisioningLedger & Sendable
    let bench: String?
    /// The ledger as shown to people (`CCBEACON_LEDGER`).
    let ledgerName: String
    let report: @Sendable (Report) -> Void
    /// Asked before each hook: a stop (Ctrl-C, a signal) leaves the rest pending for the next run.
    let stopRequested: @Sendable () -> Bool
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let thread = Mutex<JoinableThread?>(nil)

    struct State {
        /// Hook runs tried in this run (each at most once; a failed one waits for the next run).
        var tried: Set<String> = []
        var counts = Counts()
        var stopping = false
        /// The last failure to read the hook runs (told once).
        var readFailure: String?
    }

    /// Hooks for the outcomes `ledger` records for `bench`; every try is told to `report`.
    init(
        hooks: Hooks, ledger: any ProvisioningLedger & Sendable, bench: String?, ledgerName: String,
        stopRequested: @escaping @Sendable () -> Bool = { false }, report: @escaping @Sendable (Report) -> Void
    ) {
        self.stopRequested = stopRequested
        self.hooks = hooks
        self.ledger = ledger
        self.bench = bench
        self.ledgerName = ledgerName
        self.report = report
    }

    /// What became of the hook runs in this run.
    struct Counts: Equatable {
        /// Tries that exited 0 and were recorded.
        var delivered = 0
        /// Tries that did not (a failure, a timeout, or a try the ledger could not record).
        var failed = 0
        /// Hook runs of this run's hooks left pending untried (a stop came first).
        var notRun = 0
        /// Whether any hook run is left pending.
        var leftPending: Bool { failed + notRun > 0 }
    }

    /// What became of the hook runs in this run (`notRun` is counted by `finish`).
    var counts: Counts { state.withLock { $0.counts } }

    /// Runs every pending hook run of this bench that has a hook in this run and was not tried in
    /// it yet, oldest first; returns how many ran. A ledger that cannot be read is reported once
    /// as a try that could not start.
    @discardableResult
    func deliverPending() -> Int {
        let pending: [HookRun]
        do { pending = try hooks.pending(in: ledger, bench: bench).runnable } catch {
            // Told once, not at every look (a server away for a minute would fill the log).
            let status = "hook runs cannot be read: \(error.message)"
            let fresh = state.withLock { state in
                defer { state.readFailure = status }
                return state.readFailure != status
            }
            if fresh { report(.unreadable(status)) }
            return 0
        }
        state.withLock { $0.readFailure = nil }
        var ran = 0
        for run in pending {
            if stopRequested() { break }
            guard let command = hooks.command(for: run.hook) else { continue }
            let fresh = state.withLock { state in state.tried.insert(run.eventID).inserted }
            guard fresh else { continue }
            CrashPoint.beforeHook.pass()
            let outcome = Self.execute(
                command, environment: environment(for: run), timeout: hooks.timeout, stopRequested: stopRequested
            ) { [report] secondsLeft in report(.waitingOnStop(run, secondsLeft: secondsLeft)) }
            CrashPoint.afterHook.pass()
            var result = Try(run: run, outcome: outcome)
            do throws(LedgerError) {
                try ledger.recordHookTry(eventID: run.eventID, status: outcome.status, delivered: outcome.exitedZero)
            } catch {
                result.notRecorded = error.message
            }
            state.withLock { state in
                if result.delivered {
                    state.counts.delivered += 1
                } else {
                    state.counts.failed += 1
                }
            }
            report(.tried(result))
            ran += 1
        }
        return ran
    }

    /// Starts the thread that delivers the run's hook runs as outcomes are recorded (`outcome()`
    /// wakes it; it also looks every second).
    func start() {
        let started = JoinableThread.start { [self] in
            while !state.withLock({ $0.stopping }) {
                _ = wake.wait(timeout: .now() + 1)
                deliverPending()
            }
        }
        thread.withLock { $0 = started }
    }

    /// An outcome was recorded: deliver its hook run now.
    func outcome() { wake.signal() }

    /// Stops the thread once it is done with the hook in hand, then delivers what is left.
    func finish() {
        state.withLock { $0.stopping = true }
        wake.signal()
        thread.withLock { $0 }?.join()
        deliverPending()
        let untried = (try? hooks.pending(in: ledger, bench: bench).runnable) ?? []
        state.withLock { state in state.counts.notRun = untried.filter { !state.tried.contains($0.eventID) }.count }
    }

    /// The facts a hook gets, by variable name.
    func environment(for run: HookRun) -> [(String, String)] {
        let attempt = run.attempt
        return [
            ("CCBEACON_EVENT_ID", run.eventID), ("CCBEACON_HOOK", "on-\(run.hook.rawValue)"),
            ("CCBEACON_HOOK_TRY", String(run.tries + 1)), ("CCBEACON_STATION", attempt.station),
            ("CCBEACON_UUID", run.identity.uuid.uuidString), ("CCBEACON_MAJOR", String(run.identity.major)),
            ("CCBEACON_MINOR", String(run.identity.minor)),
            ("CCBEACON_POWER", String(attempt.power ?? Int(run.identity.measuredPower))),
            ("CCBEACON_ADDRESS", attempt.advertiserAddress ?? ""), ("CCBEACON_CHIP", attempt.chip),
            ("CCBEACON_DEBUGGER", attempt.debugger), ("CCBEACON_BENCH", attempt.bench ?? ""),
            ("CCBEACON_IMAGE_SHA256", attempt.imageSHA256), ("CCBEACON_TEMPLATE", attempt.template),
            ("CCBEACON_OUTCOME", run.hook.rawValue), ("CCBEACON_REASON", attempt.reason ?? ""),
            ("CCBEACON_DEBUG_LOCKED", attempt.debugLocked ? "1" : "0"), ("CCBEACON_ATTEMPT", String(attempt.id)),
            ("CCBEACON_LEDGER", ledgerName),
        ]
    }

    /// How a hook process ended.
    struct Outcome: Sendable, Equatable {
        /// `exit 0`, `exit 3`, `killed by signal 9`, `timed out after 30 s`, `could not start: …`.
        var status: String
        /// Exited 0.
        var exitedZero: Bool
        /// The last line the hook wrote (standard output or error), for a failure's report.
        var lastLine: String?
    }

    /// Runs `sh -c command` in a process group of its own (a timeout ends the whole group; so does
    /// a second stop signal, through `stopSignals.hookGroup`) with this process's environment plus
    /// `environment` (earlier `CCBEACON_` variables dropped), no standard input, its output
    /// collected (the last 4 KiB kept), every inherited descriptor above 2 closed and the signals
    /// this process ignores or catches back at their defaults. `stopNoticed(secondsLeft)` is
    /// called once if `stopRequested` turns true while the hook runs: the run waits for it.
    static func execute(
        _ command: String, environment: [(String, String)], timeout: Double,
        stopRequested: () -> Bool = { false }, stopNoticed: (Double) -> Void = { _ in }
    ) -> Outcome {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            return Outcome(status: "could not start: \(String(cString: strerror(errno)))", exitedZero: false)
        }
        for descriptor in fds { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
        _ = addCloseFrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, number) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        // Values cannot hold NUL; nothing else is changed (they are data, never code).
        let names = Set(environment.map(\.0))
        var variables = [String]()
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            let name = text.split(separator: "=", maxSplits: 1).first.map(String.init) ?? text
            if !name.hasPrefix("CCBEACON_"), !names.contains(name) { variables.append(text) }
            entry += 1
        }
        variables += environment.map { "\($0)=\($1.replacing("\0", with: ""))" }
        let arguments = ["/bin/sh", "-c", command.replacing("\0", with: "")]
        var pid: pid_t = 0
        // Being started: a second stop now is the sweeper's, which waits for the hook's ID.
        stopSignals.hookStarted.store(0, ordering: .relaxed)
        stopSignals.hookGroup.store(-1, ordering: .relaxed)
        let spawned = withCStrings(arguments) { argv in
            withCStrings(variables) { envp in posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp) }
        }
        close(fds[1])
        guard spawned == 0 else {
            stopSignals.hookGroup.store(0, ordering: .relaxed)
            close(fds[0])
            return Outcome(status: "could not start: \(String(cString: strerror(spawned)))", exitedZero: false)
        }
        stopSignals.hookStarted.store(ProcessTree.startTicks(Int(pid)) ?? 0, ordering: .relaxed)
        stopSignals.hookGroup.store(pid, ordering: .relaxed)
        defer {
            stopSignals.hookGroup.store(0, ordering: .relaxed)
            close(fds[0])
        }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        var output: [UInt8] = []
        let deadline = MonotonicClock.now + timeout
        var status: Int32 = 0
        var exited = false
        var exitedAt: Double?
        var timedOut = false
        var stopSeen = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        // The hook, once it has ended, is reaped only after the second stop's sweep forgets it: its
        // ID, free once reaped, may be another process's by the time a sweep looks.
        func reapIfEnded() {
            guard !exited, LocalProcesses.hasEnded(Int(pid)) else { return }
            stopSignals.hookGroup.store(0, ordering: .relaxed)
            waitpid(pid, &status, 0)
            exited = true
            exitedAt = MonotonicClock.now
        }
        while true {
            if !stopSeen, !exited, stopRequested() {
                stopSeen = true
                stopNoticed(max(0, deadline - MonotonicClock.now))
            }
            var poller = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
            _ = poll(&poller, 1, 50)
            var drained = false
            while true {
                let count = read(fds[0], &buffer, buffer.count)
                if count > 0 {
                    output += buffer.prefix(count)
                    if output.count > 4096 { output.removeFirst(output.count - 4096) }
                } else {
                    drained = count == 0
                    break
                }
            }
            reapIfEnded()
            // Done when the hook exited and its output ended — or a moment after it exited, when
            // something it left running in the background still holds the output open.
            if exited, drained || MonotonicClock.now - (exitedAt ?? 0) > 0.5 { break }
            if !exited, MonotonicClock.now > deadline {
                timedOut = true
                // The hook and everything it started, also what left its group (`timeout`,
                // `setsid`), found while stopped: TERM, then KILL what is left after the grace.
                let tree = ProcessTree.stop(Int(pid))
                tree.signal(SIGTERM)
                kill(-pid, SIGTERM)
                tree.signal(SIGCONT)
                kill(-pid, SIGCONT)
                let grace = MonotonicClock.now + 2
                while MonotonicClock.now < grace {
                    reapIfEnded()
                    if exited, tree.hasEnded { break }
                    usleep(20_000)
                }
                // With what the members still running started during the grace.
                tree.grown().signal(SIGKILL)
                kill(-pid, SIGKILL)  // anything of its group still running
                while !exited {
                    reapIfEnded()
                    if !exited { usleep(5_000) }
                }
                // What the group left that is this process's child now (a subreaper's orphans)
                // is reaped, not left a zombie.
                let reapUntil = MonotonicClock.now + 1
                while MonotonicClock.now < reapUntil {
                    let reaped = waitpid(-pid, nil, WNOHANG)
                    if reaped > 0 { continue }
                    if reaped < 0 { break }  // none left
                    usleep(10_000)
                }
                break
            }
        }
        // A second stop's sweep ends this process once it has ended the hook's: nothing of this
        // run goes on meanwhile (recording the killed hook, exiting with the sweep half done).
        HookSweeper.waitForSweep()
        let lastLine = String(decoding: output, as: UTF8.self).split(whereSeparator: \.isNewline)
            .last { !$0.allSatisfy(\.isWhitespace) }.map { String($0.prefix(300)) }
        if timedOut {
            return Outcome(
                status: "timed out after \(ProvisioningRun.seconds(timeout)) s", exitedZero: false, lastLine: lastLine)
        }
        let code = (status >> 8) & 0xFF
        let signal = status & 0x7F
        if signal != 0 { return Outcome(status: "killed by signal \(signal)", exitedZero: false, lastLine: lastLine) }
        return Outcome(status: "exit \(code)", exitedZero: code == 0, lastLine: lastLine)
    }

    /// `strings` as a NULL-terminated C array for the length of `body`.
    static func withCStrings<T>(
        _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> T
    ) -> T {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
