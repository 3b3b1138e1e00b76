import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one rule for every exclusive `flock` ccbeacon takes without waiting (a folder's or a
/// ledger's run lock, a trace, a burn test's report folder): a lock another process holds is
/// refused at once; a lock this process let go is taken once the children it was starting
/// meanwhile are gone.
///
/// A child that `posix_spawn` or `fork` starts gets a copy of every descriptor, and with it the
/// lock, until it execs (which closes the `O_CLOEXEC` ones) or exits: milliseconds, but long
/// enough that two commands one after the other in one process (the tests, a hook started just
/// before) saw "another ccbeacon" where there was none. Locks are let go through `release`, which
/// notes the file first; a refused lock on a noted file is tried again for at most `childGrace`.
/// Known limit: a lock on a noted file that another process took since is refused only after
/// that wait.
public enum ExclusiveLock {
    /// What taking a lock came to.
    public enum Outcome: Sendable, Equatable {
        /// The lock is this descriptor's.
        case taken
        /// Another holds it.
        case held
        /// `flock` failed otherwise (the `errno`).
        case failed(Int32)
    }

    /// How long a lock this process let go is waited for.
    static let childGrace = Duration.seconds(2)

    /// The files (device, inode) whose lock this process let go and has not taken again.
    private static let letGo = Mutex<Set<FileKey>>([])

    /// The files whose lock this process holds, each with how many of its descriptors hold it.
    private static let heldHere = Mutex<[FileKey: Int]>([:])

    /// Whether this process holds the lock of `descriptor`'s file through a descriptor of its own:
    /// another descriptor of this process would wait for it forever (`flock` locks belong to the
    /// open file, not the process).
    public static func isHeldHere(_ descriptor: Int32) -> Bool {
        guard let key = fileKey(descriptor) else { return false }
        return heldHere.withLock { $0[key] != nil }
    }

    private static func noteTaken(_ key: FileKey?) {
        guard let key else { return }
        _ = letGo.withLock { $0.remove(key) }
        heldHere.withLock { $0[key, default: 0] += 1 }
    }

    private struct FileKey: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// Takes the exclusive lock on `descriptor`'s file without blocking (see the type's rule).
    public static func take(_ descriptor: Int32) -> Outcome {
        let key = fileKey(descriptor)
        var outcome = attempt(descriptor)
        if outcome == .held, let key, letGo.withLock({ $0.contains(key) }) {
            let clock = ContinuousClock()
            let deadline = clock.now + childGrace
            while outcome == .held, clock.now < deadline {
                usleep(2_000)
                outcome = attempt(descriptor)
            }
        }
        if outcome == .taken { noteTaken(key) }
        return outcome
    }

    /// Takes the exclusive lock on `descriptor`'s file, blocking until it is free.
    public static func wait(_ descriptor: Int32) -> Outcome {
        var outcome = Outcome.held
        while outcome == .held {
            outcome = flock(descriptor, LOCK_EX) == 0 ? .taken : errno == EINTR ? .held : .failed(errno)
        }
        if outcome == .taken { noteTaken(fileKey(descriptor)) }
        return outcome
    }

    /// Lets the lock on `descriptor` go by closing it, noting the file first (so a child that
    /// copies the descriptor after this is covered too).
    public static func release(_ descriptor: Int32) {
        if let key = fileKey(descriptor) {
            _ = letGo.withLock { $0.insert(key) }
            heldHere.withLock { held in
                if let count = held[key] { held[key] = count > 1 ? count - 1 : nil }
            }
        }
        close(descriptor)
    }

    private static func attempt(_ descriptor: Int32) -> Outcome {
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            return code == EWOULDBLOCK ? .held : .failed(code)
        }
        return .taken
    }

    private static func fileKey(_ descriptor: Int32) -> FileKey? {
        PathIdentity.fileID(descriptor: descriptor).map { FileKey(device: $0.device, inode: $0.inode) }
    }
}
