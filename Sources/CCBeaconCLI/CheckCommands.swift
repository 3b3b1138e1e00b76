import BeaconPayload
import CommandLineKit
import FirmwareTemplate
import HexText
import IntelHex
import Storage
import StructuredText
import TargetData

/// `ccbeacon inspect`: what beacon payloads an image carries.
enum InspectCommand {
    static let spec = CommandSpec(
        name: "inspect", summary: "find and decode every beacon payload in an image", manual: manual,
        table: CommandTable(
            details: """
                Searches the image's memory for iBeacon, AltBeacon and Eddystone payloads and prints each
                with its address. It also reports an OAD header and whether its CRC holds. With
                --template it shows the identity at the template's payload address and whether the rest
                of the image equals the template. With --battery it estimates how long that battery lasts
                the station, for images of ccbeacon's reference firmware (the model and its sources:
                docs/battery-life.md); without --template, for the template whose code the image holds,
                shown as with --template. Other images get the reason there is none.

                Example:
                  ccbeacon inspect out/hall-a.hex --template cc2541-ibeacon --battery cr2032
                """,
            options: [Options.base.spec, Options.json.spec, Options.battery.spec] + Options.templateOptions,
            positionals: [PositionalSpec("IMAGE", usage: "IMAGE.hex|IMAGE.bin", completion: .files)],
            groups: [Options.optionalTemplate]))
    static let command = Command(spec, Arguments.self, run: run)

    /// What `inspect` was asked.
    struct Arguments: CommandArguments {
        var image: ImageArgument
        var template: TemplateChoice
        var json: Bool
        var battery: Battery?

        init(_ command: ParsedCommand) throws(CommandFailure) {
            image = try ImageArgument(command.positionals[0], command)
            template = try TemplateChoice(command)
            json = command.isSet(Options.json)
            battery = try command.value(Options.battery)
        }

        func validate() throws(CommandFailure) {
            try template.refuseUnusedFolder(otherLookup: (Options.battery.spec.name, battery != nil))
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let path = arguments.image.path
        let memory = try arguments.image.load().memory
        let found = PayloadFinder.find(memory)
        let oad = OADHeader.detect(in: memory)
        let computedCRC = oad?.computeCRC(memory)
        var templateReport: (StationTemplate, VerificationReport, FoundSettings)?
        var power: (line: String, json: JSONValue)?
        var battery: (line: String, json: JSONValue)?
        var chosen: (template: StationTemplate, board: Board?)?
        // Without --template, the template found by the image's code, and its folder when it is
        // a user's (two folders may hold templates of one name).
        var recognised: (name: String, userFolder: String?)?
        if arguments.template.isMade {
            let (template, _, board) = try arguments.template.resolve()
            chosen = (template, board)
        } else if let wanted = arguments.battery {
            let locations = try DataLocations.find(templatesOption: arguments.template.templatesFolder)
            let templates = locations.loadAllTemplates(catalog: try locations.loadBoards())
            let broken = locations.templateFolders().count - templates.count
            if broken > 0 {
                console.diagnostics(
                    line:
                        "note: \(broken) template folder\(broken == 1 ? "" : "s") could not be loaded and \(broken == 1 ? "was" : "were") not considered (see 'ccbeacon templates')"
                )
            }
            // Of the templates whose code the image holds (user folders first), one that says what
            // its advertising costs.
            let matching = templates.filter { $0.hasCode(of: memory) }
            if let template = matching.first(where: { $0.manifest.advertisingEvent != nil }) ?? matching.first {
                chosen = (template, nil)
                let bundled = locations.isBundled(Files.directory(of: template.directory))
                recognised = (template.manifest.name, bundled ? nil : template.directory)
            } else {
                battery = CommandSupport.batteryReport(nil, settings: FoundSettings(), battery: wanted)
            }
        }
        if let (template, board) = chosen {
            let field = template.beaconField
            let current = memory.contiguousBytes(in: field.range).flatMap {
                IBeacon(payload: $0[field.kind.identityOffset...])
            }
            let report = template.verify(
                memory, expected: current ?? IBeacon(uuid: .init(), major: 0, minor: 0), checkPower: true)
            let settings = template.foundSettings(in: memory)
            templateReport = (template, report, settings)
            power = current.map {
                CommandSupport.powerReport($0.measuredPower, in: memory, template: template, board: board)
            }
            battery = arguments.battery.map {
                CommandSupport.batteryReport(
                    template, settings: settings, battery: $0,
                    // A template found by the image's code holds it by construction.
                    codeMatches: recognised != nil || template.hasCode(of: memory))
            }
        }
        if arguments.json {
            var members: [(String, JSONValue)] = [
                ("image", .string(path)),
                (
                    "beacons",
                    .array(
                        found.map { beacon in
                            var entry: [(String, JSONValue)] = [
                                ("address", .string(CommandSupport.hexAddress(beacon.address))),
                                ("length", .integer(beacon.length)),
                                ("layout", .string(layoutName(beacon.layout))), ("summary", .string(beacon.summary)),
                            ]
                            if let identity = beacon.iBeacon { entry += EncodeCommand.identityFields(identity) }
                            return .object(entry)
                        })
                ),
            ]
            if let oad {
                members.append(
                    (
                        "oad",
                        .object([
                            ("address", .string(CommandSupport.hexAddress(oad.address))),
                            ("image", .string(oad.imageName)), ("crcValid", .bool(computedCRC == oad.crc0)),
                        ])
                    ))
            }
            if let (template, report, settings) = templateReport {
                members.append(
                    (
                        "template",
                        .object([
                            ("name", .string(template.manifest.name)), ("folder", .string(template.directory)),
                            ("foundByCode", .bool(recognised != nil)),
                            ("payloadAddress", .string(CommandSupport.hexAddress(report.address))),
                            ("identity", report.found.map { .object(EncodeCommand.identityFields($0)) } ?? .null),
                            ("matchesTemplate", .bool(report.passed)),
                            ("problems", .array(report.problems.map { .string($0) })),
                            ("settings", settingsJSON(settings, chip: template.chip)),
                            ("measuredPower", power?.json ?? .null),
                        ])
                    ))
            }
            if let battery { members.append(("battery", battery.json)) }
            console.data(JSONValue.object(members).rendered() + "\n")
            return
        }
        var lines: [String] = []
        if let low = memory.lowestAddress, let end = memory.endAddress {
            lines.append(
                "\(path): \(memory.byteCount) data byte\(memory.byteCount == 1 ? "" : "s"), \(CommandSupport.hexAddress(low))-\(CommandSupport.hexAddress(end - 1))"
            )
        } else {
            lines.append("\(path): no data")
        }
        if found.isEmpty { lines.append("no beacon payload found (searched for iBeacon, AltBeacon and Eddystone)") }
        for beacon in found {
            lines.append("  \(CommandSupport.hexAddress(beacon.address)): \(beacon.summary)")
        }
        if let oad {
            lines.append(
                "  OAD \(oad.imageName) header at \(CommandSupport.hexAddress(oad.address)), \(oad.lengthWords * 4) bytes, CRC \(HexText.address(oad.crc0)) "
                    + (computedCRC == oad.crc0
                        ? "valid"
                        : "does not match the image (computed \(HexText.address(computedCRC ?? 0))): a boot image manager will not start it")
            )
        }
        if let recognised {
            lines.append(
                "found by the image's code: template '\(recognised.name)'"
                    + (recognised.userFolder.map { " in \($0)" } ?? ""))
        }
        if let (template, report, settings) = templateReport {
            lines.append(
                "template '\(template.manifest.name)': payload at \(CommandSupport.hexAddress(report.address)) is "
                    + (report.found.map { "iBeacon \($0)" } ?? "not an iBeacon"))
            lines += template.describe(settings).map { "  \($0)" }
            if let power { lines.append("  \(power.line)") }
            lines += report.passed ? ["  the rest of the image equals the template"] : report.problems.map { "  \($0)" }
            if let battery { lines.append("  \(battery.line)") }
        } else if let battery {
            lines.append(battery.line)
        }
        console.output(lines: lines)
    }

    /// The settings fields' values for machines: address, interval (ticks, clock, microseconds)
    /// and TX power (register and dBm when it is a step of the chip); only those the template has.
    static func settingsJSON(_ found: FoundSettings, chip: Chip) -> JSONValue {
        var members: [(String, JSONValue)] = []
        if let address = found.address { members.append(("address", .string(RandomStaticAddress.format(address)))) }
        if let interval = found.intervalTicks {
            members += [
                ("intervalTicks", .integer(Int(interval.ticks))), ("tickHz", .integer(interval.tickHz)),
                ("intervalMicroseconds", .integer(Int((interval.milliseconds * 1000).rounded()))),
            ]
        }
        if let register = found.txPowerRegister {
            members.append(("txPowerRegister", .string(CommandSupport.hexAddress(Int(register)))))
            members.append(("txPowerDbm", chip.txPower(register: register).map { .integer($0) } ?? .null))
        }
        return .object(members)
    }

    static func layoutName(_ layout: FoundBeacon.Layout) -> String {
        switch layout {
        case .iBeaconAdvertisingData: return "ibeacon-advertising-data"
        case .iBeaconManufacturerData: return "ibeacon-manufacturer-data"
        case .altBeacon: return "altbeacon"
        case .eddystone: return "eddystone"
        }
    }
}

/// `ccbeacon verify`: exit 0 only if the image carries exactly this identity.
enum VerifyCommand {
    static let spec = CommandSpec(
        name: "verify", summary: "check that an image carries exactly one identity (the CI gate)", manual: manual,
        table: CommandTable(
            details: """
                With --template (or --board): the identity at the template's payload address must match,
                the payload header must be the template's, every other byte must equal the template, and
                an OAD header's CRC must hold. Without a template: the image must hold exactly one iBeacon
                block, and it must match. Without --power the measured power is not checked.

                A template's advertiser address, interval and TX power are checked when --address,
                --interval or --tx-power are given; otherwise they only have to be valid (a random static
                address, a TX power step of the chip) and are listed as notes.

                Exit status 0 when it matches, 1 with each difference listed when it does not.

                Example:
                  ccbeacon verify out/hall-a.hex --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 2
                """,
            options: Options.expectedIdentityOptions + Options.templateOptions + Options.settingOptions + [
                Options.base.spec, Options.json.spec,
            ],
            positionals: [PositionalSpec("IMAGE", usage: "IMAGE.hex|IMAGE.bin", completion: .files)],
            groups: [Options.optionalTemplate]))
    static let command = Command(spec, Arguments.self, run: run)

    /// What `verify` was asked.
    struct Arguments: CommandArguments {
        var image: ImageArgument
        var expected: IBeacon
        var settings: StationSettings
        var checkPower: Bool
        var template: TemplateChoice
        var json: Bool

        init(_ command: ParsedCommand) throws(CommandFailure) {
            image = try ImageArgument(command.positionals[0], command)
            expected = try Options.identity(command, power: Options.expectedPower)
            settings = try Options.settings(command)
            checkPower = command.isGiven(Options.expectedPower)
            template = try TemplateChoice(command)
            json = command.isSet(Options.json)
        }

        func validate() throws(CommandFailure) { try template.refuseUnusedFolder() }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let (path, expected, settings, checkPower) = (
            arguments.image.path, arguments.expected, arguments.settings, arguments.checkPower
        )
        let memory = try arguments.image.load().memory
        let report: VerificationReport
        // Where the image's measured power stands against the board's expectation (a note: verify
        // checks only what it is asked).
        var power: (line: String, json: JSONValue)?
        if arguments.template.isMade {
            let (template, _, board) = try arguments.template.resolve()
            _ = try CommandSupport.check(settings, for: template)
            report = template.verify(memory, expected: expected, checkPower: checkPower, settings: settings)
            power = report.found.map {
                CommandSupport.powerReport($0.measuredPower, in: memory, template: template, board: board)
            }
        } else {
            guard settings.isEmpty else {
                throw .usage(
                    "--address, --interval and --tx-power need --template or --board (they live at its addresses)")
            }
            report = PayloadFinder.verify(memory, expected: expected, checkPower: checkPower)
        }
        if arguments.json {
            // Only what was asked for is expected: without --power the identity above carries
            // the encoder's default, which verify does not check; "found" has the image's power.
            let expectedFields = EncodeCommand.identityFields(expected).filter { checkPower || $0.0 != "power" }
            let value = JSONValue.object([
                ("image", .string(path)), ("passed", .bool(report.passed)),
                ("address", .string(CommandSupport.hexAddress(report.address))),
                ("expected", .object(expectedFields)), ("powerChecked", .bool(checkPower)),
                ("found", report.found.map { .object(EncodeCommand.identityFields($0)) } ?? .null),
                ("problems", .array(report.problems.map { .string($0) })),
                ("notes", .array(report.notes.map { .string($0) })), ("measuredPower", power?.json ?? .null),
            ])
            console.data(value.rendered() + "\n")
        } else if report.passed {
            console.output(
                lines: [
                    "OK: \(path) carries iBeacon \(report.found.map(\.description) ?? "") at \(CommandSupport.hexAddress(report.address))"
                ] + report.notes.map { "note: \($0)" } + (power.map { ["note: \($0.line)"] } ?? []))
        } else {
            console.output(lines: ["MISMATCH: \(path)"] + report.problems.map { "  \($0)" })
        }
        if !report.passed { throw CommandFailure(.failure, "\(path) does not carry the expected identity", hint: nil) }
    }
}
