import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Rewriting a user's file in place (`calibrate --write` into a station list): one ccbeacon at a
/// time per file (`lockForRewrite`), the new file made ready beside the old one
/// (`prepareRewrite`), then put in place unless another program changed the file meanwhile.
extension Files {
    /// Takes the rewrite lock of the file `path` leads to, waiting while another ccbeacon holds
    /// it (`waiting` is called once, before the wait). Read the file only once it is held: two
    /// runs that each read, edit and write the file then take turns, and the second edits what
    /// the first wrote instead of writing over it.
    ///
    /// The lock is `flock` on the folder the file is in (by `ExclusiveLock`'s rule), which stays
    /// put while files are put in place in it: on the file itself, a new file another program
    /// saved by rename left the runs that waited on the old one apart (each then undid the
    /// other). A folder the path no longer leads into once the lock is held is let go and the new
    /// one locked. Other programs do not take it: what they write meanwhile is found by
    /// `PreparedRewrite.commit`'s comparison.
    public static func lockForRewrite(_ path: String, waiting: () -> Void = {}) throws(FileError) -> RewriteLock {
        var told = false
        while true {
            // Whether the file may be rewritten is `prepareRewrite`'s to say, once the caller has
            // read it and found what to change.
            guard let resolved = realpath(path, nil) else { throw systemError(.read, path) }
            let target = String(cString: resolved)
            free(resolved)
            let folder = directory(of: target)
            let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else {
                // Its folder, which the rewrite also syncs, is what cannot be read (mode -wx).
                let code = errno
                throw FileError(
                    .write, path: path,
                    reason:
                        "its folder '\(folder)' cannot be opened (\(describe(code))); a file is rewritten only in a folder this user may read and write",
                    code: code)
            }
            var outcome = ExclusiveLock.take(descriptor)
            if outcome == .held {
                if !told {
                    told = true
                    waiting()
                }
                outcome = ExclusiveLock.wait(descriptor)
            }
            if case .failed(let code) = outcome {
                close(descriptor)
                throw FileError(.write, path: path, reason: "it cannot be locked: \(describe(code))", code: code)
            }
            let lock = RewriteLock(descriptor: descriptor, target: target)
            if lock.holdsTarget { return lock }
            lock.release()  // moved while this run waited: lock where it is now
        }
    }

    /// Rewrites the user's file `path` in place with `bytes` under its rewrite lock
    /// (`lockForRewrite`, `prepareRewrite`, then `commit`).
    public static func rewrite(_ path: String, from original: [UInt8], to bytes: [UInt8]) throws(FileError) {
        let lock = try lockForRewrite(path)
        try prepareRewrite(path, from: original, to: bytes, holding: lock).commit()
    }

    /// Makes a rewrite of the user's file `path` ready without touching it: the new file is
    /// written beside it (durably), with what makes it the same file to its owner — owner, group,
    /// permission bits and every extended attribute (ACLs among them) — and `commit` puts it in
    /// place, as atomically as `writeAtomically`; a symbolic link stays a link (the file it leads
    /// to is rewritten). Whatever could make the rewrite fail is found here, before the caller
    /// records anything elsewhere (`checkRewritable`; an attribute that cannot be kept). `lock`,
    /// the file's rewrite lock taken before `original` was read, is held until the commit.
    public static func prepareRewrite(
        _ path: String, from original: [UInt8], to bytes: [UInt8], holding lock: RewriteLock
    ) throws(FileError) -> PreparedRewrite {
        let file = try checkRewritable(path)
        guard file.target == lock.target, lock.holdsTarget else {
            throw FileError(.write, path: path, reason: "it changed while it was being rewritten; it was left as it is")
        }
        let source = open(file.target, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard source >= 0 else { throw systemError(.write, path) }
        defer { close(source) }
        func failed(_ what: String, _ code: Int32) -> FileError {
            FileError(.write, path: path, reason: "\(what): \(describe(code))", code: code)
        }
        let temporary = try writeTemporary(
            bytes, beside: file.target, mode: 0o600,
            finish: { descriptor in
                // After the bytes, in this order, since each step clears what the one before set:
                // writing drops set-id bits and file capabilities, changing the owner drops them too.
                guard fchown(descriptor, file.owner, file.group) == 0 else {
                    return failed("the new file cannot be given the list's owner and group", errno)
                }
                guard fchmod(descriptor, mode_t(file.mode)) == 0 else {
                    return failed("the new file's mode cannot be set", errno)
                }
                return copyAttributes(from: source, to: descriptor, path: path)
            },
            failed: { step, code in
                switch step {
                case .create: systemError(.write, path, code: code)
                case .write: failed("writing the new file failed", code)
                case .flush: failed("flushing the new file failed", code)
                }
            })
        return PreparedRewrite(path: path, target: file.target, temporary: temporary, original: original, lock: lock)
    }
}

/// A user's file held for one rewrite (`Files.lockForRewrite`, a lock on its folder): another
/// ccbeacon that wants to rewrite it, or another file there, waits until this is let go — once its `PreparedRewrite` is settled, `release` is
/// called or the value goes away, and when the process ends, even by `kill -9`.
public final class RewriteLock {
    private let descriptor: Mutex<Int32>
    /// The file rewritten (symbolic links resolved), in the folder locked.
    public let target: String

    init(descriptor: Int32, target: String) {
        self.descriptor = Mutex(descriptor)
        self.target = target
    }

    /// Whether `target` is still in the folder locked (a folder renamed or swapped meanwhile
    /// leaves the lock on another).
    public var holdsTarget: Bool {
        descriptor.withLock { descriptor in
            guard descriptor >= 0, let held = PathIdentity.fileID(descriptor: descriptor),
                let now = PathIdentity.fileID(Files.directory(of: target))
            else { return false }
            return now == held
        }
    }

    /// Lets the lock go (once; later calls do nothing).
    public func release() {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            ExclusiveLock.release(descriptor)
            descriptor = -1
        }
    }

    deinit { release() }
}

/// A rewrite made ready by `Files.prepareRewrite`: the new file beside the old one. `commit` puts it
/// in place; without a commit (`discard`, or the value going away) it is removed and the file stays
/// as it was. Either way the file's rewrite lock is let go.
public final class PreparedRewrite {
    let path: String
    /// The file rewritten (symbolic links resolved); the new one waits in its folder.
    public let target: String
    let temporary: String
    let original: [UInt8]
    private var lock: RewriteLock?

    init(path: String, target: String, temporary: String, original: [UInt8], lock: RewriteLock) {
        self.path = path
        self.target = target
        self.temporary = temporary
        self.original = original
        self.lock = lock
    }

    deinit { discard() }

    /// Puts the new file in place, unless the file no longer holds what was read (another
    /// program changed it meanwhile: it is left as it is), and syncs the folder.
    public func commit() throws(FileError) {
        guard let held = lock else { return }
        defer {
            held.release()
            lock = nil
        }
        // Checked last before the rename: the file is in the folder locked (so no other ccbeacon
        // is rewriting it now) and holds what was read.
        guard held.holdsTarget, (try? Files.read(target)) == original else {
            unlink(temporary)
            throw FileError(.write, path: path, reason: "it changed while it was being rewritten; it was left as it is")
        }
        guard rename(temporary, target) == 0 else {
            let error = Files.systemError(.write, path)
            unlink(temporary)
            throw error
        }
        try Files.syncDirectory(Files.directory(of: target))
    }

    /// Removes the new file; the old one stays.
    public func discard() {
        guard let held = lock else { return }
        unlink(temporary)
        held.release()
        lock = nil
    }
}
