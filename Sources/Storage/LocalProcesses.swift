#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The processes this one can tell alive or ended: those of its own boot and PID namespace. A
/// process ID written down elsewhere — by a run on another host sharing a folder or a database,
/// in another container, before a reboot — may name another process here, or none while the
/// writer still runs; only a process of this machine is judged by its ID.
public enum LocalProcesses {
    /// This boot and this PID namespace (`/proc/sys/kernel/random/boot_id` and
    /// `/proc/self/ns/pid`), or `unknown-` and random hex digits where either cannot be read:
    /// then no machine is this one, and no other process is judged.
    public static let machine: String = {
        let boot = firstLine("/proc/sys/kernel/random/boot_id") ?? ""
        let namespace = Files.linkTarget("/proc/self/ns/pid") ?? ""
        guard !boot.isEmpty, !namespace.isEmpty else {
            return "unknown-" + (0..<4).map { _ in hex8(UInt32.random(in: 0...UInt32.max)) }.joined()
        }
        return "\(boot) \(namespace)"
    }()

    /// Whether this machine could be read, so that its processes can be judged.
    public static let isKnown = !machine.hasPrefix("unknown-")

    /// Whether `other` is this machine, known.
    public static func isThisMachine(_ other: String) -> Bool { isKnown && other == machine }

    /// Eight lower-case hex digits that stand for `machine` where a name has no room for it (the
    /// temporary files' names): its 32-bit FNV-1a hash.
    public static let machineToken: String = {
        var hash: UInt32 = 0x811C_9DC5
        for byte in machine.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return hex8(hash)
    }()

    /// Whether the process `pid` of this machine has ended: no such process, or one killed and not
    /// yet reaped by its parent (a zombie runs no more). Never this process.
    public static func hasEnded(_ pid: Int) -> Bool {
        guard let pid = pid_t(exactly: pid), pid > 0, pid != getpid() else { return false }
        if kill(pid, 0) != 0 { return errno == ESRCH }
        return status(Int(pid))?.state == "Z"
    }

    /// What `/proc/PID/stat` says of a process: its state (`R`, `S`, `T`, `Z`…), its parent, and
    /// when it started (clock ticks after the boot).
    struct Status: Sendable, Equatable {
        var state: Substring
        var parent: Int
        var startTicks: Int
    }

    /// `pid`'s `Status`, or nil where no such process runs. The fields are read after the
    /// process's name (which may hold blanks and parentheses): the state is field 3, the parent
    /// field 4, the start time field 22.
    static func status(_ pid: Int) -> Status? {
        guard let stat = firstLine("/proc/\(pid)/stat", whole: true), let close = stat.lastIndex(of: ")") else {
            return nil
        }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let parent = Int(fields[1]), let started = Int(fields[19]) else { return nil }
        return Status(state: fields[0], parent: parent, startTicks: started)
    }

    /// When the process `pid` of this machine started, in seconds since 1970 (its start time in
    /// `/proc/PID/stat`, ticks after the boot, added to the boot's time), or nil where none runs.
    public static func startTime(_ pid: Int) -> Double? {
        guard let ticks = status(pid)?.startTicks, let boot = bootTime else { return nil }
        return boot + Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// When this machine booted, in seconds since 1970 (`btime` in `/proc/stat`).
    static let bootTime: Double? = {
        guard let bytes = Files.readStart("/proc/stat", limit: 1 << 20) else { return nil }
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("btime ") }
        return line.flatMap { Double($0.dropFirst(6)) }
    }()

    /// The first line of the file at `path`: its first word, or `whole`, all of it.
    static func firstLine(_ path: String, whole: Bool = false) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return whole ? text : text.split(whereSeparator: \.isWhitespace).first.map(String.init)
    }

    /// `value` as eight lower-case hex digits.
    static func hex8(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
