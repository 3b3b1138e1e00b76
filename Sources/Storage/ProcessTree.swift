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
    /// A member: its ID and its start time (field 22 of `/proc/PID/stat`), so that a signal never
    /// reaches another process that took an ended member's ID.
    struct Member: Sendable, Equatable {
        var pid: Int
        var started: Substring
    }

    /// The members, the root first.
    let members: [Member]

    /// The members' IDs, the root first.
    public var pids: [Int] { members.map(\.pid) }

    /// Stops `root` and everything descended from it with SIGSTOP — each stopped when found, and
    /// the look repeated until it finds none new, so that nothing forks a child that escapes it —
    /// and returns them, stopped. No tree for `root` 0 or this process.
    public static func stop(_ root: Int) -> ProcessTree {
        guard root > 0, root != Int(getpid()), let first = member(root) else { return ProcessTree(members: []) }
        var found = [first]
        kill(pid_t(root), SIGSTOP)
        // Bounded: a tree that keeps growing after its members are stopped cannot; a look that
        // finds one more each time is a tree being killed from elsewhere.
        for _ in 0..<64 {
            let children = childrenByParent()
            let known = Set(found.map(\.pid))
            var next = [Member]()
            var stack = found.map(\.pid)
            var seen = known
            while let pid = stack.popLast() {
                for child in children[pid] ?? [] where !seen.contains(child.pid) {
                    seen.insert(child.pid)
                    next.append(child)
                    stack.append(child.pid)
                }
            }
            if next.isEmpty { break }
            for member in next { kill(pid_t(member.pid), SIGSTOP) }
            found += next
        }
        return ProcessTree(members: found)
    }

    /// Sends `signal` to each member still running as the process found.
    public func signal(_ number: Int32) {
        for member in members where Self.member(member.pid) == member { kill(pid_t(member.pid), number) }
    }

    /// Whether every member has ended (a zombie counts as ended).
    public var hasEnded: Bool {
        members.allSatisfy { member in
            guard let now = Self.member(member.pid), now == member else { return true }
            return LocalProcesses.statusFields(member.pid)?.first == "Z"
        }
    }

    /// `pid` as a member now, or nil where no such process runs.
    static func member(_ pid: Int) -> Member? {
        // The start time is field 22: the 20th after the state.
        guard let fields = LocalProcesses.statusFields(pid), fields.count > 19 else { return nil }
        return Member(pid: pid, started: fields[19])
    }

    /// Every process of this PID namespace, by its parent's ID (field 4 of `/proc/PID/stat`).
    static func childrenByParent() -> [Int: [Member]] {
        var children: [Int: [Member]] = [:]
        for name in (try? Files.list("/proc")) ?? [] {
            guard let pid = Int(name), let fields = LocalProcesses.statusFields(pid), fields.count > 19,
                let parent = Int(fields[1])
            else { continue }
            children[parent, default: []].append(Member(pid: pid, started: fields[19]))
        }
        return children
    }
}
