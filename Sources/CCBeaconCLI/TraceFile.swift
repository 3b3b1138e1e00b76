import CCDebugger
import CommandLineKit
import Storage
import StructuredText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The file a USB trace goes to (`--trace FILE`, a burn test's `DIR/trace.pcap`): a `*.pcap`
/// name where nothing is yet, an empty file, or a trace ccbeacon wrote earlier — never anything
/// else (a list, a ledger or its journal, a capture the user made with tcpdump), never through a
/// link, never a file the same command names otherwise or writes its output to, and never by two
/// writers at once (an exclusive `flock`, by `ExclusiveLock`'s rule, held while the trace is open).
///
/// An earlier trace is checked and locked through the one descriptor that writes it, and emptied
/// only when the first record comes. A new file is made only when the first record comes, and only
/// if nothing has appeared under its name meanwhile (a database's journal, another run's trace):
/// what a program makes in between is never written over. A command that never reaches a
/// debugger leaves everything as it was. Records are written whole as they happen (`USBTrace`):
/// a killed command leaves whole records, and a write that fails part-way (a full disk,
/// `ulimit -f`) is cut back to the last whole record.
final class TraceFile: Sendable {
    /// The trace the debuggers record into.
    let trace: USBTrace
    /// The file, as messages name it.
    let path: String
    private let writer: Writer

    /// Checks `path` (shown as `shownAs`, by default the path itself) for the trace of `option`
    /// (`inspect`), and locks an earlier trace there. Refusals are usage errors (64), but a trace
    /// another run is writing (1). That no argument of the command names it was checked first
    /// (`refuseArgument`), before the command decoded its arguments.
    init(path: String, shownAs: String? = nil, option: String = "--trace") throws(CommandFailure) {
        let name = shownAs ?? path
        let existing = try Self.inspect(path, shownAs: name, option: option)
        if let existing, ExclusiveLock.take(existing) != .taken {
            close(existing)
            throw CommandFailure(
                .failure, "another ccbeacon is writing the trace \(name)", hint: "give each run its own trace file")
        }
        let writer = Writer(path: path, existing: existing)
        self.writer = writer
        self.path = name
        trace = USBTrace { bytes in writer.append(bytes) }
    }

    /// Refuses a trace that is also one of the command's `arguments` (its input, its output): a
    /// usage error found before the command decodes the rest.
    static func refuseArgument(naming path: String, shownAs name: String, option: String, arguments: [String])
        throws(CommandFailure)
    {
        for argument in arguments where !argument.isEmpty && PathIdentity.same(argument, path) {
            throw .usage(
                "\(option) \(name) is also an argument of this command ('\(argument)'); give the trace a file of its own"
            )
        }
    }

    /// What `path` may be: a name where nothing is yet, in a folder this user may write, or a
    /// trace ccbeacon wrote (or an empty file) — a regular file, not where the command's output or
    /// errors go; named `*.pcap` (so never a database's journal, a lock or a list: a name rule
    /// that needs no knowledge of who else opens what). Returns the earlier file opened for
    /// reading and writing (not yet locked), nil for a new name. Nothing is opened that is not a
    /// regular file.
    static func inspect(_ path: String, shownAs name: String, option: String) throws(CommandFailure) -> Int32? {
        guard !path.isEmpty else { throw .usage("\(option) needs a file name") }
        let notAFile = CommandFailure.usage(
            "\(option) \(name) is not a regular file (a link, a folder, a device or a pipe); give a new file, or a trace ccbeacon wrote"
        )
        guard !path.hasSuffix("/") else { throw notAFile }
        // Written in place (no temporary file beside it): only the system's own limits apply.
        if let problem = Files.lengthProblem(path, room: 0) {
            throw .usage("\(option) '\(name.excerpt(limit: 60))': \(problem); shorten it")
        }
        let wrongName = CommandFailure.usage(
            "\(option) \(name): a trace's name ends in .pcap (as Wireshark's do); give one that does")
        // Looked at without opening it for reading or writing: a pipe or a device is never
        // opened (which would wake whoever waits on it).
        let probe = open(path, pathOnly | O_NOFOLLOW | O_CLOEXEC)
        guard probe >= 0 else {
            let code = errno
            guard code == ENOENT else { throw openFailure(code, option: option, name: name, notAFile: notAFile) }
            guard path.hasSuffix(".pcap") else { throw wrongName }
            try checkFolder(of: path, option: option, name: name)
            return nil
        }
        defer { close(probe) }
        var info = stat()
        fstat(probe, &info)
        guard info.st_mode & S_IFMT == S_IFREG else { throw notAFile }
        for standard: Int32 in [1, 2] {
            var other = stat()
            if fstat(standard, &other) == 0, other.st_dev == info.st_dev, other.st_ino == info.st_ino {
                throw .usage(
                    "\(option) \(name) is where this command's \(standard == 1 ? "output goes" : "errors go"); give the trace a file of its own"
                )
            }
        }
        let descriptor = open("/proc/self/fd/\(probe)", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { throw openFailure(errno, option: option, name: name, notAFile: notAFile) }
        var head = [UInt8](repeating: 0, count: 24)
        let count = pread(descriptor, &head, head.count, 0)
        let refusal: CommandFailure? =
            switch USBTrace.kind(ofFileStartingWith: Array(head.prefix(max(0, count)))) {
            case .ccbeaconTrace: path.hasSuffix(".pcap") ? nil : wrongName
            case _ where info.st_size == 0: path.hasSuffix(".pcap") ? nil : wrongName
            case .otherCapture:
                .usage(
                    "\(option) \(name) is a capture ccbeacon did not write; it would be replaced, so give a new file")
            case .notACapture:
                .usage(
                    "\(option) \(name) is a file that does not hold a USB trace; it would be replaced, so give a new file or a trace ccbeacon wrote"
                )
            }
        if let refusal {
            close(descriptor)
            throw refusal
        }
        return descriptor
    }

    deinit { writer.close() }

    /// Ends the trace: a command that `succeeded` without a single transfer still leaves a
    /// trace (its header); one that failed before any leaves the file as it found it. Closing
    /// releases the lock.
    func finish(succeeded: Bool) {
        if succeeded { trace.start() }
        writer.close()
    }

    /// Cuts whole records off the end of the trace until at least `bytes` are freed (or none is
    /// left), to make room for what must be written after it; returns the records cut.
    func makeRoom(bytes: Int) -> Int { writer.cutBack(bytes: bytes) }

    /// The records the file holds: those written, less those cut to make room.
    var recordsKept: Int { trace.records - writer.recordsCut }

    /// Linux's O_PATH (the same on x86-64 and arm64), which Glibc's Swift overlay does not
    /// export: a descriptor that names a file without opening it for reading or writing.
    static let pathOnly: Int32 = 0o10_000_000

    /// A new file's folder: it exists and this user may make a file in it.
    static func checkFolder(of path: String, option: String, name: String) throws(CommandFailure) {
        let folder = Files.directory(of: path)
        let shown = Files.directory(of: name)
        guard Files.isDirectory(folder) else { throw .usage("\(option) \(name): the folder \(shown) does not exist") }
        guard access(folder, W_OK | X_OK) == 0 else {
            throw .usage("\(option) \(name): this user may not make a file in \(shown)")
        }
    }

    /// Why opening failed, for `option`.
    static func openFailure(_ code: Int32, option: String, name: String, notAFile: CommandFailure) -> CommandFailure {
        switch code {
        case ELOOP, EISDIR, ENXIO: return notAFile
        case ENOTDIR: return .usage("\(option) \(name): a folder on its path is a file")
        case EACCES, EPERM, EROFS:
            return .usage("\(option) \(name): \(String(cString: strerror(code))); give a file this user may write")
        default:
            return CommandFailure(.failure, "cannot write the trace \(name): \(String(cString: strerror(code)))")
        }
    }

    /// The file being written: made at the first record when it was new; what was written whole
    /// so far (the end of each record), so that a failed write is cut back to it.
    final class Writer: Sendable {
        struct State {
            var descriptor: Int32
            var made = false
            var started = false
            var closed = false
            var recordEnds: [Int64] = []
            var recordsCut = 0
            var committed: Int64 { recordEnds.last ?? 0 }
        }

        private let state: Mutex<State>
        let path: String

        /// A writer for the new file `path` (`existing` nil) or the earlier trace open and locked
        /// on `existing`.
        init(path: String, existing: Int32?) {
            self.path = path
            state = Mutex(State(descriptor: existing ?? -1))
        }

        /// Appends `bytes` whole, or none of them: nil, or why it could not.
        func append(_ bytes: [UInt8]) -> String? {
            state.withLock { state in
                guard !state.closed else { return "the trace is closed" }
                if !state.started {
                    if state.descriptor < 0 {
                        // Made only now, and only if nothing has appeared under the name since
                        // it was checked: that belongs to whoever made it.
                        let made = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0o644)
                        guard made >= 0 else {
                            return errno == EEXIST
                                ? "a file appeared under its name since it was checked (another program made it); it is left alone"
                                : String(cString: strerror(errno))
                        }
                        _ = ExclusiveLock.take(made)
                        state.descriptor = made
                        state.made = true
                    } else {
                        // The earlier trace goes only now, when this one has something to say.
                        guard ftruncate(state.descriptor, 0) == 0 else { return String(cString: strerror(errno)) }
                    }
                    state.started = true
                }
                let start = state.committed
                let failure = bytes.withUnsafeBytes { buffer in
                    Files.writeAll(buffer, to: state.descriptor, at: start)
                }
                if let failure {
                    // A record cut short would end the file in the middle of one.
                    _ = ftruncate(state.descriptor, off_t(start))
                    return String(cString: strerror(failure))
                }
                state.recordEnds.append(start + Int64(bytes.count))
                return nil
            }
        }

        /// See `TraceFile.makeRoom(bytes:)`.
        func cutBack(bytes: Int) -> Int {
            state.withLock { state in
                guard state.descriptor >= 0, !state.recordEnds.isEmpty else { return 0 }
                let goal = state.committed - Int64(bytes)
                var cut = 0
                // The first entry is the header with the first record: it stays.
                while state.recordEnds.count > 1, state.committed > goal {
                    state.recordEnds.removeLast()
                    cut += 1
                }
                _ = ftruncate(state.descriptor, off_t(state.committed))
                state.recordsCut += cut
                return cut
            }
        }

        /// Records cut by `cutBack`.
        var recordsCut: Int { state.withLock { $0.recordsCut } }

        /// Closes the file; one this trace made and never wrote whole is removed (it holds the
        /// lock, so it is still its own).
        func close() {
            state.withLock { state in
                guard !state.closed else { return }
                state.closed = true
                guard state.descriptor >= 0 else { return }
                if state.made, state.recordEnds.isEmpty { unlink(path) }
                ExclusiveLock.release(state.descriptor)
            }
        }
    }
}
