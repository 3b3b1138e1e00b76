import CCDebuggerEmulator
import Foundation
import StationLedger
import Storage
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// A usage error changes nothing: every command, with an invalid value of each option that
/// takes one, exits 64 (or 65) and leaves its folder — inputs, outputs, ledgers and their lock
/// files — and the chips on its debuggers as they were.
struct UsageErrorTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// A command line that would do its work (write, burn, lock) in `folder` (`%` stands for it).
    static let commandLines: [[String]] = [
        ["encode", "--uuid", uuid, "--major", "1", "--minor", "1"],
        ["generate", "--board", "hm10", "--uuid", uuid, "--major", "1", "--minor", "1", "-o", "%/out.hex"],
        ["batch", "%/list.csv", "--board", "hm10", "-o", "%/out"],
        ["inspect", "%/image.hex"],
        ["verify", "%/image.hex", "--uuid", uuid, "--major", "1", "--minor", "1"],
        ["scan", "--from", "%/empty.btsnoop", "--uuid", uuid],
        ["calibrate", "--rssi", "%/rssi.txt", "--station", "A", "--list", "%/list.csv", "--write"],
        ["convert", "%/image.hex", "-o", "%/out.bin"],
        ["patch", "%/image.hex", "--at", "0x7F00", "--bytes", "01", "-o", "%/patched.hex"],
        ["template", "import", "%/image.hex", "--name", "mine", "-o", "%/templates"],
        ["templates"], ["boards"], ["devices"], ["info"],
        ["flash", "%/image.hex", "--yes"], ["read", "-o", "%/read.hex"], ["erase", "--yes"],
        ["provision", "%/list.csv", "--board", "hm10", "--yes", "--wait", "0.1"],
        ["ledger", "show", "--ledger", "%/ledger.sqlite"],
        ["ledger", "export", "--ledger", "%/ledger.sqlite", "-o", "%/registry.csv"],
        ["ledger", "check", "--ledger", "%/ledger.sqlite"],
        ["ledger", "migrate", "--from", "%/ledger.sqlite", "--to", "%/copy.sqlite"],
        ["labels", "%/list.csv", "--board", "hm10", "-o", "%/labels.svg"],
        ["plan", "%/places.csv", "--uuid", uuid, "--major", "1", "--ledger", "%/ledger.sqlite", "-o", "%/plan.csv"],
        ["check-app", "%/regions.json", "%/list.csv"],
        ["completions", "bash"], ["man-pages", "-o", "%/man"],
        ["doctor", "--ledger", "%/ledger.sqlite"],
    ]

    /// Values some option converters refuse; the first one an option's own check refuses is its
    /// invalid value (an option that takes any text, a path or a name, has none).
    static let probes = ["", "x", "\u{1}", "0", "99999999999999999999", "1,2,3", "hci", "-1"]

    /// The command a line runs.
    static func command(of line: [String]) -> Command? {
        CommandLineTool.registry.filter { line.starts(with: $0.spec.name.split(separator: " ").map(String.init)) }
            .max { $0.spec.name.count < $1.spec.name.count }
    }

    /// The invalid value of `option`: the first probe its own check refuses, if any.
    static func invalidValue(_ option: OptionSpec) -> String? {
        guard let check = option.check else { return nil }
        return probes.first { probe in (try? check(probe)) == nil }
    }

    /// Every command of the registry has a line in the table, and the table is not idle: dozens
    /// of options have a value their own check refuses.
    @Test func everyCommandIsTriedAndManyOptions() {
        let tried = Set(Self.commandLines.compactMap { Self.command(of: $0)?.spec.name })
        let registered = Set(CommandLineTool.registry.map(\.spec.name))
        #expect(registered.subtracting(tried).isEmpty, "untried: \(registered.subtracting(tried).sorted())")
        let options = CommandLineTool.registry.flatMap { $0.spec.table.options }.filter {
            Self.invalidValue($0) != nil
        }
        #expect(options.count >= 40, "\(options.count) options with an invalid value")
    }

    /// Combinations a command refuses, and outputs it may not write, change nothing either:
    /// provision prepares a ledger, so each is tried there.
    @Test(arguments: [
        ["--address-mode", "secondary", "--chip-id", "secondary"], ["--events", "-", "--json"],
        ["--scan-seconds", "3"], ["--retry-unheard"], ["--events", "%"], ["--ledger", "%"],
        ["--on-failed", "true", "--hook-timeout", "0"],
    ])
    func aRefusedCombinationChangesNothing(_ extra: [String]) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = scratch.url.path
        let list = try scratch.write("list.csv", "name,uuid,major,minor\nA,\(Self.uuid),1,1\n")
        let before = try Self.snapshot(folder)
        let run = ToolRun(
            ["provision", list, "--board", "hm10", "--yes", "--wait", "0.1"]
                + extra.map { $0.replacingOccurrences(of: "%", with: folder) }, debuggers: EmulatorProvider())
        #expect([64, 65].contains(run.status), "\(extra): exit \(run.status): \(run.diagnostics)")
        #expect(try Self.snapshot(folder) == before, "\(extra) changed the folder")
    }

    /// The folder's files and their bytes.
    static func snapshot(_ folder: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let name = enumerator?.nextObject() as? String {
            let path = folder + "/" + name
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            files[name] = !exists || isFolder.boolValue ? Data() : try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return files
    }

    @Test(arguments: commandLines.indices)
    func anInvalidValueChangesNothing(line index: Int) throws {
        let line = Self.commandLines[index]
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = scratch.url.path
        _ = try scratch.write("list.csv", "name,uuid,major,minor\nA,\(Self.uuid),1,1\nB,\(Self.uuid),1,2\n")
        _ = try scratch.write("rssi.txt", [String](repeating: "-60", count: 20).joined(separator: "\n"))
        _ = try scratch.write("places.csv", "name,floor\nLobby,1\n")
        _ = try scratch.write("regions.json", #"[{"identifier": "site", "uuid": "\#(Self.uuid)", "major": 1}]"#)
        try Data(BTSnoopFile.file([])).write(to: URL(fileURLWithPath: scratch.path("empty.btsnoop")))
        let generated = ToolRun([
            "generate", "--board", "hm10", "--uuid", Self.uuid, "--major", "1", "--minor", "1", "-o",
            scratch.path("image.hex"),
        ])
        try #require(generated.status == 0, "\(generated.diagnostics)")
        do {
            let ledger = try SQLiteLedger(path: scratch.path("ledger.sqlite"))
            try ledger.register([Station(name: "A", identity: IBeaconFixture.identity(1))])
        }
        let spec = try #require(Self.command(of: line))
        let arguments = line.map { $0.replacingOccurrences(of: "%", with: folder) }
        for option in spec.spec.table.options {
            guard let probe = Self.invalidValue(option) else { continue }
            // The option's value replaced, or the option added.
            var given = arguments
            if let at = given.firstIndex(where: { $0 == option.name || $0 == option.short }), at + 1 < given.count {
                given[at + 1] = probe
            } else {
                given += [option.name, probe]
            }
            let before = try Self.snapshot(folder)
            let provider = EmulatorProvider()
            provider.debuggers[0].chip = EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0x00, 0x42])
            let flash = provider.debuggers[0].chip?.flash
            let run = ToolRun(given, debuggers: provider)
            #expect([64, 65].contains(run.status), "\(given): exit \(run.status): \(run.diagnostics)")
            #expect(try Self.snapshot(folder) == before, "\(given) changed the folder")
            #expect(provider.debuggers[0].chip?.flash == flash, "\(given) changed the chip")
        }
    }
}
