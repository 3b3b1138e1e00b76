#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A process and every process it started and their own, found by the parent IDs in
/// `/proc/PID/stat` — also those that left its process group or session (`setsid`, `timeout`
/// without `--foreground`), which signalling the group misses. What left the tree before it was
/// looked at (a daemon whose parent ended: its parent is then init) is not found.
public struct ProcessTree: Sendable {
    /// A member: its ID and its start time (`LocalProcesses.Status.startTicks`), so that a signal
    /// never reaches another process that took an ended member's ID.
    struct Member: Sendable, Equatable {
        var pid: Int
        var started: Int
    }

    /// The members, the root first.
    let members: [Member]

    /// The members' IDs, the root first.
    public var pids: [Int] { members.map(\.pid) }

    /// When the process `pid` started (clock ticks after the boot), to tell it later from another
    /// that takes its ID once it has ended; nil where none runs.
    public static func startTicks(_ pid: Int) -> Int? { member(pid)?.started }

    /// Stops `root` and everything descended from it with SIGSTOP — each stopped when found, and
    /// the look repeated until it finds none new, so that nothing forks a child that escapes it —
    /// and returns them, stopped. No tree for `root` 0, this process, or a process that did not
    /// start at `startTicks` (where given: the ID taken by another since).
    public static func stop(_ root: Int, startTicks: Int? = nil) -> ProcessTree {
        guard root > 0, root != Int(getpid()), let first = member(root),
            startTicks.map({ $0 == first.started }) ?? true
        else { return ProcessTree(members: []) }
        return stop(from: [first])
    }

    /// The members still running and everything descended from them now, stopped as `stop`
    /// stops them: what the tree grew meanwhile (a member that went on forking after a SIGTERM).
    public func grown() -> ProcessTree {
        Self.stop(from: members.filter { Self.member($0.pid) == $0 })
    }

    /// `roots` and their descendants, each stopped as found (`stop`).
    static func stop(from roots: [Member]) -> ProcessTree {
        var found = [Member]()
        // A process tracing this one (a hook's `strace -p $PPID`) is never stopped: this process
        // would then wait on it at its next system call, for ever. It is killed with the rest.
        // Looked at again before each pass (a member may attach meanwhile).
        var tracers = tracersOfThisProcess()
        func hold(_ member: Member) {
            if tracers.contains(member.pid) {
                found.append(member)
                return
            }
            kill(pid_t(member.pid), SIGSTOP)
            // Between the look and the signal the member may have ended and its ID been taken:
            // that process is let go, not kept stopped.
            if Self.member(member.pid) == member { found.append(member) } else { kill(pid_t(member.pid), SIGCONT) }
        }
        for root in roots { hold(root) }
        // Bounded: a tree whose members are stopped cannot keep growing; a look that finds one
        // more each time is a tree being changed from elsewhere.
        for _ in 0..<64 {
            let children = childrenByParent()
            var seen = Set(found.map(\.pid))
            var next = [Member]()
            var stack = found
            while let parent = stack.popLast() {
                for child in children[parent.pid] ?? [] where !seen.contains(child.pid) {
                    seen.insert(child.pid)
                    next.append(child)
                    stack.append(child)
                }
            }
            if next.isEmpty { break }
            tracers = tracersOfThisProcess()
            for member in next { hold(member) }
        }
        return ProcessTree(members: found)
    }

    /// Sends `signal` to each member still running as the process found, the last found (the
    /// deepest) first and the root last: a parent outlives what it started while they are ended,
    /// so that whoever waits for the root sees it end only when the rest has.
    public func signal(_ number: Int32) {
        for member in members.reversed() where Self.member(member.pid) == member { kill(pid_t(member.pid), number) }
    }

    /// Whether every member has ended (a zombie counts as ended).
    public var hasEnded: Bool {
        members.allSatisfy { member in
            guard let now = LocalProcesses.status(member.pid), now.startTicks == member.started else { return true }
            return now.state == "Z"
        }
    }

    /// `pid` as a member now, or nil where no such process runs.
    static func member(_ pid: Int) -> Member? {
        LocalProcesses.status(pid).map { Member(pid: pid, started: $0.startTicks) }
    }

    /// The processes tracing a thread of this one: `TracerPid` in `/proc/self/task/*/status` is
    /// the tracing *thread*, whose process is its `Tgid` (a tracer that traces from a thread of its
    /// own has another ID than its process's).
    static func tracersOfThisProcess() -> Set<Int> {
        var tracers = Set<Int>()
        for task in (try? Files.list("/proc/self/task")) ?? [] {
            guard let tracer = statusField("TracerPid:", of: "/proc/self/task/\(task)/status"), tracer > 0 else {
                continue
            }
            tracers.insert(statusField("Tgid:", of: "/proc/\(tracer)/status") ?? tracer)
        }
        return tracers
    }

    /// The number after `name` in the status file at `path` (`TracerPid:`, `Tgid:`).
    static func statusField(_ name: String, of path: String) -> Int? {
        guard let bytes = Files.readStart(path, limit: 8192) else { return nil }
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(name) }
        return line.flatMap { Int($0.dropFirst(name.count).filter { !$0.isWhitespace }) }
    }

    /// Every process of this PID namespace, by its parent's ID.
    static func childrenByParent() -> [Int: [Member]] {
        var children: [Int: [Member]] = [:]
        for name in (try? Files.list("/proc")) ?? [] {
            guard let pid = Int(name), let status = LocalProcesses.status(pid) else { continue }
            children[status.parent, default: []].append(Member(pid: pid, started: status.startTicks))
        }
        return children
    }
}
