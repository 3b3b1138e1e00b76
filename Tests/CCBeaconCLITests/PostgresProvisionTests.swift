import CCDebugger
import CCDebuggerEmulator
import Foundation
import PostgresLedger
import Provisioning
import StationLedger
import Synchronization
import TestSupport
import Testing

/// `provision` on a shared ledger (in process, emulated debuggers): benches on one pool, a list
/// that is not the pool's, a server lost mid-burn (journaled, replayed), and `ledger migrate`.
@Suite(.enabled(if: PostgresTestServer.available, "needs the test PostgreSQL server (scripts/test starts it)"))
struct PostgresProvisionTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// A list of `count` stations.
    static func list(_ scratch: Scratch, _ count: Int, name: String = "list.csv") throws -> String {
        try scratch.write(name, "name,uuid,major,minor\n" + (1...count).map { "s\($0),\(uuid),3,\($0)\n" }.joined())
    }

    /// One emulated debugger on a bench: a fresh chip (its own address, from `first`) after each
    /// reset to run.
    static func bench(first: UInt8) -> EmulatorProvider {
        let provider = EmulatorProvider()
        provider.debuggers[0].chip = EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, first, 0])
        let next = Atomic<UInt8>(0)
        provider.debuggers[0].onResetToRun = { debugger in
            debugger.chip = EmulatedChip(ieee: [
                0x00, 0x12, 0x4B, 0x00, first, next.add(1, ordering: .relaxed).newValue,
            ])
        }
        return provider
    }

    static func provision(
        _ list: String, _ url: String, bench: String, _ extra: [String] = [], debuggers: any DebuggerProvider
    )
        -> ToolRun
    {
        ToolRun(
            [
                "provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.3", "--ledger", url, "--bench",
                bench,
            ]
                + extra, debuggers: debuggers)
    }

    /// Two benches, one after the other and then at once, burn one list into one pool: every
    /// station once, each attempt with its bench, `ledger show` grouped by bench, `ledger check`
    /// clean.
    @Test func twoBenchesShareOnePool() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, 12)
        let url = try PostgresTestServer.freshDatabase()
        // Bench A stops after four chips (its emulator has no fifth).
        let first = Self.bench(first: 0xA0)
        let count = Atomic<Int>(0)
        first.debuggers[0].onResetToRun = { debugger in
            let number = count.add(1, ordering: .relaxed).newValue
            debugger.chip = number < 4 ? EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0xA0, UInt8(number)]) : nil
        }
        let a = Self.provision(list, url, bench: "bench-a", debuggers: first)
        #expect(a.status == 3, "\(a.diagnostics)")
        #expect(a.output.contains("provisioned 4 station(s)"), "\(a.output)")
        // Benches B and C at once, each with its own debugger and chips.
        let results = Mutex<[ToolRun]>([])
        let threads = ["bench-b": UInt8(0xB0), "bench-c": 0xC0].map { name, prefix in
            Thread {
                let run = Self.provision(list, url, bench: name, debuggers: Self.bench(first: prefix))
                results.withLock { $0.append(run) }
            }
        }
        threads.forEach { $0.start() }
        while results.withLock({ $0.count }) < 2 { usleep(20_000) }
        let ledger = try PostgresLedger(url: url, bench: "")
        let attempts = try ledger.attempts()
        let verified = attempts.filter { $0.outcome == .verified }
        #expect(Set(verified.map(\.station)).count == 12 && verified.count == 12)
        #expect(Set(verified.map(\.chip)).count == 12)
        #expect(Set(attempts.compactMap(\.bench)) == ["bench-a", "bench-b", "bench-c"])
        #expect(attempts.filter { $0.bench == "bench-a" }.count == 4)
        let show = ToolRun(["ledger", "show", "--ledger", url])
        #expect(show.output.contains("bench bench-a: 4 done, 0 held, 0 burning, 0 failed attempt(s)"), "\(show.output)")
        #expect(show.output.contains("12 of 12 done"))
        let check = ToolRun(["ledger", "check", "--ledger", url])
        #expect(
            check.status == 0 && check.output.contains(": ok (schema and every invariant checked)"), "\(check.output)")
        // The registry says which bench (and which run) burned each station.
        let byStation = Dictionary(uniqueKeysWithValues: verified.map { ($0.station, $0) })
        let json = ToolRun(["ledger", "export", "--ledger", url, "--format", "json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(rows.count == 12)
        for row in rows {
            let attempt = try #require(byStation[row["name"] as? String ?? ""])
            #expect(row["bench"] as? String == attempt.bench && attempt.bench != nil, "\(row)")
            #expect(row["run"] as? String == attempt.run && attempt.run != nil, "\(row)")
        }
        let csv = ToolRun(["ledger", "export", "--ledger", url]).output.split(separator: "\n")
        #expect(csv.first?.hasSuffix(",debugLocked,bench,run") == true, "\(csv.first ?? "")")
        for line in csv.dropFirst() {
            let attempt = try #require(byStation[String(line.prefix { $0 != "," })])
            #expect(line.hasSuffix(",\(attempt.bench ?? "?"),\(attempt.run ?? "?")"), "\(line)")
        }
        // A different list for this pool is refused, its differences named, nothing burned.
        let other = try Self.list(scratch, 13, name: "other.csv")
        let refused = Self.provision(other, url, bench: "bench-d", debuggers: Self.bench(first: 0xD0))
        #expect(refused.status == 65 && refused.diagnostics.contains("the pool was registered with another list"))
        #expect(
            refused.diagnostics.contains("1 station(s) of the list are not in the pool: s13"), "\(refused.diagnostics)")
        #expect(try ledger.attempts().count == attempts.count)
    }

    /// Bench j burns `list` on `provider` into a fresh pool whose server goes away as the first
    /// chip's flash is being written (its first large bulk OUT: the station was claimed before),
    /// for longer than --server-wait: the run keeps the outcome in its journal and stops (expected).
    /// The server is back when this returns.
    static func journaledRun(_ list: String, _ provider: EmulatorProvider, _ extra: [String] = []) throws -> (
        outage: PostgresOutage, run: ToolRun
    ) {
        let (outage, run) = try cutOff(list, provider, extra)
        #expect(run.status == 1 && run.output.contains("kept in the journal"), "\(run.diagnostics)")
        return (outage, run)
    }

    /// Bench j burns `list` on `provider` into a fresh pool whose server goes away (and `alsoThen`
    /// happens) as the first chip's flash is being written, for longer than --server-wait. The
    /// server is back when this returns.
    static func cutOff(
        _ list: String, _ provider: EmulatorProvider, _ extra: [String] = [],
        alsoThen: @Sendable @escaping () -> Void = {}
    ) throws -> (outage: PostgresOutage, run: ToolRun) {
        let outage = try PostgresOutage()
        let blocks = Atomic<Int>(0)
        let hooked = HookedProvider(provider) { data in
            if data.count >= 64, blocks.add(1, ordering: .relaxed).newValue == 1 {
                try? outage.begin()
                alsoThen()
            }
        }
        let run = Self.provision(
            list, outage.url, bench: "bench-j", ["--server-wait", "0.5"] + extra, debuggers: hooked)
        outage.restore()
        return (outage, run)
    }

    /// The server lost while a chip is burning, for longer than --server-wait: the chip is
    /// finished, its outcome journaled beside the list, the run stopped with a message and no
    /// further chip started; the next run records the journal first and goes on.
    @Test func aServerLostMidBurnIsJournaledAndTheNextRunRecordsIt() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, 3)
        let provider = Self.bench(first: 0xE0)
        let (outage, run) = try Self.journaledRun(list, provider, ["--on-verified", "true"])
        #expect(run.status == 1, "\(run.diagnostics)")
        let journal = (list as NSString).deletingLastPathComponent + "/ccbeacon-journal-bench-j.jsonl"
        #expect(run.diagnostics.contains("outcome(s) are kept in the journal \(journal)"), "\(run.diagnostics)")
        #expect(
            run.output.contains("kept in the journal, not yet on the server: 's1' on chip 00:12:4B:00:E0:00: verified"),
            "\(run.output)")
        #expect(FileManager.default.fileExists(atPath: journal))
        #expect(
            provider.debuggers[0].chip?.ieeeAddress.last == 0, "the burned chip is still on the debugger: no next chip")
        let again = Self.provision(list, outage.url, bench: "bench-j", debuggers: Self.bench(first: 0xE8))
        #expect(
            again.diagnostics.contains("recorded from the journal: 's1' on chip 00:12:4B:00:E0:00: verified"),
            "\(again.diagnostics)")
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: journal))
        let verified = try PostgresLedger(url: outage.url, bench: "").attempts().filter { $0.outcome == .verified }
        #expect(verified.map(\.station).sorted() == ["s1", "s2", "s3"])
        // s1 was burned by a run with --on-verified: its hook run was recorded when the journal
        // was, although the run that recorded it had no hook, and a run with the hook delivers it.
        let pending = try PostgresLedger(url: outage.url, bench: "").hookRuns(pendingOnly: true)
        #expect(pending.map(\.attempt.station) == ["s1"] && pending.first?.bench == "bench-j")
        let hook = "printf '%s\\n' \"$CCBEACON_STATION\" >> '\(scratch.path("hooks.log"))'"
        let third = Self.provision(
            list, outage.url, bench: "bench-j", ["--on-verified", hook], debuggers: Self.bench(first: 0xEC))
        #expect(third.status == 0 && third.output.contains("hooks: 1 delivered, 0 failed"), "\(third.output)")
        #expect(try String(contentsOfFile: scratch.path("hooks.log"), encoding: .utf8) == "s1\n")
    }

    /// A bench's journal is beside its list file, whatever path names the list: a run given the
    /// list through a link in another folder used to miss the journal (the fifth review), release
    /// the station it held and burn it on a second chip. It records the journal instead.
    @Test func aBenchFindsItsJournalThroughALinkToItsList() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, 2)
        let outage = try Self.journaledRun(list, Self.bench(first: 0xE0)).outage
        try FileManager.default.createDirectory(atPath: scratch.path("elsewhere"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("elsewhere/list.csv"), withDestinationPath: list)
        // Where an earlier ccbeacon kept it (beside the link): named, not passed over (the final
        // review: it was ignored, and the station it holds released and burned again).
        let journal = scratch.path("ccbeacon-journal-bench-j.jsonl")
        let old = scratch.path("elsewhere/ccbeacon-journal-bench-j.jsonl")
        try FileManager.default.moveItem(atPath: journal, toPath: old)
        // Bench j again, given the list through the link, releasing what it holds.
        let throughTheLink = { (first: UInt8) in
            Self.provision(
                scratch.path("elsewhere/list.csv"), outage.url, bench: "bench-j", ["--release-interrupted"],
                debuggers: Self.bench(first: first))
        }
        let refused = throughTheLink(0xE4)
        #expect(refused.status == 1, "\(refused.diagnostics)")
        #expect(
            refused.diagnostics.contains(
                "bench 'bench-j' has a journal at '\(old)', beside the link to the list, where an earlier ccbeacon kept it"
            ),
            "\(refused.diagnostics)")
        #expect(
            refused.diagnostics.contains("hint: move it there (mv '\(old)' '\(journal)')"), "\(refused.diagnostics)")
        try FileManager.default.moveItem(atPath: old, toPath: journal)
        try Self.expectJournalRecorded(throughTheLink(0xE8), outage.url, chip: "00:12:4B:00:E0:00", stations: 2)
    }

    /// `run` recorded bench j's journal (s1 verified on `chip`) and released nothing; every one of
    /// the list's `stations` is verified, s1 on that chip.
    static func expectJournalRecorded(_ run: ToolRun, _ url: String, chip: String, stations: Int) throws {
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains("recorded from the journal: 's1' on chip \(chip): verified"), "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("released"), "\(run.diagnostics)")
        let verified = try PostgresLedger(url: url, bench: "").attempts().filter { $0.outcome == .verified }
        #expect(verified.map(\.station).sorted() == (1...stations).map { "s\($0)" })
        #expect(verified.first { $0.station == "s1" }?.chip == chip)
    }

    /// `ledger migrate` copies a pool only once no run may still burn into it (the final review): a
    /// bench between two chips has no burn open, yet what it burned after the copy would be burned
    /// again from the copy. Refused while the run is live; copied once it ended.
    @Test func aPoolWithALiveRunIsNotMigrated() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, 2)
        let url = try PostgresTestServer.freshDatabase()
        #expect(Self.provision(list, url, bench: "bench-a", debuggers: Self.bench(first: 0x40)).status == 0)
        let running = try PostgresLedger(url: url, bench: "bench-s")
        try running.beginRun()
        let target = scratch.path("copy.sqlite")
        let refused = ToolRun(["ledger", "migrate", "--from", url, "--to", target])
        #expect(refused.status == 1, "\(refused.diagnostics)")
        #expect(
            refused.diagnostics.contains("has 1 run that may still be burning: run ")
                && refused.diagnostics.contains("of bench 'bench-s'"), "\(refused.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: target))
        running.endRun()
        let copied = ToolRun(["ledger", "migrate", "--from", url, "--to", target])
        #expect(copied.status == 0, "\(copied.diagnostics)")
    }

    /// A pool of a 2-station list registered by `bench` (a run without a chip), which then claims
    /// s1 for `chip`: its burn in progress, by a process `identity` names.
    static func burning(in scratch: Scratch, bench: String, chip: String, identity: RunIdentity = .current) throws -> (
        String, String, PostgresLedger
    ) {
        let list = try Self.list(scratch, 2)
        let url = try PostgresTestServer.freshDatabase()
        let empty = EmulatorProvider()
        empty.debuggers[0].chip = nil
        #expect(Self.provision(list, url, bench: bench, debuggers: empty).status == 3)
        let ledger = try PostgresLedger(url: url, bench: bench, identity: identity)
        _ = try ledger.claimNextStation(
            chip: chip, debugger: "EMU001", template: "cc2541-ibeacon", templateSHA256: "x", verifyMethod: "crc",
            skipping: [], image: { _ in ("not-this-image", nil) })
        return (list, url, ledger)
    }

    /// The fourth review's double burn: bench S's run was burning s1 when its server went away;
    /// it kept the outcome (verified) in its journal and stopped, its process gone. Bench T with
    /// --release-interrupted used to release s1 (at once on S's machine, or anywhere once S's lease
    /// ran out) and burn it on a chip of its own. Only bench S releases its held stations: its
    /// next run records its journal first. T keeps s1 held and names S; S, run with
    /// --release-interrupted, releases it (its journal is empty here) and burns it.
    @Test func onlyTheBenchThatWasBurningAStationReleasesIt() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (list, url, s) = try Self.burning(
            in: scratch, bench: "bench-s", chip: "00:12:4B:00:5E:00", identity: .goneProcess)
        let kept =
            "kept 's1' held: bench 'bench-s' was burning it on chip 00:12:4B:00:5E:00 and may keep its outcome in its journal; run bench 'bench-s' again (it records its journal first), with --release-interrupted to release it\n"
        let t = Self.provision(
            list, url, bench: "bench-t", ["--release-interrupted"], debuggers: Self.bench(first: 0x7E))
        #expect(t.status == 3, "\(t.diagnostics)")
        #expect(t.diagnostics.contains(kept), "\(t.diagnostics)")
        #expect(try s.attempts().filter { $0.outcome == .verified }.map(\.station) == ["s2"])
        // S's lease over too: still kept from another bench.
        try PostgresTestServer.psql(
            url, "UPDATE ccbeacon.runs SET lease_until = 0 WHERE id = '\(try #require(s.lease.runID))'")
        let again = Self.provision(
            list, url, bench: "bench-t", ["--release-interrupted"], debuggers: Self.bench(first: 0x7F))
        #expect(again.status == 3 && again.diagnostics.contains(kept), "\(again.diagnostics)")
        // Bench S itself releases it.
        let own = Self.provision(
            list, url, bench: "bench-s", ["--release-interrupted"], debuggers: Self.bench(first: 0x5F))
        #expect(own.status == 0, "\(own.diagnostics)")
        #expect(
            own.diagnostics.contains("released 's1' (was interrupted on chip 00:12:4B:00:5E:00)"), "\(own.diagnostics)")
        let verified = try s.attempts().filter { $0.outcome == .verified }
        #expect(
            verified.map(\.station).sorted() == ["s1", "s2"]
                && verified.first { $0.station == "s1" }?.bench == "bench-s")
    }

    /// A bench's interrupted attempt holds its station for every bench; the chip attached on
    /// another bench is checked there (its flash decides) and the station goes on.
    @Test func aChipInterruptedOnOneBenchIsSettledOnAnother() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // Bench A registered the list, then was cut off while burning s1 into chip
        // 00:12:4B:00:AA:00 (its flash still blank).
        let (list, url, a) = try Self.burning(in: scratch, bench: "bench-a", chip: "00:12:4B:00:AA:00")
        a.endRun()  // cut off: its run is over
        // Bench B without that chip: s1 is held, only s2 is burned.
        let b = Self.provision(list, url, bench: "bench-b", debuggers: Self.bench(first: 0xBB))
        #expect(b.status == 3 && b.output.contains("1 held"), "\(b.output)\(b.diagnostics)")
        // The chip comes back on bench C: checked, erased (it does not hold the image), s1 burned.
        let c = Self.provision(list, url, bench: "bench-c", debuggers: Self.bench(first: 0xAA))
        #expect(c.status == 0, "\(c.diagnostics)")
        #expect(
            c.diagnostics.contains("chip 00:12:4B:00:AA:00 from an interrupted run: 's1' not on it"), "\(c.diagnostics)"
        )
        let verified = try a.attempts().filter { $0.outcome == .verified }
        #expect(verified.map(\.station).sorted() == ["s1", "s2"])
    }

    /// Another bench's burn in progress is reported as that, not as this run's unrecorded outcome.
    @Test func anotherBenchsBurnIsNotThisRunsUnrecordedOutcome() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // Bench Z's run is live (its lease holds) while bench Y runs.
        let (list, url, live) = try Self.burning(in: scratch, bench: "bench-z", chip: "00:12:4B:00:5A:00")
        defer { withExtendedLifetime(live) {} }
        let run = Self.provision(list, url, bench: "bench-y", ["--json"], debuggers: Self.bench(first: 0x5B))
        #expect(run.status == 3, "\(run.diagnostics)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        #expect(summary["listBurningElsewhere"] as? Int == 1 && summary["listUnrecorded"] as? Int == 0, "\(summary)")
        let text = Self.provision(list, url, bench: "bench-y", debuggers: Self.bench(first: 0x5C))
        #expect(text.output.contains("1 burning on other benches"), "\(text.output)")
        #expect(!text.output.contains("could not be recorded"), "\(text.output)")
    }

    /// Two processes as one bench: the second is refused before anything is burned.
    @Test func oneRunPerBench() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, 2)
        let url = try PostgresTestServer.freshDatabase()
        let holder = try PostgresLedger(url: url, bench: "bench-x", exclusive: true)
        let run = Self.provision(list, url, bench: "bench-x", debuggers: Self.bench(first: 0xF0))
        #expect(
            run.status == 65 && run.diagnostics.contains("another process is running as bench 'bench-x'"),
            "\(run.diagnostics)")
        #expect(run.diagnostics.contains("--bench NAME"))
        #expect(try holder.attempts().isEmpty)
        for bad in ["", ".hidden", "a/b", "bench x", String(repeating: "b", count: 64), "é"] {
            let refused = Self.provision(list, url, bench: bad, debuggers: Self.bench(first: 0xF1))
            #expect(refused.status == 64, "\(bad): \(refused.diagnostics)")
        }
    }

    /// `ledger migrate` file → server → file: the history unchanged both ways; a target that is
    /// not empty, and a damaged source, refused.
    @Test func migrateCopiesAFileLedgerToAServerAndBack() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, 3)
        let file = scratch.path("provisioning.sqlite")
        // Its hooks failed: three hook runs pending, which must survive the moves.
        let burned = Self.provision(
            list, file, bench: "bench-f", ["--on-verified", "exit 1"], debuggers: Self.bench(first: 0x10))
        #expect(burned.status == 1, "\(burned.diagnostics)")
        let url = try PostgresTestServer.freshDatabase()
        let up = ToolRun(["ledger", "migrate", "--from", file, "--to", url])
        #expect(
            up.status == 0
                && up.output.hasPrefix("copied 3 station(s), 3 attempt(s), 0 calibration(s) and 3 hook run(s)"),
            "\(up.diagnostics)")
        let source = try SQLiteLedger(path: file, access: .readOnly).snapshot()
        #expect(try PostgresLedger(url: url, bench: "").snapshot() == source)
        let again = ToolRun(["ledger", "migrate", "--from", file, "--to", url])
        #expect(
            again.status == 65 && again.diagnostics.contains("copies only into an empty database"),
            "\(again.diagnostics)")
        let back = scratch.path("back.sqlite")
        let down = ToolRun(["ledger", "migrate", "--from", url, "--to", back])
        #expect(down.status == 0, "\(down.diagnostics)")
        #expect(try SQLiteLedger(path: back, access: .readOnly).snapshot() == source)
        let onto = ToolRun(["ledger", "migrate", "--from", url, "--to", back])
        #expect(onto.status == 65, "\(onto.diagnostics)")
        // The server's pool goes on where the file stopped.
        let more = try Self.list(scratch, 3, name: "same.csv")
        let server = Self.provision(more, url, bench: "bench-g", debuggers: Self.bench(first: 0x20))
        #expect(server.status == 0 && server.output.contains("nothing to burn"), "\(server.output)")
        #expect(server.diagnostics.contains("3 --on-verified hook run(s) of this bench are pending") == false)
        // Bench f, on the server now, delivers its pending hook runs first.
        let delivered = Self.provision(
            more, url, bench: "bench-f", ["--on-verified", "true"], debuggers: Self.bench(first: 0x30))
        #expect(
            delivered.status == 0 && delivered.output.contains("hooks: 3 delivered, 0 failed"), "\(delivered.output)")
        #expect(try PostgresLedger(url: url, bench: "").hookRuns(pendingOnly: true).isEmpty)
        // Records without a bench (an earlier ccbeacon's, a host name that is no bench name) are
        // bench 'unrecorded''s on a server, and the pending hook runs among them are said: on the
        // file any next run delivered them; on the server only that bench does.
        let benchless = scratch.path("benchless.sqlite")
        try FileManager.default.copyItem(atPath: file, toPath: benchless)
        try LedgerFiles.alter(benchless, ["UPDATE hook_runs SET bench = NULL", "UPDATE attempts SET bench = NULL"])
        let serverOfBenchless = try PostgresTestServer.freshDatabase()
        let moved = ToolRun(["ledger", "migrate", "--from", benchless, "--to", serverOfBenchless])
        #expect(moved.status == 0, "\(moved.diagnostics)")
        #expect(
            moved.output.contains(
                "note: 3 pending hook run(s) were recorded without a bench; on the server they are bench 'unrecorded''s: 'ccbeacon provision LIST --ledger URL --bench unrecorded' with the hook delivers them"
            ), "\(moved.output)")
        #expect(
            try PostgresLedger(url: serverOfBenchless, bench: "").snapshot().attempts.allSatisfy {
                $0.bench == "unrecorded"
            })
        let unrecorded = Self.provision(
            more, serverOfBenchless, bench: "unrecorded", ["--on-verified", "true"], debuggers: Self.bench(first: 0x40))
        #expect(
            unrecorded.status == 0 && unrecorded.output.contains("hooks: 3 delivered, 0 failed"), "\(unrecorded.output)"
        )
        #expect(!up.output.contains("without a bench"), "bench-f's runs are its own")
        // A damaged source is not copied.
        let damaged = scratch.path("damaged.sqlite")
        try FileManager.default.copyItem(atPath: back, toPath: damaged)
        try LedgerFiles.alter(damaged, ["DROP INDEX one_verified_per_chip"])
        let refused = ToolRun(["ledger", "migrate", "--from", damaged, "--to", try PostgresTestServer.freshDatabase()])
        #expect(
            refused.status == 65 && refused.diagnostics.contains("problem(s), so it is not copied"),
            "\(refused.diagnostics)")
    }
}

/// Emulated debuggers whose bulk OUT transfers (commands and flash data) call `hook` first; a hook
/// that throws fails the transfer (an unplug, a stall) before the debugger sees it.
final class HookedProvider: DebuggerProvider, Sendable {
    let base: EmulatorProvider
    let hook: @Sendable ([UInt8]) throws(TransportError) -> Void

    init(_ base: EmulatorProvider, hook: @escaping @Sendable ([UInt8]) throws(TransportError) -> Void) {
        self.base = base
        self.hook = hook
    }

    func devices() throws(DebuggerError) -> [DebuggerDevice] { try base.devices() }

    func open(_ device: DebuggerDevice) throws(DebuggerError) -> any DebuggerTransport {
        HookedTransport(base: try base.open(device), hook: hook)
    }
}

/// An emulated debugger's transport with `hook` before each bulk OUT.
final class HookedTransport: DebuggerTransport, @unchecked Sendable {
    let base: any DebuggerTransport
    let hook: @Sendable ([UInt8]) throws(TransportError) -> Void

    init(base: any DebuggerTransport, hook: @escaping @Sendable ([UInt8]) throws(TransportError) -> Void) {
        self.base = base
        self.hook = hook
    }

    func controlIn(request: UInt8, value: UInt16, index: UInt16, length: Int, timeoutMilliseconds: Int)
        throws(TransportError) -> [UInt8]
    {
        try base.controlIn(
            request: request, value: value, index: index, length: length, timeoutMilliseconds: timeoutMilliseconds)
    }

    func controlOut(request: UInt8, value: UInt16, index: UInt16, data: [UInt8], timeoutMilliseconds: Int)
        throws(TransportError)
    {
        try base.controlOut(
            request: request, value: value, index: index, data: data, timeoutMilliseconds: timeoutMilliseconds)
    }

    func bulkOut(_ data: [UInt8], timeoutMilliseconds: Int) throws(TransportError) {
        try hook(data)
        try base.bulkOut(data, timeoutMilliseconds: timeoutMilliseconds)
    }

    func bulkIn(length: Int, timeoutMilliseconds: Int) throws(TransportError) -> [UInt8] {
        try base.bulkIn(length: length, timeoutMilliseconds: timeoutMilliseconds)
    }
}
