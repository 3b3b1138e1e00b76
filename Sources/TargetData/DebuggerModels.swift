import HexText

/// A USB debugger model ccbeacon drives: its USB vendor and product IDs and its name.
public struct DebuggerModel: Sendable, Equatable {
    /// USB vendor ID.
    public var vendorID: UInt16
    /// USB product ID.
    public var productID: UInt16
    /// What TI calls it.
    public var name: String
    /// A short name for messages (`SmartRF05EB`).
    public var shortName: String

    /// `0451:16A2`, the form `lsusb` prints (in upper case) and board files carry.
    public var usbID: String { Self.hex4(vendorID) + ":" + Self.hex4(productID) }

    /// The one list of debuggers ccbeacon drives (cc-debugger-protocol.md §1.1; the Chipcon board
    /// 11A0:EB20, which uses other endpoints and a reset, is left out). The device matcher, the
    /// board files' `debugger.usb`, the udev rule and the messages all read it.
    public static let supported: [DebuggerModel] = [
        DebuggerModel(vendorID: 0x0451, productID: 0x16A2, name: "CC Debugger", shortName: "CC Debugger"),
        DebuggerModel(
            vendorID: 0x0451, productID: 0x16A0, name: "SmartRF05 Evaluation Board", shortName: "SmartRF05EB"),
        DebuggerModel(
            vendorID: 0x11A0, productID: 0xDB20, name: "SmartRF04 Evaluation Board", shortName: "SmartRF04EB"),
    ]

    /// The CC Debugger, the model the emulator plays.
    public static let ccDebugger = supported[0]

    /// The model with this vendor and product ID, if ccbeacon drives it.
    public static func model(vendorID: UInt16, productID: UInt16) -> DebuggerModel? {
        supported.first { $0.vendorID == vendorID && $0.productID == productID }
    }

    /// The udev rule that lets the logged-in user (`uaccess`) and the members of `plugdev` (a bench
    /// reached over SSH has no seat) open every supported model, one line per model, as shipped in
    /// scripts/udev/70-ccbeacon.rules.
    public static var udevRule: String { udevRuleLines.joined(separator: "\n") }

    /// The udev rule's lines, one per model.
    public static var udevRuleLines: [String] {
        supported.map {
            "SUBSYSTEM==\"usb\", ATTR{idVendor}==\"\(hex4($0.vendorID).lowercased())\", ATTR{idProduct}==\"\(hex4($0.productID).lowercased())\", MODE=\"0660\", GROUP=\"plugdev\", TAG+=\"uaccess\""
        }
    }

    /// The models in words, `CC Debugger (0451:16A2), SmartRF05EB (0451:16A0) and SmartRF04EB
    /// (11A0:DB20)`.
    public static var listed: String {
        let names = supported.map { "\($0.shortName) (\($0.usbID))" }
        return names.dropLast().joined(separator: ", ") + (names.count > 1 ? " and " : "") + (names.last ?? "")
    }

    static func hex4(_ value: UInt16) -> String { HexText.digits(value, width: 4) }

    /// The debugger firmware revisions GET_STATE has been seen to report on debuggers that open
    /// clients program with (first-contact.md: 0x0027, 0x0032, 0x0044).
    public static let seenFirmwareRevisions: [UInt16] = [0x0027, 0x0032, 0x0044]

    /// What to say about a firmware revision no report has mentioned; nil for a seen one.
    public static func firmwareNote(revision: UInt16) -> String? {
        guard !seenFirmwareRevisions.contains(revision) else { return nil }
        return
            "firmware revision \(HexText.address(Int(revision))) has not been seen with open clients (seen: \(seenFirmwareRevisions.map { HexText.address(Int($0)) }.joined(separator: ", "))); if the burn test fails, update it with TI's SmartRF Flash Programmer and report the revision"
    }
}
