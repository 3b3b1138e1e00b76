import Foundation

/// The throwaway PostgreSQL server `scripts/test` starts for the tests (`start_test_postgres` in
/// scripts/lib.sh): its URL is in `CCBEACON_TEST_POSTGRES`. Without it (a plain `swift test`) the
/// PostgreSQL cases are not run; CI always runs them.
public enum PostgresTestServer {
    /// The maintenance database's URL, when a test server runs.
    public static var url: String? { ProcessInfo.processInfo.environment["CCBEACON_TEST_POSTGRES"] }

    /// Whether a test server runs.
    public static var available: Bool { url != nil }

    /// A new, empty database on the test server; its libpq URL.
    public static func freshDatabase() throws -> String {
        guard let url else { throw PostgresTestError("no test server (CCBEACON_TEST_POSTGRES is not set)") }
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try psql(url, "CREATE DATABASE \(name)")
        return url.replacingOccurrences(of: "/postgres?", with: "/\(name)?")
    }

    /// Runs one SQL command with psql against `url`.
    @discardableResult
    public static func psql(_ url: String, _ sql: String) throws -> String {
        let result = try ChildProcess.run(
            "/usr/bin/psql", [url, "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-c", sql],
            in: URL(fileURLWithPath: NSTemporaryDirectory()), timeout: 60)
        guard result.status == 0 else { throw PostgresTestError("psql: \(sql): \(result.errors)") }
        return result.output
    }
}

/// A test server that could not do what a test asked.
public struct PostgresTestError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// The test server reached through a socket folder of the test's own: a symbolic link to the
/// server's Unix socket that the test can take away and put back, so one test's ledger loses its
/// server (new connections refused, its backends terminated) while every other test's keeps it.
public final class PostgresOutage: Sendable {
    /// The folder holding the link (`host=` of `url`).
    public let folder: String
    /// The server's real socket.
    let socket: String
    /// A fresh database reached through the link.
    public let url: String

    /// A fresh database on the test server, reached through a link of this outage's own.
    public init() throws {
        let database = try PostgresTestServer.freshDatabase()
        guard let range = database.range(of: "host=") else {
            throw PostgresTestError("the test server's URL has no host= socket folder: \(database)")
        }
        let end = database[range.upperBound...].firstIndex(of: "&") ?? database.endIndex
        let serverFolder = String(database[range.upperBound..<end])
        socket = serverFolder + "/.s.PGSQL.5432"
        folder = NSTemporaryDirectory() + "pg-outage-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        url = database.replacingOccurrences(of: "host=" + serverFolder, with: "host=" + folder)
        restore()
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// The database's name.
    public var database: String {
        String(url.split(separator: "?")[0].split(separator: "/").last ?? "")
    }

    /// The server goes away for this database: no new connection, and every connection to it
    /// (but the one terminating them) ended.
    public func begin() throws {
        unlink(folder + "/.s.PGSQL.5432")
        guard let admin = PostgresTestServer.url else { return }
        try PostgresTestServer.psql(
            admin,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(database)' AND pid <> pg_backend_pid()"
        )
    }

    /// The server is back.
    public func restore() {
        symlink(socket, folder + "/.s.PGSQL.5432")
    }
}

/// A PostgreSQL server of one test's own, in a temporary folder (initdb as the unprivileged
/// user postgres when the tests run as root, as `start_test_postgres` does; Unix socket only), so
/// the test can stop and restart it without touching the server every other test uses. Stopped
/// and removed when released.
public final class PrivatePostgres: @unchecked Sendable {
    /// The folder holding the cluster (`data`) and its socket (`sock`).
    public let folder: String
    let binaries: String

    /// The server binaries' folder: the one `scripts/test` found, else the newest installed.
    public static var binaries: String? {
        if let ctl = ProcessInfo.processInfo.environment["CCBEACON_TEST_POSTGRES_CTL"] {
            return (ctl as NSString).deletingLastPathComponent
        }
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        guard let newest = versions.compactMap(Int.init).max() else { return nil }
        let folder = "\(root)/\(newest)/bin"
        return FileManager.default.isExecutableFile(atPath: folder + "/pg_ctl") ? folder : nil
    }

    /// Whether a server can be made here.
    public static var available: Bool { binaries != nil && PostgresTestServer.available }

    /// A new cluster, started.
    public init() throws {
        guard let binaries = Self.binaries else { throw PostgresTestError("no PostgreSQL server binaries") }
        self.binaries = binaries
        folder = NSTemporaryDirectory() + "ccbeacon-private-pg-" + UUID().uuidString
        for sub in ["", "/data", "/sock"] {
            try FileManager.default.createDirectory(atPath: folder + sub, withIntermediateDirectories: true)
        }
        chmod(folder, 0o755)
        if getuid() == 0 {
            _ = try ChildProcess.run(
                "/bin/chown", ["postgres", folder + "/data", folder + "/sock"], in: URL(fileURLWithPath: folder))
        }
        try run("initdb", ["-D", folder + "/data", "--auth=trust", "-U", "postgres"])
        try start()
    }

    deinit {
        _ = try? run("pg_ctl", ["-D", folder + "/data", "-m", "immediate", "stop"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The URL of database `name` on this server.
    public func url(_ name: String = "postgres") -> String { "postgresql://postgres@/\(name)?host=\(folder)/sock" }

    /// Starts the server (and waits until it takes connections).
    public func start() throws {
        try run(
            "pg_ctl",
            [
                "-D", folder + "/data", "-o", "-k \(folder)/sock -c listen_addresses=''", "-w", "-l",
                folder + "/data/server.log", "start",
            ])
    }

    /// Stops the server: `fast` ends every session (their transactions rolled back);
    /// `immediate` is a crash (the server recovers from its log when started again).
    public func stop(mode: String = "fast") throws {
        try run("pg_ctl", ["-D", folder + "/data", "-m", mode, "-w", "stop"])
    }

    /// Stops and starts the server.
    public func restart() throws {
        try stop()
        try start()
    }

    /// Makes role `role` log in with its password only (a `scram-sha-256` line before the
    /// cluster's `trust` ones), and reloads the server.
    public func require(password role: String) throws {
        let hba = folder + "/data/pg_hba.conf"
        let lines = (try String(contentsOfFile: hba, encoding: .utf8))
        try ("local all \(role) scram-sha-256\n" + lines).write(toFile: hba, atomically: false, encoding: .utf8)
        try run("pg_ctl", ["-D", folder + "/data", "reload"])
        // The postmaster rereads the file on SIGHUP, later: until then the role still gets in.
        for _ in 0..<500 {
            let tried = try ChildProcess.run(
                "/usr/bin/psql",
                ["-w", "-X", "-q", "-c", "SELECT 1", "postgresql://\(role)@/postgres?host=\(folder)/sock"],
                in: URL(fileURLWithPath: NSTemporaryDirectory()), environment: ["PGPASSFILE": "/nonexistent"],
                timeout: 30)
            if tried.status != 0 { return }
            usleep(20_000)
        }
        throw PostgresTestError("\(role) still logs in without a password")
    }

    /// A new database; its URL.
    public func createDatabase(_ name: String) throws -> String {
        try PostgresTestServer.psql(url(), "CREATE DATABASE \(name)")
        return url(name)
    }

    @discardableResult
    func run(_ tool: String, _ arguments: [String]) throws -> ProcessResult {
        let asPostgres = getuid() == 0
        let result = try ChildProcess.run(
            asPostgres ? "/usr/sbin/runuser" : "\(binaries)/\(tool)",
            asPostgres ? ["-u", "postgres", "--", "\(binaries)/\(tool)"] + arguments : arguments,
            in: URL(fileURLWithPath: NSTemporaryDirectory()), timeout: 120)
        guard result.status == 0 else { throw PostgresTestError("\(tool) \(arguments): \(result.errors)") }
        return result
    }
}
