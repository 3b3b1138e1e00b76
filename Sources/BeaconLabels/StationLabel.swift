public import BeaconPayload
import HexText

#if canImport(FoundationEssentials)
    import FoundationEssentials  // UUID
#else
    import Foundation
#endif

/// What one label shows: a station's name, its iBeacon identity and, when known, the advertiser
/// address its chip sends from.
public struct StationLabel: Sendable, Equatable {
    /// The station's name, in full (the label may shorten it; the QR string never does).
    public var name: String
    /// The identity; only UUID, major and minor go on the label.
    public var identity: IBeacon
    /// The advertiser address, or `nil` when it is not known (a template without an address
    /// field, an attempt recorded before ledgers kept it).
    public var address: RandomStaticAddress?

    /// A label for `name` with `identity`, and `address` when known.
    public init(name: String, identity: IBeacon, address: RandomStaticAddress?) {
        self.name = name
        self.identity = identity
        self.address = address
    }

    /// The text the QR code carries, documented on the labels man page (THE QR STRING) and meant to be parsed by other
    /// programs:
    ///
    ///     ibeacon:UUID/MAJOR/MINOR?name=NAME&addr=ADDRESS
    ///
    /// UUID upper case `8-4-4-4-12`; major and minor in decimal without leading zeros; NAME the
    /// whole name percent-encoded (`percentEncoded`); `&addr=` only when the address is known,
    /// written `AA:BB:CC:DD:EE:FF` (upper case). Nothing else is ever added, so a reader may
    /// compare the string as a whole.
    public var qrText: String {
        let identity = "\(self.identity.uuid.uuidString.uppercased())/\(self.identity.major)/\(self.identity.minor)"
        var text = "ibeacon:\(identity)?name=\(Self.percentEncoded(name))"
        if let address { text += "&addr=\(HexText.colonSeparated(address.bytes))" }
        return text
    }

    /// `text` as RFC 3986 percent-encoding writes data in a query: the unreserved characters
    /// (ASCII letters, digits, `-`, `.`, `_`, `~`) as they are, every other byte of its UTF-8
    /// form as `%XX` in upper-case hex. Stricter than a query needs (`/`, `?`, `:` could stay):
    /// one rule is simpler for every reader, and `&`, `=`, `%`, `+` and `#` can then never be
    /// taken for structure.
    public static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += "%" + HexText.byte(byte)
            }
        }
        return result
    }
}
