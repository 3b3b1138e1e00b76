import CCDebugger
import Storage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The file a USB trace goes to (`--trace FILE`, a burn test's `DIR/trace.pcap`): a new file, or
/// a trace ccbeacon wrote earlier — never anything else (a list, a ledger, an image given by
/// mistake, a capture the user made with tcpdump), never through a link, never a file the same
/// command reads or writes otherwise, and never by two writers at once (an exclusive `flock`
/// held while the trace is open).
///
/// The file is checked and locked through the one descriptor that writes it, so nothing can be
/// swapped in between; it is emptied only when the first record comes. A command that never
/// reaches a debugger leaves an earlier trace as it was, and removes a file it created. Records
/// are written whole as they happen (`USBTrace`): a killed command leaves whole records, and a
/// write that fails part-way (a full disk, `ulimit -f`) is cut back to the last whole record.
final class TraceFile: Sendable {
    /// The trace the debuggers record into.
    let trace: USBTrace
    /// The file, as messages name it.
    let path: String
    private let writer: Writer

    /// Checks and opens `path` (shown as `shownAs`, by default the path itself) for the trace
    /// of `option`; `arguments`: every other value the command was given, none of which may name
    /// the same file.
    init(path: String, shownAs: String? = nil, option: String = "--trace", arguments: [String] = [])
        throws(CommandFailure)
    {
        let name = shownAs ?? path
        guard !path.isEmpty else { throw .usage("\(option) needs a file name") }
        var created = true
        var descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0o644)
        if descriptor < 0, errno == EEXIST {
            created = false
            descriptor = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        }
        guard descriptor >= 0 else { throw Self.openFailure(errno, option: option, name: name, path: path) }
        var info = stat()
        fstat(descriptor, &info)
        func refuse(_ failure: CommandFailure) -> CommandFailure {
            if created { unlink(path) }
            close(descriptor)
            return failure
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw refuse(
                .usage(
                    "\(option) \(name) is not a regular file (a link, a folder or a device); give a new file, or a trace ccbeacon wrote"
                ))
        }
        for argument in arguments where !argument.isEmpty {
            var other = stat()
            if stat(argument, &other) == 0, other.st_dev == info.st_dev, other.st_ino == info.st_ino {
                throw refuse(
                    .usage(
                        "\(option) \(name) is also an argument of this command ('\(visible: argument)'); give the trace a file of its own"
                    ))
            }
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            throw refuse(
                CommandFailure(
                    .failure, "another ccbeacon is writing the trace \(name)",
                    hint: "give each run its own trace file"))
        }
        if info.st_size > 0 {
            var head = [UInt8](repeating: 0, count: 24)
            let count = pread(descriptor, &head, head.count, 0)
            switch USBTrace.kind(ofFileStartingWith: Array(head.prefix(max(0, count)))) {
            case .ccbeaconTrace: break
            case .otherCapture:
                throw refuse(
                    .usage(
                        "\(option) \(name) is a capture ccbeacon did not write; it would be replaced, so give a new file"
                    ))
            case .notACapture:
                throw refuse(
                    .usage(
                        "\(option) \(name) is a file that does not hold a USB trace; it would be replaced, so give a new file or a trace ccbeacon wrote"
                    ))
            }
        }
        let writer = Writer(descriptor: descriptor, path: path, created: created, identity: (info.st_dev, info.st_ino))
        self.writer = writer
        self.path = name
        trace = USBTrace { bytes in writer.append(bytes) }
    }

    deinit { writer.close(keepingAnEmptyFile: false) }

    /// Ends the trace: a command that `succeeded` without a single transfer still leaves a
    /// trace (its header); one that failed before any leaves the file as it found it (removed if
    /// it made it). Closing releases the lock.
    func finish(succeeded: Bool) {
        if succeeded { trace.start() }
        writer.close(keepingAnEmptyFile: succeeded)
    }

    /// Why `open` failed, for `option`: the user's mistake (64) where the path cannot be a trace.
    static func openFailure(_ code: Int32, option: String, name: String, path: String) -> CommandFailure {
        switch code {
        case ELOOP:
            return .usage(
                "\(option) \(name) is not a regular file (a link, a folder or a device); give a new file, or a trace ccbeacon wrote"
            )
        case EISDIR: return .usage("\(option) \(name) is a folder; give a file")
        case ENOENT, ENOTDIR:
            let folder = Files.directory(of: path).isEmpty ? "." : Files.directory(of: path)
            return .usage("\(option) \(name): the folder \(folder) does not exist")
        case EACCES, EPERM, EROFS:
            return .usage("\(option) \(name): \(String(cString: strerror(code))); give a file this user may write")
        default:
            return CommandFailure(.failure, "cannot write the trace \(name): \(String(cString: strerror(code)))")
        }
    }

    /// Whether the file at `path` is a trace ccbeacon wrote (read without following a link).
    static func holdsATrace(_ path: String) -> Bool {
        let file = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard file >= 0 else { return false }
        defer { Glibc.close(file) }
        var head = [UInt8](repeating: 0, count: 24)
        guard read(file, &head, head.count) == head.count else { return false }
        return USBTrace.kind(ofFileStartingWith: head) == .ccbeaconTrace
    }

    /// The open file: what was written whole so far, so that a failed write is cut back to it.
    final class Writer: Sendable {
        struct State {
            var descriptor: Int32
            var started = false
            var committed: off_t = 0
        }

        private let state: Mutex<State>
        let path: String
        let created: Bool
        let identity: (device: dev_t, inode: ino_t)

        init(descriptor: Int32, path: String, created: Bool, identity: (dev_t, ino_t)) {
            state = Mutex(State(descriptor: descriptor))
            self.path = path
            self.created = created
            self.identity = identity
        }

        /// Appends `bytes` whole, or none of them: nil, or why it could not.
        func append(_ bytes: [UInt8]) -> String? {
            state.withLock { state in
                guard state.descriptor >= 0 else { return "the trace is closed" }
                if !state.started {
                    // The earlier trace goes only now, when this one has something to say.
                    guard ftruncate(state.descriptor, 0) == 0 else { return String(cString: strerror(errno)) }
                    state.started = true
                }
                let failure = bytes.withUnsafeBytes { buffer in
                    Files.writeAll(buffer, to: state.descriptor, at: Int64(state.committed))
                }
                if let failure {
                    // A record cut short would end the file in the middle of one.
                    _ = ftruncate(state.descriptor, state.committed)
                    return String(cString: strerror(failure))
                }
                state.committed += off_t(bytes.count)
                return nil
            }
        }

        /// Closes the file; one never written is removed if this trace made it and an empty one
        /// is not wanted (only if the name still leads to it).
        func close(keepingAnEmptyFile: Bool) {
            state.withLock { state in
                guard state.descriptor >= 0 else { return }
                if !state.started, created, !keepingAnEmptyFile {
                    var info = stat()
                    if lstat(path, &info) == 0, info.st_dev == identity.device, info.st_ino == identity.inode {
                        unlink(path)
                    }
                }
                Glibc.close(state.descriptor)
                state.descriptor = -1
            }
        }
    }
}
