import Foundation
import TestSupport
import Testing

/// The production line through real libusb on emulated debuggers: hooks delivered at least once
/// through kills (exactly once per verified station, told apart by event id), and a whole line —
/// 200 stations on 4 debuggers with live status, events, hooks, debug locks and labels — whose
/// chips unmodified cc-tool then reads and whose QR codes zbarimg decodes.
@Suite(
    .serialized, .enabled(if: Tools.available, "needs umockdev (scripts/test installs it) and the built executables"))
struct ProductionLineUSBTests {
    /// The hook: one line per try, `EVENT STATION TRY`.
    static func hook(_ work: Workspace) -> String {
        #"printf '%s %s %s\n' "$CCBEACON_EVENT_ID" "$CCBEACON_STATION" "$CCBEACON_HOOK_TRY" >> "#
            + "'\(work.path("hooks.log"))'"
    }

    /// The hook log's lines as (event id, station, try).
    static func hookLog(_ work: Workspace) throws -> [(event: String, station: String, try: Int)] {
        guard FileManager.default.fileExists(atPath: work.path("hooks.log")) else { return [] }
        return try String(contentsOfFile: work.path("hooks.log"), encoding: .utf8).split(separator: "\n").map {
            let parts = $0.split(separator: " ").map(String.init)
            return (parts[0], parts[1], Int(parts[2]) ?? 0)
        }
    }

    /// Killed between an outcome's commit and its hook (and between a hook and its record, and at
    /// moments from outside), a bench's next run delivers what was left: in the end every verified
    /// station's hook ran — once per event id, the retries told apart by it — and none for a
    /// station that is not verified.
    @Test func everyHookIsDeliveredOnceItsBenchResumesAfterKills() throws {
        let work = try Workspace()
        defer { work.remove() }
        let list = try ProvisioningThroughLibUSBTests.list(work, count: 30)
        let arguments = [
            "provision", list, "--template", "cc2541-ibeacon", "--devices", "all", "--yes", "--wait", "0.5",
            "--on-verified", Self.hook(work),
        ]
        func startBench(_ round: Int, environment: [String: String] = [:]) throws -> ChildProcess {
            try ChildProcess(
                Tools.emulator,
                [
                    "--devices", "2", "--bench", "--chips", "40", "--ieee",
                    String(format: "00:12:4B:%02X:00:00", round),
                    "--",
                ] + [Tools.ccbeacon] + arguments, in: work.url, environment: environment)
        }
        // At the exact moments: before the Nth hook (its outcome committed) and after it (it ran,
        // its try not recorded).
        let moments = ["before-hook:1", "after-hook:2", "before-hook:3", "after-hook:1"]
        for (round, moment) in moments.enumerated() {
            let bench = try startBench(round + 1, environment: ["CCBEACON_TEST_KILL": moment])
            #expect(bench.wait(timeout: 120) == 128 + SIGKILL, "killed at \(moment)")
        }
        // And from outside, at different moments.
        for round in 0..<4 {
            let bench = try startBench(0x10 + round)
            usleep(UInt32(40_000 + round * 25_000))
            bench.killGroup()
            bench.wait()
        }
        let finish = try Tools.ccbeacon(
            arguments + ["--release-interrupted"],
            options: ["--devices", "2", "--bench", "--chips", "120", "--ieee", "00:12:4B:FF:00:00"], in: work.url)
        #expect(finish.status == 0, "\(finish.errors)")
        let (exported, _) = try ProvisioningThroughLibUSBTests.ledger(work)
        let verified = Set(exported.compactMap { $0["name"] as? String })
        #expect(verified.count == 30)
        // A hook whose bench was killed may still be running (it has a process group of its
        // own): wait until no hook process is left before reading their log.
        let hookLeft = Date().addingTimeInterval(30)
        while Date() < hookLeft,
            (try? ChildProcess.run("/usr/bin/pgrep", ["-f", work.path("hooks.log")], in: work.url).status) == 0
        {
            usleep(10_000)
        }
        let log = try Self.hookLog(work)
        let stationOf = Dictionary(grouping: log, by: \.event).mapValues { Set($0.map(\.station)) }
        #expect(stationOf.values.allSatisfy { $0.count == 1 }, "an event id names one station")
        let eventsOf = Dictionary(grouping: log, by: \.station).mapValues { Set($0.map(\.event)) }
        #expect(Set(eventsOf.keys) == verified, "a hook for every verified station, none for another")
        #expect(
            eventsOf.values.allSatisfy { $0.count == 1 },
            "one event per station: \(eventsOf.filter { $0.value.count > 1 })")
        // A bench killed after a hook ran but before its try was recorded runs it again: the same
        // event id twice (the try number counts recorded tries, so it may repeat too).
        #expect(
            Dictionary(grouping: log, by: \.event).values.contains { $0.count >= 2 },
            "the kills after a hook made retries, told apart by their event id")
        let show = try ChildProcess.run(
            Tools.ccbeacon, ["ledger", "show", "--ledger", work.path("provisioning.sqlite")], in: work.url)
        #expect(!show.output.contains("hook runs pending"), "\(show.output)")
    }

    /// A stop (SIGTERM, sent here by the first hook itself) leaves the hook runs not yet run
    /// pending, says how many, and the next run delivers them.
    @Test func aStopLeavesTheHooksNotRunPendingAndSaysSo() throws {
        let work = try Workspace()
        defer { work.remove() }
        let list = try ProvisioningThroughLibUSBTests.list(work, count: 6)
        // The first hook takes two seconds (the debugger burns on meanwhile), then stops the run.
        let stop =
            Self.hook(work)
            + #"; if [ "$CCBEACON_HOOK_TRY$CCBEACON_STATION" = "1station-0" ]; then sleep 2; kill -TERM $PPID; fi"#
        let arguments = [
            "provision", list, "--template", "cc2541-ibeacon", "--devices", "all", "--yes", "--wait", "0.5",
        ]
        let first = try Tools.ccbeacon(
            arguments + ["--on-verified", stop], options: ["--bench", "--chips", "20"], in: work.url)
        #expect(first.status == 1 || first.status == 3, "\(first.errors)")
        #expect(first.output.contains("not run (the run stopped first)"), "\(first.output)")
        let delivered = try Self.hookLog(work)
        let (exported, _) = try ProvisioningThroughLibUSBTests.ledger(work)
        #expect(delivered.count < exported.count, "a verified station's hook was left for the next run")
        let second = try Tools.ccbeacon(
            arguments + ["--on-verified", Self.hook(work)], options: ["--bench", "--chips", "20"], in: work.url)
        #expect(second.status == 0, "\(second.errors)")
        let log = try Self.hookLog(work)
        #expect(Set(log.map(\.station)).count == 6 && Set(log.map(\.event)).count == 6)
    }

    /// The whole line: 200 stations on 4 debuggers, on a terminal (live status), with the events
    /// in a file, a hook per verified station and every chip debug-locked. Every station verified
    /// once, every hook delivered once, every event line valid, every chip left locked — which
    /// the unmodified cc-tool confirms on a sample of them.
    @Test func twoHundredStationsOnFourDebuggersWithEverything() throws {
        let work = try Workspace()
        defer { work.remove() }
        let list = try ProvisioningThroughLibUSBTests.list(work, count: 200)
        try FileManager.default.createDirectory(atPath: work.path("chips"), withIntermediateDirectories: true)
        let command = [
            Tools.emulator, "--devices", "4", "--bench", "--chips", "240", "--save-chips", work.path("chips"), "--",
            Tools.ccbeacon, "provision", list, "--template", "cc2541-ibeacon", "--devices", "all", "--yes", "--wait",
            "1", "--lock-debug", "--events", work.path("events.jsonl"), "--on-verified", Self.hook(work),
        ]
        // `script` gives the run a terminal: the live status, not log lines.
        let shell = command.map { "'" + $0.replacing("'", with: "'\\''") + "'" }.joined(separator: " ")
        let run = try ChildProcess.run("/usr/bin/script", ["-qfec", shell, "/dev/null"], in: work.url, timeout: 600)
        #expect(run.status == 0, "\(run.output.suffix(3000))")
        #expect(run.output.contains("\u{1B}[K") && run.output.contains("done 200 · pending 0"), "drawn in place")
        #expect(run.output.contains("hooks: 200 delivered, 0 failed"))

        let (exported, states) = try ProvisioningThroughLibUSBTests.ledger(work)
        #expect(states.count == 200 && states.allSatisfy { $0["state"] as? String == "done" })
        #expect(exported.count == 200 && exported.allSatisfy { $0["debugLocked"] as? Bool == true })
        let chipOf = Dictionary(
            uniqueKeysWithValues: exported.compactMap { row in
                (row["name"] as? String).flatMap { name in (row["chip"] as? String).map { (name, $0) } }
            })
        #expect(Set(chipOf.values).count == 200, "200 chips")

        let log = try Self.hookLog(work)
        #expect(log.count == 200 && Set(log.map(\.event)).count == 200 && Set(log.map(\.station)).count == 200)

        // Every line of the events is one JSON object of schema 1, in sequence.
        let lines = try String(contentsOfFile: work.path("events.jsonl"), encoding: .utf8).split(separator: "\n")
        let events = try lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(events.allSatisfy { $0["schema"] as? Int == 1 })
        #expect(events.compactMap { $0["seq"] as? Int } == Array(1...events.count))
        let names = events.compactMap { $0["event"] as? String }
        #expect(names.first == "run-started" && names.last == "run-finished")
        #expect(names.filter { $0 == "verified" }.count == 200)
        let hooks = events.filter { $0["event"] as? String == "hook-finished" }
        #expect(hooks.count == 200 && hooks.allSatisfy { $0["delivered"] as? Bool == true })
        #expect(Set(hooks.compactMap { $0["eventId"] as? String }) == Set(log.map(\.event)))
        #expect(events.last?["status"] as? Int == 0)

        // Every chip that left a debugger is locked with its station on it; cc-tool agrees.
        let saved = try FileManager.default.contentsOfDirectory(atPath: work.path("chips")).filter {
            $0.hasSuffix(".bin")
        }
        #expect(saved.count >= 200)
        let burned = Set(chipOf.values)
        let chipName = { (file: String) in String(file.dropLast(4)).replacing("-", with: ":") }
        var locked = 0
        for file in saved {
            let flash = try work.bytes("chips/" + file)
            guard burned.contains(chipName(file)) else { continue }
            #expect(flash.count == 0x40000 && flash[0x3FFFF] == 0x7F, "\(file) locked")
            locked += 1
        }
        #expect(locked == 200)
        // A label per station from the ledger: every QR code decodes (rsvg-convert, zbarimg) to its
        // station's string, with the address the chip sends with.
        if LabelTools.available {
            let labels = try ChildProcess.run(
                Tools.ccbeacon,
                ["labels", "--ledger", work.path("provisioning.sqlite"), "-o", work.path("labels.svg")],
                in: work.url)
            #expect(labels.status == 0, "\(labels.errors)")
            let pages = try FileManager.default.contentsOfDirectory(atPath: work.path("")).filter {
                $0.hasPrefix("labels-") && $0.hasSuffix(".svg")
            }
            #expect(pages.count == 9, "200 labels, 24 a page")
            var decoded = Set<String>()
            for page in pages { decoded.formUnion(try LabelTools.decodeAll(work.path(page), in: work)) }
            let expected = Set(
                exported.compactMap { row -> String? in
                    guard let name = row["name"] as? String, let minor = row["minor"] as? Int,
                        let address = row["address"] as? String
                    else { return nil }
                    return "ibeacon:7634A485-1732-4B7D-AB44-D505D8A24C60/7/\(minor)?name=\(name)&addr=\(address)"
                })
            #expect(expected.count == 200)
            #expect(decoded == expected, "missing \(expected.subtracting(decoded).sorted().prefix(5))")
        }
        for file in saved.sorted().filter({ burned.contains(chipName($0)) }).prefix(3) {
            let test = try Tools.run(["--flash", work.path("chips/" + file)], [Tools.ccTool!, "--test"], in: work.url)
            #expect(test.output.contains("Target is locked."), "cc-tool: \(test.output)")
        }
    }

    /// `doctor` through real libusb: the library's version, each emulated debugger with its port
    /// and chip; exit 0 (a missing udev rule is a warning).
    @Test func doctorSeesTheDebuggersThroughLibUSB() throws {
        let work = try Workspace()
        defer { work.remove() }
        let run = try Tools.ccbeacon(
            ["doctor", "--ledger", work.path("l.sqlite")], options: ["--devices", "2"], in: work.url)
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        #expect(run.output.contains("ok     USB: libusb 1."), "\(run.output)")
        #expect(
            run.output.contains(
                "(port 1-1), serial EMU001: opens; target CC2541F256 (256 KiB), IEEE address 00:12:4B:00:25:41"))
        #expect(run.output.contains("(port 1-2), serial EMU002: opens; target CC2541F256"))
        #expect(run.output.contains("does not exist yet; provision creates it"))
    }

    /// A template without an address field: --address-mode secondary puts each station's address
    /// in the chip's last page, where cc-tool reads it as the secondary MAC address.
    @Test func ccToolReadsTheSecondaryAddressProvisionWrote() throws {
        let work = try Workspace()
        defer { work.remove() }
        // A TI-stack-like image: an iBeacon block and code, no address field.
        let firmware = try work.station()
        _ = firmware
        let imported = try ChildProcess.run(
            Tools.ccbeacon, ["template", "import", work.path("station.hex"), "--name", "ti", "-o", work.path("ti")],
            in: work.url)
        #expect(imported.status == 0, "\(imported.errors)")
        let list = work.path("list.csv")
        try "name,uuid,major,minor,address\nhall,7634A485-1732-4B7D-AB44-D505D8A24C60,9,1,C0:FF:EE:00:12:34\n".write(
            toFile: list, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: work.path("chips"), withIntermediateDirectories: true)
        let run = try Tools.ccbeacon(
            [
                "provision", list, "--template", work.path("ti"), "--devices", "all", "--yes", "--wait", "0.5",
                "--address-mode", "secondary",
            ], options: ["--bench", "--chips", "2", "--save-chips", work.path("chips")], in: work.url)
        #expect(run.status == 0, "\(run.errors)")
        let (exported, _) = try ProvisioningThroughLibUSBTests.ledger(work)
        let chip = try #require(exported.first?["chip"] as? String)
        #expect(exported.first?["address"] as? String == "C0:FF:EE:00:12:34")
        let read = try Tools.run(
            ["--flash", work.path("chips/" + chip.replacing(":", with: "-") + ".bin")], [Tools.ccTool!, "-a"],
            in: work.url)
        #expect(read.output.contains("secondary: C0:FF:EE:00:12:34"), "cc-tool: \(read.output)")
    }
}
