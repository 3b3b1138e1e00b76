import HexText
import Storage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A run as the ledger records it: every process that provisions registers one, and every attempt
/// it starts names it (`Attempt.run`). A run holds a lease on the database's clock, renewed by a
/// heartbeat while it runs; an attempt may change only inside a transaction that finds its run's
/// lease still valid. A run whose lease ran out is over for good: it can neither renew nor write,
/// and its attempts left in progress are another run's to recover.
public struct RunRecord: Sendable, Equatable {
    /// 32 lower-case hex digits, random.
    public var id: String
    /// The bench it ran as (`nil` for a file ledger's run without one).
    public var bench: String?
    /// The host it ran on, for people.
    public var host: String
    /// Its process id on that host.
    public var process: Int
    /// Which process namespace of which boot the process id is valid in (`RunIdentity.machine`):
    /// a run on the same machine whose process is gone is known to be over.
    public var machine: String
    /// When it started (ISO 8601, UTC).
    public var startedAt: String
    /// How long each renewal of its lease lasts, in seconds.
    public var leaseSeconds: Double
    /// When its lease runs out, in seconds since 1970 on the database's clock.
    public var leaseUntil: Double
    /// When it ended (ISO 8601, UTC); `nil` while it may still run.
    public var endedAt: String?
    /// Why it ended: `finished`, or how another run found it over.
    public var endedBecause: String?

    /// The run in words for messages: `run 1f2e… of bench 'b' (pid 42 on host h)`.
    public var described: String {
        "run \(id.prefix(8)) of \(bench.map { "bench '\($0)'" } ?? "no bench") (process \(process) on host \(host))"
    }
}

/// Where this process runs, as a run records it.
public struct RunIdentity: Sendable {
    /// The host name.
    public var host: String
    /// The process id.
    public var process: Int
    /// The boot and the process namespace the process id belongs to (`/proc/sys/kernel/random/
    /// boot_id` and `/proc/self/ns/pid`): two runs with the same `machine` see the same process
    /// ids, so one can tell whether the other's process still exists.
    public var machine: String
    /// Where the run keeps its bench's journal, if it keeps one (a pool's bench), and the random
    /// token it leaves beside it (`OutcomeJournal.placePath`): recorded with the run, so that only
    /// a run that has recorded that folder's journal settles it (`ProvisioningLedger.release`).
    public var journal: (path: String, token: String)?

    /// Where a run says it runs.
    public init(host: String, process: Int, machine: String) {
        self.host = host
        self.process = process
        self.machine = machine
    }

    /// A process of this machine that no longer runs (a process id beyond any the kernel gives):
    /// what a test's stand-in for a crashed bench says it is.
    public static var goneProcess: RunIdentity {
        RunIdentity(host: current.host, process: 2_000_000_000, machine: current.machine)
    }

    /// This process.
    public static let current: RunIdentity = {
        var buffer = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&buffer, buffer.count - 1) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        return RunIdentity(host: host, process: Int(getpid()), machine: LocalProcesses.machine)
    }()

    /// Whether the run `record` was made by a process of this machine that no longer exists.
    func isGone(_ record: RunRecord) -> Bool {
        record.machine == machine && LocalProcesses.isThisMachine(machine) && record.process != process
            && LocalProcesses.hasEnded(record.process)
    }

    /// 32 random lower-case hex digits (a run's id).
    package static func randomHex() -> String {
        HexText.bytes((0..<16).map { _ in UInt8.random(in: 0...255) }).lowercased()
    }
}

/// This process's own view of its run's lease, on a clock that only goes forward and counts a
/// suspended machine's sleep: a lease is taken to end `leaseSeconds` (less a margin) after the
/// request that made or renewed it was sent — never later than the database's record of it,
/// which was made after. A paused process finds its lease over the moment it runs again, before
/// it sends anything.
public final class RunLease: Sendable {
    struct State {
        var id: String?
        var validUntil = 0.0
        var lost: String?
    }
    let state = Mutex(State())
    /// How long each renewal lasts.
    public let seconds: Double

    init(seconds: Double) { self.seconds = seconds }

    /// The run's id, once it began.
    public var runID: String? { state.withLock { $0.id } }

    /// Why the lease is over, or `nil` while it holds (or before the run began).
    public var lostBecause: String? {
        state.withLock { state in
            if let lost = state.lost { return lost }
            guard state.id != nil else { return nil }
            return Self.now() < state.validUntil ? nil : "its lease of \(Self.seconds(seconds)) s ran out"
        }
    }

    /// Seconds left, by this process's clock (negative once over).
    public var secondsLeft: Double { state.withLock { $0.validUntil - Self.now() } }

    func granted(id: String, sentAt: Double) {
        state.withLock {
            $0.id = id
            $0.validUntil = sentAt + seconds * 0.95
        }
    }

    func lose(_ reason: String) { state.withLock { if $0.lost == nil { $0.lost = reason } } }

    /// CLOCK_BOOTTIME: it only goes forward, and, unlike CLOCK_MONOTONIC, goes on while the
    /// machine is suspended — a bench woken from sleep finds its lease over as the database does.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Seconds as the user wrote them: `600`, `0.5`.
    package static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// The default lease: 90 s, renewed every sixth of it (15 s) — so that a server away for the
    /// default wait of 60 s still finds a run's lease held when it answers again.
    public static let defaultSeconds = 90.0
}

extension LedgerError {
    /// This run's lease is over, or its attempt belongs to another run now: nothing it does is
    /// recorded, and it must not go on (`Kind.leaseLost`).
    static func leaseLost(_ operation: String, _ why: String) -> LedgerError {
        LedgerError(
            operation: operation,
            message:
                "\(why); another run may have taken over this run's stations, so nothing more is recorded and nothing more is burned",
            kind: .leaseLost)
    }
}
