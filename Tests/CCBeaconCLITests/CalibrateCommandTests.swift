import BeaconPayload
import CFileAttributes
import Foundation
import Provisioning
import StationLedger
import Storage
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// `ccbeacon calibrate` from an RSSI file (one per line, or a CSV column) and from a capture with
/// several stations and foreign advertisers mixed in.
struct CalibrateCommandTests {
    @Test func rssiFilesOnePerLineOrACSVColumn() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let values = [-30, -35] + [Int](repeating: -60, count: 16) + [-90, -95]
        let lines = try scratch.write("one.txt", values.map(String.init).joined(separator: "\n") + "\n")
        let csv = try scratch.write(
            "app.csv",
            "time,RSSI,name\n" + values.enumerated().map { "\($0.offset),\($0.element),x" }.joined(separator: "\n"))
        for file in [lines, csv] {
            let run = ToolRun(["calibrate", "--rssi", file])
            #expect(run.status == 0, "\(run.diagnostics)")
            #expect(
                run.output.hasPrefix(
                    "measured power -60 dBm from 20 samples of \(file) (the lowest and highest 2 left out; 16 averaged, -60…-60 dBm"
                ), "\(run.output)")
        }
        let json = ToolRun(["calibrate", "--rssi", csv, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect(
            object?["measuredPower"] as? Int == -60 && object?["samples"] as? Int == 20 && object?["used"] as? Int == 16
        )
    }

    @Test(arguments: [
        ("-60\n-61\n", 65, "2 samples; a calibration needs at least 20 (18 more)"),
        ("-60\nloud\n", 65, ":2:1: 'loud' is not an RSSI"),
        ("time,level\n1,-60\n", 65, ":1: the header names no rssi column"),
        ("-60\n-200\n", 65, "'-200' is not an RSSI; give a whole number of dBm, -127…20"),
        // A long value is quoted short (it was printed whole: an 800-character line).
        (
            "-60\n" + String(repeating: "9", count: 800) + "\n", 65,
            ":2:1: '\(String(repeating: "9", count: 40))… (800 characters)' is not an RSSI"
        ),
        // Two columns of that name: the first was taken without a word.
        (
            "rssi,RSSI\n" + String(repeating: "-70,-60\n", count: 20), 65,
            ":1:6: column 'RSSI' appears twice (column names are read without regard to case)"
        ),
    ])
    func badSampleFilesAreRefused(text: String, status: Int32, message: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let run = ToolRun(["calibrate", "--rssi", try scratch.write("s.txt", text)])
        #expect(run.status == status && run.diagnostics.contains(message), "\(run.diagnostics)")
    }

    /// From a capture: only the given address's reports count; other stations and foreign
    /// advertisers are left out.
    @Test func aCaptureGivesTheSamplesOfOneAddress() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let ours: [UInt8] = [0xC7, 0xD5, 0x60, 0xAD, 0x5D, 0x5A]
        let other: [UInt8] = [0xC0, 0xFF, 0xEE, 0x00, 0x00, 0x01]
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE]
        func event(_ address: [UInt8], _ rssi: Int8) -> (flags: UInt32, bytes: [UInt8]) {
            (3, BTSnoopFile.uartEvent(BTSnoopFile.legacyReport(address: address, data: data, rssi: rssi)))
        }
        var packets: [(flags: UInt32, bytes: [UInt8])] = []
        for index in 0..<24 {
            packets.append(event(ours, Int8(-58 - index % 5)))
            packets.append(event(other, -40))
        }
        let bytes = BTSnoopFile.file(packets)
        let capture = scratch.path("c.btsnoop")
        try Data(bytes).write(to: URL(fileURLWithPath: capture))
        let run = ToolRun(["calibrate", "--from", capture, "--address", "C7:D5:60:AD:5D:5A"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.hasPrefix("measured power -60 dBm from 24 samples"), "\(run.output)")
        #expect(run.diagnostics.isEmpty)
        // Cut inside its last record (the other station's): the samples before it, and a warning.
        try Data(bytes.dropLast(3)).write(to: URL(fileURLWithPath: capture))
        let cut = ToolRun(["calibrate", "--from", capture, "--address", "C7:D5:60:AD:5D:5A"])
        #expect(cut.status == 0 && cut.output.hasPrefix("measured power -60 dBm from 24 samples"), "\(cut.output)")
        #expect(
            cut.diagnostics.hasPrefix("warning: \(capture): at byte ")
                && cut.diagnostics.contains(": record 48 says 22 bytes follow, but only 19 do: the capture ends inside"),
            "\(cut.diagnostics)")
        let missing = ToolRun(["calibrate", "--from", capture])
        #expect(missing.status == 64 && missing.diagnostics.contains("--from needs the station's advertiser address"))
        let none = ToolRun(["calibrate", "--from", capture, "--address", "C0:00:00:00:00:09"])
        #expect(
            none.status == 65 && none.diagnostics.contains("no advertising report from C0:00:00:00:00:09"),
            "\(none.diagnostics)")
    }

    /// A capture's reports carry any RSSI byte: one beyond what a receiver measures (−127…20 dBm;
    /// 127 is "not available" and skipped) is refused as the same value in an RSSI file is, and
    /// nothing is written.
    @Test(arguments: [Int8(100), Int8(-128), Int8(21)])
    func anImpossibleRSSIInACaptureIsRefused(rssi: Int8) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let address: [UInt8] = [0xC7, 0xD5, 0x60, 0xAD, 0x5D, 0x5A]
        let data = IBeacon(uuid: try IdentityParser.uuid(CalibrateWriteTests.uuid), major: 1, minor: 1)
            .advertisingData()
        let packets = (0..<24).map { index -> (flags: UInt32, bytes: [UInt8]) in
            let value = index == 7 ? rssi : -60
            return (3, BTSnoopFile.uartEvent(BTSnoopFile.legacyReport(address: address, data: data, rssi: value)))
        }
        let capture = scratch.path("c.btsnoop")
        try Data(BTSnoopFile.file(packets)).write(to: URL(fileURLWithPath: capture))
        let list = try scratch.write(
            "l.csv", "name,uuid,major,minor,power,address\nA,\(CalibrateWriteTests.uuid),1,1,,C7:D5:60:AD:5D:5A\n")
        let before = try scratch.text("l.csv")
        let run = ToolRun(["calibrate", "--from", capture, "--station", "A", "--list", list, "--write"])
        #expect(run.status == 65, "\(run.output)\(run.diagnostics)")
        #expect(
            run.diagnostics.contains("RSSI \(rssi) dBm is not a reading a receiver gives (-127…20 dBm)"),
            "\(run.diagnostics)")
        #expect(try scratch.text("l.csv") == before, "nothing written")
    }

    /// Samples any receiver could give, but a measured power far from what the station's
    /// registered power (its board and TX power) predicts: refused unless --force says so.
    @Test func aResultFarFromThePredictionNeedsForce() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("l.csv", "name,uuid,major,minor,power\nA,\(CalibrateWriteTests.uuid),1,1,-59\n")
        let loud = try scratch.write("loud.txt", [String](repeating: "-20", count: 20).joined(separator: "\n"))
        let refused = ToolRun(["calibrate", "--rssi", loud, "--station", "A", "--list", list, "--write"])
        #expect(refused.status == 65, "\(refused.diagnostics)")
        #expect(
            refused.diagnostics.contains("measured power -20 dBm is 39 dB from the -59 dBm registered for 'A'"),
            "\(refused.diagnostics)")
        #expect(refused.diagnostics.contains("--force"), "\(refused.diagnostics)")
        #expect(try scratch.text("l.csv").hasSuffix(",-59\n"))
        // Without a station: the generic −59 dBm at 1 m (0 dBm TX) is the prediction.
        let alone = ToolRun(["calibrate", "--rssi", loud])
        #expect(alone.status == 65 && alone.diagnostics.contains("is 39 dB from the -59 dBm"), "\(alone.diagnostics)")
        let forced = ToolRun(["calibrate", "--rssi", loud, "--station", "A", "--list", list, "--write", "--force"])
        #expect(forced.status == 0, "\(forced.diagnostics)")
        #expect(try scratch.text("l.csv").hasSuffix(",-20\n"))
        // Within 25 dB of the prediction: taken as it is.
        let near = try scratch.write("near.txt", [String](repeating: "-80", count: 20).joined(separator: "\n"))
        #expect(ToolRun(["calibrate", "--rssi", near]).status == 0)
    }

    /// One advertisement heard by two controllers is two samples of two radios: refused.
    @Test func samplesOfTwoControllersAreRefused() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let address: [UInt8] = [0xC7, 0xD5, 0x60, 0xAD, 0x5D, 0x5A]
        let data: [UInt8] = [0x02, 0x01, 0x06]
        var packets: [(flags: UInt32, bytes: [UInt8])] = []
        for index in 0..<20 {
            for controller: UInt32 in [0, 1] {
                let rssi = Int8(controller == 0 ? -50 : -80 - index % 2)
                let report = BTSnoopFile.legacyReport(address: address, data: data, rssi: rssi)
                packets.append((controller << 16 | 3, BTSnoopFile.monitorEvent(report)))
            }
        }
        let bytes = BTSnoopFile.file(datalink: 2001, packets)
        let capture = scratch.path("two.btsnoop")
        try Data(bytes).write(to: URL(fileURLWithPath: capture))
        let run = ToolRun(["calibrate", "--from", capture, "--address", "C7:D5:60:AD:5D:5A"])
        #expect(
            run.status == 65 && run.diagnostics.contains("heard by 2 controllers (hci0, hci1)"), "\(run.diagnostics)")
    }
}

/// `calibrate --write`: into a list's power column (byte for byte otherwise), into a ledger, and
/// the next burn carries the value.
struct CalibrateWriteTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"
    static let samples = [Int](repeating: -61, count: 18) + [-40, -90]

    @Test func theListsPowerCellChangesAndNothingElseAndBatchBurnsIt() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let text = "name,uuid,major,minor,power,note\r\nA,\(Self.uuid),1,1,,\"a, b\"\r\nHall B,\(Self.uuid),1,2,,x\r\n"
        let list = try scratch.write("list.csv", text)
        chmod(list, 0o640)
        let link = scratch.path("link.csv")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "list.csv")
        let rssi = try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n"))
        let run = ToolRun(["calibrate", "--rssi", rssi, "--station", "Hall B", "--list", link, "--write"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.output.contains("recorded: \(link):3: 'Hall B', power (empty) → -61 dBm"), "\(run.output)")
        #expect(
            try scratch.text("list.csv")
                == text.replacing("Hall B,\(Self.uuid),1,2,,x", with: "Hall B,\(Self.uuid),1,2,-61,x"))
        var info = stat()
        #expect(lstat(link, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "the link stays a link")
        #expect(stat(list, &info) == 0 && info.st_mode & 0o777 == 0o640, "the mode stays")
        #expect(try Files.list(scratch.path("")).sorted() == ["link.csv", "list.csv", "r.txt"], "nothing left beside")
        let batch = ToolRun(["batch", list, "--board", "hm10", "-o", scratch.path("out")])
        #expect(batch.status == 0, "\(batch.diagnostics)")
        let record =
            try JSONSerialization.jsonObject(with: Data(try scratch.bytes("out/stations.json"))) as? [String: Any]
        let stations = record?["stations"] as? [[String: Any]]
        #expect(stations?.map { $0["power"] as? Int } == [-59, -61])
        #expect(stations?.last?["powerSource"] as? String == "list")
    }

    /// A list batch takes is a list calibrate writes: a last row without its trailing power cell
    /// (as spreadsheets save it) gets the cell.
    @Test func aRowWithoutItsTrailingPowerCellIsWritten() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let text = "name,uuid,major,minor,power\nA,\(Self.uuid),1,1,-59\nHall B,\(Self.uuid),1,3"
        let list = try scratch.write("list.csv", text)
        #expect(ToolRun(["batch", list, "--board", "hm10", "-o", scratch.path("out")]).status == 0)
        let rssi = try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n"))
        let run = ToolRun(["calibrate", "--rssi", rssi, "--station", "Hall B", "--list", list, "--write"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(try scratch.text("list.csv") == text + ",-61")
    }

    @Test func aListWithSeveralNamesOrOneThatIsNotCSVIsLeftAsItIs() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let text = "name,uuid,major,minor\nHall B,\(Self.uuid),1,2\n"
        let list = try scratch.write("list.csv", text)
        #expect(link(list, scratch.path("hard.csv")) == 0)
        let rssi = try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n"))
        let hard = ToolRun(["calibrate", "--rssi", rssi, "--station", "Hall B", "--list", list, "--write"])
        #expect(hard.status == 1 && hard.diagnostics.contains("it has 2 names (hard links)"), "\(hard.diagnostics)")
        #expect(try scratch.text("list.csv") == text)
        let unknown = ToolRun(["calibrate", "--rssi", rssi, "--station", "Hall C", "--list", list, "--write"])
        #expect(unknown.status == 65 && unknown.diagnostics.contains("has no station named 'Hall C'"))
        let json = try scratch.write(
            "l.json", "[{\"name\": \"Hall B\", \"uuid\": \"\(Self.uuid)\", \"major\": 1, \"minor\": 2}]")
        let refused = ToolRun(["calibrate", "--rssi", rssi, "--station", "Hall B", "--list", json, "--write"])
        #expect(refused.status == 65 && refused.diagnostics.contains("is a JSON list"))
        #expect(ToolRun(["calibrate", "--rssi", rssi, "--list", list, "--write"]).status == 64)
        #expect(ToolRun(["calibrate", "--rssi", rssi, "--station", "Hall B", "--write"]).status == 64)
        #expect(try scratch.text("list.csv") == text)
    }

    /// A read-only list is not rewritten; a list that cannot be rewritten is found before the
    /// ledger records anything (no calibration in one and not the other).
    @Test func aListThatCannotBeRewrittenIsFoundBeforeTheLedgerIsWritten() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let rssi = try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n"))
        let text = "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n"
        let readOnly = try scratch.write("ro.csv", text)
        chmod(readOnly, 0o444)
        let refused = ToolRun(["calibrate", "--rssi", rssi, "--station", "a", "--list", readOnly, "--write"])
        #expect(
            refused.status == 1 && refused.diagnostics.contains("it is read-only (mode 444)"), "\(refused.diagnostics)")
        #expect(try scratch.text("ro.csv") == text)
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        let list = try scratch.write("list.csv", text)
        #expect(link(list, scratch.path("other-name.csv")) == 0)
        let both = ToolRun(
            ["calibrate", "--rssi", rssi, "--station", "a", "--list", list, "--ledger", path, "--write"])
        #expect(both.status == 1 && both.diagnostics.contains("nothing was recorded"), "\(both.diagnostics)")
        #expect(try SQLiteLedger(path: path, access: .readOnly).calibrations() == [])
    }

    /// Root calibrating a user's list (scanning needs root) leaves it the user's; a temporary file
    /// a killed run left beside the list is removed. The owner part needs root (as CI runs).
    @Test func aRewrittenListKeepsItsOwnerAndLeftoversOfKilledRunsGo() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let rssi = try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n"))
        let list = try scratch.write("list.csv", "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n")
        let child = try ChildProcess("/bin/true", [], in: scratch.url)
        #expect(child.wait(timeout: 10) == 0)
        let leftover = try scratch.write(
            Files.temporaryName(for: "list.csv", inFolder: scratch.url.path, process: child.processID), "half")
        if getuid() == 0 { #expect(chown(list, 65534, 65534) == 0) }
        let run = ToolRun(["calibrate", "--rssi", rssi, "--station", "a", "--list", list, "--write"])
        #expect(run.status == 0, "\(run.diagnostics)")
        var info = stat()
        #expect(stat(list, &info) == 0)
        if getuid() == 0 { #expect(info.st_uid == 65534 && info.st_gid == 65534, "still the user's") }
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(try scratch.text("list.csv").contains(",-61\n"))
    }

    /// A POSIX ACL as the kernel keeps it in `system.posix_acl_*`: version 2, then (tag,
    /// permissions, id) little-endian — the owner, user 65534 (nobody), the group, the mask, and
    /// no access for others.
    static func acl(owner: UInt16, nobody: UInt16, group: UInt16, mask: UInt16) -> [UInt8] {
        func le(_ value: UInt32, _ bytes: Int) -> [UInt8] {
            (0..<bytes).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
        let entries: [(UInt32, UInt16, UInt32)] = [
            (0x01, owner, UInt32.max), (0x02, nobody, 65534), (0x04, group, UInt32.max), (0x10, mask, UInt32.max),
            (0x20, 0, UInt32.max),
        ]
        return le(2, 4) + entries.flatMap { le($0.0, 2) + le(UInt32($0.1), 2) + le($0.2, 4) }
    }

    /// The list's extended attributes — a POSIX ACL that lets another user read and write it, a
    /// user attribute — are kept; a value the list already has is not written again.
    @Test func aRewrittenListKeepsItsACLAndAttributes() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let rssi = try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n"))
        let list = try scratch.write("list.csv", "name,uuid,major,minor,power\na,\(LedgerFiles.uuid),1,1,\n")
        chmod(list, 0o640)
        let acl = Self.acl(owner: 6, nobody: 6, group: 4, mask: 6)
        let note: [UInt8] = Array("kept".utf8)
        guard setxattr(list, "user.ccbeacon-test", note, note.count, 0) == 0 else { return }  // no xattrs here
        let withACL = setxattr(list, "system.posix_acl_access", acl, acl.count, 0) == 0
        let run = ToolRun(["calibrate", "--rssi", rssi, "--station", "a", "--list", list, "--write"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(try scratch.text("list.csv").hasSuffix(",-61\n"))
        func attribute(_ name: String) -> [UInt8]? {
            var value = [UInt8](repeating: 0, count: 256)
            let length = getxattr(list, name, &value, value.count)
            return length < 0 ? nil : Array(value[..<length])
        }
        #expect(attribute("user.ccbeacon-test") == note)
        if withACL { #expect(attribute("system.posix_acl_access") == acl, "the ACL is kept") }
        let again = ToolRun(["calibrate", "--rssi", rssi, "--station", "a", "--list", list, "--write"])
        #expect(again.output.contains("power already -61 dBm, unchanged"), "\(again.output)")
    }

    /// A folder's default ACL is not passed on to a list that had no ACL of its own (it would
    /// change who may write the list).
    @Test func aFoldersDefaultACLDoesNotReachARewrittenList() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let rssi = try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n"))
        let folder = scratch.path("shared")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let list = folder + "/list.csv"
        _ = FileManager.default.createFile(
            atPath: list, contents: Data("name,uuid,major,minor,power\na,\(LedgerFiles.uuid),1,1,\n".utf8))
        chmod(list, 0o640)
        let acl = Self.acl(owner: 7, nobody: 6, group: 5, mask: 7)
        guard setxattr(folder, "system.posix_acl_default", acl, acl.count, 0) == 0 else { return }  // no ACLs here
        let run = ToolRun(["calibrate", "--rssi", rssi, "--station", "a", "--list", list, "--write"])
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(getxattr(list, "system.posix_acl_access", nil, 0) < 0, "no ACL arrived with the rewrite")
        var info = stat()
        #expect(stat(list, &info) == 0 && info.st_mode & 0o7777 == 0o640)
    }

    /// An append-only list (chattr +a) cannot be replaced: refused before anything is recorded.
    /// Needs root and a file system with inode flags (ext4, as CI has).
    @Test func anAppendOnlyListIsRefusedBeforeTheLedgerIsWritten() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let rssi = try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n"))
        let text = "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n"
        let list = try scratch.write("list.csv", text)
        guard getuid() == 0,
            try ChildProcess.run("/usr/bin/chattr", ["+a", list], in: scratch.url, timeout: 10).status == 0
        else { return }
        defer { _ = try? ChildProcess.run("/usr/bin/chattr", ["-a", list], in: scratch.url, timeout: 10) }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        let run = ToolRun(["calibrate", "--rssi", rssi, "--station", "a", "--list", list, "--ledger", path, "--write"])
        #expect(run.status == 1 && run.diagnostics.contains("immutable or append-only"), "\(run.diagnostics)")
        #expect(try SQLiteLedger(path: path, access: .readOnly).calibrations() == [])
        #expect(try scratch.text("list.csv") == text)
    }

    /// `calibrate --write` of `station` into `list`, run as nobody (uid 65534).
    static func calibrateAsNobody(rssi: String, station: String, list: String, in scratch: Scratch) throws
        -> ProcessResult
    {
        try ChildProcess.run(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", BuiltTools.ccbeacon, "calibrate", "--rssi", rssi,
                "--station", station, "--list", list, "--write",
            ],
            in: scratch.url, timeout: 60)
    }

    /// Another user's list, writable by all, is not taken over by a user who is not root (the new
    /// file would be theirs): refused with why, the list untouched. Runs the built tool as
    /// `nobody` through setpriv, so it needs root (as CI has).
    @Test func anotherUsersListIsNotTakenOver() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return }
        chmod(scratch.path(""), 0o777)
        let rssi = try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n"))
        let text = "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n"
        let list = try scratch.write("list.csv", text)
        chmod(list, 0o666)
        let run = try Self.calibrateAsNobody(rssi: rssi, station: "a", list: list, in: scratch)
        #expect(run.status == 1 && run.errors.contains("it belongs to another user (uid 0)"), "\(run.errors)")
        #expect(try scratch.text("list.csv") == text)
        #expect(try Files.list(scratch.path("")).sorted() == ["list.csv", "r.txt"])
    }

    /// A list in a folder its user may write but not read (mode -wx) is refused before anything is
    /// written, naming the folder: the rewrite syncs the folder, which it cannot open (the list
    /// was renamed into place, then "cannot write" was said of a list that had changed).
    @Test func aListInAFolderItsUserMayNotReadIsRefusedNamingTheFolder() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return }
        chmod(scratch.path(""), 0o777)
        let rssi = try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n"))
        try FileManager.default.createDirectory(atPath: scratch.path("wx"), withIntermediateDirectories: false)
        let text = "name,uuid,major,minor\na,\(LedgerFiles.uuid),1,1\n"
        let list = try scratch.write("wx/list.csv", text)
        #expect(chown(scratch.path("wx"), 65534, 65534) == 0 && chown(list, 65534, 65534) == 0)
        chmod(scratch.path("wx"), 0o300)
        let run = try Self.calibrateAsNobody(rssi: rssi, station: "a", list: list, in: scratch)
        chmod(scratch.path("wx"), 0o700)
        #expect(run.status == 1, "\(run.errors)")
        #expect(
            run.errors.contains(
                "its folder '\(scratch.path("wx"))' cannot be opened (Permission denied); a file is rewritten only in a folder this user may read and write; nothing was recorded"
            ), "\(run.errors)")
        #expect(try scratch.text("wx/list.csv") == text)
        #expect(try Files.list(scratch.path("wx")) == ["list.csv"])
    }

    /// Two runs calibrating stations of one list at once: each takes the list's rewrite lock before
    /// reading it, so the second waits and edits what the first wrote. (They used to read it
    /// together; the second rename then wrote over the first run's calibration, both saying
    /// "recorded".) The test is the first run here: it holds the lock from before its read to its
    /// commit, with the command started in between. `savedMeanwhile`: another program puts a new
    /// file in the list's place (an editor saving by rename, with the same bytes) while the first
    /// run holds it — with the lock on the list's own file, the second run locked the new file at
    /// once and the later rename undid the earlier run's calibration.
    @Test(arguments: [false, true])
    func twoRunsOnOneListTakeTurnsAndLoseNoCalibration(savedMeanwhile: Bool) throws {
        try #require(BuiltTools.ccbeaconAvailable)
        let scratch = try Scratch()
        defer { scratch.remove() }
        let text = "name,uuid,major,minor,power\nA,\(Self.uuid),1,1,\nB,\(Self.uuid),1,2,\n"
        let list = try scratch.write("list.csv", text)
        let rssi = try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n"))
        let lock = try Files.lockForRewrite(list)
        let read = try scratch.bytes("list.csv")
        if savedMeanwhile {
            _ = try scratch.write("saved.csv", text)
            #expect(rename(scratch.path("saved.csv"), list) == 0)
        }
        let second = try ChildProcess(
            BuiltTools.ccbeacon, ["calibrate", "--rssi", rssi, "--station", "B", "--list", list, "--write"],
            in: scratch.url)
        #expect(second.waitUntil("waiting for another ccbeacon that is rewriting \(list)"), "\(second.errors)")
        let mine = Array(text.replacing("A,\(Self.uuid),1,1,", with: "A,\(Self.uuid),1,1,-70").utf8)
        #expect(throws: Never.self) { try Files.prepareRewrite(list, from: read, to: mine, holding: lock).commit() }
        #expect(second.wait(timeout: 60) == 0, "\(second.errors)")
        #expect(second.output.contains("recorded: \(list):3: 'B', power (empty) → -61 dBm"), "\(second.output)")
        #expect(
            try scratch.text("list.csv")
                == "name,uuid,major,minor,power\nA,\(Self.uuid),1,1,-70\nB,\(Self.uuid),1,2,-61\n")
        #expect(try Files.list(scratch.path("")).sorted() == ["list.csv", "r.txt"], "nothing left beside")
    }

    /// The file changed between its reading and the new one taking its place: refused, kept.
    @Test func aFileChangedMeanwhileIsNotOverwritten() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = try scratch.write("list.csv", "new content\n")
        #expect(throws: FileError.self) {
            try Files.rewrite(path, from: Array("old content\n".utf8), to: Array("edited\n".utf8))
        }
        #expect(try scratch.text("list.csv") == "new content\n")
        #expect(try Files.list(scratch.path("")) == ["list.csv"])
    }

    /// Into a ledger: a calibration row; the station's address for --from comes from the ledger.
    @Test func aLedgerGetsACalibrationRowFoundByTheStationsBurnedAddress() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let path = scratch.path("ledger.sqlite")
        try LedgerFiles.sound(path)
        var packets: [(flags: UInt32, bytes: [UInt8])] = []
        for rssi in Self.samples {
            let report = BTSnoopFile.legacyReport(
                address: [0xC0, 0xFF, 0xEE, 0, 0, 1], data: IBeaconFixture.identity(1).advertisingData(),
                rssi: Int8(rssi))
            packets.append((3, BTSnoopFile.uartEvent(report)))
            // Another device at the same six bytes, sending something else: not the station.
            let other = BTSnoopFile.legacyReport(
                address: [0xC0, 0xFF, 0xEE, 0, 0, 1], data: [0x02, 0x01, 0x06], rssi: -90)
            packets.append((3, BTSnoopFile.uartEvent(other)))
        }
        let capture = scratch.path("c.btsnoop")
        try Data(BTSnoopFile.file(packets)).write(to: URL(fileURLWithPath: capture))
        let run = ToolRun(["calibrate", "--from", capture, "--station", "a", "--ledger", path, "--write", "--json"])
        #expect(run.status == 0, "\(run.diagnostics)")
        let object = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
        #expect(object?["station"] as? String == "a" && object?["measuredPower"] as? Int == -61)
        #expect(object?["mean"] as? Double == -61)
        let ledger = try SQLiteLedger(path: path, access: .readOnly)
        #expect(try ledger.calibrations().map(\.power) == [-61])
        #expect(try ledger.calibrations().first?.source == "\(capture), C0:FF:EE:00:00:01")
        #expect(try ledger.states().first?.station.identity.measuredPower == -61)
        let export = ToolRun(["ledger", "export", "--ledger", path, "--format", "json"])
        let rows = try JSONSerialization.jsonObject(with: Data(export.output.utf8)) as? [[String: Any]]
        #expect(rows?.first?["power"] as? Int == -59, "the chip still carries what it was burned with")
        // A station with no burned address to find: told, nothing recorded.
        let pending = ToolRun(["calibrate", "--from", capture, "--station", "b", "--ledger", path, "--write"])
        #expect(pending.status == 64 && pending.diagnostics.contains("no advertiser address of 'b'"))
        let nowhere = ToolRun(
            [
                "calibrate", "--rssi",
                try scratch.write("r.txt", Self.samples.map(String.init).joined(separator: "\n")),
                "--station", "zz", "--ledger", path, "--write",
            ])
        #expect(nowhere.status == 1 && nowhere.diagnostics.contains("the ledger has no station of that name"))
        #expect(try ledger.calibrations().count == 1)
        let missing = ToolRun(
            ["calibrate", "--from", capture, "--station", "a", "--ledger", scratch.path("no.sqlite"), "--write"])
        #expect(missing.status != 0 && !Files.exists(scratch.path("no.sqlite")))
    }
}
