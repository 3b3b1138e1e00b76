import HexText
public import StructuredText

/// Facts about one chip variant that imaging, patching and flashing depend on. Loaded from
/// `boards/chips.json`; see that folder's README for the sources of each value.
public struct Chip: Sendable, Equatable {
    /// Part name with flash size, e.g. `CC2541F256`.
    public var name: String
    /// Family, e.g. `CC2541`.
    public var family: String
    /// Value of the CHIPID register (XDATA 0x624A), e.g. 0x41.
    public var chipID: UInt8
    /// The 16-bit target ID the CC Debugger reports, e.g. 0x2541.
    public var debuggerTargetID: UInt16
    /// Flash size in bytes.
    public var flashSize: Int
    /// The FLASHSIZE field of CHIPINFO0 (bits 6..4) on this chip, which tells the flash size
    /// through the debug interface; its meaning differs between families (3 is 128 KiB on a
    /// CC2541, 96 KiB on a CC2533), so it is data, not a formula.
    public var flashSizeCode: UInt8
    /// Flash page (erase unit) size in bytes.
    public var pageSize: Int
    /// RAM size in bytes.
    public var ramSize: Int
    /// The factory (primary) IEEE/BLE address in the information page: XDATA address and length,
    /// stored least-significant byte first.
    public var primaryAddress: (xdata: Int, length: Int)
    /// The optional secondary address in the last flash page, directly below the lock bits.
    public var secondaryAddress: Range<Int>
    /// The lock bits: the last 16 bytes of flash (0 = locked; bit 127 is the debug lock).
    public var lockBits: Range<Int>
    /// Flash pages the BLE stack writes at first boot (non-volatile storage).
    public var nvPages: ClosedRange<Int>
    /// The radio's output power steps: dBm and the TXPOWER register value, strongest first
    /// (empty when `chips.json` gives none for this chip).
    public var txPowerSteps: [TXPowerStep] = []

    /// Creates chip facts (normally they come from `boards/chips.json`).
    public init(
        name: String, family: String, chipID: UInt8, debuggerTargetID: UInt16, flashSize: Int, flashSizeCode: UInt8,
        pageSize: Int, ramSize: Int, primaryAddress: (xdata: Int, length: Int), secondaryAddress: Range<Int>,
        lockBits: Range<Int>, nvPages: ClosedRange<Int>
    ) {
        self.name = name
        self.family = family
        self.chipID = chipID
        self.debuggerTargetID = debuggerTargetID
        self.flashSize = flashSize
        self.flashSizeCode = flashSizeCode
        self.pageSize = pageSize
        self.ramSize = ramSize
        self.primaryAddress = primaryAddress
        self.secondaryAddress = secondaryAddress
        self.lockBits = lockBits
        self.nvPages = nvPages
    }

    /// The chip of `chips` that a debugger reporting `targetID` and CHIPINFO0.FLASHSIZE `code`
    /// has attached (the two tell chips apart; `BoardCatalog.load` refuses two alike).
    public static func reporting(targetID: UInt16, flashSizeCode code: UInt8, in chips: [Chip]) -> Chip? {
        chips.first { $0.debuggerTargetID == targetID && $0.flashSizeCode == code }
    }

    /// The TXPOWER register value for `dBm`, when the chip has that step.
    public func txPowerRegister(dBm: Int) -> UInt8? { txPowerSteps.first { $0.dBm == dBm }?.register }

    /// The output power a TXPOWER register value selects, when it is one of the chip's steps.
    public func txPower(register: UInt8) -> Int? { txPowerSteps.first { $0.register == register }?.dBm }

    /// Number of flash pages.
    public var pageCount: Int { flashSize / pageSize }
    /// Flash addresses of the NV pages.
    public var nvRange: Range<Int> { (nvPages.lowerBound * pageSize)..<((nvPages.upperBound + 1) * pageSize) }
    /// Flash addresses of the last page, which holds the secondary address and the lock bits.
    public var lastPageRange: Range<Int> { (flashSize - pageSize)..<flashSize }

    /// Equal when every fact is equal.
    public static func == (lhs: Chip, rhs: Chip) -> Bool {
        lhs.name == rhs.name && lhs.family == rhs.family && lhs.chipID == rhs.chipID
            && lhs.debuggerTargetID == rhs.debuggerTargetID && lhs.flashSize == rhs.flashSize
            && lhs.flashSizeCode == rhs.flashSizeCode
            && lhs.pageSize == rhs.pageSize && lhs.ramSize == rhs.ramSize
            && lhs.primaryAddress == rhs.primaryAddress && lhs.secondaryAddress == rhs.secondaryAddress
            && lhs.lockBits == rhs.lockBits && lhs.nvPages == rhs.nvPages && lhs.txPowerSteps == rhs.txPowerSteps
    }

    /// What an address of this chip's flash is used for, when it is special.
    public func reservedUse(of address: Int) -> String? {
        if lockBits.contains(address) { return "the lock bits" }
        if secondaryAddress.contains(address) { return "the secondary BLE address" }
        if lastPageRange.contains(address) { return "the last page (secondary address and lock bits)" }
        if nvRange.contains(address) { return "the NV pages the BLE stack writes at first boot" }
        return nil
    }

    /// Reads and checks one chip object of `chips.json`.
    static func read(_ node: JSONNode, file: String, path: String) throws(DataFileError) -> Chip {
        var object = try JSONObjectReader(node, file: file, path: path)
        let name = try object.string("name")
        let family = try object.string("family")
        let chipID = UInt8(try object.integer("chipId", in: 0...0xFF))
        let targetID = UInt16(try object.integer("debuggerTargetId", in: 0...0xFFFF))
        let flashSize = try object.integer("flashSize", in: 1024...(1 << 20))
        // 0 is what a debug-locked chip reports: no chip can be told by it.
        let flashSizeCode = UInt8(try object.integer("flashSizeCode", in: 1...7))
        let pageSize = try object.integer("pageSize", in: 256...(1 << 16))
        let ramSize = try object.integer("ramSize", in: 256...(1 << 16))
        var primary = try object.object("primaryAddress")
        let primaryXdata = try primary.integer("xdata", in: 0...0xFFFF)
        let primaryLength = try primary.integer("length", in: 1...8)
        try primary.finish()
        var secondary = try object.object("secondaryAddress")
        let secondaryStart = try secondary.integer("address", in: 0...(1 << 20))
        let secondaryLength = try secondary.integer("length", in: 1...8)
        try secondary.finish()
        var lock = try object.object("lockBits")
        let lockStart = try lock.integer("address", in: 0...(1 << 20))
        let lockLength = try lock.integer("length", in: 1...64)
        try lock.finish()
        var nv = try object.object("nvPages")
        let nvFirst = try nv.integer("first", in: 0...4096)
        let nvCount = try nv.integer("count", in: 1...64)
        try nv.finish()
        var steps: [TXPowerStep] = []
        for (index, node) in (try object.optionalArray("txPower") ?? []).enumerated() {
            var step = try JSONObjectReader(node, file: file, path: object.path(of: "txPower[\(index)]"))
            let dBm = try step.integer("dBm", in: -40...20)
            let register = UInt8(try step.integer("register", in: 0...0xFF))
            try step.finish()
            guard !steps.contains(where: { $0.dBm == dBm || $0.register == register }) else {
                throw step.error("dBm", "\(dBm) dBm or register \(hex(Int(register))) is listed twice")
            }
            steps.append(TXPowerStep(dBm: dBm, register: register))
        }
        _ = try object.optionalString("source")
        try object.finish()

        guard flashSize % pageSize == 0 else {
            throw object.error("flashSize", "must be a whole number of pages (\(pageSize) bytes)")
        }
        guard lockStart + lockLength == flashSize else {
            throw object.error("lockBits", "must be the last \(lockLength) bytes of flash (end at \(hex(flashSize)))")
        }
        guard secondaryStart + secondaryLength == lockStart else {
            throw object.error("secondaryAddress", "must sit directly below the lock bits (end at \(hex(lockStart)))")
        }
        guard (nvFirst + nvCount) * pageSize <= flashSize - pageSize else {
            throw object.error("nvPages", "must lie below the last page (page \(flashSize / pageSize - 1))")
        }
        var chip = Chip(
            name: name, family: family, chipID: chipID, debuggerTargetID: targetID, flashSize: flashSize,
            flashSizeCode: flashSizeCode, pageSize: pageSize, ramSize: ramSize,
            primaryAddress: (primaryXdata, primaryLength),
            secondaryAddress: secondaryStart..<(secondaryStart + secondaryLength),
            lockBits: lockStart..<(lockStart + lockLength), nvPages: nvFirst...(nvFirst + nvCount - 1))
        chip.txPowerSteps = steps.sorted { $0.dBm > $1.dBm }
        return chip
    }
}

/// One output power step of a chip's radio.
public struct TXPowerStep: Sendable, Equatable {
    /// Output power in dBm.
    public var dBm: Int
    /// The TXPOWER register value that selects it.
    public var register: UInt8

    /// Creates a step.
    public init(dBm: Int, register: UInt8) {
        self.dBm = dBm
        self.register = register
    }
}

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
        for (index, node) in try root.array("chips").enumerated() {
            let chip = try Chip.read(node, file: chipsPath, path: "chips[\(index)]")
            guard !chips.contains(where: { $0.name.lowercased() == chip.name.lowercased() }) else {
                throw DataFileError(
                    file: chipsPath, line: node.line, column: node.column, keyPath: "chips[\(index)].name",
                    message: "chip \(chip.name) is defined twice")
            }
            // The debugger tells a chip by its target ID and FLASHSIZE code: two chips alike
            // there could not be told apart on the bench.
            if let twin = Chip.reporting(
                targetID: chip.debuggerTargetID, flashSizeCode: chip.flashSizeCode, in: chips)
            {
                throw DataFileError(
                    file: chipsPath, line: node.line, column: node.column, keyPath: "chips[\(index)]",
                    message:
                        "chip \(chip.name) has the debugger target ID and FLASHSIZE code of \(twin.name); a debugger could not tell them apart"
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
                    "'\(visible: chipName)' is not in chips.json; known: \(chips.map(\.name).joined(separator: ", "))")
            }
            var debugger = try object.object("debugger")
            let debuggerName = try debugger.string("name")
            let usb = try debugger.string("usb")
            guard isUSBID(usb) else {
                throw debugger.error("usb", "'\(visible: usb)' is not a USB ID; write VVVV:PPPP in hex")
            }
            guard DebuggerModel.supported.contains(where: { $0.usbID == usb.uppercased() }) else {
                throw debugger.error(
                    "usb", "'\(visible: usb)' is not a debugger ccbeacon drives; it drives \(DebuggerModel.listed)")
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
