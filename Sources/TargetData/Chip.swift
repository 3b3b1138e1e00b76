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
    /// CC2541, 96 KiB on a CC2533), so it is data, not a formula. 0 on chips that do not report
    /// their size (`RegisterMap.sfr`): the user names it (`reporting(…flashSize:…)`).
    public var flashSizeCode: UInt8
    /// Where the chip's flash controller, DMA and ID registers sit in XDATA.
    public var registerMap: RegisterMap = .xreg
    /// The flash controller's word in bytes: FADDR counts words, writes come in whole words
    /// (4 on the CC253x/4x, 2 on the CC251x/111x).
    public var flashWordSize = 4
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
    /// The lock bits: the last 16 bytes of flash (0 = locked; bit 127 is the debug lock); `nil`
    /// on chips that keep a lock byte in the information page instead (`RegisterMap.sfr`).
    public var lockBits: Range<Int>?
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
        lockBits: Range<Int>?, nvPages: ClosedRange<Int>?, flashWriting: FlashWriting = .burst
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
    /// has attached (the two tell chips apart; `BoardCatalog.load` refuses two alike). A chip that
    /// reports no size (code 0 in `chips.json`) is told by `flashSize`, which the user gives.
    public static func reporting(
        targetID: UInt16, flashSizeCode code: UInt8, flashSize: Int? = nil, in chips: [Chip]
    ) -> Chip? {
        ChipFamily(targetID: targetID, in: chips)?.members.first {
            $0.flashSizeCode == code && ($0.reportsFlashSize || $0.flashSize == flashSize)
        }
    }

    /// The XDATA addresses of the chip's SRAM: from 0x0000 on the CC253x/4x, ending at 0xFFFF on
    /// the CC251x/111x.
    public var ram: Range<Int> { Self.ram(ramSize, map: registerMap) }

    /// Where `size` bytes of SRAM sit in XDATA on `map`.
    static func ram(_ size: Int, map: RegisterMap) -> Range<Int> {
        map == .xreg ? 0..<size : (0x10000 - size)..<0x10000
    }

    /// Whether the chip tells its flash size through the debug interface (CHIPINFO0, the
    /// CC253x/4x); one that does not is told it by the user (`reporting(…flashSize:…)`).
    public var reportsFlashSize: Bool { registerMap == .xreg }

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
            && lhs.flashWriting == rhs.flashWriting && lhs.registerMap == rhs.registerMap
            && lhs.flashWordSize == rhs.flashWordSize
    }

    /// What an address of this chip's flash is used for, when it is special.
    public func reservedUse(of address: Int) -> String? {
        if lockBits?.contains(address) == true { return "the lock bits" }
        if secondaryAddress?.contains(address) == true { return "the secondary address" }
        if lockBits != nil, lastPageRange.contains(address) {
            return "the last page (secondary address and lock bits)"
        }
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
        let registerMap: RegisterMap
        switch try object.optionalString("registers") {
        case nil: registerMap = .xreg
        case let name?:
            guard let map = RegisterMap(rawValue: name) else {
                let all = RegisterMap.allCases.map(\.rawValue)
                let names = all.dropLast().joined(separator: ", ") + " or " + (all.last ?? "")
                throw object.error("registers", "must be \(names), not '\(name.excerpt())'")
            }
            registerMap = map
        }
        // 0 is what a debug-locked chip reports: no chip can be told by it. A chip that reports
        // no size has none.
        var flashSizeCode: UInt8 = 0
        if registerMap == .xreg {
            flashSizeCode = UInt8(try object.integer("flashSizeCode", in: 1...7))
        } else if object.optionalNode("flashSizeCode") != nil {
            throw object.error(
                "flashSizeCode", "a chip with registers \"\(registerMap.rawValue)\" does not report its flash size")
        }
        // The CC253x/4x flash word is 4 bytes; the older maps' is the chip's to say (2 on the
        // CC251x/111x, 4 on the CC243x), so it must say it.
        let wordSize: Int
        switch (registerMap, try object.optionalInteger("wordSize", in: 1...8)) {
        case (.xreg, nil), (.xreg, 4?): wordSize = 4
        case (.xreg, _?): throw object.error("wordSize", "the CC253x/4x flash word is 4 bytes")
        case (_, nil):
            throw object.error(
                "wordSize",
                "is missing; a chip with registers \"\(registerMap.rawValue)\" says its flash word (2 on the CC251x/111x, 4 on the CC243x)"
            )
        case (.sfrBanked, let size?):
            guard size == 4 else { throw object.error("wordSize", "the CC243x flash word is 4 bytes") }
            wordSize = size
        case (_, let size?):
            guard [2, 4].contains(size) else { throw object.error("wordSize", "must be 2 or 4 bytes") }
            wordSize = size
        }
        // FADDR (16 bits) counts flash words: no chip has more flash than it reaches.
        let reach = 65536 * wordSize
        guard flashSize <= reach else {
            throw object.error(
                "flashSize",
                "FADDR reaches 65536 words of \(wordSize) bytes: at most \(hex(reach)), not \(hex(flashSize))")
        }
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
                descriptorAddress: try writing.integer("descriptor", in: 0...0xFFFF),
                bufferAddress: try writing.optionalInteger("buffer", in: 0...0xFFFF) ?? 0)
            try writing.finish()
        }
        var lockBits: Range<Int>?
        if registerMap == .xreg {
            var lock = try object.object("lockBits")
            let lockStart = try lock.integer("address", in: 0...(1 << 20))
            let lockLength = try lock.integer("length", in: 1...64)
            try lock.finish()
            guard lockStart + lockLength == flashSize else {
                throw object.error(
                    "lockBits", "must be the last \(lockLength) bytes of flash (end at \(hex(flashSize)))")
            }
            lockBits = lockStart..<(lockStart + lockLength)
        } else if object.optionalNode("lockBits") != nil {
            throw object.error(
                "lockBits",
                "a chip with registers \"\(registerMap.rawValue)\" keeps its lock byte in the information page")
        }
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
        // The secondary address ends where the lock bits begin, or (the CC243x: no lock bits, no
        // factory address; cc-tool keeps the IEEE address there) at the end of flash.
        if let secondaryAddress, secondaryAddress.upperBound != lockBits?.lowerBound ?? flashSize {
            throw object.error(
                "secondaryAddress",
                lockBits == nil
                    ? "must be the last bytes of flash (end at \(hex(flashSize)))"
                    : "must sit directly below the lock bits (end at \(hex(lockBits?.lowerBound ?? 0)))")
        }
        if registerMap.isOlder, primaryAddress != nil {
            throw object.error(
                "primaryAddress", "a chip with registers \"\(registerMap.rawValue)\" has no factory address")
        }
        if registerMap == .sfr, secondaryAddress != nil {
            throw object.error(
                "secondaryAddress",
                "a chip with registers \"sfr\" keeps no address (no factory address, no place for one)")
        }
        if registerMap == .xreg, (primaryAddress == nil) != (secondaryAddress == nil) {
            throw object.error("secondaryAddress", "is given exactly when primaryAddress is")
        }
        // SRAM must not reach the registers: the XREG area at 0x6000, or the SFRs at 0xDF00.
        guard registerMap == .xreg ? ramSize <= 0x6000 : ramSize <= 0x2000 else {
            throw object.error(
                "ramSize",
                registerMap == .xreg
                    ? "SRAM from 0x0000 would reach the registers at 0x6000: at most 24576 bytes"
                    : "SRAM ending at 0xFFFF would reach the SFRs at 0xDF00–0xDFFF: at most 8192 bytes")
        }
        if registerMap.isOlder, flashWriting.path == .burst {
            throw object.error(
                "flashWrite",
                "a chip with registers \"\(registerMap.rawValue)\" takes no BURST_WRITE: its path is \"xdata\"")
        }
        let ram = Self.ram(ramSize, map: registerMap)
        if let problem = flashWriting.problem(ram: ram, pageSize: pageSize, wordSize: wordSize) {
            throw object.error(
                "flashWrite", (givenWriting ? "" : "not given, so the default (burst) is taken: ") + problem)
        }
        var chip = Chip(
            name: name, family: family, chipID: chipID, debuggerTargetID: targetID, flashSize: flashSize,
            flashSizeCode: flashSizeCode, pageSize: pageSize, ramSize: ramSize,
            primaryAddress: primaryAddress, secondaryAddress: secondaryAddress,
            lockBits: lockBits, nvPages: nvPages, flashWriting: flashWriting)
        chip.registerMap = registerMap
        chip.flashWordSize = wordSize
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

/// Where a chip's registers sit in XDATA (TI's user's guides for each family).
public enum RegisterMap: String, Sendable, Equatable, CaseIterable {
    /// The CC253x/4x: flash controller and chip ID in the XREG area (0x6200–0x62FF), SFRs mirrored
    /// at 0x7080, the information page at 0x7800, CHIPINFO0/1 telling flash and RAM size; the
    /// lock bits are the last 16 bytes of flash; READ_STATUS bit 7 means a chip erase is busy.
    case xreg
    /// The CC251x/111x (TI's older debug specification, SWRA124): the flash controller is SFRs
    /// (FADDRL/H 0xAC/0xAD, FCTL 0xAE, FWDATA 0xAF; write command 0x02), seen with all SFRs at
    /// XDATA 0xDF00–0xDFFF; PARTNUM and VERSION at 0xDF36/0xDF37; flash at XDATA 0x0000 (no
    /// banks), SRAM ending at 0xFFFF; no size report; one lock byte in the information page
    /// (bit 0 = debug lock) written through the debug configuration's SEL_FLASH_INFO_PAGE;
    /// READ_STATUS bit 7 means a chip erase is *done*.
    case sfr
    /// The CC243x: the older map of `sfr` (flash controller SFRs, no size report, the lock byte in
    /// the information page, SRAM ending at 0xFFFF, READ_STATUS bit 7 set when an erase is done),
    /// with CHVER and CHIPID at 0xDF60/0xDF61 and up to 128 KiB of flash in 32 KiB banks that FMAP
    /// maps into CODE space at 0x8000 (SDCC's cc2430.h, TI E2E 17664). Where in XDATA the CRC DMA
    /// would find each bank is not in our sources, so these chips are verified by reading back.
    case sfrBanked = "sfr-banked"

    /// Whether this is one of TI's older maps (`sfr`, `sfrBanked`), which share the flash
    /// controller, the lock byte and the erase status of SWRA124.
    public var isOlder: Bool { self != .xreg }

    /// Whether the on-chip CRC can check the flash: its DMA reads the flash through XDATA, which is
    /// known for the CC253x/4x (the MEMCTR bank window) and the CC251x/111x (all of it from 0x0000).
    public var verifiesByCRC: Bool { self != .sfrBanked }
}

/// How the flash programmer moves an image into a chip's flash: the path, the block it hands the
/// flash controller at a time, where in the chip's SRAM its buffers and DMA descriptors sit. All
/// of it must fit the chip's SRAM.
public struct FlashWriting: Sendable, Equatable {
    /// The two write paths (cc-debugger-protocol.md §7.3–§7.4).
    public enum Path: String, Sendable, Equatable, CaseIterable {
        /// BURST_WRITE into DBGDATA, taken by DMA into one of two RAM buffers while the other
        /// feeds the flash controller (CC2530/31/33/40/41): four descriptors.
        case burst
        /// Each block written into one RAM buffer with debug instructions, then one DMA channel
        /// feeds the flash controller (CC2543/44/45 and CC251x/111x, whose debug interface has no
        /// burst and whose 1–4 KiB of SRAM hold no second buffer): one descriptor.
        case xdata
    }

    /// Which path.
    public var path: Path
    /// Bytes handed to the flash controller at a time.
    public var blockSize: Int
    /// The XDATA address of the DMA descriptors (in SRAM, above the buffers).
    public var descriptorAddress: Int
    /// The XDATA address of the first block buffer (the start of SRAM).
    public var bufferAddress: Int

    /// A way of writing.
    public init(path: Path, blockSize: Int, descriptorAddress: Int, bufferAddress: Int = 0) {
        self.path = path
        self.blockSize = blockSize
        self.descriptorAddress = descriptorAddress
        self.bufferAddress = bufferAddress
    }

    /// The CC253x/CC254x fast path: 1 KiB bursts, two buffers at 0x0000 and 0x0400, descriptors at 0x0800.
    public static let burst = FlashWriting(path: .burst, blockSize: 1024, descriptorAddress: 0x0800)

    /// The RAM buffers blocks pass through.
    public var buffers: [Int] { path == .burst ? [bufferAddress, bufferAddress + blockSize] : [bufferAddress] }
    /// Descriptors: four on the burst path (channels 1–4), one on the XDATA path (channel 0).
    public var descriptorCount: Int { path == .burst ? 4 : 1 }

    /// What is wrong with this way of writing on a chip whose SRAM is `ram` (XDATA addresses),
    /// with pages of `pageSize` and flash words of `wordSize`, or `nil`: blocks of whole words that
    /// fill pages evenly, the buffers inside SRAM and below the descriptors, the descriptors inside
    /// SRAM.
    public func problem(ram: Range<Int>, pageSize: Int, wordSize: Int = 4) -> String? {
        guard path != .burst || blockSize == 1024 else {
            return "the burst path writes 1024-byte blocks (what one BURST_WRITE carries), not \(blockSize)"
        }
        guard blockSize % wordSize == 0, pageSize % blockSize == 0 else {
            return "blockSize \(blockSize) must be whole words and divide the page (\(pageSize) bytes)"
        }
        let buffersEnd = bufferAddress + buffers.count * blockSize
        guard ram.contains(bufferAddress), buffersEnd <= ram.upperBound else {
            return
                "the buffers at \(hex(bufferAddress))–\(hex(buffersEnd - 1)) lie outside the chip's SRAM (\(hex(ram.lowerBound))–\(hex(ram.upperBound - 1)))"
        }
        guard buffersEnd <= descriptorAddress else {
            return
                "the descriptors at \(hex(descriptorAddress)) overlap the block buffers (up to \(hex(buffersEnd)))"
        }
        guard descriptorAddress + 8 * descriptorCount <= ram.upperBound else {
            return "the descriptors at \(hex(descriptorAddress)) lie beyond the chip's \(ram.count) bytes of SRAM"
        }
        return nil
    }
}

extension Chip {
    /// A size as messages give it: `32 KiB` for a whole number of KiB, else the exact count in
    /// bytes (`48 bytes`, `20992 bytes` where 512-byte blocks leave half a KiB), so a size is
    /// never shown as 0 KiB or rounded.
    public static func sizeText(_ bytes: Int) -> String {
        if bytes > 0, bytes % 1024 == 0 { return "\(bytes / 1024) KiB" }
        return bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }

    /// The flash sizes a family comes in, as numbers of KiB in order: `8, 16 or 32`.
    public static func kibList(_ sizes: [Int]) -> String {
        let numbers = Set(sizes).sorted().map { String($0 / 1024) }
        guard numbers.count > 1 else { return numbers.first ?? "" }
        return numbers.dropLast().joined(separator: ", ") + " or " + numbers.last!
    }
}
