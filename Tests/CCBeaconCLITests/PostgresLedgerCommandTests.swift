import Foundation
import PostgresLedger
import Provisioning
import TestSupport
import Testing

/// `ledger show` and `ledger export` read a ledger on the PostgreSQL server by its URL; a password
/// in the URL is never printed. Runs against the server `scripts/test` starts.
@Suite(.enabled(if: PostgresTestServer.available, "needs the test PostgreSQL server (scripts/test starts it)"))
struct PostgresLedgerCommandTests {
    @Test func showAndExportReadAServersLedgerAndNeverPrintItsPassword() throws {
        let url = try PostgresTestServer.freshDatabase()
        let ledger = try PostgresLedger(url: url, bench: "bench-a")
        try ledger.register([
            Station(name: "a", identity: IBeaconFixture.identity(1)),
            Station(name: "b", identity: IBeaconFixture.identity(2)),
        ])
        let (_, attempt) = try #require(
            try ledger.claimNextStation(
                chip: "00:12:4B:00:00:01", debugger: "EMU001", template: "t", templateSHA256: "x", verifyMethod: "read",
                skipping: [], image: { _ in ("i", "C0:FF:EE:00:00:01") }))
        try ledger.finish(attempt.id, outcome: .verified, reason: nil)
        // The test server trusts every local connection, so any password gets in: only what is
        // printed matters here.
        let withPassword = url.replacingOccurrences(of: "postgresql://postgres@", with: "postgresql://postgres:s3kr1t@")
        let show = ToolRun(["ledger", "show", "--ledger", withPassword])
        #expect(show.status == 0, "\(show.diagnostics)")
        #expect(show.output.contains("done") && show.output.contains("00:12:4B:00:00:01"), "\(show.output)")
        #expect(show.output.hasSuffix("1 of 2 done\n"))
        let export = ToolRun(["ledger", "export", "--ledger", withPassword, "--format", "json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(export.output.utf8)) as? [[String: Any]])
        #expect(rows.count == 1 && rows.first?["chip"] as? String == "00:12:4B:00:00:01")
        #expect(rows.first?["address"] as? String == "C0:FF:EE:00:00:01")
        // An empty database holds no ledger, and a reader creates none.
        let empty = try PostgresTestServer.freshDatabase()
        let none = ToolRun(["ledger", "show", "--ledger", empty])
        #expect(none.status == 65 && none.diagnostics.contains("holds no ledger"), "\(none.diagnostics)")
        #expect(
            try PostgresTestServer.psql(empty, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").hasPrefix(
                "0"))
        // A server that is not there: told, without the password.
        let gone = ToolRun([
            "ledger", "show", "--ledger", "postgresql://postgres:s3kr1t@/db?host=/nonexistent-ccbeacon-socket",
        ])
        #expect(gone.status == 1 && gone.diagnostics.contains("postgresql://postgres:***@/db"), "\(gone.diagnostics)")
        for run in [show, export, none, gone] {
            #expect(!(run.output + run.diagnostics).contains("s3kr1t"))
        }
    }
}
