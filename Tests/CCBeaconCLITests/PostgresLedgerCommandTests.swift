import Foundation
import PostgresLedger
import Provisioning
import StationLedger
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
        #expect(show.output.hasSuffix("1 of 2 done\nbench bench-a: 1 done, 0 held, 0 burning, 0 failed attempt(s)\n"))
        let export = ToolRun(["ledger", "export", "--ledger", withPassword, "--format", "json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(export.output.utf8)) as? [[String: Any]])
        #expect(rows.count == 1 && rows.first?["chip"] as? String == "00:12:4B:00:00:01")
        #expect(rows.first?["address"] as? String == "C0:FF:EE:00:00:01")
        // An empty database holds no ledger, and a reader creates none.
        let empty = try PostgresTestServer.freshDatabase()
        let none = ToolRun(["ledger", "show", "--ledger", empty])
        #expect(none.status == 65 && none.diagnostics.contains("holds no ccbeacon ledger"), "\(none.diagnostics)")
        #expect(
            try PostgresTestServer.psql(empty, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").hasPrefix(
                "0"))
        // A server that is not there: told, without the password.
        let gone = ToolRun([
            "ledger", "show", "--ledger", "postgresql://postgres:s3kr1t@/db?host=/nonexistent-ccbeacon-socket",
        ])
        #expect(
            gone.status == 1
                && gone.diagnostics.contains("postgresql://postgres@[socket /nonexistent-ccbeacon-socket]/db"),
            "\(gone.diagnostics)")
        var runs = [show, export, none, gone]
        // URLs libpq reads with the password in odd places, and ones it cannot read at all (its own
        // message would quote the password): never printed.
        for odd in [
            "postgresql://postgres:pa?ss3kr1t@/nodb?host=/nonexistent",
            "postgresql://postgres@/nodb?host=/nonexistent&pass%77ord=s3kr1t",
            "postgresql://postgres:s3kr1%74@[::1/led", "postgresql://postgres:s3kr1%zzt@/led",
            "POSTGRESQL://postgres:s3kr1t@/x?host=/nonexistent",
        ] {
            runs.append(ToolRun(["ledger", "show", "--ledger", odd]))
        }
        // Commands that take ledger files only refuse a server before using or showing the URL.
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let list = try scratch.write("l.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        let rssi = try scratch.write("r.txt", String(repeating: "-60\n", count: 20))
        runs.append(ToolRun(["ledger", "check", "--ledger", withPassword]))
        for arguments in [
            ["calibrate", "--rssi", rssi, "--station", "a", "--write", "--ledger", withPassword],
            ["scan", "--from", list, "--ledger", withPassword],
        ] {
            let refused = ToolRun(arguments)
            #expect(
                refused.status == 64 && refused.diagnostics.contains("is a PostgreSQL ledger"),
                "\(arguments[0]): \(refused.diagnostics)")
            runs.append(refused)
        }
        for run in runs {
            #expect(!(run.output + run.diagnostics).contains("s3kr1"), "\(run.diagnostics)")
        }
    }
}
