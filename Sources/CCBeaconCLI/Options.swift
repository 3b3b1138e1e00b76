import BeaconPayload
import CCDebugger
import CommandLineKit
import FirmwareTemplate
import Foundation  // UUID
import IntelHex
import Provisioning
import StructuredText

/// The options several commands share, each declared once: its names, placeholder, help and the
/// conversion from text to value. A command lists the ones it takes in its `CommandSpec` and
/// decodes them into its `Arguments` with `ParsedCommand.value(_:)` or `isSet(_:)`.
enum Options {
    // MARK: Identity

    /// The proximity UUID.
    static let uuid = Option<UUID>("--uuid", value: "UUID", help: "proximity UUID (8-4-4-4-12 or 32 hex digits)") {
        text throws(CommandFailure) in try identityValue { () throws(IdentityError) in try IdentityParser.uuid(text) }
    }
    /// The major number.
    static let major = Option<UInt16>("--major", value: "N", help: "major, 0…65535 or 0x hex") {
        text throws(CommandFailure) in
        try identityValue { () throws(IdentityError) in try IdentityParser.uint16(text, field: .major) }
    }
    /// The minor number.
    static let minor = Option<UInt16>("--minor", value: "N", help: "minor, 0…65535 or 0x hex") {
        text throws(CommandFailure) in
        try identityValue { () throws(IdentityError) in try IdentityParser.uint16(text, field: .minor) }
    }
    /// The measured power to write.
    static let power = Option<Int8>(
        "--power", value: "DBM",
        help: "measured power at 1 m, signed dBm or 0x byte (default: the board's at the TX power)",
        convert: dBm)
    /// The measured power to check: verify checks it only when given, so it has no default to claim.
    static let expectedPower = Option<Int8>(
        "--power", value: "DBM", help: "measured power at 1 m to check (not checked without it)", convert: dBm)

    /// The identity options of a command that writes one station.
    static let identityOptions = [uuid.required.spec, major.required.spec, minor.required.spec, power.spec]
    /// The identity options of verify.
    static let expectedIdentityOptions = [
        uuid.required.spec, major.required.spec, minor.required.spec, expectedPower.spec,
    ]

    /// The identity given by --uuid/--major/--minor and `power` (-59 dBm when left out: a
    /// command that burns it chooses the power with `MeasuredPowerRule` instead).
    static func identity(_ command: ParsedCommand, power: Option<Int8> = power) throws(CommandFailure) -> IBeacon {
        IBeacon(
            uuid: try command.value(uuid.required), major: try command.value(major.required),
            minor: try command.value(minor.required),
            measuredPower: try command.value(power) ?? IBeacon.defaultMeasuredPower)
    }

    /// A signed dBm value or a 0x byte; a bad one is bad input data (exit 65), as in a list.
    @Sendable static func dBm(_ text: String) throws(CommandFailure) -> Int8 {
        try identityValue { () throws(IdentityError) in try IdentityParser.dBm(text) }
    }

    /// `parse()`, with an identity error reported as bad input data (exit 65).
    static func identityValue<Value>(_ parse: () throws(IdentityError) -> Value) throws(CommandFailure) -> Value {
        do { return try parse() } catch { throw .data(error.description) }
    }

    // MARK: Templates

    /// A template by name or folder.
    static let template = Option<String>(
        "--template", value: "T", help: "template name or folder",
        completion: .listed(by: ["templates", "--names"], orFolders: true))
    /// A board whose default template to use.
    static let board = Option<String>(
        "--board", value: "B", help: "use the board's default template (see 'ccbeacon boards')",
        completion: .listed(by: ["boards", "--names"], orFolders: false))
    /// A further folder of templates.
    static let templates = Option<String>(
        "--templates", value: "DIR", help: "also look for templates in DIR (or set CCBEACON_TEMPLATES)",
        completion: .folders)
    /// The template options, in help order.
    static let templateOptions = [template.spec, board.spec, templates.spec]
    /// --template or --board, one of them required.
    static let requiredTemplate = OptionGroup(
        [template.spec.name, board.spec.name], required: true,
        missing: "give --template T (see 'ccbeacon templates') or --board B (see 'ccbeacon boards')")
    /// --template or --board, neither required.
    static let optionalTemplate = OptionGroup([template.spec.name, board.spec.name])

    // MARK: Advertising settings

    /// The advertiser address.
    static let address = Option<RandomStaticAddress>(
        "--address", value: "XX:…", help: "random static advertiser address (default: derived from the identity)"
    ) { text throws(CommandFailure) in
        do throws(AdvertisingSettingError) { return try RandomStaticAddress(parsing: text) } catch {
            throw .usage(error.description)
        }
    }
    /// The advertising interval.
    static let interval = Option<AdvertisingInterval>(
        "--interval", value: "MS", help: "advertising interval, 20…10240 ms in 0.625 ms steps"
    ) { text throws(CommandFailure) in
        do throws(AdvertisingSettingError) { return try AdvertisingInterval(parsingMilliseconds: text) } catch {
            throw .usage(error.description)
        }
    }
    /// The radio output power; which steps exist is the template's chip's to say.
    static let txPower = Option<Int>(
        "--tx-power", value: "DBM", help: "radio output power, one of the chip's steps (0, -2 … -20, -23)"
    ) { text throws(CommandFailure) in
        guard let dBm = Int(text), (-40...20).contains(dBm) else {
            throw .usage("--tx-power '\(text)' must be a whole number of dBm, e.g. 0 or -6")
        }
        return dBm
    }
    /// The battery the life estimate runs against.
    static let battery = Option<Battery>(
        "--battery", value: "cr2032|cr2450|2xaa|MAH",
        help: "estimate the battery life on this battery or capacity in mAh (reference firmware only)"
    ) { text throws(CommandFailure) in
        do throws(BatteryError) { return try Battery(parsing: text) } catch { throw .usage("--battery \(error)") }
    }
    /// The settings a template may expose (the reference firmware does).
    static let settingOptions = [address.spec, interval.spec, txPower.spec]
    /// The station list a list run (batch, provision) takes.
    static let stationList = PositionalSpec(
        "STATIONS file", usage: "STATIONS.csv|STATIONS.json", completion: .files)
    /// What a list run refuses: one address would go to every station.
    static let listRefusedOptions = [
        "--address":
            "one address would go to every station alike; give each station its own in the list's address column, or leave it empty for one derived from its identity"
    ]

    /// The settings a list run takes for all its stations (addresses come from the list).
    static let listSettingOptions = [interval.spec, txPower.spec]

    /// The settings given by --address/--interval/--tx-power.
    static func settings(_ command: ParsedCommand) throws(CommandFailure) -> StationSettings {
        var settings = StationSettings()
        settings.address = try command.value(address)
        settings.interval = try command.value(interval)
        settings.txPower = try command.value(txPower)
        return settings
    }

    // MARK: Images and outputs

    /// The load address of a .bin image.
    static let base = Option<Int>("--base", value: "A", help: "load address of a .bin image (default 0)") {
        text throws(CommandFailure) in try Values.address(text, option: "--base")
    }
    /// Machine-readable output.
    static let json = Flag("--json", help: "machine-readable output")
    /// A count in `range` (decimal or 0x hex); anything else is refused with `refusal(text)`.
    static func count(
        _ name: String, help: String, in range: ClosedRange<Int>,
        refusal: @escaping @Sendable (String) -> String
    ) -> Option<Int> {
        Option<Int>(name, value: "N", help: help) { text throws(CommandFailure) in
            guard let value = Values.integer(text), range.contains(value) else { throw .usage(refusal(text)) }
            return value
        }
    }

    /// A half-open address range.
    static func range(help: String) -> Option<Range<Int>> {
        Option<Range<Int>>("--range", value: "START:END", help: help) { text throws(CommandFailure) in
            try Values.range(text, option: "--range")
        }
    }
    /// The output file or folder, `-o`.
    static func output(_ placeholder: String, help: String, completion: ValueCompletion = .files) -> Option<String> {
        Option<String>("--output", short: "-o", value: placeholder, help: help, completion: completion)
    }

    // MARK: Debuggers and ledgers

    /// One debugger.
    static let device = Option<String>(
        "--device", value: "SEL", help: "debugger as BUS:ADDRESS, port:BUS-PORT or serial (see 'ccbeacon devices')"
    ) { text throws(CommandFailure) in
        if let problem = DeviceSelection.problem(with: text) { throw .usage("--device '\(text)' \(problem)") }
        return text
    }
    /// The flash size of a chip that does not report its own, in KiB (held in bytes).
    static let flashSize = Option<Int>(
        "--flash-size", value: "KIB",
        help:
            "flash size of a chip that does not report it (CC2510/11, CC1110/11: 8, 16 or 32; CC2430/31: 32, 64 or 128)"
    ) { text throws(CommandFailure) in
        guard let kib = Values.integer(text), (1...1024).contains(kib) else {
            throw .usage(
                "--flash-size '\(text.excerpt())' is not a size in KiB (8, 16 or 32 on the chips that need it)")
        }
        return kib * 1024
    }
    /// How programming lays out frames in USB transfers.
    static let usbFraming = DefaultedOption<USBFraming>(
        "--usb-framing", choosing: USBFraming.allCases, default: .proven,
        help:
            "how bursts travel (proven: alone in their transfer, as every known client; packed: fewer transfers, unconfirmed on hardware)"
    )
    /// A USB trace of every transfer with the debuggers (usbmon pcap; `TraceFile`).
    static let trace = Option<String>(
        "--trace", value: "FILE",
        help:
            "write every USB transfer with the debuggers to FILE (pcap, usbmon; Wireshark and tshark read it): a new *.pcap or an earlier ccbeacon trace",
        completion: .files)
    /// The ledger file.
    static func ledger(help: String) -> Option<String> {
        Option<String>("--ledger", value: "FILE", help: help, completion: .files)
    }
}

/// The choice options' values from other modules, named on the command line by their raw value.
extension VerifyMode: OptionChoice {}
extension USBFraming: OptionChoice {}

extension Int: OptionChoice {
    /// The number in decimal.
    var word: String { String(self) }
}

/// How a catalogue command (`boards`, `templates`) prints: a table, `--json`, or `--names`.
struct CatalogOutput: Sendable, Equatable {
    /// `--names`: the names the option takes, one a line, for the shell completions.
    static let names = Flag(
        "--names", help: "print only the names the option takes, one a line, that a shell passes on as they are")

    var json: Bool
    var names: Bool

    init(_ command: ParsedCommand) throws(CommandFailure) {
        json = command.isSet(Options.json)
        names = command.isSet(Self.names)
        if json, names { throw .usage("--json and --names are two ways to print; give one") }
    }

    /// The names of `candidates` a shell can offer as words and pass on as they are: letters and
    /// digits of any script and `. _ - + @ % , : =`, not beginning with `-` (an option), `~` (a
    /// home folder) or `=` (zsh's command path). Any other character (a blank, a hidden one, `$`, a quote, a glob) a shell may
    /// expand once the word is on the line; such a name is still taken when typed.
    static func offerable(_ candidates: [String]) -> [String] {
        candidates.filter { name in
            guard let first = name.unicodeScalars.first, !"-~=".unicodeScalars.contains(first) else { return false }
            return name.unicodeScalars.allSatisfy { scalar in
                "._-+@%,:=".unicodeScalars.contains(scalar) || scalar.properties.isAlphabetic
                    || scalar.properties.numericType != nil
                    || scalar.properties.generalCategory == .nonspacingMark
                    || scalar.properties.generalCategory == .spacingMark
            } && !HiddenCharacters.any(in: name)
        }
    }
}

/// The arguments of a command whose only option is `--json`.
struct JSONArgument: CommandArguments {
    var json: Bool

    init(_ command: ParsedCommand) throws(CommandFailure) {
        json = command.isSet(Options.json)
    }
}

/// An image file a command reads, as its arguments give it: the path, its format by its
/// extension, and where a .bin starts (`--base`, refused beside a HEX file, which carries its
/// own addresses) — checked together before anything is read.
struct ImageArgument: Sendable, Equatable {
    /// The path as given.
    var path: String
    /// By its extension.
    var format: ImageFormat
    /// `--base`: where a .bin image starts (0 when not given).
    var base: Int?

    /// The image at `path` with the command's `--base`; `role` names it in a message about its
    /// extension ("image", "input").
    init(_ path: String, _ command: ParsedCommand, role: String = "image") throws(CommandFailure) {
        self.path = path
        format = try ImageFormat.of(path, role: role)
        base = try command.value(Options.base)
        if base != nil, format != .bin {
            throw .usage("--base applies to .bin images only; a HEX file carries its own addresses")
        }
    }

    /// The one image loader: Intel HEX (memory only, never a table of its records) or .bin at
    /// `base`.
    func load() throws(CommandFailure) -> CommandSupport.LoadedImage {
        let bytes = try FileAccess.read(path)
        switch format {
        case .hex:
            let image = try ConvertCommand.readHexImage(bytes, path: path)
            return CommandSupport.LoadedImage(memory: image.memory, startAddress: image.startAddress, hexText: bytes)
        case .bin:
            let address = base ?? 0
            do {
                return CommandSupport.LoadedImage(memory: try MemoryImage(bytes: bytes, at: address), hexText: nil)
            } catch {
                throw .data("'\(path)' loaded at \(CommandSupport.hexAddress(address)): \(error)")
            }
        }
    }
}

/// The debugger a command works on and what it is told of the chip: `--device` and
/// `--flash-size`, decoded once for every command that takes them.
struct DeviceChoice: Sendable, Equatable {
    /// `--device`; `nil`: the only one attached.
    var selector: String?
    /// `--flash-size` in bytes (where the command takes it): the size of a chip that does not
    /// report its own, and the part a debug-locked chip is taken for until its erase tells.
    var flashSize: Int?

    init(_ command: ParsedCommand) throws(CommandFailure) {
        selector = try command.value(Options.device)
        flashSize = try command.value(Options.flashSize)
    }
}

/// The arguments of a command that works on the one debugger `--device` selects.
struct DeviceArguments: CommandArguments {
    var device: DeviceChoice
    var json: Bool

    init(_ command: ParsedCommand) throws(CommandFailure) {
        device = try DeviceChoice(command)
        json = command.isSet(Options.json)
    }
}

extension Option where Value == Double {
    /// The same option, standing for `seconds` when not given, shown as the user writes seconds
    /// (`600`, `0.5`).
    func defaulting(seconds: Double) -> DefaultedOption<Double> {
        defaulting(to: seconds, shown: ProvisioningRun.seconds(seconds))
    }
}

/// --uuid, --major and --minor where a command takes them in some forms only (encode's frame types,
/// scan's filter): each read, and its spelling checked, before any is found missing.
struct GivenIdentity: Sendable, Equatable {
    var uuid: UUID?
    var major: UInt16?
    var minor: UInt16?

    init(_ command: ParsedCommand) throws(CommandFailure) {
        uuid = try command.value(Options.uuid)
        major = try command.value(Options.major)
        minor = try command.value(Options.minor)
    }

    /// Whether none of the three was given.
    var isEmpty: Bool { uuid == nil && major == nil && minor == nil }

    /// The identity with `power`; a usage error naming the first of the three left out.
    func identity(power: Int8) throws(CommandFailure) -> IBeacon {
        IBeacon(
            uuid: try Options.uuid.needed(uuid), major: try Options.major.needed(major),
            minor: try Options.minor.needed(minor), measuredPower: power)
    }
}
