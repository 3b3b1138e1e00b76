import HexText
import StructuredText

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
    /// Flash pages the BLE stack writes at first boot (non-volatile storage); `nil` on chips whose
    /// images ccbeacon does not make (no station template runs on them).
    public var nvPages: ClosedRange<Int>?
    /// The radio's output power steps: dBm and the TXPOWER register value, strongest first
    /// (empty when `chips.json` gives none for this chip).
    public var txPowerSteps: [TXPowerStep] = []

    /// Creates chip facts (normally they come from `boards/chips.json`).
    public init(
        name: String, family: String, chipID: UInt8, debuggerTargetID: UInt16, flashSize: Int, flashSizeCode: UInt8,
        pageSize: Int, ramSize: Int, primaryAddress: (xdata: Int, length: Int), secondaryAddress: Range<Int>,
        lockBits: Range<Int>, nvPages: ClosedRange<Int>?
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
    /// Flash addresses of the NV pages (empty when the chip has none listed).
    public var nvRange: Range<Int> {
        guard let nvPages else { return 0..<0 }
        return (nvPages.lowerBound * pageSize)..<((nvPages.upperBound + 1) * pageSize)
    }
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
        var nvPages: ClosedRange<Int>?
        if var nv = try object.optionalObject("nvPages") {
            let first = try nv.integer("first", in: 0...4096)
            let count = try nv.integer("count", in: 1...64)
            try nv.finish()
            guard (first + count) * pageSize <= flashSize - pageSize else {
                throw object.error("nvPages", "must lie below the last page (page \(flashSize / pageSize - 1))")
            }
            nvPages = first...(first + count - 1)
        }
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
        var chip = Chip(
            name: name, family: family, chipID: chipID, debuggerTargetID: targetID, flashSize: flashSize,
            flashSizeCode: flashSizeCode, pageSize: pageSize, ramSize: ramSize,
            primaryAddress: (primaryXdata, primaryLength),
            secondaryAddress: secondaryStart..<(secondaryStart + secondaryLength),
            lockBits: lockStart..<(lockStart + lockLength), nvPages: nvPages)
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
