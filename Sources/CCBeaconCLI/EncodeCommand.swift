import BeaconPayload
import CommandLineKit
import Foundation  // UUID
import HexText
import StructuredText

/// `ccbeacon encode`: an identity in, advertising data bytes out.
enum EncodeCommand {
    static let spec = CommandSpec(
        name: "encode", summary: "encode a beacon identity as BLE advertising data", manual: manual,
        table: CommandTable(
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
                type.spec, Options.uuid.spec, Options.major.spec, Options.minor.spec, power.spec, flags.spec,
                company.spec, reserved.spec, namespace.spec, instance.spec, url.spec, format.spec, address.spec,
                channel.spec,
            ],
            forms: [
                [
                    .option(Options.uuid.spec, optional: false), .option(Options.major.spec, optional: false),
                    .option(Options.minor.spec, optional: false), .option(power.spec, optional: true),
                    .option(flags.spec, optional: true), .option(format.spec, optional: true),
                ],
                [
                    .ellipsis, .fixed(format.spec, Format.air.rawValue), .option(address.spec, optional: false),
                    .option(channel.spec, optional: true),
                ],
                [
                    .fixed(type.spec, BeaconType.altbeacon.rawValue), .option(Options.uuid.spec, optional: false),
                    .option(Options.major.spec, optional: false), .option(Options.minor.spec, optional: false),
                    .option(power.spec, optional: true), .option(company.spec, optional: true),
                    .option(reserved.spec, optional: true), .option(flags.spec, optional: true),
                    .option(format.spec, optional: true),
                ],
                [
                    .fixed(type.spec, BeaconType.eddystoneUID.rawValue),
                    .choice(
                        [
                            [.option(namespace.spec, optional: false), .option(instance.spec, optional: false)],
                            [
                                .option(Options.uuid.spec, optional: false),
                                .option(Options.major.spec, optional: false),
                                .option(Options.minor.spec, optional: false),
                            ],
                        ], optional: false),
                    .option(power.spec, optional: true), .option(flags.spec, optional: true),
                    .option(format.spec, optional: true),
                ],
                [
                    .fixed(type.spec, BeaconType.eddystoneURL.rawValue), .option(url.spec, optional: false),
                    .option(power.spec, optional: true), .option(flags.spec, optional: true),
                    .option(format.spec, optional: true),
                ],
            ]))
    static let command = Command(spec, Arguments.self, run: run)

    /// The frames encode makes.
    enum BeaconType: String, CaseIterable {
        case ibeacon, altbeacon
        case eddystoneUID = "eddystone-uid"
        case eddystoneURL = "eddystone-url"
    }

    static let type = Option<BeaconType>(
        "--type", value: "TYPE", help: "ibeacon (default), altbeacon, eddystone-uid or eddystone-url"
    ) { text throws(CommandFailure) in
        guard let type = BeaconType(rawValue: text) else {
            throw .usage(
                "--type '\(text)' is not a beacon type; use ibeacon, altbeacon, eddystone-uid or eddystone-url"
            )
        }
        return type
    }
    /// The power's meaning (and range) depends on the type, so it is converted once the type is known.
    static let power = Option<String>("--power", value: "DBM", help: "measured power (1 m; 0 m for Eddystone)")
    /// `nil` inside: `none`, the Flags structure left out.
    static let flags = Option<UInt8?>(
        "--flags", value: "0xNN|none", help: "Flags AD value, or none to omit it", completion: .words(["none"])
    ) { text throws(CommandFailure) in
        if text == "none" { return nil }
        return try Options.identityValue { () throws(IdentityError) in try IdentityParser.uint8(text, field: .flags) }
    }.defaulting(to: IBeacon.defaultFlags, shown: "0x" + HexText.digits(IBeacon.defaultFlags, width: 2))
    static let company = Option<UInt16>(
        "--company", value: "0xNNNN", help: "AltBeacon company ID"
    ) { text throws(CommandFailure) in
        try Options.identityValue { () throws(IdentityError) in try IdentityParser.uint16(text, field: .company) }
    }.defaulting(to: AltBeacon.defaultCompanyID, shown: "0x" + HexText.digits(AltBeacon.defaultCompanyID, width: 4))
    static let reserved = Option<UInt8>(
        "--reserved", value: "0xNN", help: "AltBeacon manufacturer-reserved byte"
    ) { text throws(CommandFailure) in
        try Options.identityValue { () throws(IdentityError) in try IdentityParser.uint8(text, field: .reserved) }
    }.defaulting(to: 0, shown: "0x00")
    static let namespace = Option<[UInt8]>("--namespace", value: "HEX20", help: "Eddystone-UID namespace, 10 bytes") {
        text throws(CommandFailure) in
        try Options.identityValue { () throws(IdentityError) in
            try IdentityParser.hexBytes(text, field: .namespace, count: 10)
        }
    }
    static let instance = Option<[UInt8]>("--instance", value: "HEX12", help: "Eddystone-UID instance, 6 bytes") {
        text throws(CommandFailure) in
        try Options.identityValue { () throws(IdentityError) in
            try IdentityParser.hexBytes(text, field: .instance, count: 6)
        }
    }
    static let url = Option<String>("--url", value: "URL", help: "Eddystone-URL URL")
    static let format = DefaultedOption<Format>(
        "--format", choosing: Format.allCases, default: .hex, help: "what to print")
    static let address = Option<RandomStaticAddress>(
        "--address", value: "XX:…", help: "random static advertiser address (--format air)"
    ) { text throws(CommandFailure) in
        do { return try RandomStaticAddress(parsing: text) } catch { throw .usage("--address: \(error)") }
    }
    static let channel = Option<Int>(
        "--channel", choosing: Array(AdvertisingAirPacket.channels), help: "advertising channel (--format air)")

    enum Format: String, CaseIterable, OptionChoice { case hex, c, json, air }

    /// A payload ready to print.
    struct Encoded {
        var type: String
        var summary: String
        var fields: [(String, JSONValue)]
        var bytes: [UInt8]
        var flags: UInt8?
    }

    /// The options each type takes, besides --type, --format and the air options.
    static let optionsByType: [BeaconType: [OptionSpec]] = [
        .ibeacon: [Options.uuid.spec, Options.major.spec, Options.minor.spec, power.spec, flags.spec],
        .altbeacon: [
            Options.uuid.spec, Options.major.spec, Options.minor.spec, power.spec, flags.spec, company.spec,
            reserved.spec,
        ],
        .eddystoneUID: [
            Options.uuid.spec, Options.major.spec, Options.minor.spec, power.spec, flags.spec, namespace.spec,
            instance.spec,
        ],
        .eddystoneURL: [url.spec, power.spec, flags.spec],
    ]
    /// The options only `--format air` takes.
    static let airOptions = [address.spec, channel.spec]

    /// What `encode` was asked, typed before anything is printed: the frame made from the options its
    /// type takes, and where it goes on air.
    struct Arguments: CommandArguments {
        var format: Format
        /// The frame to encode.
        var frame: Frame
        /// The Flags AD value; `nil`: --flags none, no Flags structure.
        var flags: UInt8?
        /// `--format air`'s advertiser address and channel; `nil` for the other formats.
        var air: AirTarget?

        /// The parser has checked each value's spelling; an option the type or the format does not
        /// take is refused before the frame is made.
        init(_ command: ParsedCommand) throws(CommandFailure) {
            let type = try command.value(EncodeCommand.type) ?? .ibeacon
            format = try command.value(EncodeCommand.format)
            try Self.refuseStrayOptions(command.givenOptionNames, type: type, format: format)
            flags = try command.value(EncodeCommand.flags)
            let address = try command.value(EncodeCommand.address)
            let channel = try command.value(EncodeCommand.channel)
            frame = try Frame(type, command)
            guard format == .air else {
                air = nil
                return
            }
            // Asked for last: a frame that cannot be made is the first thing to fix.
            guard let address else { throw .usage("--format air needs --address XX:XX:XX:XX:XX:XX (random static)") }
            air = AirTarget(address: address, channel: channel)
        }

        /// Each type takes its own options, and only `--format air` the air options.
        static func refuseStrayOptions(_ given: [String], type: BeaconType, format: Format) throws(CommandFailure) {
            let allowed = Set((optionsByType[type] ?? []).map(\.name))
            let airOnly = Set(airOptions.map(\.name))
            let always = [EncodeCommand.type.spec.name, EncodeCommand.format.spec.name]
            for name in given where !always.contains(name) && !allowed.contains(name) && !airOnly.contains(name) {
                throw .usage("\(name) does not apply to --type \(type.rawValue)")
            }
            if format != .air, let name = given.first(where: airOnly.contains) {
                throw .usage("\(name) applies to --format air only")
            }
        }
    }

    /// Where `--format air` puts the frame: the advertiser address, and one channel or all three.
    struct AirTarget: Sendable {
        var address: RandomStaticAddress
        var channel: Int?
    }

    /// A frame of one of the types, made from that type's options.
    enum Frame: Sendable {
        case iBeacon(IBeacon)
        /// The frame and the identity it maps, whose fields the frame is shown by.
        case altBeacon(AltBeacon, identity: IBeacon)
        case eddystoneUID(EddystoneUID)
        case eddystoneURL(EddystoneURL)

        /// The frame `type`'s options describe; --power is read in the type's own meaning. The
        /// order of the checks is the one `encode` always had: --uuid, --major and --minor are each
        /// read before one is found missing, --power after them and after --url.
        init(_ type: BeaconType, _ command: ParsedCommand) throws(CommandFailure) {
            switch type {
            case .ibeacon:
                let given = try GivenIdentity(command)
                self = .iBeacon(try given.identity(power: try Self.measuredPower(command)))
            case .altbeacon:
                let given = try GivenIdentity(command)
                let companyID = try command.value(company)
                let reservedByte = try command.value(reserved)
                let identity = try given.identity(power: try Self.measuredPower(command))
                self = .altBeacon(
                    AltBeacon(identity: identity, companyID: companyID, reserved: reservedByte), identity: identity)
            case .eddystoneUID:
                let given = try GivenIdentity(command)
                let namespaceGiven = try command.value(namespace)
                let instanceGiven = try command.value(instance)
                let power = try Self.txPower(command)
                let frame: EddystoneUID
                if namespaceGiven != nil || instanceGiven != nil {
                    guard given.isEmpty else {
                        throw .usage("give either --namespace and --instance, or --uuid, --major and --minor")
                    }
                    let namespaceBytes = try namespace.needed(namespaceGiven)
                    let instanceBytes = try instance.needed(instanceGiven)
                    frame = try Self.made { () throws(AdvertisingDataError) in
                        try EddystoneUID(txPower: power, namespace: namespaceBytes, instance: instanceBytes)
                    }
                } else {
                    // --power is the 0 m value here, so the identity is mapped without it.
                    let identity = try given.identity(power: IBeacon.defaultMeasuredPower)
                    frame = try Self.made { () throws(AdvertisingDataError) in
                        let mapped = try EddystoneUID(identity: identity)
                        return try EddystoneUID(txPower: power, namespace: mapped.namespace, instance: mapped.instance)
                    }
                }
                self = .eddystoneUID(frame)
            case .eddystoneURL:
                let text = try url.needed(try command.value(url))
                let power = try Self.txPower(command)
                self = .eddystoneURL(
                    try Self.made { () throws(AdvertisingDataError) in try EddystoneURL(url: text, txPower: power) })
            }
        }

        /// --power as the measured power at 1 m (iBeacon, AltBeacon).
        static func measuredPower(_ command: ParsedCommand) throws(CommandFailure) -> Int8 {
            guard let text = try command.value(power) else { return IBeacon.defaultMeasuredPower }
            return try Options.dBm(text)
        }

        /// --power as the calibrated TX power at 0 m (Eddystone), -59 + 41 dBm when left out.
        static func txPower(_ command: ParsedCommand) throws(CommandFailure) -> Int8 {
            guard let text = try command.value(power) else {
                return Int8(Int(IBeacon.defaultMeasuredPower) + Eddystone.oneMeterToZeroMeterOffset)
            }
            return try Options.identityValue { () throws(IdentityError) in
                try IdentityParser.dBm(text, range: Eddystone.txPowerRange)
            }
        }

        /// A frame the payload library refuses is a data error, in its words.
        static func made<Made>(_ make: () throws(AdvertisingDataError) -> Made) throws(CommandFailure) -> Made {
            do { return try make() } catch { throw .data(error.description) }
        }
    }

    static func run(_ arguments: Arguments, console: Console) throws(CommandFailure) {
        let encoded = encoded(arguments.frame, flags: arguments.flags)
        if let air = arguments.air {
            console.data(try Self.air(encoded, air))
        } else {
            console.data(render(encoded, format: arguments.format))
        }
    }

    /// `frame`'s advertising data (with `flags`), its summary and its fields as JSON shows them.
    static func encoded(_ frame: Frame, flags: UInt8?) -> Encoded {
        switch frame {
        case .iBeacon(let identity):
            return Encoded(
                type: BeaconType.ibeacon.rawValue, summary: "iBeacon \(identity)", fields: identityFields(identity),
                bytes: identity.advertisingData(flags: flags), flags: flags)
        case .altBeacon(let beacon, let identity):
            return Encoded(
                type: BeaconType.altbeacon.rawValue, summary: beacon.description,
                fields: identityFields(identity) + [
                    (
                        "company",
                        .string("0x" + compactHex([UInt8(beacon.companyID >> 8), UInt8(beacon.companyID & 0xFF)]))
                    ),
                    ("reserved", .integer(Int(beacon.reserved))),
                ], bytes: beacon.advertisingData(flags: flags), flags: flags)
        case .eddystoneUID(let frame):
            return Encoded(
                type: BeaconType.eddystoneUID.rawValue, summary: frame.description,
                fields: [
                    ("namespace", .string(hexString(frame.namespace))),
                    ("instance", .string(hexString(frame.instance))),
                    ("txPower", .integer(Int(frame.txPower))),
                ], bytes: frame.advertisingData(flags: flags), flags: flags)
        case .eddystoneURL(let frame):
            return Encoded(
                type: BeaconType.eddystoneURL.rawValue, summary: frame.description,
                fields: [("url", .string(frame.url)), ("txPower", .integer(Int(frame.txPower)))],
                bytes: frame.advertisingData(flags: flags), flags: flags)
        }
    }

    static func identityFields(_ identity: IBeacon) -> [(String, JSONValue)] {
        [
            ("uuid", .string(identity.uuid.uuidString)), ("major", .integer(Int(identity.major))),
            ("minor", .integer(Int(identity.minor))), ("power", .integer(Int(identity.measuredPower))),
        ]
    }

    static func hexString(_ bytes: [UInt8]) -> String { compactHex(bytes) }

    static func render(_ encoded: Encoded, format: Format) -> String {
        switch format {
        case .hex, .air:  // `run` prints air through `air(_:_:)`, with the air target
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

    /// The on-air packet of `encoded`: PDU, CRC and whitened bytes per channel (or --channel's).
    static func air(_ encoded: Encoded, _ target: AirTarget) throws(CommandFailure) -> String {
        let address = target.address
        let chosen = target.channel
        let channels = chosen.map { [$0] } ?? AdvertisingAirPacket.channels
        do {
            let packet = try AdvertisingAirPacket(
                address: address.bytes, addressIsRandom: true, advertisingData: encoded.bytes)
            if chosen != nil { return spacedHex(try packet.whitened(channel: channels[0])) + "\n" }
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
