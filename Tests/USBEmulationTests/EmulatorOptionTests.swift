import Foundation
import Storage
import TestSupport
import Testing

@Suite(.enabled(if: Tools.available, "needs umockdev and the built executables"))
struct EmulatorOptionTests {
    /// Options that cannot be served are refused with a message (exit 64), never a crash.
    @Test(arguments: [
        ["--fault", ""], ["--fault", "="], ["--bench", "--swap-seconds", "1e300"],
        ["--bench", "--swap-seconds", "nan"],
        ["--timing", "bogus"], ["--save-chips", "/nonexistent/chips"], ["--model", "smartrf06eb"],
        ["--firmware-revision", "0xZZ"], ["--firmware-id", "123456"], ["--debug-clock-khz", "150"],
        ["--timing", "hardware", "--debug-clock-khz", "0"], ["--product", String(repeating: "x", count: 127)],
    ])
    func anOptionThatCannotBeServedIsRefused(options: [String]) throws {
        let work = try Workspace()
        defer { work.remove() }
        let run = try Tools.run(options, ["/bin/true"], in: work.url)
        #expect(run.status == 64 && run.errors.hasPrefix("cc-debugger-emulator: "), "\(options): \(run.errors)")
    }

    /// A `--save-chips` folder that is not there is said to be missing, not unwritable.
    @Test func aMissingSaveChipsFolderIsSaidToBeMissing() throws {
        let work = try Workspace()
        defer { work.remove() }
        let missing = try Tools.run(["--save-chips", "/nonexistent/chips"], ["/bin/true"], in: work.url)
        #expect(missing.status == 64)
        #expect(
            missing.errors.contains("--save-chips /nonexistent/chips does not exist; create the folder first"),
            "\(missing.errors)")
        let file = work.url.appendingPathComponent("a-file").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data()))
        let notFolder = try Tools.run(["--save-chips", file], ["/bin/true"], in: work.url)
        #expect(notFolder.status == 64 && notFolder.errors.contains("is not a folder this user may write"))
    }

    /// `--save-chips` replaces a name planted in its folder (a symbolic link) instead of writing
    /// through it.
    @Test func savedChipsNeverWriteThroughALink() throws {
        let work = try Workspace()
        defer { work.remove() }
        let chips = work.path("chips")
        try FileManager.default.createDirectory(atPath: chips, withIntermediateDirectories: true)
        let victim = try work.write("victim.txt", "precious")
        try FileManager.default.createSymbolicLink(
            atPath: chips + "/00-12-4B-01-00-00.bin", withDestinationPath: victim)
        let run = try Tools.run(
            [
                "--ieee", "00:12:4B:01:00:00", "--save-chips", chips, "--flash",
                "firmware-templates/cc2541-ibeacon/image.hex",
            ],
            ["/bin/true"], in: SharedFixtures.checkout)
        #expect(run.status == 0, "\(run.errors)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        let saved = try FileManager.default.attributesOfItem(atPath: chips + "/00-12-4B-01-00-00.bin")
        #expect(saved[.type] as? FileAttributeType == .typeRegular)
        // A chip half-saved by an emulator killed meanwhile (its temporary file, of a process that
        // is gone) is removed by the next emulator saving there: the folder holds whole chips only.
        let name = Files.temporaryName(for: "00-12-4B-02-00-00.bin", inFolder: chips, process: 999_999_999)
        let leftover = chips + "/" + name
        _ = try work.write(name, "half")
        try FileManager.default.moveItem(atPath: work.path(name), toPath: leftover)
        #expect(try Tools.run(["--save-chips", chips], ["/bin/true"], in: work.url).status == 0)
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(FileManager.default.fileExists(atPath: chips + "/00-12-4B-01-00-00.bin"))
    }
}

@Suite(.enabled(if: Tools.available, "needs umockdev and the built executables"))
struct PortPathTests {
    /// Through real libusb, each debugger's port path (from its sysfs name, as libusb reads it) is
    /// listed and selects it.
    @Test func debuggersAreListedAndChosenByPort() throws {
        let work = try Workspace()
        defer { work.remove() }
        let listed = try Tools.ccbeacon(["devices", "--json"], options: ["--devices", "2"], in: work.url)
        let devices = try #require(try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: Any]])
        #expect(devices.map { $0["port"] as? String } == ["1-1", "1-2"], "\(listed.output)")
        let chosen = try Tools.ccbeacon(["info", "--device", "port:1-2"], options: ["--devices", "2"], in: work.url)
        #expect(chosen.status == 0 && chosen.output.contains("debugger \(devices[1]["device"] as? String ?? "?"):"))
    }
}
