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
