import CCDebuggerEmulator
import Foundation
import StationLedger
import Synchronization
import TestSupport
import Testing

/// `provision --events`: every line of a whole run is one JSON object of the documented schema.
struct EventStreamTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"
    /// Every event name the README documents, and the facts each must carry.
    static let facts: [String: [String]] = [
        "run-started": ["list", "ledger", "bench", "template", "stations", "pending", "debuggers"],
        "waiting": ["debugger"], "chip-attached": ["debugger", "chip"],
        "burn-started": ["debugger", "station", "chip"],
        "progress": ["debugger", "station", "chip", "phase", "done", "total"],
        "verified": ["debugger", "station", "chip"], "failed": ["debugger", "station", "chip", "reason"],
        "held": ["debugger", "station", "chip", "reason"], "debugger-stopped": ["debugger", "reason"],
        "chip-refused": ["debugger", "chip", "station"], "chip-set-aside": ["debugger", "chip", "reason"],
        "erased-on-arrival": ["debugger", "station", "chip"], "chip-of-another-list": ["debugger", "station", "chip"],
        "reset-failed": ["debugger", "chip", "reason"], "listening": ["debugger", "station", "chip", "seconds"],
        "burning-again": ["debugger", "station", "chip", "burnedPower", "calibratedPower"],
        "hook-finished": ["hook", "station", "chip", "eventId", "try", "status", "delivered", "output", "recorded"],
        "run-finished": ["verified", "failed", "listDone", "listPending", "held", "stoppedBecause", "status"],
    ]

    /// Two emulated debuggers on a bench: a fresh chip after each reset to run.
    static func bench() -> EmulatorProvider {
        let provider = EmulatorProvider(count: 2)
        for (index, debugger) in provider.debuggers.enumerated() {
            let next = Atomic<UInt8>(0)
            debugger.onResetToRun = { debugger in
                debugger.chip = EmulatedChip(ieee: [
                    0x00, 0x12, 0x4B, 0x0E, UInt8(index), next.add(1, ordering: .relaxed).newValue,
                ])
            }
        }
        return provider
    }

    /// Checks every line against the schema; returns the events.
    static func validate(_ text: String) throws -> [[String: Any]] {
        #expect(text.hasSuffix("\n"), "every event ends its line")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        var events: [[String: Any]] = []
        var lastElapsed = 0.0
        for (index, line) in lines.enumerated() {
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "line \(index + 1): \(line)")
            #expect(object["schema"] as? Int == 1)
            #expect((object["run"] as? String)?.count == 32, "every event names its run")
            #expect(object["seq"] as? Int == index + 1, "seq counts the lines: \(line)")
            let time = try #require(object["time"] as? String)
            #expect(
                time.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil,
                "\(time)")
            let elapsed = try #require(object["elapsed"] as? Double)
            #expect(elapsed >= lastElapsed, "elapsed never goes back")
            lastElapsed = elapsed
            let name = try #require(object["event"] as? String)
            let needed = try #require(Self.facts[name], "an event the README documents: \(name)")
            for key in needed { #expect(object.keys.contains(key), "\(name) carries \(key): \(line)") }
            if name == "progress" {
                let done = try #require(object["done"] as? Int)
                let total = try #require(object["total"] as? Int)
                #expect(done <= total && ["erasing", "programming", "verifying"].contains(object["phase"] as? String))
            }
            events.append(object)
        }
        #expect(events.first?["event"] as? String == "run-started")
        #expect(events.last?["event"] as? String == "run-finished")
        return events
    }

    @Test func everyLineOfAWholeRunIsADocumentedEvent() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write(
            "list.csv", "name,uuid,major,minor\n" + (1...6).map { "s\($0),\(Self.uuid),4,\($0)\n" }.joined())
        let events = scratch.path("events.jsonl")
        let run = ToolRun(
            [
                "provision", list, "--template", "cc2541-ibeacon", "--devices", "all", "--yes", "--wait", "0.3",
                "--events", events, "--on-verified", "true",
            ], debuggers: Self.bench())
        #expect(run.status == 0, "\(run.diagnostics)")
        let all = try Self.validate(try String(contentsOfFile: events, encoding: .utf8))
        let verified = all.filter { $0["event"] as? String == "verified" }
        #expect(Set(verified.compactMap { $0["station"] as? String }) == Set((1...6).map { "s\($0)" }))
        #expect(verified.count == 6, "each station verified once")
        let hooks = all.filter { $0["event"] as? String == "hook-finished" }
        #expect(hooks.count == 6 && hooks.allSatisfy { $0["delivered"] as? Bool == true })
        // Each hook's event comes after its station's verified event.
        for hook in hooks {
            let station = hook["station"] as? String
            let verifiedAt = verified.first { $0["station"] as? String == station }?["seq"] as? Int ?? .max
            #expect((hook["seq"] as? Int ?? 0) > verifiedAt)
        }
        #expect(all.contains { $0["event"] as? String == "progress" && $0["phase"] as? String == "programming" })
        let finished = try #require(all.last)
        #expect(finished["status"] as? Int == 0 && (finished["verified"] as? [String])?.count == 6)
        // The debuggers run-started names are those the other events name.
        let named = Set(all.dropFirst().compactMap { $0["debugger"] as? String })
        #expect(Set(all.first?["debuggers"] as? [String] ?? []) == named && named == ["EMU001", "EMU002"])
        #expect(Set(all.compactMap { $0["run"] as? String }).count == 1)
        // The events' run is the ledger's: the run every attempt of it records (ledger export's `run`).
        let attempts = try SQLiteLedger(path: scratch.path("provisioning.sqlite"), access: .readOnly).attempts()
        #expect(
            Set(attempts.compactMap(\.run)) == Set(all.compactMap { $0["run"] as? String }), "\(attempts.map(\.run))")
        // Appended: a second run adds its own run, numbered from 1 again.
        let again = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--events", events], debuggers: Self.bench())
        #expect(again.status == 0)
        let text = try String(contentsOfFile: events, encoding: .utf8)
        #expect(text.components(separatedBy: "\"event\":\"run-started\"").count == 3)
        // A last line a full disk cut short: the next run starts on a line of its own.
        try (text + "{\"schema\":1,\"run\":\"x\",\"se").write(toFile: events, atomically: false, encoding: .utf8)
        #expect(
            ToolRun(
                ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--events", events],
                debuggers: Self.bench()
            )
            .status == 0)
        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
        #expect(
            lines.filter { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) == nil }.count == 1,
            "only the torn line")
    }

    /// A burn cut off is a held event with its reason; the run-finished event has exit status 3.
    @Test func aBurnCutOffIsAHeldEvent() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\ns1,\(Self.uuid),4,1\n")
        let provider = EmulatorProvider()
        provider.debuggers[0].faults.unplugAfterTransfers = 40
        let run = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.2", "--events", "-"],
            debuggers: provider)
        let all = try Self.validate(run.output)
        #expect(all.contains { $0["event"] as? String == "held" && $0["station"] as? String == "s1" }, "\(run.output)")
        #expect(all.last?["status"] as? Int == 3 && run.status == 3)
        #expect(run.diagnostics.contains("stopped with 1 station"), "the summary goes to standard error")
    }

    /// The files the run's ledger (`provisioning.sqlite` beside the list) will be kept in, none there
    /// yet: events aimed at the lock or at SQLite's journal were taken, and the lock's process ID
    /// and then the next run's lock replaced them (or SQLite found JSON for a journal).
    static let ledgersOwnFiles = [
        "provisioning.sqlite-journal", "provisioning.sqlite-wal", "provisioning.sqlite-shm",
        ".provisioning.sqlite.lock",
    ]

    /// The events never go into a file the run uses, and `--events -` leaves no room for --json.
    @Test func theEventsGoNowhereTheyWouldDamage() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let text = "name,uuid,major,minor\ns1,\(Self.uuid),4,1\n"
        let list = try scratch.write("list.csv", text)
        let notes = try scratch.write("notes.txt", "my notes\n")
        let template = try scratch.write("template.json", "{\n  \"format\": 1\n}\n")
        let dangling = scratch.path("events-link")
        try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: scratch.path("later.sqlite"))
        for extra in [
            ["--events", list], ["--events", scratch.path("provisioning.sqlite")], ["--events", "-", "--json"],
            ["--events", notes], ["--events", template], ["--events", dangling], ["--events", ""],
        ] + Self.ledgersOwnFiles.map({ ["--events", scratch.path($0)] }) {
            let run = ToolRun(
                ["provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.2"] + extra,
                debuggers: Self.bench())
            #expect(run.status == 64, "\(extra): \(run.diagnostics)")
        }
        #expect(try String(contentsOfFile: list, encoding: .utf8) == text)
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == "my notes\n")
        #expect(try String(contentsOfFile: template, encoding: .utf8) == "{\n  \"format\": 1\n}\n")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("later.sqlite")), "nothing made through the link")
        for name in Self.ledgersOwnFiles {
            #expect(!FileManager.default.fileExists(atPath: scratch.path(name)), "\(name) made")
        }
        // A run refused before it starts leaves no events file behind.
        let refused = ToolRun(
            [
                "provision", scratch.path("missing.csv"), "--template", "cc2541-ibeacon", "--yes", "--events",
                scratch.path("new.jsonl"),
            ], debuggers: Self.bench())
        #expect(refused.status != 0 && !FileManager.default.fileExists(atPath: scratch.path("new.jsonl")))
    }
}
