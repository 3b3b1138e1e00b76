import BeaconPayload
import BeaconScan
import CCDebuggerEmulator
import Foundation
import HexText
import Provisioning
import StationLedger
import Storage
import Synchronization
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// Every `$ ccbeacon …` example of the README's console blocks and of the man pages (each
/// command's EXAMPLES and reference sections, and `ccbeacon(1)`'s) runs as shown: each in a fresh
/// folder holding what it needs (the fixtures in `Fixtures/readme`, and earlier steps such as a
/// batch or a provisioning run), with emulated debuggers and a scripted controller where it talks
/// to hardware. Its exit status must be the one the example implies and every output line shown
/// under it must appear, in order (`…` stands for any text). File arguments are given as paths in
/// that folder and the folder is taken out of the output again, as if the command ran there.
/// An example without a scene here, or a scene whose command left the README and the manual,
/// fails the test. A line `$ cc-debugger-emulator OPTIONS -- ccbeacon …` runs its ccbeacon
/// command on the scene's emulated debuggers.
struct ReadmeExampleTests {
    /// One example: where it is shown, the command line and the lines shown under it.
    struct Example: Sendable, CustomTestStringConvertible {
        let source: String
        let command: String
        let shown: [String]
        var testDescription: String { "\(source): \(command)" }
    }

    /// What an example needs and expects.
    struct Scene: Sendable {
        var status: Int32 = 0
        /// Needs the shared corpus (skipped without it).
        var corpus: [String: String] = [:]
        var setup: @Sendable (Bench) throws -> Void = { _ in }
        /// Talks to debuggers (emulated, one per count) or a controller.
        var debuggers = 0
        var radio = false
        /// Uses a PostgreSQL ledger: the README's URL stands for a fresh database on the test
        /// server (skipped without it).
        var server = false
    }

    static let readme: String = {
        (try? String(contentsOf: SharedFixtures.checkout.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
    }()

    /// The texts that hold examples: the README, then each man page's Markdown.
    static let sources: [(name: String, text: String)] = {
        var result = [(name: "README.md", text: readme)]
        result.append(
            (
                name: "ccbeacon(1)",
                text: ([CommandLineTool.overviewExamples] + CommandLineTool.overviewSections.map(\.text)).joined(
                    separator: "\n\n")
            ))
        for spec in CommandLineTool.commands {
            result.append(
                (
                    name: CommandLineTool.manual.pageName(spec.name) + "(1)",
                    text: spec.manual.texts.joined(separator: "\n\n")
                ))
        }
        return result
    }()

    /// The console examples of ccbeacon itself (`sudo` dropped; btmon and scripts are not ours).
    static let examples: [Example] = sources.flatMap { examples(in: $0.text, source: $0.name) }

    /// The examples of one text's ` ```console ` blocks.
    static func examples(in text: String, source: String) -> [Example] {
        ConsoleExample.all(in: text, running: ["ccbeacon ", "cc-debugger-emulator "]).map {
            Example(source: source, command: $0.command, shown: $0.shown)
        }
    }

    /// Every man page shows at least one example the tests run.
    @Test func everyManPageHasAnExample() {
        for spec in CommandLineTool.commands {
            let shown = Self.examples(in: spec.manual.examples, source: spec.name)
            #expect(!shown.isEmpty, "\(CommandLineTool.manual.pageName(spec.name))(1) has no example")
            #expect(CommandLineTool.manual.page(spec).contains(".SH EXAMPLES"))
        }
        #expect(!Self.examples(in: CommandLineTool.overviewExamples, source: "ccbeacon(1)").isEmpty)
        #expect(CommandLineTool.manual.overviewPage().contains(".SH EXAMPLES"), "ccbeacon(1) too")
    }

    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"
    static let corpus01 = "01_ghostyu-SimpleBLEPeripheral-ibeacon-CC2541-IAR.hex"

    /// The scenes, by command line as the README writes it.
    static let scenes: [String: Scene] = [
        "ccbeacon generate --template cc2541-ibeacon --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 2 --interval 250 --tx-power -6 -o hall-a.hex":
            Scene(),
        "ccbeacon scan --from scan.btsnoop --stations out/stations.json": Scene(status: 1) { bench in
            try bench.batch()
            try bench.writeCapture("scan.btsnoop", fromRecord: "out/stations.json", heard: ["Entrance"])
        },
        "ccbeacon scan --hci hci0 --seconds 10 --ledger provisioning.sqlite": Scene(
            setup: { bench in try bench.provision() }, radio: true),
        "ccbeacon calibrate --rssi hall-a-1m.csv": Scene(),
        "ccbeacon calibrate --from bench.btsnoop --address C7:D5:60:AD:5D:5A": Scene { bench in
            try bench.writeBenchCapture()
        },
        "ccbeacon calibrate --rssi hall-a-1m.csv --station \"Hall A\" --list stations.csv --write": Scene(),
        "ccbeacon calibrate --from bench.btsnoop --station \"Hall A\" --ledger provisioning.sqlite --write": Scene {
            bench in
            try bench.provision()
            try bench.writeBenchCapture()
        },
        "ccbeacon batch stations.csv --board hm10 -o out/ --jobs 4 --interval 1000 --tx-power -8": Scene(),
        "ccbeacon verify out/Hall_A.hex --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 3 --template cc2541-ibeacon":
            Scene(status: 1) { bench in try bench.batch() },
        "ccbeacon inspect 01_ghostyu-SimpleBLEPeripheral-ibeacon-CC2541-IAR.hex": Scene(corpus: [corpus01: corpus01]),
        "ccbeacon provision stations.csv --board hm10 --devices all --yes": Scene(debuggers: 2),
        "cc-debugger-emulator --devices 2 --bench --chips 8 -- ccbeacon provision stations.csv --board hm10 --devices all --yes":
            Scene(debuggers: 2),
        "ccbeacon ledger show --ledger provisioning.sqlite": Scene { bench in try bench.provision() },
        "ccbeacon ledger export --ledger provisioning.sqlite --format csv > registry.csv": Scene { bench in
            try bench.provision()
        },
        "ccbeacon ledger check --ledger provisioning.sqlite": Scene { bench in try bench.provision() },
        "ccbeacon plan places.csv --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 2 -o floor2.csv": Scene(),
        "ccbeacon plan places.csv --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 2 -o floor2.csv --battery cr2450 --board hm10 --interval 500":
            Scene(),
        "ccbeacon generate --template cc2541-ibeacon --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 2 --interval 1000 -o hall-a.hex --battery cr2032":
            Scene(),
        "ccbeacon inspect out/Hall_A.hex --battery cr2032": Scene { bench in try bench.batch() },
        "ccbeacon check-app regions.json --ledger provisioning.sqlite": Scene(status: 1) { bench in
            try bench.provision()
        },
        "ccbeacon provision stations.csv --board hm10 --devices all --yes --events events.jsonl": Scene(debuggers: 2),
        "ccbeacon provision stations.csv --board hm10 --devices all --yes --lock-debug --on-verified \"./print-label.sh\"":
            Scene(
                setup: { bench in
                    try bench.writeScript(
                        "print-label.sh",
                        "#!/bin/sh\necho \"$CCBEACON_STATION $CCBEACON_ADDRESS $CCBEACON_EVENT_ID\" >> printed.txt\n")
                }, debuggers: 2),
        "ccbeacon provision stations.csv --board hm10 --devices all --yes --ledger postgresql://bench@db.example/beacons --bench hall-2":
            Scene(debuggers: 2, server: true),
        "ccbeacon ledger show --ledger postgresql://bench@db.example/beacons": Scene(
            setup: { bench in try bench.provisionOnServer() }, debuggers: 2, server: true),
        "ccbeacon ledger check --ledger postgresql://bench@db.example/beacons": Scene(
            setup: { bench in try bench.provisionOnServer() }, debuggers: 2, server: true),
        "ccbeacon ledger migrate --from provisioning.sqlite --to postgresql://bench@db.example/beacons": Scene(
            setup: { bench in try bench.provision() }, server: true),
        "ccbeacon labels stations.csv --board hm10 -o labels.svg": Scene(),
        "ccbeacon labels --ledger provisioning.sqlite --sheet single --label-size 62x29 -o printer.svg": Scene {
            bench in try bench.provision()
        },
        "ccbeacon devices": Scene(debuggers: 1),
        "ccbeacon flash out/Hall_A.hex": Scene(setup: { bench in try bench.batch() }, debuggers: 1),
        "ccbeacon info": Scene(debuggers: 1),
        "ccbeacon info --json": Scene(debuggers: 1),
        "ccbeacon erase": Scene(debuggers: 1),
        "ccbeacon help ledger": Scene(),
        "ccbeacon read -o dump.hex": Scene(debuggers: 1),
        "ccbeacon template import SimpleBLEPeripheral_ibeacon.hex --name lab13 -o my-templates/lab13": Scene(
            corpus: [corpus01: "SimpleBLEPeripheral_ibeacon.hex"]),
        "ccbeacon templates --templates my-templates": Scene(corpus: [corpus01: "SimpleBLEPeripheral_ibeacon.hex"]) {
            bench in
            #expect(
                bench.run(
                    "ccbeacon template import SimpleBLEPeripheral_ibeacon.hex --name lab13 -o my-templates/lab13"
                ).status == 0)
        },
        "ccbeacon boards": Scene(),
        "ccbeacon completions bash > ccbeacon.bash": Scene(),
        "ccbeacon doctor --ledger provisioning.sqlite": Scene(setup: { bench in try bench.provision() }, debuggers: 2),
        "ccbeacon doctor --burn-test --yes --report first-burn": Scene(debuggers: 1),
        "ccbeacon flash out/Hall_A.hex --trace flash.pcap": Scene(setup: { bench in try bench.batch() }, debuggers: 1),
        "ccbeacon man-pages -o man": Scene(),
        "ccbeacon encode --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 2 --power -51": Scene(),
        "ccbeacon encode --type altbeacon --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 2 --power -51":
            Scene(),
        "ccbeacon encode --type eddystone-uid --namespace 7634A485D505D8A24C60 --instance 000000010002 --power -10":
            Scene(),
        "ccbeacon encode --type eddystone-url --url https://ti.com --power 0": Scene(),
        "ccbeacon encode --uuid E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 --major 1 --minor 2 --format air --address C0:FF:EE:12:34:56 --channel 37":
            Scene(),
        "ccbeacon convert firmware.hex -o firmware.bin --range 0:0x40000": Scene(corpus: [corpus01: "firmware.hex"]),
        "ccbeacon patch template.hex --at 0x333 --bytes 7634A48517324B7DAB44D505D8A24C6000030004C5 -o station.hex":
            Scene(corpus: [corpus01: "template.hex"]),
    ]

    @Test func everyExampleHasAScene() {
        #expect(Self.examples.contains { $0.source == "README.md" }, "the README is read")
        for example in Self.examples {
            #expect(Self.scenes[example.command] != nil, "no scene for: \(example.command)")
        }
        for command in Self.scenes.keys {
            #expect(
                Self.examples.contains { $0.command == command }, "not in the README or the manual any more: \(command)"
            )
        }
    }

    @Test(arguments: examples)
    func runsAsShown(_ example: Example) throws {
        guard let scene = Self.scenes[example.command] else { return }
        if !scene.corpus.isEmpty, !SharedFixtures.available { return }  // needs ../shared/corpus
        if scene.server, !PostgresTestServer.available { return }  // needs the test server
        let bench = try Bench(
            debuggers: scene.debuggers, radio: scene.radio,
            server: scene.server ? try PostgresTestServer.freshDatabase() : nil)
        defer { bench.scratch.remove() }
        for (name, copy) in scene.corpus {
            let source = try #require(SharedFixtures.directory?.appendingPathComponent("corpus/\(name)"))
            try FileManager.default.copyItem(at: source, to: bench.scratch.url.appendingPathComponent(copy))
        }
        try scene.setup(bench)
        let run = bench.run(example.command)
        #expect(run.status == scene.status, "\(run.text)")
        if let missing = ConsoleExample(command: example.command, shown: example.shown).firstMissing(in: run.text) {
            Issue.record("not in the output: \(missing)\n--- output:\n\(run.text)")
        }
    }
}

/// A folder where README examples run: the fixtures, emulated debuggers (chips swapped after each
/// reset to run, as a bench does) and a scripted controller that hears the ledger's stations.
final class Bench: Sendable {
    let scratch: Scratch
    let provider: EmulatorProvider
    let radios: FakeHCIProvider?

    /// The database the README's URL stands for.
    let server: String?
    /// The URL the README's shared-ledger examples give.
    static let readmeURL = "postgresql://bench@db.example/beacons"

    init(debuggers: Int, radio: Bool, server: String? = nil) throws {
        self.server = server
        scratch = try Scratch()
        for name in ["stations.csv", "hall-a-1m.csv", "regions.json", "places.csv"] {
            let source = SharedFixtures.checkout.appendingPathComponent(
                "Tests/CCBeaconCLITests/Fixtures/readme/\(name)")
            try FileManager.default.copyItem(at: source, to: scratch.url.appendingPathComponent(name))
        }
        provider = EmulatorProvider(count: debuggers == 0 ? 2 : debuggers)
        for (index, debugger) in provider.debuggers.enumerated() {
            debugger.chip = EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0x25, 0x41 + UInt8(index)])
            let next = Atomic<UInt8>(0)
            debugger.onResetToRun = { debugger in
                let number = next.add(1, ordering: .relaxed).newValue
                debugger.chip = EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x01 + UInt8(index), 0x00, number])
            }
        }
        radios = radio ? Bench.radio(ledger: scratch.path("provisioning.sqlite")) : nil
        self.debuggerCount = debuggers
    }
    let debuggerCount: Int

    /// A controller that hears, every 100 ms, each station the ledger records as verified (its
    /// burned address and bytes), at an RSSI that wanders over -66…-60 dBm.
    static func radio(ledger path: String) -> FakeHCIProvider {
        let advertisers = Mutex<[FakeHCIController.Advertiser]?>(nil)
        return FakeHCIProvider([
            "hci0": FakeHCIController { time in
                let heard = advertisers.withLock { cached in
                    if cached == nil, let ledger = try? SQLiteLedger(path: path, access: .readOnly),
                        let states = try? ledger.states(), let attempts = try? ledger.attempts()
                    {
                        cached = states.compactMap { state -> FakeHCIController.Advertiser? in
                            guard
                                let attempt = attempts.last(where: {
                                    $0.station == state.station.name && $0.outcome == .verified
                                }), let address = attempt.advertiserAddress.flatMap(RandomStaticAddress.bytes(parsing:))
                            else { return nil }
                            return .init(address: address, data: state.station.identity.advertisingData())
                        }
                    }
                    return cached ?? []
                }
                let round = Int(time / .milliseconds(100))
                return heard.enumerated().map { index, advertiser in
                    var wandering = advertiser
                    wandering.rssi = Int8(-66 + (round + index) % 7)
                    return wandering
                }
            }
        ])
    }

    /// Runs a README command line here.
    func run(_ line: String) -> (status: Int32, text: String) {
        var words = Bench.words(line)
        if words.first == "cc-debugger-emulator", let end = words.firstIndex(of: "--") {
            // The emulated debuggers are the scene's.
            words.removeSubrange(...end)
        }
        var redirect: String?
        if let index = words.firstIndex(of: ">"), index + 1 < words.count {
            redirect = words[index + 1]
            words.removeSubrange(index...)
        }
        let arguments = paths(Array(words.dropFirst()))
        let redirected = redirect != nil
        // One stream in the order written, as a terminal shows standard output and errors.
        let shown = Mutex("")
        let output = Mutex("")
        let status = CommandLineTool.run(
            arguments,
            console: Console(
                output: { text in
                    output.withLock { $0 += text }
                    if !redirected { shown.withLock { $0 += text } }
                },
                diagnostics: { text in shown.withLock { $0 += text } }),
            debuggers: debuggerCount > 0 ? provider : nil, radios: radios)
        if let redirect {
            _ = FileManager.default.createFile(
                atPath: scratch.path(redirect), contents: Data(output.withLock { $0 }.utf8))
        }
        let folder = scratch.url.path + "/"
        return (status, shown.withLock { $0 }.replacing(folder, with: ""))
    }

    /// Shell words: spaces split, double quotes group.
    static func words(_ line: String) -> [String] {
        var words: [String] = []
        var word = ""
        var quoted = false
        var started = false
        for character in line {
            if character == "\"" {
                quoted.toggle()
                started = true
            } else if character == " ", !quoted {
                if started { words.append(word) }
                word = ""
                started = false
            } else {
                word.append(character)
                started = true
            }
        }
        if started { words.append(word) }
        return words
    }

    /// File arguments made paths in this folder: positionals and the values of file options.
    func paths(_ arguments: [String]) -> [String] {
        // `help` names commands, not files.
        if arguments.first == "help" { return arguments }
        let fileOptions: Set<String> = [
            "-o", "--stations", "--ledger", "--list", "--rssi", "--from", "--templates", "--events", "--trace",
            "--report",
        ]
        let command =
            arguments.first == "ledger" || arguments.first == "template"
            ? arguments.prefix(2).joined(separator: " ") : arguments.first ?? ""
        let spec = CommandLineTool.commands.first { $0.name == command }
        let skip = command.split(separator: " ").count
        var result = Array(arguments.prefix(skip))
        var index = skip
        while index < arguments.count {
            let word = arguments[index]
            if word.hasPrefix("-") {
                result.append(word)
                let takesValue = spec?.options.first { $0.name == word || $0.short == word }?.valueName != nil
                if takesValue, index + 1 < arguments.count {
                    let value = arguments[index + 1]
                    if value == Bench.readmeURL, let server {
                        result.append(server)
                    } else if word == "--on-verified" || word == "--on-failed" {
                        // A hook runs in ccbeacon's folder: here, this one.
                        result.append("cd '\(scratch.url.path)' && \(value)")
                    } else {
                        result.append(fileOptions.contains(word) ? scratch.path(value) : value)
                    }
                    index += 1
                }
            } else if command == "completions" {
                result.append(word)  // a shell's name, not a file
            } else {
                result.append(scratch.path(word))
            }
            index += 1
        }
        return result
    }

    /// An executable script in this folder.
    func writeScript(_ name: String, _ text: String) throws {
        _ = try scratch.write(name, text)
        chmod(scratch.path(name), 0o755)
    }

    /// The README's batch (its record is what scan checks, its files what verify and flash take).
    func batch() throws {
        let run = self.run("ccbeacon batch stations.csv --board hm10 -o out/ --jobs 4 --interval 1000 --tx-power -8")
        guard run.status == 0 else { throw BenchError(run.text) }
    }

    /// The README's provisioning run, on two emulated debuggers.
    func provision() throws {
        let run = ToolRun(
            paths(["provision", "stations.csv", "--board", "hm10", "--devices", "all", "--yes", "--wait", "0.2"]),
            debuggers: provider)
        guard run.status == 0 else { throw BenchError(run.diagnostics) }
    }

    /// The list burned onto the README's server ledger as bench hall-1.
    func provisionOnServer() throws {
        let run = ToolRun(
            paths([
                "provision", "stations.csv", "--board", "hm10", "--devices", "all", "--yes", "--wait", "0.2",
                "--ledger",
                Bench.readmeURL, "--bench", "hall-1",
            ]), debuggers: provider)
        guard run.status == 0 else { throw BenchError(run.diagnostics) }
    }

    /// A capture in which `heard` stations of the record are heard (137 reports each, -71…-58
    /// dBm, median -64) among 275 reports of a foreign advertiser.
    func writeCapture(_ name: String, fromRecord record: String, heard: Set<String>) throws {
        let json = try JSONSerialization.jsonObject(with: Data(try scratch.bytes(record))) as? [String: Any]
        var packets: [(flags: UInt32, bytes: [UInt8])] = []
        let levels = [-71, -58] + (0..<135).map { -66 + $0 % 5 }
        for station in json?["stations"] as? [[String: Any]] ?? []
        where heard.contains(station["name"] as? String ?? "") {
            let address = RandomStaticAddress.bytes(parsing: station["address"] as? String ?? "") ?? []
            let data = HexText.parseContiguous(station["advertisingData"] as? String ?? "") ?? []
            for level in levels {
                packets.append(
                    (
                        3,
                        BTSnoopFile.uartEvent(BTSnoopFile.legacyReport(address: address, data: data, rssi: Int8(level)))
                    ))
            }
        }
        for index in 0..<275 {
            let report = BTSnoopFile.legacyReport(
                address: [0x5A, 0x11, 0x22, 0x33, 0x44, 0x55], data: [0x02, 0x01, 0x1A, 0x03, 0x03, 0x6F, 0xFD],
                rssi: Int8(-80 + index % 9))
            packets.append((3, BTSnoopFile.uartEvent(report)))
        }
        try Data(BTSnoopFile.file(packets)).write(to: scratch.url.appendingPathComponent(name))
    }

    /// A capture taken 1 m from Hall A (address C7:D5:60:AD:5D:5A, its iBeacon): 24 reports,
    /// -61…-59 dBm.
    func writeBenchCapture() throws {
        let address: [UInt8] = [0xC7, 0xD5, 0x60, 0xAD, 0x5D, 0x5A]
        let hallA = IBeacon(uuid: try IdentityParser.uuid("7634A485-1732-4B7D-AB44-D505D8A24C60"), major: 1, minor: 2)
        let packets = (0..<24).map { index in
            (
                UInt32(3),
                BTSnoopFile.uartEvent(
                    BTSnoopFile.legacyReport(
                        address: address, data: hallA.advertisingData(), rssi: Int8(-61 + index % 3)))
            )
        }
        try Data(BTSnoopFile.file(packets)).write(to: scratch.url.appendingPathComponent("bench.btsnoop"))
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The README's Swift is the example package's: the dependency it shows is the one
/// `Examples/StationImage` declares, and every line of its core is a line of the example, which
/// `scripts/test` builds and runs.
struct ReadmeSwiftExampleTests {
    static func swiftBlocks(in text: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current ?? [])
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    static func read(_ path: String) throws -> String {
        try String(contentsOf: SharedFixtures.checkout.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func theReadmesSwiftIsTheExamplePackages() throws {
        let blocks = Self.swiftBlocks(in: ReadmeExampleTests.readme)
        try #require(blocks.count == 2, "the dependency lines and the core")
        let manifest = try Self.read("Examples/StationImage/Package.swift")
        #expect(manifest.contains(#".package(name: "ccbeacon", path: "../..")"#))
        #expect(blocks[0].first == #"dependencies: [.package(name: "ccbeacon", path: "../ccbeacon")],"#)
        #expect(manifest.contains(#".product(name: $0, package: "ccbeacon")"#))
        let example = try Self.read("Examples/StationImage/Sources/station-image/main.swift")
        let lines = Set(example.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        for line in blocks[1] {
            #expect(lines.contains(line.trimmingCharacters(in: .whitespaces)), "not in the example: \(line)")
        }
    }
}
