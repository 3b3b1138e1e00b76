public import StructuredText

/// The payload formats a template can carry. Only iBeacon today; the manifest's `payloadFormat`
/// key leaves room for AltBeacon and Eddystone templates.
public enum PayloadFormat: String, Sendable, Equatable, CaseIterable {
    /// Apple iBeacon.
    case ibeacon
}

/// A place in the image that `generate` rewrites, with the bytes the template must hold there.
public struct PatchField: Sendable, Equatable {
    /// What the field holds and how it is patched.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// Flags AD + iBeacon manufacturer AD (30 bytes); the identity is the last 21 bytes.
        case iBeaconAdvertisingData = "ibeacon-advertising-data"
        /// The iBeacon manufacturer AD alone (27 bytes); the identity is the last 21 bytes.
        case iBeaconManufacturerData = "ibeacon-manufacturer-data"
        /// The advertiser address (AdvA) of the PDU, 6 bytes least significant first; the PDU
        /// header must say TxAdd = 1, as `--address` takes random static addresses only.
        case advertiserAddress = "advertiser-address"
        /// The advertising interval as ticks of a clock of `tickHz`, 32-bit little-endian.
        case advertisingInterval = "advertising-interval"
        /// The value the firmware writes to the radio's TXPOWER register (one byte); the chip's
        /// `txPower` table in `boards/chips.json` maps it to dBm.
        case txPowerRegister = "tx-power-register"

        /// The field's length in bytes.
        public var length: Int {
            switch self {
            case .iBeaconAdvertisingData: 30
            case .iBeaconManufacturerData: 27
            case .advertiserAddress: 6
            case .advertisingInterval: 4
            case .txPowerRegister: 1
            }
        }
        /// Offset of the 21 identity bytes within an iBeacon field (0 for the other kinds).
        public var identityOffset: Int {
            switch self {
            case .iBeaconAdvertisingData: 9
            case .iBeaconManufacturerData: 6
            default: 0
            }
        }
        /// Whether the field holds the iBeacon identity.
        public var isBeaconField: Bool { self == .iBeaconAdvertisingData || self == .iBeaconManufacturerData }
    }

    /// Name used in messages (`advertisingData`).
    public var name: String
    /// Kind.
    public var kind: Kind
    /// Flash address of the first byte.
    public var address: Int
    /// The exact bytes the template image must hold at `address` before patching.
    public var placeholder: [UInt8]
    /// For an advertising-interval field: the frequency of the clock its ticks count.
    public var tickHz: Int?

    /// Creates a field.
    public init(name: String, kind: Kind, address: Int, placeholder: [UInt8], tickHz: Int? = nil) {
        self.name = name
        self.kind = kind
        self.address = address
        self.placeholder = placeholder
        self.tickHz = tickHz
    }

    /// The addresses the field covers.
    public var range: Range<Int> { address..<(address + placeholder.count) }
    /// Address of the identity bytes.
    public var identityAddress: Int { address + kind.identityOffset }
}

/// The OAD header a template carries, so `generate` can keep its CRC valid.
public struct OADSpec: Sendable, Equatable {
    /// Flash address of the header.
    public var headerAddress: Int
    /// The layout the CRC walks.
    public var layout: OADHeader.Layout
}

/// `template.json`: what a template is and where its patchable bytes are.
public struct TemplateManifest: Sendable, Equatable {
    /// Format version this code reads and writes.
    public static let formatVersion = 1

    /// Template name (its folder's name).
    public var name: String
    /// What the template is, in a sentence or two.
    public var description: String
    /// Chip name (from `boards/chips.json`).
    public var chip: String
    /// Image file name inside the template folder.
    public var image: String
    /// SHA-256 of the image file, lower-case hex.
    public var imageSHA256: String
    /// Payload format.
    public var payloadFormat: PayloadFormat
    /// Patchable fields.
    public var fields: [PatchField]
    /// OAD header, when the image has one.
    public var oad: OADSpec?
    /// What one advertising event costs, for the battery estimate (only the reference firmware says).
    public var advertisingEvent: AdvertisingEventProfile?

    /// Creates a manifest.
    public init(
        name: String, description: String, chip: String, image: String, imageSHA256: String,
        payloadFormat: PayloadFormat, fields: [PatchField], oad: OADSpec?,
        advertisingEvent: AdvertisingEventProfile? = nil
    ) {
        self.name = name
        self.description = description
        self.chip = chip
        self.image = image
        self.imageSHA256 = imageSHA256
        self.payloadFormat = payloadFormat
        self.fields = fields
        self.oad = oad
        self.advertisingEvent = advertisingEvent
    }

    /// The iBeacon field (a manifest read from a file always has exactly one).
    public var beaconField: PatchField? { fields.first { $0.kind.isBeaconField } }

    /// The field of `kind`, when the template has one.
    public func field(_ kind: PatchField.Kind) -> PatchField? { fields.first { $0.kind == kind } }

    /// Reads and checks `template.json`.
    public static func read(_ bytes: [UInt8], file: String) throws(DataFileError) -> TemplateManifest {
        var root = try JSONObjectReader(try JSONParser.parse(bytes, file: file), file: file)
        let version = try root.integer("format", in: 0...Int.max)
        guard version == formatVersion else {
            throw root.error(
                "format", "version \(version) is not supported; this ccbeacon reads version \(formatVersion)")
        }
        let name = try root.string("name")
        guard isSafeName(name) else {
            throw root.error(
                "name", "'\(name)' must be letters, digits, '-', '_' or '.', not starting with '.'")
        }
        let description = try root.string("description")
        let chip = try root.string("chip")
        let image = try root.string("image")
        guard isSafeName(image) else { throw root.error("image", "must be a file name inside the template folder") }
        guard image != "template.json" else {
            throw root.error(
                "image", "'\(image)' is this file, not a firmware image; give the image's file name (image.hex)")
        }
        let sha = try root.string("imageSha256")
        guard sha.count == 64, sha.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
            throw root.error("imageSha256", "must be 64 lower-case hex digits (sha256sum's output)")
        }
        let formatName = try root.string("payloadFormat")
        guard let payloadFormat = PayloadFormat(rawValue: formatName) else {
            throw root.error(
                "payloadFormat",
                "'\(formatName)' is not supported by this ccbeacon; supported: \(PayloadFormat.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        var fields: [PatchField] = []
        for (index, node) in try root.array("fields").enumerated() {
            var field = try JSONObjectReader(node, file: file, path: "fields[\(index)]")
            let fieldName = try field.string("name")
            let kindName = try field.string("kind")
            guard let kind = PatchField.Kind(rawValue: kindName) else {
                throw field.error(
                    "kind",
                    "'\(kindName)' is not a field kind; known: \(PatchField.Kind.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            let address = try field.integer("address", in: 0...0xFFFF_FFFF)
            let length = try field.integer("length", in: 1...255)
            let placeholderText = try field.string("placeholder")
            guard let placeholder = hexBytes(placeholderText) else {
                throw field.error("placeholder", "must be hex digits (spaces allowed between bytes)")
            }
            guard placeholder.count == length, length == kind.length else {
                throw field.error(
                    "placeholder",
                    "holds \(placeholder.count) bytes and length says \(length); a field of kind \(kind.rawValue) takes \(kind.length)"
                )
            }
            let tickHz = try field.optionalInteger("tickHz", in: 1...100_000_000)
            if kind == .advertisingInterval, tickHz == nil {
                throw field.error("tickHz", "is missing; an advertising-interval field counts ticks of a clock")
            }
            if kind != .advertisingInterval, tickHz != nil {
                throw field.error("tickHz", "belongs to advertising-interval fields only")
            }
            try field.finish()
            if fields.contains(where: { $0.kind == kind && !kind.isBeaconField }) {
                throw field.error("kind", "the template already has a \(kind.rawValue) field")
            }
            fields.append(
                PatchField(name: fieldName, kind: kind, address: address, placeholder: placeholder, tickHz: tickHz))
        }
        let beaconFields = fields.filter { $0.kind.isBeaconField }
        guard beaconFields.count == 1 else {
            throw root.error("fields", "must hold exactly one iBeacon field, found \(beaconFields.count)")
        }
        for (index, field) in fields.enumerated() {
            for other in fields[(index + 1)...] where field.range.overlaps(other.range) {
                throw root.error("fields", "fields '\(field.name)' and '\(other.name)' overlap")
            }
        }
        var oad: OADSpec?
        if var object = try root.optionalObject("oad") {
            let address = try object.integer("headerAddress", in: 0...0xFFFF_FFFF)
            let layoutName = try object.string("layout")
            guard let layout = OADHeader.Layout(rawValue: layoutName) else {
                throw object.error(
                    "layout", "'\(layoutName)' is not an OAD layout; known: contiguous, bim-image-a")
            }
            try object.finish()
            oad = OADSpec(headerAddress: address, layout: layout)
        }
        var advertisingEvent: AdvertisingEventProfile?
        if var object = try root.optionalObject("advertisingEvent") {
            advertisingEvent = try AdvertisingEventProfile.read(&object)
        }
        try root.finish()
        return TemplateManifest(
            name: name, description: description, chip: chip, image: image, imageSHA256: sha,
            payloadFormat: payloadFormat, fields: fields, oad: oad, advertisingEvent: advertisingEvent)
    }

    /// The manifest as JSON, in the key order people read it.
    package func json() -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("format", .integer(Self.formatVersion)), ("name", .string(name)), ("description", .string(description)),
            ("chip", .string(chip)), ("image", .string(image)), ("imageSha256", .string(imageSHA256)),
            ("payloadFormat", .string(payloadFormat.rawValue)),
            (
                "fields",
                .array(
                    fields.map { field in
                        var members: [(String, JSONValue)] = [
                            ("name", .string(field.name)), ("kind", .string(field.kind.rawValue)),
                            ("address", .string(hex(field.address))), ("length", .integer(field.placeholder.count)),
                            ("placeholder", .string(field.placeholder.map(hex2).joined(separator: " "))),
                        ]
                        if let tickHz = field.tickHz { members.append(("tickHz", .integer(tickHz))) }
                        return .object(members)
                    })
            ),
        ]
        if let oad {
            members.append(
                (
                    "oad",
                    .object([
                        ("headerAddress", .string(hex(oad.headerAddress))), ("layout", .string(oad.layout.rawValue)),
                    ])
                ))
        }
        if let advertisingEvent { members.append(("advertisingEvent", advertisingEvent.json)) }
        return .object(members)
    }

    /// Letters, digits, `-`, `_` and `.`, not starting with `.`: safe as a file or folder name.
    public static func isSafeName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix(".") && name.count <= 100
            && name.unicodeScalars.allSatisfy {
                $0.isASCII
                    && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0))
            }
    }

    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = text.filter { $0 != " " }
        guard digits.count % 2 == 0, digits.allSatisfy(\.isHexDigit) else { return nil }
        let characters = Array(digits)
        return stride(from: 0, to: characters.count, by: 2).map {
            UInt8(characters[$0].hexDigitValue! << 4 | characters[$0 + 1].hexDigitValue!)
        }
    }
}
