import HexText
public import StructuredText

/// A development board or module: which chip it carries, how it is debugged, its default template.
public struct Board: Sendable, Equatable {
    /// Short name used on the command line, e.g. `hm10`.
    public var name: String
    /// Human title.
    public var title: String
    /// The chip (by name in `chips.json`).
    public var chip: Chip
    /// How the chip is reached: debugger name and USB vendor:product.
    public var debugger: (name: String, usb: String)
    /// The template `generate` uses for this board when none is given.
    public var defaultTemplate: String
    /// Notes for the user (wiring, quirks).
    public var notes: String?
    /// The RSSI a phone sees 1 m from this board sending at 0 dBm, and where the figure is from.
    public var measuredPower: MeasuredPower
    /// The file the board was read from.
    public var file: String

    /// Equal when all fields are equal.
    public static func == (lhs: Board, rhs: Board) -> Bool {
        lhs.name == rhs.name && lhs.title == rhs.title && lhs.chip == rhs.chip && lhs.debugger == rhs.debugger
            && lhs.defaultTemplate == rhs.defaultTemplate && lhs.notes == rhs.notes
            && lhs.measuredPower == rhs.measuredPower && lhs.file == rhs.file
    }
}

/// The measured power (the RSSI a phone is expected to see 1 m away, carried in an iBeacon's last
/// byte) of a board sending at 0 dBm, with the source of the figure. Beacon vendors shift it 1:1
/// with the TX power (beacon-formats.md §1.2: +4 dBm → −55, 0 → −59, −4 → −63 …).
public struct MeasuredPower: Sendable, Equatable {
    /// dBm at 1 m for 0 dBm TX.
    public var dBm: Int
    /// Where the figure comes from: a published value, or that it is the generic default.
    public var source: String

    /// Creates a figure.
    public init(dBm: Int, source: String) {
        self.dBm = dBm
        self.source = source
    }

    /// The common default, −59 dBm at 0 dBm, for a station without a board.
    public static let genericDefault = MeasuredPower(
        dBm: -59, source: "generic default -59 dBm at 0 dBm (TI SWRA475A, HM-10 and Blue Charm use it)")

    /// The value expected at `txPower` dBm: shifted 1:1, clamped to a signed byte; at 0 dBm when
    /// the TX power is not known (`nil`).
    public func expected(atTXPower txPower: Int?) -> Int8 { Int8(clamping: dBm + (txPower ?? 0)) }
}

/// Every chip and board of a `boards/` folder, validated.
public struct BoardCatalog: Sendable {
    /// Format version this code reads.
    public static let formatVersion = 1
    /// The chips, in file order.
    public var chips: [Chip]
    /// The boards, sorted by name.
    public var boards: [Board]

    /// The chip called `name` (case-insensitive).
    public func chip(named name: String) -> Chip? {
        chips.first { $0.name.lowercased() == name.lowercased() }
    }

    /// The board called `name`.
    public func board(named name: String) -> Board? {
        boards.first { $0.name == name }
    }

    /// Reads `chips.json` and every other `*.json` of a folder (given as name → bytes, so the
    /// caller decides where files come from).
    public static func load(files: [(name: String, bytes: [UInt8])], directory: String) throws(DataFileError)
        -> BoardCatalog
    {
        let chipsPath = directory + "/chips.json"
        guard let chipsFile = files.first(where: { $0.name == "chips.json" }) else {
            throw DataFileError(file: chipsPath, line: 0, column: 0, message: "is missing; it holds the chip facts")
        }
        var root = try JSONObjectReader(try JSONParser.parse(chipsFile.bytes, file: chipsPath), file: chipsPath)
        try checkFormat(&root)
        var chips: [Chip] = []
        let chipNodes = try root.array("chips")
        guard !chipNodes.isEmpty else {
            throw root.error("chips", "lists no chip; ccbeacon programs only the chips listed here")
        }
        for (index, node) in chipNodes.enumerated() {
            let chip = try Chip.read(node, file: chipsPath, path: "chips[\(index)]")
            guard !chips.contains(where: { $0.name.lowercased() == chip.name.lowercased() }) else {
                throw DataFileError(
                    file: chipsPath, line: node.line, column: node.column, keyPath: "chips[\(index)].name",
                    message: "chip \(chip.name) is defined twice")
            }
            // The debugger tells a chip by its target ID and FLASHSIZE code (or, where the chip
            // reports none, by the size the user gives): two chips alike there could not be told
            // apart on the bench.
            if let twin = Chip.reporting(
                targetID: chip.debuggerTargetID, flashSizeCode: chip.flashSizeCode, flashSize: chip.flashSize, in: chips
            ) {
                throw DataFileError(
                    file: chipsPath, line: node.line, column: node.column, keyPath: "chips[\(index)]",
                    message:
                        "chip \(chip.name) has the debugger target ID and \(chip.reportsFlashSize ? "FLASHSIZE code" : "flash size") of \(twin.name); a debugger could not tell them apart"
                )
            }
            // One debugger target ID is one family, driven through one register map: the map is
            // chosen by the ID before the chip can say more.
            if let sibling = ChipFamily(targetID: chip.debuggerTargetID, in: chips)?.members[0],
                sibling.registerMap != chip.registerMap || sibling.flashWordSize != chip.flashWordSize
            {
                throw DataFileError(
                    file: chipsPath, line: node.line, column: node.column, keyPath: "chips[\(index)].registers",
                    message:
                        "chip \(chip.name) has the debugger target ID of \(sibling.name) but other registers or flash words; one target ID is one family"
                )
            }
            chips.append(chip)
        }
        try root.finish()

        var boards: [Board] = []
        for file in files where file.name != "chips.json" && file.name.hasSuffix(".json") {
            let path = directory + "/" + file.name
            var object = try JSONObjectReader(try JSONParser.parse(file.bytes, file: path), file: path)
            try checkFormat(&object)
            let name = try object.string("name")
            guard name + ".json" == file.name else {
                throw object.error("name", "must match the file name (\(file.name.dropLast(5)))")
            }
            let title = try object.string("title")
            let chipName = try object.string("chip")
            guard let chip = chips.first(where: { $0.name == chipName }) else {
                throw object.error(
                    "chip",
                    "'\(chipName)' is not in chips.json; known: \(chips.map(\.name).joined(separator: ", "))")
            }
            var debugger = try object.object("debugger")
            let debuggerName = try debugger.string("name")
            let usb = try debugger.string("usb")
            guard isUSBID(usb) else {
                throw debugger.error("usb", "'\(usb)' is not a USB ID; write VVVV:PPPP in hex")
            }
            guard DebuggerModel.supported.contains(where: { $0.usbID == usb.uppercased() }) else {
                throw debugger.error(
                    "usb", "'\(usb)' is not a debugger ccbeacon drives; it drives \(DebuggerModel.listed)")
            }
            try debugger.finish()
            let defaultTemplate = try object.string("defaultTemplate")
            var power = try object.object("measuredPower")
            let measured = MeasuredPower(
                dBm: try power.integer("dBm", in: -127...20), source: try power.string("source"))
            guard !measured.source.allSatisfy(\.isWhitespace) else {
                throw power.error(
                    "source", "is empty; say where the figure comes from (or that it is the generic default)")
            }
            try power.finish()
            let notes = try object.optionalString("notes")
            try object.finish()
            boards.append(
                Board(
                    name: name, title: title, chip: chip, debugger: (debuggerName, usb),
                    defaultTemplate: defaultTemplate, notes: notes, measuredPower: measured, file: path))
        }
        return BoardCatalog(chips: chips, boards: boards.sorted { $0.name < $1.name })
    }

    static func checkFormat(_ object: inout JSONObjectReader) throws(DataFileError) {
        let version = try object.integer("format", in: 0...Int.max)
        guard version == formatVersion else {
            throw object.error(
                "format", "version \(version) is not supported; this ccbeacon reads version \(formatVersion)")
        }
    }

    static func isUSBID(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { $0.count == 4 && $0.allSatisfy(\.isHexDigit) }
    }
}

func hex(_ value: Int) -> String { HexText.address(value) }
