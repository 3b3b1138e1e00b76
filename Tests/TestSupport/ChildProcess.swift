public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// glibc's `posix_spawn_file_actions_addchdir_np` (2.29+): the Glibc module does not export it.
@_silgen_name("posix_spawn_file_actions_addchdir_np")
private func spawnActionChangeDirectory(
    _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: UnsafePointer<CChar>
) -> Int32

/// `prctl(2)` with integer arguments (the C function is variadic, which Swift cannot call).
@_silgen_name("prctl")
private func processControl(_ option: Int32, _ argument: UInt, _ unused1: UInt, _ unused2: UInt, _ unused3: UInt)
    -> Int32

/// What a finished child process left: its exit status (128 + signal when killed) and output.
public struct ProcessResult: Sendable {
    /// Exit status; 128 + the signal number when a signal ended it.
    public var status: Int32
    /// Everything it wrote to standard output.
    public var output: String
    /// Everything it wrote to standard error.
    public var errors: String
}

/// A helper program a test started (the emulator, ccbeacon, cc-tool, make, s51).
///
/// Each child leads a process group of its own, and everything it starts stays in that group
/// unless it leaves on purpose. When the child ends — by itself, by `kill`, or by a timeout — the
/// whole group is killed and reaped, so nothing a test started outlives it. (A ccbeacon that
/// crashed because its emulator was killed first used to leave its `swift-backtrace` running for
/// minutes after a green run.) This process is made a child subreaper, so the group's orphans are
/// reparented to it and reaped here rather than left to init.
public final class ChildProcess: Sendable {
    /// The child's process ID, which is also its process group ID.
    public let processID: pid_t
    private let scratch: TemporaryFolder
    /// The exit status once known; the lock also keeps two waits from reaping at once.
    private let finalStatus = Mutex<Int32?>(nil)

    /// Makes this process the reaper of its descendants' orphans (once), and has it reap, when
    /// it exits, every such orphan that has ended: a hook a killed bench left running, in a
    /// process group of its own, ends after its bench and would otherwise pass to init as a
    /// zombie — which `scripts/test` finds in the tests' session until init gets to it. (Only at
    /// exit: while tests run, a `waitpid(-1)` could take another test's child's status.) What
    /// still runs then is left for that check to report.
    private static let becomeSubreaper: Void = {
        _ = processControl(36, 1, 0, 0, 0)  // PR_SET_CHILD_SUBREAPER
        atexit {
            var status: Int32 = 0
            while waitpid(-1, &status, WNOHANG) > 0 {}
        }
    }()

    /// Starts `executable` with `arguments` in `directory`, its output going to temporary files
    /// (so a child that writes a lot to both streams cannot block), in a new process group.
    public init(
        _ executable: String, _ arguments: [String], in directory: URL, standardInput: String = "/dev/null",
        environment: [String: String]? = nil
    ) throws {
        Self.becomeSubreaper
        scratch = try TemporaryFolder(prefix: "child")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, scratch.path("stdout"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, scratch.path("stderr"), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = spawnActionChangeDirectory(&actions, directory.path)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own group; no signal blocked or ignored (the test runner's mask must not leak in).
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        posix_spawnattr_setpgroup(&attributes, 0)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)

        let merged = ProcessInfo.processInfo.environment.merging(environment ?? [:]) { _, new in new }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else {
            scratch.remove()
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO)
        }
        processID = pid
    }

    deinit {
        if isRunning { killGroup() }
        wait()
        scratch.remove()
    }

    /// Runs `executable` to the end and returns what it left. With `timeout`, a child still
    /// running after that many seconds is killed with its group (status 128 + SIGKILL), so a hung
    /// helper fails its test instead of hanging the suite.
    public static func run(
        _ executable: String, _ arguments: [String], in directory: URL,
        standardInput: String = "/dev/null", environment: [String: String]? = nil, timeout: Double? = nil
    ) throws -> ProcessResult {
        let child = try ChildProcess(
            executable, arguments, in: directory, standardInput: standardInput, environment: environment)
        let status = child.wait(timeout: timeout)
        return ProcessResult(status: status, output: child.output, errors: child.errors)
    }

    /// Sends `signal` to the child alone (not its group).
    public func signal(_ signal: Int32) { kill(processID, signal) }

    /// Kills the child's whole group at once (one `kill(-group)`), so no member sees another die
    /// first.
    public func killGroup() { kill(-processID, SIGKILL) }

    /// True while the child has not ended. (A child found ended is reaped here, its status kept.)
    public var isRunning: Bool {
        finalStatus.withLock { finalStatus in
            guard finalStatus == nil else { return false }
            var status: Int32 = 0
            guard waitpid(processID, &status, WNOHANG) == processID else { return true }
            finalStatus = Self.exitCode(status)
            reapGroup()
            return false
        }
    }

    /// A `waitpid` status as an exit status: the code, or 128 + the signal.
    static func exitCode(_ status: Int32) -> Int32 {
        status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// Waits for the child (killing its group after `timeout` seconds), then kills and reaps
    /// whatever is left of its group. Returns its exit status: its code, or 128 + signal.
    @discardableResult
    public func wait(timeout: Double? = nil) -> Int32 {
        finalStatus.withLock { finalStatus in
            if let finalStatus { return finalStatus }
            let code = waitForExit(timeout: timeout)
            finalStatus = code
            return code
        }
    }

    /// Waits for the child itself, then kills and reaps what is left of its group.
    private func waitForExit(timeout: Double?) -> Int32 {
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        var status: Int32 = 0
        while true {
            let result = waitpid(processID, &status, WNOHANG)
            if result == processID { break }
            if result < 0, errno != EINTR {
                status = 0xFF00  // not ours to wait for (never expected): report exit 255, not success
                break
            }
            if let deadline, Date() > deadline { killGroup() }
            usleep(2_000)
        }
        let code = Self.exitCode(status)
        reapGroup()
        return code
    }

    /// Kills what is left of the child's group and reaps the members that were reparented here.
    private func reapGroup() {
        guard kill(-processID, SIGKILL) == 0 else { return }  // ESRCH: the group is empty
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let result = waitpid(-processID, nil, WNOHANG)
            if result < 0 { return }  // ECHILD: no member of the group is (still) ours
            if result == 0 {
                if kill(-processID, 0) != 0 { return }
                usleep(2_000)
            }
        }
    }

    /// Everything the child wrote to standard output so far.
    public var output: String { String(decoding: (try? scratch.bytes("stdout")) ?? [], as: UTF8.self) }

    /// Everything the child wrote to standard error so far.
    public var errors: String { String(decoding: (try? scratch.bytes("stderr")) ?? [], as: UTF8.self) }

    /// Waits until `text` has appeared `count` times in what the child wrote (standard output and
    /// error together), or it ended, or `timeout` seconds passed; whether it appeared so often.
    /// A wait on what the child says, not on time.
    @discardableResult
    public func waitUntil(_ text: String, appears count: Int = 1, timeout: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if occurrences(of: text) >= count { return true }
            if !isRunning || Date() > deadline { return occurrences(of: text) >= count }
            usleep(5_000)
        }
    }

    /// How many times `text` stands in what the child wrote so far.
    public func occurrences(of text: String) -> Int {
        (output + errors).components(separatedBy: text).count - 1
    }
}

/// A child process standing for a command a test runs inside its own process: alive while the
/// command runs, killed and reaped after — what a ledger's run needs to tell a command that ended
/// from one still running, as it would tell two processes apart.
public final class ProcessStandIn: Sendable {
    let child: ChildProcess?

    /// Starts one (`sleep`); without one, `pid` is this process's.
    public init() {
        child = try? ChildProcess("/bin/sleep", ["3600"], in: URL(fileURLWithPath: NSTemporaryDirectory()))
    }

    /// Its process id.
    public var pid: Int32 { child?.processID ?? getpid() }

    /// Ends it: killed and reaped.
    public func end() {
        guard let child else { return }
        child.killGroup()
        _ = child.wait()
    }
}
