import BeaconPayload
import StructuredText

/// `ccbeacon encode`: an identity in, advertising data bytes out.
enum EncodeCommand {
    static let spec = CommandSpec(
        name: "encode",
        summary: "encode a beacon identity as BLE advertising data",
        usage: """
            ccbeacon encode --uuid UUID --major N --minor N [--power DBM] [--flags 0xNN|none] [--format hex|c|json]
                   ccbeacon encode … --format air --address XX:XX:XX:XX:XX:XX [--channel 37|38|39]
                   ccbeacon encode --type altbeacon --uuid UUID --major N --minor N [--power DBM] [--company 0xNNNN] [--reserved 0xNN]
                   ccbeacon encode --type eddystone-uid (--namespace HEX20 --instance HEX12 | --uuid UUID --major N --minor N) [--power DBM]
                   ccbeacon encode --type eddystone-url --url URL [--power DBM]
            """,
        details: """
            Prints the advertising data a beacon sends, for pasting into firmware or checking by eye.

            Identity spellings: UUID as 8-4-4-4-12 or 32 hex digits in any case; major and minor as
            decimal 0…65535 or 0x hex; power as signed dBm (-59) or a 0x byte (0xC5 = -59).

            --power is the measured power at 1 m for iBeacon and AltBeacon (default -59 dBm), and the
            calibrated TX power at 0 m for Eddystone frames (-100…20, default -18, i.e. -59 + 41).
            For eddystone-uid, --uuid/--major/--minor map to namespace = the UUID's first 4 and last
            6 bytes and instance = 00 00 major minor (ccbeacon's convention, not a standard).

            Formats: hex (spaced bytes, the default), c (a C array for firmware source), json, and
            air: the BLE link-layer ADV_NONCONN_IND packet with --address, a random static advertiser
            address (two top bits set, TxAdd = 1, header 0x42) — the PDU and its CRC-24, and the
            whitened bytes per advertising channel (only --channel's when given), all in air order
            with each byte sent least significant bit first.

            Example:
              ccbeacon encode --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 2 --power -51
              02 01 06 1A FF 4C 00 02 15 76 34 A4 85 17 32 4B 7D AB 44 D5 05 D8 A2 4C 60 00 01 00 02 CD
            """,
        options: [
            OptionSpec("--type", value: "TYPE", help: "ibeacon (default), altbeacon, eddystone-uid or eddystone-url"),
            OptionSpec("--uuid", value: "UUID", help: "proximity UUID"),
            OptionSpec("--major", value: "N", help: "major, 0…65535 or 0x hex"),
            OptionSpec("--minor", value: "N", help: "minor, 0…65535 or 0x hex"),
            OptionSpec("--power", value: "DBM", help: "measured power (1 m; 0 m for Eddystone)"),
            OptionSpec("--flags", value: "0xNN|none", help: "Flags AD value (default 0x06) or none to omit it"),
            OptionSpec("--company", value: "0xNNNN", help: "AltBeacon company ID (default 0x0118)"),
            OptionSpec("--reserved", value: "0xNN", help: "AltBeacon manufacturer-reserved byte (default 0x00)"),
            OptionSpec("--namespace", value: "HEX", help: "Eddystone-UID namespace, 10 bytes"),
            OptionSpec("--instance", value: "HEX", help: "Eddystone-UID instance, 6 bytes"),
            OptionSpec("--url", value: "URL", help: "Eddystone-URL URL"),
            OptionSpec("--format", value: "FORMAT", help: "hex (default), c, json or air"),
            OptionSpec("--address", value: "XX:…", help: "random static advertiser address (--format air)"),
            OptionSpec("--channel", value: "37|38|39", help: "advertising channel (--format air)"),
        ])

    enum Format: String, CaseIterable { case hex, c, json, air }

    /// A payload ready to print.
    struct Encoded {
        var type: String
        var summary: String
        var fields: [(String, JSONValue)]
        var bytes: [UInt8]
        var flags: UInt8?
    }

    static let optionsByType: [String: Set<String>] = [
        "ibeacon": ["--uuid", "--major", "--minor", "--power", "--flags"],
        "altbeacon": ["--uuid", "--major", "--minor", "--power", "--flags", "--company", "--reserved"],
        "eddystone-uid": ["--uuid", "--major", "--minor", "--power", "--flags", "--namespace", "--instance"],
        "eddystone-url": ["--url", "--power", "--flags"],
    ]

    static func run(_ command: ParsedCommand, console: Console) throws(CommandFailure) {
        let type = command.values["--type"] ?? "ibeacon"
        guard let allowed = optionsByType[type] else {
            throw .usage(
                "--type '\(type)' is not a beacon type; use ibeacon, altbeacon, eddystone-uid or eddystone-url")
        }
        let format = try format(command.values["--format"])
        let airOptions: Set<String> = ["--address", "--channel"]
        for name in command.values.keys.sorted()
        where name != "--type" && name != "--format" && !allowed.contains(name) && !airOptions.contains(name) {
            throw .usage("\(name) does not apply to --type \(type)")
        }
        if format != .air, let name = command.values.keys.sorted().first(where: airOptions.contains) {
            throw .usage("\(name) applies to --format air only")
        }
        var values = command.values
        values["--address"] = nil
        values["--channel"] = nil
        let encoded = try encode(type: type, values)
        if format == .air {
            console.output(try air(encoded, address: command.values["--address"], channel: command.values["--channel"]))
        } else {
            console.output(render(encoded, format: format))
        }
    }

    static func format(_ text: String?) throws(CommandFailure) -> Format {
        guard let text else { return .hex }
        guard let format = Format(rawValue: text) else {
            throw .usage("--format '\(text)' is not a format; use hex, c, json or air")
        }
        return format
    }

    static func encode(type: String, _ values: [String: String]) throws(CommandFailure) -> Encoded {
        do {
            let flags = try flagsValue(values["--flags"])
            switch type {
            case "ibeacon":
                let identity = try identity(values)
                return Encoded(
                    type: type, summary: "iBeacon \(identity)", fields: identityFields(identity),
                    bytes: identity.advertisingData(flags: flags), flags: flags)
            case "altbeacon":
                let identity = try identity(values)
                let beacon = AltBeacon(
                    identity: identity,
                    companyID: try values["--company"].map { v throws(IdentityError) in
                        try IdentityParser.uint16(v, field: .company)
                    } ?? AltBeacon.defaultCompanyID,
                    reserved: try values["--reserved"].map { v throws(IdentityError) in
                        try IdentityParser.uint8(v, field: .reserved)
                    } ?? 0)
                return Encoded(
                    type: type, summary: beacon.description,
                    fields: identityFields(identity) + [
                        (
                            "company",
                            .string("0x" + compactHex([UInt8(beacon.companyID >> 8), UInt8(beacon.companyID & 0xFF)]))
                        ),
                        ("reserved", .integer(Int(beacon.reserved))),
                    ], bytes: beacon.advertisingData(flags: flags), flags: flags)
            case "eddystone-uid":
                let power = try eddystonePower(values["--power"])
                let frame: EddystoneUID
                if values["--namespace"] != nil || values["--instance"] != nil {
                    guard values["--uuid"] == nil, values["--major"] == nil, values["--minor"] == nil else {
                        throw CommandFailure.usage(
                            "give either --namespace and --instance, or --uuid, --major and --minor")
                    }
                    frame = try EddystoneUID(
                        txPower: power,
                        namespace: try IdentityParser.hexBytes(
                            required(values, "--namespace"), field: .namespace, count: 10),
                        instance: try IdentityParser.hexBytes(
                            required(values, "--instance"), field: .instance, count: 6))
                } else {
                    // --power is the 0 m value here, so the identity is mapped without it.
                    var withoutPower = values
                    withoutPower["--power"] = nil
                    let mapped = try EddystoneUID(identity: try identity(withoutPower))
                    frame = try EddystoneUID(txPower: power, namespace: mapped.namespace, instance: mapped.instance)
                }
                return Encoded(
                    type: type, summary: frame.description,
                    fields: [
                        ("namespace", .string(hexString(frame.namespace))),
                        ("instance", .string(hexString(frame.instance))),
                        ("txPower", .integer(Int(frame.txPower))),
                    ], bytes: frame.advertisingData(flags: flags), flags: flags)
            default:
                let frame = try EddystoneURL(
                    url: try required(values, "--url"), txPower: try eddystonePower(values["--power"]))
                return Encoded(
                    type: type, summary: frame.description,
                    fields: [("url", .string(frame.url)), ("txPower", .integer(Int(frame.txPower)))],
                    bytes: frame.advertisingData(flags: flags), flags: flags)
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch let error as IdentityError {
            throw .data(error.description)
        } catch let error as AdvertisingDataError {
            throw .data(error.description)
        } catch {
            throw .data("\(error)")
        }
    }

    static func required(_ values: [String: String], _ name: String) throws(CommandFailure) -> String {
        guard let value = values[name] else { throw .usage("missing \(name)") }
        return value
    }

    static func identity(_ values: [String: String]) throws -> IBeacon {
        try IBeacon(
            uuid: try required(values, "--uuid"), major: try required(values, "--major"),
            minor: try required(values, "--minor"), power: values["--power"])
    }

    static func identityFields(_ identity: IBeacon) -> [(String, JSONValue)] {
        [
            ("uuid", .string(identity.uuid.uuidString)), ("major", .integer(Int(identity.major))),
            ("minor", .integer(Int(identity.minor))), ("power", .integer(Int(identity.measuredPower))),
        ]
    }

    static func eddystonePower(_ text: String?) throws(IdentityError) -> Int8 {
        guard let text else { return Int8(Int(IBeacon.defaultMeasuredPower) + Eddystone.oneMeterToZeroMeterOffset) }
        return try IdentityParser.dBm(text, range: Eddystone.txPowerRange)
    }

    static func flagsValue(_ text: String?) throws(IdentityError) -> UInt8? {
        guard let text else { return IBeacon.defaultFlags }
        if text == "none" { return nil }
        return try IdentityParser.uint8(text, field: .flags)
    }

    static func hexString(_ bytes: [UInt8]) -> String { compactHex(bytes) }

    static func render(_ encoded: Encoded, format: Format) -> String {
        switch format {
        case .hex, .air:  // air is rendered by `air(_:address:channel:)`, which needs more options
            return spacedHex(encoded.bytes) + "\n"
        case .c:
            let rows = stride(from: 0, to: encoded.bytes.count, by: 8).map { start in
                "  "
                    + encoded.bytes[start..<min(start + 8, encoded.bytes.count)].map { "0x" + compactHex([$0]) }
                    .joined(separator: ", ")
            }
            return "/* \(CSource.comment(encoded.summary)), \(encoded.bytes.count) bytes (ccbeacon encode) */\n"
                + "static uint8 advertData[\(encoded.bytes.count)] =\n{\n" + rows.joined(separator: ",\n") + "\n};\n"
        case .json:
            let value = JSONValue.object(
                [("type", .string(encoded.type))] + encoded.fields + [
                    ("flags", encoded.flags.map { .integer(Int($0)) } ?? .null),
                    ("length", .integer(encoded.bytes.count)), ("hex", .string(hexString(encoded.bytes))),
                ])
            return value.rendered() + "\n"
        }
    }

    /// The on-air packet of `encoded`: PDU, CRC and whitened bytes per channel (or one channel's).
    static func air(_ encoded: Encoded, address text: String?, channel channelText: String?) throws(CommandFailure)
        -> String
    {
        guard let text else { throw .usage("--format air needs --address XX:XX:XX:XX:XX:XX (random static)") }
        let address: RandomStaticAddress
        do { address = try RandomStaticAddress(parsing: text) } catch { throw .usage("--address: \(error)") }
        var channels = AdvertisingAirPacket.channels
        if let channelText {
            guard let channel = Int(channelText), channels.contains(channel) else {
                throw .usage("--channel '\(channelText)' is not an advertising channel; use 37, 38 or 39")
            }
            channels = [channel]
        }
        do {
            let packet = try AdvertisingAirPacket(
                address: address.bytes, addressIsRandom: true, advertisingData: encoded.bytes)
            if channelText != nil { return spacedHex(try packet.whitened(channel: channels[0])) + "\n" }
            var lines = ["pdu  \(spacedHex(packet.pdu))", "crc  \(spacedHex(packet.crc))"]
            for channel in channels {
                lines.append("ch\(channel) \(spacedHex(try packet.whitened(channel: channel)))")
            }
            return lines.joined(separator: "\n") + "\n"
        } catch {
            throw .data(error.description)
        }
    }
}
