import CCDebuggerEmulator
import Foundation
import StationLedger
import Storage
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// What the adversarial review of issue 26's fixes found (each failed before its fix): usage
/// errors that still left something behind, a batch record read more loosely than its list, and
/// doctor promising a setup the user cannot do.
struct ReviewRoundThreeTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// A --devices value that is wrong as written is refused before the ledger is made: no
    /// ledger, no lock, no station registered with a power the operator is about to correct.
    @Test(arguments: [",", "1:2,", "all,all", "1:2,1:2"])
    func aDevicesUsageErrorLeavesNoLedger(devices: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor,power\nA,\(Self.uuid),1,1,-50\n")
        let run = ToolRun(
            ["provision", list, "--board", "hm10", "--yes", "--wait", "0.1", "--devices", devices],
            debuggers: EmulatorProvider())
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("provisioning.sqlite")), "the ledger was created")
        #expect(!FileManager.default.fileExists(atPath: scratch.path(".provisioning.sqlite.lock")), "a lock was left")
        _ = try scratch.write("list.csv", "name,uuid,major,minor,power\nA,\(Self.uuid),1,1,-59\n")
        let again = ToolRun(
            ["provision", list, "--board", "hm10", "--yes", "--wait", "0.1", "--devices", "1:2"],
            debuggers: EmulatorProvider())
        #expect(again.status != 65, "\(again.diagnostics)")
    }

    /// ledger migrate refuses a file target that is there before it locks or reads the source,
    /// and says what is there: a symbolic link to nothing used to be called "a file".
    @Test(arguments: [
        ("copy.sqlite", "a file is there; the copy goes only where no file is"),
        ("ledger.sqlite", "a file is there; the copy goes only where no file is"),
        (
            "dangling.sqlite",
            "a symbolic link to nothing is there; the copy goes only where no file is: give its own path"
        ),
    ])
    func aRefusedMigrateTargetLeavesNoLockBesideTheSource(target: String, what: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        do {
            let ledger = try SQLiteLedger(path: scratch.path("ledger.sqlite"))
            try ledger.register([Station(name: "A", identity: IBeaconFixture.identity(1))])
        }
        _ = try scratch.write("copy.sqlite", "")
        try FileManager.default.createSymbolicLink(
            atPath: scratch.path("dangling.sqlite"), withDestinationPath: scratch.path("nowhere/x.sqlite"))
        let before = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted()
        let run = ToolRun([
            "ledger", "migrate", "--from", scratch.path("ledger.sqlite"), "--to", scratch.path(target),
        ])
        #expect(run.status == 65 && run.diagnostics.contains(what), "\(run.diagnostics)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted() == before)
    }

    /// ledger migrate into a folder that is not there says so, naming the target: it used to name
    /// the temporary file it creates the copy under (`x.sqlite.ccbeacon-creating-…`).
    @Test func aMigrateIntoAMissingFolderNamesTheFolder() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        do {
            let ledger = try SQLiteLedger(path: scratch.path("ledger.sqlite"))
            try ledger.register([Station(name: "A", identity: IBeaconFixture.identity(1))])
        }
        let target = scratch.path("missing/copy.sqlite")
        let run = ToolRun(["ledger", "migrate", "--from", scratch.path("ledger.sqlite"), "--to", target])
        #expect(run.status == 1)
        #expect(
            run.diagnostics
                == "ccbeacon ledger migrate: error: cannot write '\(target)': the folder '\(scratch.path("missing"))' does not exist\nhint: create it first, or choose another output path; nothing was written\n"
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path) == ["ledger.sqlite"])
    }

    /// calibrate --write with a ledger it cannot write refuses before it touches the list's
    /// folder (where it would tidy what killed runs left).
    @Test(arguments: ["missing.sqlite", "postgresql://bench@db.example/beacons"])
    func aCalibrateUsageErrorLeavesTheListsFolderAlone(ledger: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nA,\(Self.uuid),1,1\n")
        let rssi = try scratch.write("rssi.txt", [String](repeating: "-60", count: 20).joined(separator: "\n"))
        let left = try scratch.write(
            Files.temporaryName(for: "list.csv", inFolder: scratch.url.path, process: Int32.max), "stale")
        let run = ToolRun([
            "calibrate", "--rssi", rssi, "--station", "A", "--list", list, "--ledger",
            ledger.hasPrefix("postgresql") ? ledger : scratch.path(ledger), "--write", "--force",
        ])
        #expect(run.status == 64, "\(run.diagnostics)")
        #expect(FileManager.default.fileExists(atPath: left), "a usage error removed a file from the list's folder")
    }

    /// A batch record edited by `mutate`; its path.
    static func record(_ scratch: Scratch, _ mutate: (inout [[String: Any]]) -> Void) throws -> String {
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nA,\(Self.uuid),1,1\nB,\(Self.uuid),1,2\n")
        let batch = ToolRun(["batch", list, "--board", "hm10", "-o", scratch.path("out")])
        try #require(batch.status == 0, "\(batch.diagnostics)")
        let data = try Data(contentsOf: URL(fileURLWithPath: scratch.path("out/stations.json")))
        var root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var stations = try #require(root["stations"] as? [[String: Any]])
        mutate(&stations)
        root["stations"] = stations
        let path = scratch.path("record.json")
        try JSONSerialization.data(withJSONObject: root).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A record is read as its list would be: what the list reader refuses, the record reader
    /// refuses too (labels, scan and calibrate all read records through it).
    @Test(arguments: ["same name", "same identity", "not an address", "zero address", "same address", "empty name"])
    func aRecordThatLiesIsRefusedAsItsListWouldBe(lie: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let record = try Self.record(scratch) { stations in
            switch lie {
            case "same name": stations[1]["name"] = "A"
            case "same identity":
                stations[1]["minor"] = 1
                stations[1]["power"] = -60
                stations[1]["advertisingData"] = nil
            case "not an address": stations[0]["address"] = "not an address"
            case "zero address": stations[0]["address"] = "00:00:00:00:00:00"
            case "same address": stations[1]["address"] = stations[0]["address"]
            default: stations[0]["name"] = ""
            }
        }
        let run = ToolRun(["labels", record, "-o", scratch.path("labels.svg")])
        #expect(run.status == 65, "\(lie): exit \(run.status): \(run.diagnostics)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("labels.svg")), "\(lie): labels were written")
    }
}

/// doctor's "ok" for an empty database means provision, as this user, can set the ledger up.
@Suite(.enabled(if: PostgresTestServer.available, "needs the test PostgreSQL server (scripts/test starts it)"))
struct DoctorSetUpTests {
    @Test func anEmptyDatabaseThisUserCannotSetUpIsNotReady() throws {
        let url = try PostgresTestServer.freshDatabase()
        let role = "bench_" + UUID().uuidString.prefix(8).lowercased()
        _ = try PostgresTestServer.psql(url, "CREATE ROLE \(role) LOGIN")
        let asBench = url.replacingOccurrences(of: "postgresql://postgres@", with: "postgresql://\(role)@")
        try #require(asBench != url, "the test server's URL names another user: \(url)")
        let doctor = ToolRun(["doctor", "--ledger", asBench], debuggers: EmulatorProvider())
        #expect(doctor.status == 1, "\(doctor.output)")
        #expect(!doctor.output.contains("provision sets it up"), "\(doctor.output)")
        #expect(doctor.output.contains("may not create its schema ccbeacon"), "\(doctor.output)")
        _ = try PostgresTestServer.psql(
            url,
            "DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO %I', current_database(), '\(role)'); END $$")
        let granted = ToolRun(["doctor", "--ledger", asBench], debuggers: EmulatorProvider())
        #expect(granted.output.contains("provision sets it up"), "\(granted.output)")
    }
}
