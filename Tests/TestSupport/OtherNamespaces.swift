import Foundation

/// Whether a test may run a process in namespaces of its own (`unshare --uts --pid`, which needs
/// root): a host name of its own, process IDs of its own. Tests that need it are skipped without.
public enum OtherNamespaces {
    /// Tried once: `unshare` there and allowed.
    public static let canBeMade: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let run = try? ChildProcess.run(
            "/usr/bin/unshare", ["--uts", "--pid", "--fork", "--mount-proc", "/bin/true"],
            in: URL(fileURLWithPath: "/"), timeout: 30)
        return run?.status == 0
    }()
}
