public import BeaconPayload

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
    /// Where `identity`'s measured power comes from: `.list` when the list gave it; `nil` when
    /// it gave none and the power is still the encoder's default, for the command to choose
    /// (`MeasuredPowerRule`) before anything is burned or written.
    public var powerOrigin: MeasuredPowerOrigin?

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
