import Foundation
import TestSupport
import Testing

/// The nemesis (issue 25): benches — each a real ccbeacon process driving a timed emulated
/// debugger through real libusb, every chip's flash saved when it leaves (`--save-chips`) — on one
/// ledger, while a fault schedule does to them what a production line does: a bench paused past
/// its lease mid-burn while its backend is terminated and a second process starts under its name
/// with --release-interrupted; connections cut while libpq sets them up and mid-transaction; a
/// bench killed (-9) mid-burn and started again; the server restarted at once (a crash). Then a
/// checker reads the ledger **and the chips**: no identity on two chips, no chip carrying an
/// identity the ledger does not record as verified on it (unless its bench named it to the
/// operator to set aside), every station verified once, `ledger check` clean.
///
/// `scripts/test` runs the short schedule; `scripts/bench` runs it with `CCBEACON_NEMESIS_ROUNDS`
/// rounds of the kill-and-cut part.
@Suite(
    .serialized,
    .enabled(
        if: Tools.available && PrivatePostgres.available,
        "needs umockdev, the built executables and the PostgreSQL server binaries (scripts/test installs them)"))
struct NemesisTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"
    static let rounds = Int(ProcessInfo.processInfo.environment["CCBEACON_NEMESIS_ROUNDS"] ?? "") ?? 1

    /// One bench process: its folder (list, journal, events), its name and options; every start
    /// gets chips of its own (IEEE addresses from `prefix` and a counter).
    final class Bench: @unchecked Sendable {
        let name: String
        let folder: String
        let ledger: String
        let chips: String
        let prefix: UInt8
        let extra: [String]
        var process: ChildProcess?
        var starts = 0

        init(
            _ name: String, folder: String, prefix: UInt8, ledger: String, chips: String, stations: Int,
            extra: [String] = []
        ) throws {
            self.name = name
            self.folder = folder
            self.prefix = prefix
            self.ledger = ledger
            self.chips = chips
            self.extra = extra
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let list =
                "name,uuid,major,minor\n" + (1...stations).map { "s\($0),\(NemesisTests.uuid),9,\($0)\n" }.joined()
            try Data(list.utf8).write(to: URL(fileURLWithPath: folder + "/list.csv"))
        }

        var events: String { folder + "/events.jsonl" }

        /// Starts the bench: its emulator (timed like a real debugger) and ccbeacon under it.
        /// `journalLost`: with --journal-lost, releasing the held stations of a run of this bench
        /// in another folder.
        func start(releasing: Bool = false, journalLost: Bool = false) throws {
            starts += 1
            try? FileManager.default.removeItem(atPath: events)
            let ieee = String(format: "00:12:4B:%02X:%02X:00", prefix, starts)
            process = try ChildProcess(
                Tools.emulator,
                [
                    "--devices", "1", "--bench", "--ieee", ieee, "--save-chips", chips, "--timing", "hardware",
                    "--", Tools.ccbeacon, "provision", folder + "/list.csv", "--template", "cc2541-ibeacon",
                    "--devices", "all", "--yes", "--wait", "2", "--ledger", ledger, "--bench", name, "--events", events,
                ] + extra + (releasing ? ["--release-interrupted"] : []) + (journalLost ? ["--journal-lost"] : []),
                in: URL(fileURLWithPath: folder))
        }

        /// The bench's events so far, as JSON objects.
        func eventLines() -> [[String: Any]] {
            guard let text = try? String(contentsOfFile: events, encoding: .utf8) else { return [] }
            return text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }

        /// Waits (up to 60 s) until the bench is programming a chip: its last event is a
        /// programming progress; returns that burn's station and chip.
        func waitUntilProgramming() -> (station: String, chip: String)? {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                if let last = eventLines().last, last["event"] as? String == "progress",
                    last["phase"] as? String == "programming", let station = last["station"] as? String,
                    let chip = last["chip"] as? String
                {
                    return (station, chip)
                }
                guard process?.isRunning == true else { return nil }
                usleep(2_000)
            }
            return nil
        }

        /// Pauses (SIGSTOP) or resumes (SIGCONT) the whole bench: emulator and ccbeacon.
        func pause() { if let process { kill(-process.processID, SIGSTOP) } }
        func resume() { if let process { kill(-process.processID, SIGCONT) } }

        /// Kills it as a power cut would.
        func kill9() {
            process?.killGroup()
            _ = process?.wait()
        }
    }

    /// The ledger's attempts: station, chip, outcome, bench (as the multi-bench test reads them).
    static func attempts(_ url: String) throws -> [[String]] { try MultiBenchTests.attempts(url) }

    /// The station a saved chip carries, `nil` for none (as the multi-bench test reads it).
    static func carried(_ flash: [UInt8]) -> String? { MultiBenchTests.carried(flash) }

    /// The checker: what the chips carry against what the ledger records (`verified`: station and
    /// chip of every verified attempt), and the ledger's own rules. `setAside`: chips a bench
    /// named to the operator to set aside. Returns every violation found.
    static func audit(verified: [(station: String, chip: String)], chips folder: String, setAside: Set<String>)
        throws -> [String]
    {
        var problems: [String] = []
        var stationsVerified: [String: [String]] = [:]
        var chipsVerified: [String: [String]] = [:]
        for (station, chip) in verified {
            stationsVerified[station, default: []].append(chip)
            chipsVerified[chip, default: []].append(station)
        }
        for (station, chips) in stationsVerified where chips.count > 1 {
            problems.append("station \(station) verified on \(chips)")
        }
        for (chip, stations) in chipsVerified where stations.count > 1 {
            problems.append("chip \(chip) verified with \(stations)")
        }
        var carriers: [String: [String]] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: folder) where file.hasSuffix(".bin") {
            let chip = file.replacingOccurrences(of: ".bin", with: "").replacingOccurrences(of: "-", with: ":")
            let flash = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/" + file)))
            guard let station = carried(flash) else { continue }
            carriers[station, default: []].append(chip)
            if stationsVerified[station] != [chip], !setAside.contains(chip) {
                problems.append(
                    "chip \(chip) carries \(station), which the ledger records \(stationsVerified[station].map { "on \($0)" } ?? "nowhere")"
                )
            }
        }
        for (station, chips) in carriers where chips.count > 1 {
            problems.append("identity \(station) is on \(chips.count) chips: \(chips.sorted())")
        }
        return problems
    }

    /// Waits (bounded) until `condition` holds.
    static func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(20_000)
        }
        return try condition()
    }

    /// The chips a bench named to set aside because it could not erase what it could not record
    /// (a release's reminder that a lost chip may carry its station does not count: no chip the
    /// checker can read may carry one unrecorded).
    static func namedToSetAside(_ errors: String) -> Set<String> {
        var chips: Set<String> = []
        for line in errors.split(separator: "\n") where line.contains("could not be erased: set it aside") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "," || $0 == ";" || $0 == "(" || $0 == ")" })
            for word in words where word.count == 17 && word.filter({ $0 == ":" }).count == 5 {
                chips.insert(String(word))
            }
        }
        return chips
    }

    @Test func benchesOnAPoolHoldUnderTheFaultSchedule() throws {
        let work = try Workspace()
        defer { work.remove() }
        let server = try PrivatePostgres()
        let direct = try server.createDatabase("pool")
        let proxy = try PostgresProxy(url: direct)
        let chips = work.path("chips")
        try FileManager.default.createDirectory(atPath: chips, withIntermediateDirectories: true)
        let stations = 24 + 8 * Self.rounds
        let options = ["--lease", "3", "--server-wait", "30"]
        func bench(_ name: String, _ folder: String, _ prefix: UInt8) throws -> Bench {
            try Bench(
                name, folder: work.path(folder), prefix: prefix, ledger: proxy.url, chips: chips, stations: stations,
                extra: options)
        }
        let a = try bench("bench-a", "a", 0xA0)
        let b = try bench("bench-b", "b", 0xB0)
        try a.start()
        try b.start()
        var messages = ""
        defer { for bench in [a, b] { bench.resume() } }
        #expect(
            Self.waitFor(60) { ((try? Self.attempts(direct)) ?? []).filter { $0[2] == "verified" }.count >= 3 },
            "the benches did not start burning: \(a.process?.errors ?? "") \(b.process?.errors ?? "")")

        // 1. Bench A paused mid-burn for longer than its lease, its backend terminated; a second
        // process starts as bench-a elsewhere with --release-interrupted --journal-lost (an
        // operator giving up A's folder, which holds no journal: a run elsewhere releases nothing
        // of A's without it) and burns the station A held; A, resumed, must record nothing and
        // erase the chip in its hand.
        let burning = try #require(a.waitUntilProgramming(), "bench A never burned: \(a.process?.errors ?? "")")
        a.pause()
        usleep(4_000_000)  // the pause: longer than the 3 s lease
        try PostgresTestServer.psql(
            server.url("pool"),
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'ccbeacon bench-a'")
        let second = try bench("bench-a", "a2", 0xA8)
        try second.start(releasing: true, journalLost: true)
        #expect(
            try Self.waitFor(60) {
                try Self.attempts(direct).contains { $0[0] == burning.station && $0[2] == "verified" }
            }, "the station bench A held was not burned elsewhere: \(second.process?.errors ?? "")")
        a.resume()
        let paused = a.process?.wait(timeout: 60)
        let pausedErrors = a.process?.errors ?? ""
        messages += pausedErrors
        #expect(paused == 1, "bench A, resumed past its lease: \(pausedErrors)")
        #expect(pausedErrors.contains("lease lost"), "\(pausedErrors)")
        // The chip in A's hand ends erased or named to the operator. A pause that lands inside
        // a USB transfer outlasts its 3 s timeout, which fails the burn (the chip then erased as
        // after any failed burn); one that lands in a poll of the chip must not (PausedHostTests).
        let failedAndErased = pausedErrors.split(separator: "\n").contains {
            $0.contains("'\(burning.station)' on \(burning.chip): failed (USB transfer timed out")
                && $0.hasSuffix("the chip was erased)")
        }
        #expect(
            pausedErrors.contains(
                "'\(burning.station)' was not recorded on chip \(burning.chip), so the chip was erased")
                || pausedErrors.contains("chip \(burning.chip) may carry '\(burning.station)'") || failedAndErased,
            "\(pausedErrors)")

        for round in 0..<Self.rounds {
            // 2. COMMITs applied whose answers are lost; every connection cut, and the next ones
            // cut while libpq sets them up.
            let cutSoFar = proxy.cuts
            proxy.cut(next: 3, when: "COMMIT", afterSending: true)
            _ = Self.waitFor(20) { proxy.cuts >= cutSoFar + 3 }
            proxy.cut(next: 3, when: "client_encoding")
            proxy.cutAll()
            // 3. Bench B killed (-9) mid-burn, and started again.
            _ = b.waitUntilProgramming()
            b.kill9()
            messages += b.process?.errors ?? ""
            try b.start()
            // 4. The server crashes and comes back at once.
            if round == 0 {
                try server.stop(mode: "immediate")
                try server.start()
            }
            // The benches go on.
            let before = try Self.attempts(direct).filter { $0[2] == "verified" }.count
            _ = try Self.waitFor(30) { try Self.attempts(direct).filter { $0[2] == "verified" }.count > before + 1 }
        }
        for running in [second, b] {
            let status = running.process?.wait(timeout: 180)
            messages += running.process?.errors ?? ""
            // Done, stopped with stations left, or stopped because a fault outlasted its lease
            // (which records and burns nothing more): each keeps the promises.
            let errors = running.process?.errors ?? ""
            #expect(
                status == 0 || status == 3 || (status == 1 && errors.contains("lease lost")),
                "\(running.name): \(errors)"
            )
        }
        // What the kills and the pause held (their chips went with the killed bench) is released at
        // the end, each by its own bench (another may not: the bench may keep an outcome in its
        // journal, which its own next run records first): bench A's run may stop with bench B's
        // stations still held (3), bench B's then finishes the list.
        for (index, holder) in [second, b].enumerated() {
            try holder.start(releasing: true)
            let finished = holder.process?.wait(timeout: 180)
            messages += holder.process?.errors ?? ""
            #expect(finished == 0 || (index == 0 && finished == 3), "\(holder.process?.errors ?? "")")
        }

        let rows = try Self.attempts(direct)
        let verified = rows.filter { $0[2] == "verified" }.map { (station: $0[0], chip: $0[1]) }
        #expect(Set(verified.map(\.station)).count == stations, "every station verified")
        let problems = try Self.audit(verified: verified, chips: chips, setAside: Self.namedToSetAside(messages))
        #expect(problems.isEmpty, "\(problems)")
        let check = try ChildProcess.run(
            Tools.ccbeacon, ["ledger", "check", "--ledger", direct], in: URL(fileURLWithPath: NSTemporaryDirectory()))
        #expect(check.status == 0, "\(check.output)\(check.errors)")
    }

    /// The same on a ledger file, shortened: a bench paused, a second process refused while it
    /// holds the file; the bench killed (-9) mid-burn, started again, its held station released.
    @Test func aFileLedgerHoldsUnderPausesAndKills() throws {
        let work = try Workspace()
        defer { work.remove() }
        let chips = work.path("chips")
        try FileManager.default.createDirectory(atPath: chips, withIntermediateDirectories: true)
        let ledger = work.path("pool.sqlite")
        let a = try Bench(
            "bench-a", folder: work.path("a"), prefix: 0xA0, ledger: ledger, chips: chips, stations: 12,
            extra: ["--lease", "2"])
        try a.start()
        defer { a.resume() }
        let burning = try #require(a.waitUntilProgramming(), "bench A never burned: \(a.process?.errors ?? "")")
        a.pause()
        usleep(2_500_000)  // past its lease
        let second = try Bench(
            "bench-b", folder: work.path("b"), prefix: 0xB0, ledger: ledger, chips: chips, stations: 12)
        try second.start(releasing: true)
        let refused = second.process?.wait(timeout: 60)
        #expect(refused == 1, "\(second.process?.errors ?? "")")
        #expect(second.process?.errors.contains("one run per ledger") == true, "\(second.process?.errors ?? "")")
        a.resume()
        // Its lease ran out while it was paused, but no other run could take the file: by its
        // own clock it must stop all the same, erasing what it could not record.
        let status = a.process?.wait(timeout: 60)
        var messages = a.process?.errors ?? ""
        #expect(status == 1 && messages.contains("lease lost"), "\(messages)")
        #expect(
            messages.contains("chip \(burning.chip)") || messages.contains("on chip \(burning.chip)"), "\(messages)")
        // Started again, then killed mid-burn: the chip in hand goes with the bench.
        try a.start()
        _ = a.waitUntilProgramming()
        a.kill9()
        messages += a.process?.errors ?? ""
        try a.start(releasing: true)
        #expect(a.process?.wait(timeout: 120) == 0, "\(a.process?.errors ?? "")")
        messages += a.process?.errors ?? ""
        // The registry: every verified station with its chip.
        let export = try ChildProcess.run(
            Tools.ccbeacon, ["ledger", "export", "--ledger", ledger, "--format", "json"],
            in: URL(fileURLWithPath: NSTemporaryDirectory()))
        let registry = try #require(
            try JSONSerialization.jsonObject(with: Data(export.output.utf8)) as? [[String: Any]], "\(export.errors)")
        let verified = registry.compactMap { entry -> (station: String, chip: String)? in
            guard let station = entry["name"] as? String, let chip = entry["chip"] as? String else { return nil }
            return (station, chip)
        }
        #expect(Set(verified.map(\.station)).count == 12)
        let problems = try Self.audit(verified: verified, chips: chips, setAside: Self.namedToSetAside(messages))
        #expect(problems.isEmpty, "\(problems)")
    }
}
