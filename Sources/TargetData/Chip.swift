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
    /// The factory (primary) IEEE/BLE address: its XDATA addresses in the information page
    /// (0x780E..<0x7814 on a CC2541), least-significant byte first; `nil` on chips that have none.
    public var primaryAddress: Range<Int>?
    /// The optional secondary address in the last flash page, directly below the lock bits; `nil`
    /// on chips without a factory address.
    public var secondaryAddress: Range<Int>?
    /// The lock bits: the last 16 bytes of flash (0 = locked; bit 127 is the debug lock).
    public var lockBits: Range<Int>
    /// Flash pages the BLE stack writes at first boot (non-volatile storage); `nil` where
    /// `chips.json` lists none (the chips no bundled template is made for).
    public var nvPages: ClosedRange<Int>?
    /// How the flash programmer writes this chip's flash.
    public var flashWriting: FlashWriting
    /// The radio's output power steps: dBm and the TXPOWER register value, strongest first
    /// (empty when `chips.json` gives none for this chip).
    public var txPowerSteps: [TXPowerStep] = []

    /// Creates chip facts (normally they come from `boards/chips.json`).
    public init(
        name: String, family: String, chipID: UInt8, debuggerTargetID: UInt16, flashSize: Int, flashSizeCode: UInt8,
        pageSize: Int, ramSize: Int, primaryAddress: Range<Int>?, secondaryAddress: Range<Int>?,
        lockBits: Range<Int>, nvPages: ClosedRange<Int>?, flashWriting: FlashWriting = .burst
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
        self.flashWriting = flashWriting
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
            && lhs.flashWriting == rhs.flashWriting
    }

    /// What an address of this chip's flash is used for, when it is special.
    public func reservedUse(of address: Int) -> String? {
        if lockBits.contains(address) { return "the lock bits" }
        if secondaryAddress?.contains(address) == true { return "the secondary address" }
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
        var primaryAddress: Range<Int>?
        if var primary = try object.optionalObject("primaryAddress") {
            let start = try primary.integer("xdata", in: 0...0xFFF8)
            primaryAddress = start..<(start + (try primary.integer("length", in: 1...8)))
            try primary.finish()
        }
        var secondaryAddress: Range<Int>?
        if var secondary = try object.optionalObject("secondaryAddress") {
            let start = try secondary.integer("address", in: 0...(1 << 20))
            secondaryAddress = start..<(start + (try secondary.integer("length", in: 1...8)))
            try secondary.finish()
        }
        var flashWriting = FlashWriting.burst
        var givenWriting = false
        if var writing = try object.optionalObject("flashWrite") {
            givenWriting = true
            let pathName = try writing.string("path")
            guard let path = FlashWriting.Path(rawValue: pathName) else {
                let names = FlashWriting.Path.allCases.map(\.rawValue).joined(separator: " or ")
                throw writing.error("path", "must be \(names), not '\(pathName.excerpt())'")
            }
            flashWriting = FlashWriting(
                path: path, blockSize: try writing.integer("blockSize", in: 256...2048),
                descriptorAddress: try writing.integer("descriptor", in: 0...0xFFFF))
            try writing.finish()
        }
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
        if let secondaryAddress, secondaryAddress.upperBound != lockStart {
            throw object.error("secondaryAddress", "must sit directly below the lock bits (end at \(hex(lockStart)))")
        }
        if (primaryAddress == nil) != (secondaryAddress == nil) {
            throw object.error("secondaryAddress", "is given exactly when primaryAddress is")
        }
        if let problem = flashWriting.problem(ramSize: ramSize, pageSize: pageSize) {
            throw object.error(
                "flashWrite", (givenWriting ? "" : "not given, so the default (burst) is taken: ") + problem)
        }
        var chip = Chip(
            name: name, family: family, chipID: chipID, debuggerTargetID: targetID, flashSize: flashSize,
            flashSizeCode: flashSizeCode, pageSize: pageSize, ramSize: ramSize,
            primaryAddress: primaryAddress, secondaryAddress: secondaryAddress,
            lockBits: lockStart..<(lockStart + lockLength), nvPages: nvPages, flashWriting: flashWriting)
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

/// How the flash programmer moves an image into a chip's flash: the path, the block it hands the
/// flash controller at a time, and where in the chip's SRAM its DMA descriptors sit (block buffers
/// start at XDATA 0x0000, below them). All of it must fit the chip's SRAM.
public struct FlashWriting: Sendable, Equatable {
    /// The two write paths (cc-debugger-protocol.md §7.3–§7.4).
    public enum Path: String, Sendable, Equatable, CaseIterable {
        /// BURST_WRITE into DBGDATA, taken by DMA into one of two RAM buffers while the other
        /// feeds the flash controller (CC2530/31/33/40/41): four descriptors.
        case burst
        /// Each block written into one RAM buffer with debug instructions, then one DMA channel
        /// feeds the flash controller (CC2543/44/45, whose debug interface cc-tool never bursts to
        /// and whose 1–2 KiB of SRAM hold no second buffer): one descriptor.
        case xdata
    }

    /// Which path.
    public var path: Path
    /// Bytes handed to the flash controller at a time.
    public var blockSize: Int
    /// The XDATA address of the DMA descriptors (in SRAM, above the buffers).
    public var descriptorAddress: Int

    /// A way of writing.
    public init(path: Path, blockSize: Int, descriptorAddress: Int) {
        self.path = path
        self.blockSize = blockSize
        self.descriptorAddress = descriptorAddress
    }

    /// The CC253x/CC254x fast path: 1 KiB bursts, two buffers at 0x0000 and 0x0400, descriptors at 0x0800.
    public static let burst = FlashWriting(path: .burst, blockSize: 1024, descriptorAddress: 0x0800)

    /// The RAM buffers blocks pass through.
    public var buffers: [Int] { path == .burst ? [0, blockSize] : [0] }
    /// Descriptors: four on the burst path (channels 1–4), one on the XDATA path (channel 0).
    public var descriptorCount: Int { path == .burst ? 4 : 1 }

    /// What is wrong with this way of writing on a chip with `ramSize` bytes of SRAM and pages of
    /// `pageSize`, or `nil`: blocks of whole 32-bit words that fill pages evenly, the buffers below the
    /// descriptors, the descriptors inside SRAM.
    public func problem(ramSize: Int, pageSize: Int) -> String? {
        guard path != .burst || blockSize == 1024 else {
            return "the burst path writes 1024-byte blocks (what one BURST_WRITE carries), not \(blockSize)"
        }
        guard blockSize % 4 == 0, pageSize % blockSize == 0 else {
            return "blockSize \(blockSize) must be whole words and divide the page (\(pageSize) bytes)"
        }
        guard buffers.count * blockSize <= descriptorAddress else {
            return
                "the descriptors at \(hex(descriptorAddress)) overlap the block buffers (up to \(hex(buffers.count * blockSize)))"
        }
        guard descriptorAddress + 8 * descriptorCount <= ramSize else {
            return "the descriptors at \(hex(descriptorAddress)) lie beyond the chip's \(ramSize) bytes of SRAM"
        }
        return nil
    }
}
