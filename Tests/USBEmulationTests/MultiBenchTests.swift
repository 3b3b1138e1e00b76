import Foundation
import TestSupport
import Testing

/// Several benches on one PostgreSQL pool, each a real process driving two emulated debuggers
/// through real libusb (`cc-debugger-emulator`), on a server of the test's own that the test
/// kills, restarts and stops: 3 benches × 2 debuggers × 600 stations. Whatever happens, the pool
/// stays one truth: every station verified at most once and on one chip, no chip with two
/// stations, every chip that left a bench carrying exactly what the ledger says, and what a
/// bench burned while the server was away recorded by its next run.
@Suite(
    .serialized,
    .enabled(
        if: Tools.available && PrivatePostgres.available,
        "needs umockdev, the built executables and the PostgreSQL server binaries (scripts/test installs them)"))
struct MultiBenchTests {
    static let stations = 600
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// One bench: its folder (its copy of the list and its journal), its name and its
    /// `--server-wait`; each start gets new chips (addresses from a counter) saved in `chips`.
    final class Bench: @unchecked Sendable {
        let name: String
        let folder: String
        let serverWait: String
        let url: String
        let chips: String
        var starts = 0
        var process: ChildProcess?
        let prefix: UInt8

        init(_ name: String, prefix: UInt8, serverWait: String, url: String, work: Workspace) throws {
            self.name = name
            self.prefix = prefix
            self.serverWait = serverWait
            folder = work.path(name)
            chips = work.path("chips")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: chips, withIntermediateDirectories: true)
            self.url = url
            let list =
                "name,uuid,major,minor\n" + (1...MultiBenchTests.stations).map { "s\($0),\(uuid),9,\($0)\n" }.joined()
            try Data(list.utf8).write(to: URL(fileURLWithPath: folder + "/list.csv"))
        }

        var journal: String { folder + "/ccbeacon-journal-\(name).jsonl" }

        /// Starts the bench (emulator and ccbeacon); `releasing`: with --release-interrupted.
        func start(releasing: Bool = false) throws {
            starts += 1
            let ieee = String(format: "00:12:4B:%02X:%02X:00", prefix, starts)
            process = try ChildProcess(
                Tools.emulator,
                [
                    "--devices", "2", "--bench", "--ieee", ieee, "--save-chips", chips, "--", Tools.ccbeacon,
                    "provision",
                    folder + "/list.csv", "--template", "cc2541-ibeacon", "--devices", "all", "--yes", "--wait", "1",
                    "--ledger", url, "--bench", name, "--server-wait", serverWait,
                ]
                    + (releasing ? ["--release-interrupted"] : []),
                in: URL(fileURLWithPath: folder))
        }

        /// Kills it as a power cut would (emulator and ccbeacon at once).
        func kill() {
            process?.killGroup()
            _ = process?.wait()
        }
    }

    /// The pool's attempts as rows: station, chip, outcome, bench.
    static func attempts(_ url: String) throws -> [[String]] {
        try PostgresTestServer.psql(url, "SELECT station, chip, outcome, bench FROM ccbeacon.attempts ORDER BY id")
            .split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }

    /// What must hold at every moment: at most one verified attempt per station and per chip,
    /// at most one live (verified, in progress, interrupted) per station.
    static func checkInvariants(_ url: String, _ moment: String) throws {
        let rows = try attempts(url)
        let verified = rows.filter { $0[2] == "verified" }
        #expect(Set(verified.map { $0[0] }).count == verified.count, "\(moment): a station verified twice")
        #expect(Set(verified.map { $0[1] }).count == verified.count, "\(moment): a chip with two stations")
        let live = rows.filter { ["verified", "in-progress", "interrupted"].contains($0[2]) }
        #expect(Set(live.map { $0[0] }).count == live.count, "\(moment): a station live twice")
        let check = try ChildProcess.run(
            Tools.ccbeacon, ["ledger", "check", "--ledger", url], in: URL(fileURLWithPath: NSTemporaryDirectory()))
        #expect(check.status == 0, "\(moment): \(check.output)\(check.errors)")
    }

    /// The station a saved chip carries, decoded from its iBeacon advertising data (0x7F08 in the
    /// reference template: flags, then 4C 00 02 15, UUID, major, minor, power); nil for none.
    static func carried(_ flash: [UInt8]) -> String? {
        guard flash.count >= 0x7F26 else { return nil }
        let data = Array(flash[0x7F08..<0x7F26])
        guard data[4...8] == [0xFF, 0x4C, 0x00, 0x02, 0x15] else { return nil }
        let uuid = data[9..<25].map { String(format: "%02X", $0) }.joined()
        guard uuid == uuid.uppercased(), uuid == MultiBenchTests.uuid.replacingOccurrences(of: "-", with: "") else {
            return "foreign UUID \(uuid)"
        }
        let major = Int(data[25]) << 8 | Int(data[26])
        let minor = Int(data[27]) << 8 | Int(data[28])
        return major == 9 ? "s\(minor)" : "foreign major \(major)"
    }

    @Test func threeBenchesOnOnePoolSurviveKillsRestartsAndAnAbsentServer() throws {
        let work = try Workspace()
        defer { work.remove() }
        let server = try PrivatePostgres()
        let url = try server.createDatabase("pool")
        // Bench C gives up on an absent server after 3 s (it journals), A and B wait 60 s.
        let benches = try [
            Bench("bench-a", prefix: 0xA0, serverWait: "60", url: url, work: work),
            Bench("bench-b", prefix: 0xB0, serverWait: "60", url: url, work: work),
            Bench("bench-c", prefix: 0xC0, serverWait: "3", url: url, work: work),
        ]
        for bench in benches { try bench.start() }
        // The kills fall mid-run: once the pool exists and the benches are burning.
        let started = Date()
        while ((try? Self.attempts(url))?.filter { $0[2] == "verified" }.count ?? 0) < 10 {
            guard Date().timeIntervalSince(started) < 120 else {
                Issue.record("the benches did not start burning: \(benches.map { $0.process?.errors ?? "" })")
                return
            }
            usleep(50_000)
        }
        // Bench A killed at ten moments (and started again each time); meanwhile bench B's
        // connection terminated, the server restarted.
        for round in 0..<10 {
            usleep(UInt32(300_000 + round * 70_000))
            benches[0].kill()
            try Self.checkInvariants(url, "after kill \(round + 1) of bench A")
            if round == 3 {
                let ended = try PostgresTestServer.psql(
                    server.url("pool"),
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'ccbeacon bench-b'"
                )
                #expect(ended.hasPrefix("1"), "bench B's session was found and ended: \(ended)")
            }
            if round == 6 { try server.restart() }
            try benches[0].start()
        }
        try Self.checkInvariants(url, "after the restart and the terminated connection")
        // The server away until bench C has given up on it (its 3 s): C journals what it burned
        // and stops, while A and B (60 s) are still waiting when the server comes back.
        let before = try Self.attempts(url).filter { $0[2] == "verified" }.count
        #expect(before < Self.stations - 100, "the server must go away mid-run (\(before) verified already)")
        try server.stop()
        let cStopped = benches[2].process?.wait(timeout: 30)
        #expect(
            benches[0].process?.isRunning == true, "bench A waits for the server: \(benches[0].process?.errors ?? "")")
        #expect(
            benches[1].process?.isRunning == true, "bench B waits for the server: \(benches[1].process?.errors ?? "")")
        try server.start()
        #expect(cStopped == 1, "bench C stopped with the server away: \(benches[2].process?.errors ?? "")")
        let journaled =
            (try? String(contentsOfFile: benches[2].journal, encoding: .utf8))?
            .split(separator: "\n").count ?? 0
        if journaled > 0 {
            #expect(benches[2].process?.errors.contains("kept in the journal") == true)
        }
        try benches[2].start()  // records its journal first, then goes on
        for bench in benches { _ = bench.process?.wait(timeout: 600) }
        #expect(!FileManager.default.fileExists(atPath: benches[2].journal), "the journal was recorded and removed")
        if journaled > 0 {
            // An outcome whose commit reached the server as it went away (the answer lost) is
            // journaled too, and found there when the journal is recorded.
            let errors = benches[2].process?.errors ?? ""
            #expect(
                errors.contains("recorded from the journal: ")
                    || errors.contains(" outcome(s) were already on the server; journal removed"), "\(errors)")
        }
        try Self.checkInvariants(url, "after the server came back")
        // Stations held by bench A's kills: their chips went with the killed bench; released by
        // the bench that held each (another may not: it may keep their outcomes in its journal) —
        // bench A's, and any other bench's, each run stopping (3) while another's stay held.
        for (index, bench) in benches.enumerated() {
            try bench.start(releasing: true)
            let status = bench.process?.wait(timeout: 600)
            #expect(status == 0 || (index < 2 && status == 3), "\(bench.process?.errors ?? "")")
        }
        try Self.checkInvariants(url, "at the end")
        let rows = try Self.attempts(url)
        let verified = rows.filter { $0[2] == "verified" }
        #expect(verified.count == Self.stations, "every station verified once")
        #expect(Set(rows.map { $0[3] }) == ["bench-a", "bench-b", "bench-c"])
        // Every chip that left a bench carries exactly what the ledger says.
        let chipOf = Dictionary(uniqueKeysWithValues: verified.map { ($0[1], $0[0]) })
        var saved: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: benches[0].chips) {
            let chip = file.replacingOccurrences(of: ".bin", with: "").replacingOccurrences(of: "-", with: ":")
            saved.insert(chip)
            let flash = [UInt8](try Data(contentsOf: URL(fileURLWithPath: benches[0].chips + "/" + file)))
            let carries = Self.carried(flash)
            #expect(
                carries == chipOf[chip],
                "chip \(chip) carries \(carries ?? "nothing"), the ledger says \(chipOf[chip] ?? "nothing")")
        }
        // A verified chip that left no flash behind was in a killed bench's hand (two per kill at most).
        let unsaved = verified.filter { !saved.contains($0[1]) }
        #expect(unsaved.count <= 2 * 10 && unsaved.allSatisfy { $0[3] == "bench-a" }, "\(unsaved)")
    }
}
