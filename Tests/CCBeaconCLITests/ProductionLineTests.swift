import CCDebugger
import CCDebuggerEmulator
import Foundation
import Provisioning
import StationLedger
import Storage
import Synchronization
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// The production line's promises, in process on emulated debuggers: hooks run once per outcome
/// after it is committed (at least once, kept in the ledger until delivered), `--lock-debug`
/// locks each verified chip and the ledger says so, and `--address-mode secondary` writes each
/// station's address into the chip's last page, reads it back and records it.
struct ProductionLineTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// One emulated debugger handing out fresh chips (addresses `00:12:4B:00:<first>:n`) after
    /// each reset to run; every chip taken off is kept in `gone`.
    final class Bench: Sendable {
        let provider = EmulatorProvider()
        /// The chips taken off, in order.
        let taken = Taken()

        final class Taken: Sendable {
            let chips = Mutex<[EmulatedChip]>([])
        }

        /// The chips taken off so far.
        var gone: [EmulatedChip] { taken.chips.withLock { $0 } }

        init(first: UInt8, chips: Int = 100, fault: (@Sendable (EmulatedChip, Int) -> Void)? = nil) {
            let first0 = EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, first, 0])
            fault?(first0, 0)
            provider.debuggers[0].chip = first0
            let next = Atomic<Int>(0)
            let taken = taken
            provider.debuggers[0].onResetToRun = { debugger in
                if let chip = debugger.chip { taken.chips.withLock { $0.append(chip) } }
                let number = next.add(1, ordering: .relaxed).newValue
                guard number < chips else {
                    debugger.chip = nil
                    return
                }
                let chip = EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, first, UInt8(number)])
                fault?(chip, number)
                debugger.chip = chip
            }
        }
    }

    static func list(_ scratch: Scratch, _ names: [String], addresses: [String?] = []) throws -> String {
        var text = "name,uuid,major,minor,address\n"
        for (index, name) in names.enumerated() {
            let quoted = "\"" + name.replacing("\"", with: "\"\"") + "\""
            let address = index < addresses.count ? addresses[index] ?? "" : ""
            text += "\(quoted),\(uuid),3,\(index + 1),\(address)\n"
        }
        return try scratch.write("list.csv", text)
    }

    static func provision(
        _ list: String, _ scratch: Scratch, _ extra: [String], bench: Bench, template: String = "cc2541-ibeacon"
    ) -> ToolRun {
        ToolRun(
            [
                "provision", list, "--template", template, "--yes", "--wait", "0.3", "--bench", "line-1", "--ledger",
                scratch.path("ledger.sqlite"),
            ] + extra, debuggers: bench.provider)
    }

    /// The hook's log: one line per try, the variables separated by `|`.
    static let logHook =
        #"printf '%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s\n' "$CCBEACON_EVENT_ID" "$CCBEACON_HOOK_TRY" "$CCBEACON_STATION" "$CCBEACON_UUID" "$CCBEACON_MAJOR" "$CCBEACON_MINOR" "$CCBEACON_POWER" "$CCBEACON_ADDRESS" "$CCBEACON_CHIP" "$CCBEACON_OUTCOME" "$CCBEACON_IMAGE_SHA256" "$CCBEACON_DEBUGGER" >> hooks.log"#

    static func hookLog(_ scratch: Scratch) throws -> [[String]] {
        guard FileManager.default.fileExists(atPath: scratch.path("hooks.log")) else { return [] }
        return try String(contentsOfFile: scratch.path("hooks.log"), encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
    }

    /// Every verified station's hook runs once, after its outcome is in the ledger, with the
    /// ledger's facts in its variables; names that are shell syntax stay data.
    @Test func aHookRunsOncePerVerifiedStationWithTheLedgersFacts() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let names = ["plain", "$(touch pwned1)", "`touch pwned2`", "a; touch pwned3", "quote\"s and 'single'"]
        let list = try Self.list(scratch, names)
        let bench = Bench(first: 0x10)
        let run = Self.provision(
            list, scratch, ["--on-verified", "cd '\(scratch.url.path)' && " + Self.logHook], bench: bench)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("hooks: 5 delivered, 0 failed"), "\(run.output)")
        let log = try Self.hookLog(scratch)
        #expect(log.count == 5, "\(log)")
        #expect(Set(log.map { $0[2] }) == Set(names), "every name arrives as it is, never run")
        for pwned in ["pwned1", "pwned2", "pwned3"] {
            #expect(!FileManager.default.fileExists(atPath: scratch.path(pwned)))
        }
        let ledger = try SQLiteLedger(path: scratch.path("ledger.sqlite"), access: .readOnly)
        let attempts = try ledger.attempts()
        let runs = try ledger.hookRuns()
        #expect(runs.count == 5 && runs.allSatisfy { $0.deliveredAt != nil && $0.tries == 1 })
        for line in log {
            let run = try #require(runs.first { $0.eventID == line[0] })
            let attempt = try #require(attempts.first { $0.id == run.attempt.id })
            #expect(line[1] == "1")
            #expect(line[2] == attempt.station && line[8] == attempt.chip && line[9] == "verified")
            #expect(line[3] == Self.uuid && line[4] == "3")
            #expect(line[7] == attempt.advertiserAddress && line[10] == attempt.imageSHA256)
            #expect(line[11] == attempt.debugger && line[6] == String(attempt.power ?? 0))
            #expect(attempt.outcome == .verified)
        }
        #expect(Set(log.map { $0[0] }).count == 5, "one event id per station")
    }

    /// A hook that fails is reported, never undoes a burn, fails the run (exit 1) and stays
    /// pending; the next run of the bench runs it first — with the same event id, try 2 — even
    /// when nothing is left to burn.
    @Test func aFailedHookStaysPendingAndRunsFirstNextTime() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, ["a", "b", "c"])
        let hook =
            "cd '\(scratch.url.path)' && " + Self.logHook
            + " && test -e hooks.ok || { echo printer offline >&2; exit 3; }"
        let first = Self.provision(
            list, scratch, ["--on-verified", hook, "--json", "--events", scratch.path("events.jsonl")],
            bench: Bench(first: 0x20))
        #expect(first.status == 1, "\(first.diagnostics)")
        let finished = try String(contentsOfFile: scratch.path("events.jsonl"), encoding: .utf8).split(separator: "\n")
            .last.map(String.init)
        #expect(finished?.contains(#""event":"run-finished""#) == true && finished?.contains(#""status":1"#) == true)
        #expect(first.diagnostics.contains("FAILED: exit 3; its last output: printer offline; it stays pending"))
        #expect(first.diagnostics.contains("3 hook run(s) failed, timed out or did not run; every burn stands"))
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(first.output.utf8)) as? [String: Any])
        #expect(summary["hooks"] as? [String: Int] == ["delivered": 0, "failed": 3, "notRun": 0], "\(first.output)")
        let show = ToolRun(["ledger", "show", "--ledger", scratch.path("ledger.sqlite")])
        #expect(show.output.contains("3 of 3 done"))
        #expect(
            show.output.contains("hook runs pending for bench line-1: 3 on-verified; 3 tried and failed (last: exit 3)")
        )
        // A run without the hook leaves them pending and says so.
        let without = Self.provision(list, scratch, [], bench: Bench(first: 0x21))
        #expect(without.status == 0)
        #expect(without.diagnostics.contains("3 --on-verified hook run(s) of this bench are pending"))
        _ = try scratch.write("hooks.ok", "")
        let second = Self.provision(list, scratch, ["--on-verified", hook], bench: Bench(first: 0x22))
        #expect(second.status == 0, "\(second.diagnostics)")
        #expect(second.output.contains("nothing to burn") && second.output.contains("hooks: 3 delivered, 0 failed"))
        // --json gets its summary with nothing to burn too: JSON, not the text line.
        let quiet = Self.provision(list, scratch, ["--json"], bench: Bench(first: 0x23))
        let nothing = try #require(
            try? JSONSerialization.jsonObject(with: Data(quiet.output.utf8)) as? [String: Any], "\(quiet.output)")
        #expect(quiet.status == 0 && nothing["stoppedBecause"] as? String == "nothing to burn", "\(nothing)")
        #expect(nothing["listDone"] as? Int == 3 && nothing["listPending"] as? Int == 0, "\(nothing)")
        let log = try Self.hookLog(scratch)
        #expect(log.count == 6)
        #expect(log.prefix(3).map { $0[0] } == log.suffix(3).map { $0[0] }, "the same event ids on the retry")
        #expect(log.suffix(3).allSatisfy { $0[1] == "2" })
        let runs = try SQLiteLedger(path: scratch.path("ledger.sqlite"), access: .readOnly).hookRuns()
        #expect(runs.allSatisfy { $0.deliveredAt != nil && $0.tries == 2 && $0.lastStatus == "exit 0" })
        // Delivered: never again.
        let third = Self.provision(list, scratch, ["--on-verified", hook], bench: Bench(first: 0x23))
        let after = try Self.hookLog(scratch)
        #expect(third.status == 0 && after.count == 6)
    }

    /// A failed burn runs --on-failed with the reason; a verified one does not.
    @Test func onFailedRunsForAFailedBurnWithItsReason() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, ["a"])
        // The first chip's flash has a bit stuck at 0 in the identity: verification fails.
        let bench = Bench(first: 0x30) { chip, number in if number == 0 { chip.stuckAtZero = [0x7F10: 0x01] } }
        let run = Self.provision(
            list, scratch,
            [
                "--on-failed",
                "cd '\(scratch.url.path)' && printf '%s|%s\\n' \"$CCBEACON_OUTCOME\" \"$CCBEACON_REASON\" >> failed.log",
            ], bench: bench)
        #expect(run.status == 0, "\(run.diagnostics)")
        let lines = try String(contentsOfFile: scratch.path("failed.log"), encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("failed|") == true && lines.first!.contains("the chip was erased"), "\(lines)")
    }

    /// A hook past --hook-timeout is ended with everything it started, also what left its process
    /// group (`setsid`, `timeout`, which used to run on); the run reports it.
    @Test(arguments: ["", "setsid ", "timeout 100 "])
    func aHookPastItsTimeoutIsEndedWithItsChildren(leaving: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let started = MonotonicClock.now
        let child = scratch.path("child")
        let outcome = HookRunner.execute(
            "\(leaving)sh -c 'echo $$ > \(child).new && mv \(child).new \(child) && exec sleep 30' & "
                + "while [ ! -e '\(child)' ]; do sleep 0.01; done; echo waiting; wait",
            environment: [], timeout: 1)
        #expect(outcome.status == "timed out after 1 s" && !outcome.exitedZero)
        #expect(outcome.lastLine == "waiting")
        #expect(MonotonicClock.now - started < 6)
        let pid = try #require(
            Int(try String(contentsOfFile: child, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // SIGKILL takes effect asynchronously: wait for the process's state, not for time.
        let deadline = MonotonicClock.now + 10
        while MonotonicClock.now < deadline, !LocalProcesses.hasEnded(pid) { usleep(5_000) }
        #expect(LocalProcesses.hasEnded(pid), "the hook's background child was killed too")
    }

    /// What a hook past its timeout goes on starting during the grace (it ignores SIGTERM) is ended
    /// with it: the tree is looked at again before the SIGKILL (the children started in the grace
    /// used to run on).
    @Test func whatAHookStartsDuringItsGraceIsEndedToo() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let children = scratch.path("children")
        let outcome = HookRunner.execute(
            "trap '' TERM; while :; do setsid sh -c 'echo $$ >> \(children); exec sleep 300' & sleep 0.1; done",
            environment: [], timeout: 0.5)
        #expect(outcome.status == "timed out after 0.5 s")
        let pids = try String(contentsOfFile: children, encoding: .utf8).split(separator: "\n").compactMap { Int($0) }
        #expect(pids.count > 5, "children were started in the grace too")
        let deadline = MonotonicClock.now + 10
        while MonotonicClock.now < deadline, !pids.allSatisfy(LocalProcesses.hasEnded) { usleep(5_000) }
        let left = pids.filter { !LocalProcesses.hasEnded($0) }
        for pid in left { kill(pid_t(pid), SIGKILL) }
        #expect(left.isEmpty, "\(left.count) of \(pids.count) children ran on")
    }

    /// While a second stop's sweep ends the hook's processes, the run does not go on from the
    /// hook (recording it killed, exiting with the sweep half done): a large tree's sweep outlasted
    /// the wait for the hook's output, and the process exited leaving 614 of 1,500 stopped.
    @Test func aSweepInProgressHoldsTheRun() throws {
        let returned = DispatchSemaphore(value: 0)
        // Claimed now: a sweep claimed over HookSweeper.deadline ago ends the process.
        stopSignals.sweepClaimed.store(Int(MonotonicClock.now * 1e9), ordering: .relaxed)
        stopSignals.sweeping.store(true, ordering: .relaxed)
        Thread {
            _ = HookRunner.execute("true", environment: [], timeout: 5)
            returned.signal()
        }.start()
        #expect(returned.wait(timeout: .now() + 0.4) == .timedOut, "the hook's wait was left during the sweep")
        stopSignals.sweeping.store(false, ordering: .relaxed)
        #expect(returned.wait(timeout: .now() + 10) == .success)
    }

    /// A tree is taken only for the process that started when the hook did: an ID another process
    /// took since (the hook reaped) is left alone, neither stopped nor killed.
    @Test func aTreeIsNeverTakenForAnotherProcessWithTheSameID() throws {
        let other = try ChildProcess("/bin/sleep", ["30"], in: URL(fileURLWithPath: "/"))
        defer {
            other.killGroup()
            _ = other.wait()
        }
        let pid = Int(other.processID)
        let started = try #require(ProcessTree.startTicks(pid))
        #expect(ProcessTree.stop(pid, startTicks: started + 1).pids.isEmpty)
        let state = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8).split(separator: ")").last?
            .split(separator: " ").first
        #expect(state != "T" && state != nil, "not stopped")
        let tree = ProcessTree.stop(pid, startTicks: started)
        #expect(tree.pids == [pid])
        tree.signal(SIGKILL)
    }

    /// How a hook ends, in words; what it inherits: its variables (earlier CCBEACON_ ones dropped),
    /// no descriptor but 0–2, default signal dispositions (ccbeacon ignores SIGPIPE).
    @Test(arguments: [
        ("exit 0", "exit 0", true), ("exit 7", "exit 7", false), ("kill -9 $$", "killed by signal 9", false),
        ("echo one; echo two >&2; exit 1", "exit 1", false),
        (#"printf 'ok\033[2J\033]0;title\007\n'; exit 2"#, "exit 2", false),
    ])
    func aHookEndsAsItsStatusSays(command: String, status: String, delivered: Bool) {
        let outcome = HookRunner.execute(command, environment: [], timeout: 10)
        #expect(outcome.status == status && outcome.exitedZero == delivered)
        if command.contains("two") { #expect(outcome.lastLine == "two") }
        if command.contains("title") {
            // Kept as it was (the events carry it whole); the console makes it visible
            // (HostileTextReviewTests.aHooksOutputIsEscapedOnceInTheEvents).
            #expect(outcome.lastLine == "ok\u{1B}[2J\u{1B}]0;title\u{07}")
        }
    }

    @Test func aHookInheritsOnlyItsVariablesAndNoDescriptors() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let held = open(scratch.path("held"), O_CREAT | O_WRONLY, 0o600)  // no O_CLOEXEC
        defer { close(held) }
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        setenv("CCBEACON_STALE", "old", 1)
        defer { unsetenv("CCBEACON_STALE") }
        let outcome = HookRunner.execute(
            #"echo "fds=$(ls /proc/$$/fd | tr '\n' ' ') stale=${CCBEACON_STALE:-none} name=$CCBEACON_STATION ign=$(grep SigIgn /proc/$$/status | cut -f2)""#,
            environment: [("CCBEACON_STATION", "x\0y $(id)")], timeout: 10)
        #expect(outcome.exitedZero)
        let line = try #require(outcome.lastLine)
        #expect(line.hasPrefix("fds=0 1 2 "), "\(line)")
        #expect(line.contains("stale=none"))
        #expect(line.contains("name=xy $(id)"), "a value is data: \(line)")
        let ignored = try #require(UInt64(line.split(separator: "ign=").last.map(String.init) ?? "", radix: 16))
        #expect(ignored & (1 << (UInt64(SIGPIPE) - 1)) == 0, "SIGPIPE back at its default")
    }

    // MARK: - Debug lock

    /// --lock-debug: every verified chip leaves locked (its lock bits read back, the lock seen
    /// after a reset), the ledger and the export say so, and the identity is on the chip.
    @Test func lockDebugLocksEveryVerifiedChipAndTheLedgerSaysSo() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, ["a", "b", "c"])
        let bench = Bench(first: 0x40)
        let run = Self.provision(list, scratch, ["--lock-debug"], bench: bench)
        #expect(run.status == 0, "\(run.diagnostics)")
        let chips = bench.gone
        #expect(chips.count == 3)
        for chip in chips {
            #expect(chip.debugLocked, "locked once reset")
            #expect(chip.flash[0x3FFFF] == 0x7F)
            #expect(Array(chip.flash[0x7F09..<0x7F0E]) == [0x01, 0x06, 0x1A, 0xFF, 0x4C], "the identity stays")
        }
        let attempts = try SQLiteLedger(path: scratch.path("ledger.sqlite"), access: .readOnly).attempts()
        #expect(attempts.count == 3 && attempts.allSatisfy { $0.debugLocked && $0.outcome == .verified })
        #expect(
            attempts.allSatisfy { $0.readBack?.hasSuffix("0x3FFF0-0x3FFFF") == true }, "\(attempts.map(\.readBack))")
        let export = ToolRun(["ledger", "export", "--ledger", scratch.path("ledger.sqlite"), "--format", "json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(export.output.utf8)) as? [[String: Any]])
        #expect(rows.count == 3 && rows.allSatisfy { $0["debugLocked"] as? Bool == true }, "\(rows)")
        let show = ToolRun(["ledger", "show", "--ledger", scratch.path("ledger.sqlite")])
        #expect(show.output.components(separatedBy: "debug-locked").count == 4)
    }

    /// The chip a debugger just locked stays on it: it is not taken for a new (locked) chip and
    /// erased; the debugger waits. A locked chip that arrives is set aside untouched — it may be
    /// one of the pool's — unless --reprovision, which erases it (unlocking it) and burns it.
    @Test func aLockedChipIsNeverErasedUnlessReprovisioning() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        var list = try Self.list(scratch, ["a"])
        let stays = EmulatorProvider()
        let chip = EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0x50, 0x01])
        stays.debuggers[0].chip = chip
        let run = ToolRun(
            [
                "provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.5", "--bench", "line-1",
                "--ledger", scratch.path("ledger.sqlite"), "--lock-debug",
            ], debuggers: stays)
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(chip.debugLocked && chip.flash[0x7F09] == 0x01, "still locked, still carrying its station")
        // A second list: the locked chip comes back (on another debugger) and is set aside.
        list = try Self.list(scratch, ["a", "b"])
        let back = EmulatorProvider()
        back.debuggers[0].chip = chip
        let refused = ToolRun(
            [
                "provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.5", "--bench", "line-1",
                "--ledger", scratch.path("ledger.sqlite"), "--lock-debug",
            ], debuggers: back)
        #expect(refused.status == 3)
        #expect(refused.diagnostics.contains("SET THIS CHIP ASIDE") && refused.diagnostics.contains("debug-locked"))
        #expect(chip.debugLocked && chip.flash[0x7F09] == 0x01, "untouched")
        let again = ToolRun(
            [
                "provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.5", "--bench", "line-1",
                "--ledger", scratch.path("ledger.sqlite"), "--lock-debug", "--reprovision",
            ], debuggers: back)
        #expect(again.diagnostics.contains("arrived debug-locked and carried 'a'"), "\(again.diagnostics)")
        let attempts = try SQLiteLedger(path: scratch.path("ledger.sqlite"), access: .readOnly).attempts()
        #expect(attempts.filter { $0.outcome == .verified }.count == 1)
        #expect(attempts.first { $0.station == "a" }?.outcome == .superseded)
        #expect(chip.debugLocked, "burned again and locked again")
    }

    /// A chip whose lock does not take is erased and its attempt failed; the station goes to the
    /// next chip, which locks.
    @Test func aLockThatDoesNotTakeFailsTheChip() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, ["a"])
        let bench = Bench(first: 0x60) { chip, number in if number == 0 { chip.ignoresDebugLock = true } }
        let run = Self.provision(list, scratch, ["--lock-debug"], bench: bench)
        #expect(run.status == 0, "\(run.diagnostics)")
        let attempts = try SQLiteLedger(path: scratch.path("ledger.sqlite"), access: .readOnly).attempts()
        #expect(attempts.map(\.outcome) == [.failed, .verified])
        #expect(attempts.first?.reason?.contains("locking the debug interface") == true)
        #expect(attempts.first?.reason?.contains("the chip was erased") == true)
        #expect(attempts.last?.debugLocked == true)
        let first = try #require(bench.gone.first)
        #expect(first.flash.allSatisfy { $0 == 0xFF }, "the unlockable chip left blank")
    }

    // MARK: - Secondary address

    /// A template without an address field (TI's stack): with --address-mode secondary each
    /// station's address — the list's, or one derived from its identity — is written into the
    /// chip's last page (least significant byte first), read back and recorded.
    @Test func theSecondaryAddressIsWrittenReadBackAndRecorded() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("fw.hex", TemplateCommandTests.firmware())
        #expect(ToolRun(["template", "import", image, "--name", "ti", "-o", scratch.path("ti")]).status == 0)
        let list = try Self.list(scratch, ["given", "derived"], addresses: ["C0:FF:EE:00:00:07", nil])
        let bench = Bench(first: 0x70)
        let refused = Self.provision(list, scratch, [], bench: bench, template: scratch.path("ti"))
        #expect(refused.status == 65, "an address with nowhere to go")
        let run = Self.provision(
            list, scratch, ["--address-mode", "secondary"], bench: bench, template: scratch.path("ti"))
        #expect(run.status == 0, "\(run.diagnostics)")
        let attempts = try SQLiteLedger(path: scratch.path("ledger.sqlite"), access: .readOnly).attempts()
        let chips = bench.gone
        #expect(chips.count == 2)
        for (attempt, chip) in zip(attempts, chips) {
            let address = try #require(attempt.advertiserAddress)
            #expect(
                Array(chip.flash[0x3FFEA..<0x3FFF0]).reversed().map { String(format: "%02X", $0) }.joined(
                    separator: ":") == address)
            #expect(attempt.readBack?.contains("0x3FFEA-0x3FFEF") == true, "\(attempt.readBack ?? "")")
        }
        #expect(attempts.first?.advertiserAddress == "C0:FF:EE:00:00:07")
        #expect(
            attempts.last?.advertiserAddress?.hasPrefix("C") == true
                || attempts.last?.advertiserAddress?.first.map { "CDEF".contains($0) } == true)
    }

    @Test(arguments: [
        (
            ["--address-mode", "secondary"], "cc2541-ibeacon",
            "advertises with the address in its own advertiser-address field"
        ),
        (["--address-mode", "secondary", "--chip-id", "secondary"], "", "use one of them"),
        (["--address-mode", "primary"], "", "--address-mode must be template or secondary"),
        (["--hook-timeout", "5"], "", "--hook-timeout applies to --on-verified and --on-failed"),
        (["--on-verified", "  "], "", "--on-verified needs a command"),
    ])
    func aModeThatCannotWorkIsRefused(extra: [String], template: String, message: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, ["a"])
        let run = Self.provision(list, scratch, extra, bench: Bench(first: 0x80))
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("ledger.sqlite")), "nothing was written")
    }
}

/// An attempt interrupted in --address-mode secondary is checked for the address it recorded,
/// whatever the run that finds its chip is given: a chip without it is not confirmed (the ledger
/// would name an address the chip does not send with). (Found by a review.)
struct SecondaryResumeTests {
    @Test func aSecondaryAttemptIsNotConfirmedOnAChipWithoutItsAddress() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let image = try scratch.write("fw.hex", TemplateCommandTests.firmware())
        #expect(ToolRun(["template", "import", image, "--name", "ti", "-o", scratch.path("ti")]).status == 0)
        let list = try ProductionLineTests.list(scratch, ["hall"], addresses: [nil])
        let first = ProductionLineTests.Bench(first: 0x90, chips: 1)
        let run = ProductionLineTests.provision(
            list, scratch, ["--address-mode", "secondary"], bench: first, template: scratch.path("ti"))
        #expect(run.status == 0, "\(run.diagnostics)")
        let burned = try #require(first.gone.first)
        // As if the run had been killed after the burn: the attempt interrupted.
        try LedgerFiles.alter(
            scratch.path("ledger.sqlite"),
            ["UPDATE attempts SET outcome = 'interrupted', reason = 'the run stopped while burning', read_back = NULL"])
        var withoutAddress = burned.flash
        for address in 0x3FFEA..<0x3FFF0 { withoutAddress[address] = 0xFF }
        for mode in [[], ["--address-mode", "secondary"]] {
            let flash = withoutAddress
            let again = ProductionLineTests.Bench(first: 0x90, chips: 1) { chip, number in
                if number == 0 { chip.flash = flash }
            }
            _ = ProductionLineTests.provision(list, scratch, mode, bench: again, template: scratch.path("ti"))
            let attempt = try #require(
                try SQLiteLedger(path: scratch.path("ledger.sqlite"), access: .readOnly).attempts().first)
            #expect(attempt.outcome != .verified, "\(mode): \(attempt.reason ?? "")")
        }
    }
}
