public import BeaconPayload
public import StructuredText

/// One station of a list: a name, the identity it will carry, an optional note.
public struct Station: Sendable, Equatable {
    /// The station's name (unique within the list).
    public var name: String
    /// The iBeacon identity.
    public var identity: IBeacon
    /// Free text.
    public var note: String?
    /// The station's own advertiser address, when the list gives one (templates that have an
    /// address field; otherwise each station gets one derived from its identity).
    public var address: RandomStaticAddress?
    /// Line of the station in its list (for messages).
    public var line: Int
    /// Column of the station in its list (for messages): 1 for a CSV row, where its element begins
    /// in a JSON list.
    public var column = 1
    /// The element of a JSON list the station is (`[3]`); `nil` in a CSV list. A JSON list may hold
    /// all its stations on one line, where the line alone does not tell them apart.
    public var element: String? = nil
    /// Where `identity`'s measured power comes from: `.list` when the list gave it; `nil` when
    /// it gave none and the power is still the encoder's default, for the command to choose
    /// (`MeasuredPowerRule`) before anything is burned or written.
    public var powerOrigin: MeasuredPowerOrigin?
    /// The list's other columns (floor, room, x, y, …) in the list's order: where the station is,
    /// kept with it in the ledger and the registry so that a backend can map major/minor to places.
    public var attributes: [StationAttribute] = []

    /// Creates a station.
    public init(
        name: String, identity: IBeacon, note: String? = nil, address: RandomStaticAddress? = nil, line: Int = 0,
        powerOrigin: MeasuredPowerOrigin? = .explicit
    ) {
        self.name = name
        self.identity = identity
        self.note = note
        self.address = address
        self.line = line
        self.powerOrigin = powerOrigin
    }

    /// Where the station is in its list, for a message about another station: `line 3`, or
    /// `line 1 at [3]` in a JSON list.
    public var place: String { Self.place(line: line, element: element) }

    /// See `place`.
    public static func place(line: Int, element: String?) -> String {
        "line \(line)" + (element.map { " at \($0)" } ?? "")
    }

    /// The station's name made safe as a file name: letters, digits, `.`, `-` and `_` kept, every
    /// other character replaced by `_`, no leading dot, at most 100 characters.
    public var fileStem: String { Self.fileStem(for: name) }

    /// See `fileStem`.
    public static func fileStem(for name: String) -> String {
        var stem = String(
            name.unicodeScalars.map { scalar -> Character in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                        || "-_.".unicodeScalars.contains(scalar))
                    ? Character(scalar) : "_"
            })
        if stem.hasPrefix(".") { stem = "_" + stem.dropFirst() }
        return String(stem.prefix(100))
    }
}

/// One of a station's own columns beyond the identity (`Station.attributes`): `floor` = `2`.
public struct StationAttribute: Sendable, Equatable, Hashable {
    /// The column's name, as the list spells it.
    public var name: String
    /// The value, as text (`-12.5`, `Room 201`; possibly empty).
    public var value: String

    /// An attribute.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension StationAttribute {
    /// The attribute columns of `stations`, each once, in the order the stations first name them:
    /// the columns a list or a registry of them has.
    public static func columns(of stations: [Station]) -> [String] {
        var names: [String] = []
        var seen: Set<String> = []
        for station in stations {
            for attribute in station.attributes where seen.insert(attribute.name).inserted {
                names.append(attribute.name)
            }
        }
        return names
    }
}

extension Station {
    /// The attributes as one JSON object, members in the list's order (the record's, the ledger's
    /// and the export's form).
    public var attributesObject: JSONValue { .object(attributes.map { ($0.name, .string($0.value)) }) }

    /// The station's attributes by name (for rows of many columns: one lookup each).
    public var attributeValues: [String: String] {
        Dictionary(attributes.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

/// The registry `ledger export` writes: one row per verified station.
public enum Registry {
    /// Its columns before the stations' attributes, in order (CSV; JSON has the same keys).
    public static let columns = [
        "name", "uuid", "major", "minor", "power", "chip", "debugger", "at", "address", "readBack", "heard",
        "rssiCount", "rssiMedian", "powerSource", "debugLocked", "bench", "run",
    ]
    /// Every name the registry uses for its own fields (JSON adds `imageSha256` and `attributes`):
    /// no attribute may take one, or the registry would have two columns of one name.
    public static let reservedNames = Set((columns + ["imageSha256", "attributes"]).map { $0.lowercased() })
}
