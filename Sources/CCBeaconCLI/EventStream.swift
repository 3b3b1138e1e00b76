import CCDebugger
import CommandLineKit
import Provisioning
import StationLedger
import Storage
import StructuredText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `provision --events FILE|-`: the run as newline-delimited JSON, one object per event, for other
/// programs (a dashboard, a line controller). Every object has `schema` (1), `run` (the run's id in
/// the ledger), `seq` (1, 2, … in the order written), `time` (UTC, ISO 8601 with milliseconds), `elapsed` (seconds since the run
/// started, monotonic) and `event`; then the facts that apply: `debugger`, `station`, `chip`,
/// and the event's own. The schema is on the provision man page (EVENTS). Each line is written whole with
/// one write, in order, from any debugger's thread.
final class EventStream: Sendable {
    /// The schema version every object carries.
    static let schema = 1

    /// The file the events go to (closed with the stream), or nil for standard output.
    private let descriptor: Int32?
    /// Writes one whole line; false when it could not.
    private let sink: @Sendable (String) -> Bool
    private let state = Mutex<(sequence: Int, failed: Bool)>((0, false))
    private let start = MonotonicClock.now

    /// Checks, before anything else runs, that `path` may take events: a new file (never through a
    /// link, which could lead to a file the run creates later, such as the ledger), or a file of
    /// events ccbeacon wrote (its first line one of its events). Any other file — a template's
    /// image or manifest, a list, a journal — is the user's and is refused (exit 64).
    static func check(_ path: String) throws(CommandFailure) {
        guard !path.isEmpty else { throw .usage("--events needs a file name, or - for standard output") }
        guard path != "-" else { return }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // a new file
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .usage(
                "--events \(path) is not a regular file (a link, a folder or a device); give a new file, or a file of ccbeacon's events"
            )
        }
        guard info.st_size > 0 else { return }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return }  // opening it to write says why
        defer { close(descriptor) }
        var head = [UInt8](repeating: 0, count: 256)
        let count = read(descriptor, &head, head.count)
        let first = String(decoding: head.prefix(max(0, count)), as: UTF8.self)
        guard first.hasPrefix("{\"schema\":\(schema),\"run\":") || first.hasPrefix("{\"schema\":\(schema),\"seq\":")
        else {
            throw .usage(
                "--events \(path) is a file that does not hold ccbeacon's events; the events are appended to a file, so give a new file or one ccbeacon wrote"
            )
        }
    }

    /// Events to `path` (appended to a file `check` accepted, or created — never through a link),
    /// or for `-` to `console`'s standard output; `run`: the run's id in the ledger, which its
    /// attempts record (a random one when the ledger has none).
    init(path: String, console: Console, run: String?) throws(CommandFailure) {
        self.run = run ?? RunIdentity.randomHex()
        if path == "-" {
            descriptor = nil
            sink = { line in
                console.data(line)
                return true
            }
            return
        }
        var file = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
        if file < 0, errno == ENOENT {
            file = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        }
        guard file >= 0 else {
            throw CommandFailure(
                .failure, "cannot write the events to \(path): \(String(cString: strerror(errno)))",
                hint: "give --events a new file this user may write, or - for standard output")
        }
        // A file whose last line a full disk or a kill cut short: the new run starts on a line of
        // its own.
        var info = stat()
        if fstat(file, &info) == 0, info.st_size > 0 {
            var last: UInt8 = 0
            if pread(file, &last, 1, info.st_size - 1) == 1, last != 0x0A {
                _ = [UInt8(0x0A)].withUnsafeBytes { write(file, $0.baseAddress, 1) }
            }
        }
        let opened = file
        descriptor = opened
        sink = { line in Array(line.utf8).withUnsafeBytes { Files.writeAll($0, to: opened) } == nil }
    }

    /// This run's id in every event (two runs appending to one file are told apart by it).
    let run: String

    deinit { if let descriptor { close(descriptor) } }

    /// Whether a write failed (the events are then incomplete; the run says so at the end).
    var failed: Bool { state.withLock { $0.failed } }

    /// Writes one event: `name` with `fields` after the common ones. After a write failed nothing
    /// more is written (a line cut short must stay the last).
    func emit(_ name: String, _ fields: [(String, JSONValue)]) {
        state.withLock { state in
            guard !state.failed else { return }
            state.sequence += 1
            let line =
                JSONValue.object(
                    [
                        ("schema", .integer(Self.schema)), ("run", .string(run)), ("seq", .integer(state.sequence)),
                        ("time", .string(Self.now())),
                        ("elapsed", .number(((MonotonicClock.now - start) * 1000).rounded() / 1000)),
                        ("event", .string(name)),
                    ] + fields
                ).compact() + "\n"
            if !sink(line) { state.failed = true }
        }
    }

    /// The wall-clock time, UTC, `2026-12-01T12:00:00.000Z`.
    static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
        let milliseconds = Int(spec.tv_nsec / 1_000_000)
        let fraction = String(repeating: "0", count: 3 - String(milliseconds).count) + String(milliseconds)
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }

    /// A run's event as its name and fields.
    static func fields(_ event: ProvisionEvent) -> (String, [(String, JSONValue)]) {
        switch event {
        case .waitingForChip(let debugger): return ("waiting", [("debugger", .string(debugger))])
        case .chipAttached(let debugger, let chip):
            return ("chip-attached", [("debugger", .string(debugger)), ("chip", .string(chip))])
        case .started(let debugger, let station, let chip):
            return ("burn-started", where_(debugger, station, chip))
        case .progress(let debugger, let station, let chip, let progress):
            let phase =
                switch progress.phase {
                case .erase: "erasing"
                case .program: "programming"
                case .verify, .read: "verifying"
                }
            return (
                "progress",
                where_(debugger, station, chip) + [
                    ("phase", .string(phase)), ("done", .integer(progress.done)), ("total", .integer(progress.total)),
                ]
            )
        case .finished(let debugger, let station, let chip, let outcome, let reason):
            let name =
                switch outcome {
                case .verified: "verified"
                case .interrupted: "held"
                default: "failed"
                }
            return (name, where_(debugger, station, chip) + [("reason", reason.map { .string($0) } ?? .null)])
        case .resumed(let debugger, let station, let chip, let verified):
            return (
                verified ? "verified" : "failed",
                where_(debugger, station, chip) + [
                    (
                        "reason",
                        .string(
                            verified
                                ? "confirmed on the chip after an interruption"
                                : "not on the chip after an interruption; the station is pending again")
                    ), ("resumed", .bool(true)),
                ]
            )
        case .refused(let debugger, let chip, let carries):
            return (
                "chip-refused",
                [("debugger", .string(debugger)), ("chip", .string(chip)), ("station", .string(carries))]
            )
        case .erasedOnArrival(let debugger, let chip, let station):
            return ("erased-on-arrival", where_(debugger, station, chip))
        case .interruptedForAnotherList(let debugger, let chip, let station):
            return ("chip-of-another-list", where_(debugger, station, chip))
        case .debuggerStopped(let debugger, let reason):
            return ("debugger-stopped", [("debugger", .string(debugger)), ("reason", .string(reason))])
        case .setAside(let debugger, let address, _):
            return (
                "chip-set-aside",
                [
                    ("debugger", .string(debugger)), ("chip", .string(address)),
                    ("reason", .string(ProvisionCommand.describe(event) ?? "")),
                ]
            )
        case .resetFailed(let debugger, let chip, let reason):
            return (
                "reset-failed", [("debugger", .string(debugger)), ("chip", .string(chip)), ("reason", .string(reason))]
            )
        case .listening(let debugger, let station, let chip, let seconds):
            return ("listening", where_(debugger, station, chip) + [("seconds", .number(seconds))])
        case .burningAgain(let debugger, let station, let chip, let burned, let calibrated):
            return (
                "burning-again",
                where_(debugger, station, chip) + [
                    ("burnedPower", .integer(burned)), ("calibratedPower", .integer(calibrated)),
                ]
            )
        }
    }

    static func where_(_ debugger: String, _ station: String, _ chip: String) -> [(String, JSONValue)] {
        [("debugger", .string(debugger)), ("station", .string(station)), ("chip", .string(chip))]
    }
}
