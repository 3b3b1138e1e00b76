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
