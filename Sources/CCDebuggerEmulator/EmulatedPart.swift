/// A part of the CC Debugger's chip family as its silicon presents itself through the debug
/// interface: what GET_STATE, GET_CHIP_ID, CHIPID and CHIPINFO report, how its flash is laid out and
/// where its factory address sits.
///
/// The emulator keeps this table of its own rather than reading `boards/chips.json`: the flasher
/// reads the catalog, and an emulator built from the same file would agree with any mistake in it.
/// The unmodified cc-tool, with chip tables of its own, checks both (cc-debugger-protocol.md §6.1,
/// chip-family.md).
public struct EmulatedPart: Sendable, Equatable, CustomStringConvertible {
    /// The part name with its flash size, as `ccbeacon info` prints it: `CC2541F256`.
    public var name: String
    /// The family the debugger names by `targetID`: `CC2541`.
    public var family: String
    /// What the debugger's GET_STATE reports while the chip is attached (0x2541).
    public var targetID: UInt16
    /// CHIPID, also the first byte of GET_CHIP_ID's reply (0x41 on a CC2541).
    public var chipID: UInt8
    /// Flash size in bytes.
    public var flashSize: Int
    /// CHIPINFO0's FLASHSIZE field (bits 6..4); its meaning differs between families.
    public var flashSizeCode: UInt8
    /// The flash page (erase unit) in bytes.
    public var pageSize: Int
    /// SRAM in bytes, from XDATA 0x0000; CHIPINFO1 bits 2..0 report it as KiB − 1.
    public var ramSize: Int
    /// Whether the part has a USB controller (CHIPINFO0 bit 3).
    public var hasUSB: Bool
    /// Where the factory IEEE address starts in the 2 KiB information page, least significant byte
    /// first; `nil` on parts that have none.
    public var ieeeOffset: Int?
    /// The factory address's length: 8 bytes on CC253x, 6 on CC2540/41.
    public var ieeeLength: Int
    /// Whether the debug interface takes BURST_WRITE (DBGDATA with its DMA trigger). The
    /// CC2543/44/45 are modelled without it: cc-tool never sends it to them, TI's older debug
    /// specification has none, and no source says they have it — a client that bursts to one
    /// writes nothing, and its verify fails.
    public var hasBurstWrite: Bool
    /// Whether the part has the older register map of TI's first debug specification (SWRA124:
    /// CC251x/111x): flash controller and DMA as SFRs seen at XDATA 0xDF00–0xDFFF, PARTNUM/VERSION
    /// at 0xDF36/0xDF37, flash at XDATA 0x0000, SRAM ending at 0xFFFF, 2-byte flash words, no
    /// CHIPINFO, the lock byte in the information page, and READ_STATUS bit 7 set when a chip
    /// erase is done rather than while it runs.
    public var hasOlderRegisterMap: Bool
    /// Whether the older map is the CC243x's (SDCC's cc2430.h, from TI's SWRS036): CHVER and CHIPID
    /// at XDATA 0xDF60/0xDF61, the radio's IEEE_ADDR registers at 0xDF43–0xDF4A (set by firmware;
    /// 0 after reset), up to 128 KiB of flash in 32 KiB banks that FMAP maps into CODE and XDATA
    /// at 0x8000 (TI E2E 17664; XDATA shows only what lies below the registers at 0xDF00), bank 0
    /// at 0x0000, and 4-byte flash words.
    public var hasBankedOlderMap: Bool
    /// Bytes in one flash word (FADDR counts words): 4, or 2 on the CC251x/111x.
    public var flashWordSize: Int

    /// A part; `EmulatedPart.all` lists the ones the emulator models.
    public init(
        name: String, family: String, targetID: UInt16, chipID: UInt8, flashSize: Int, flashSizeCode: UInt8,
        pageSize: Int, ramSize: Int, hasUSB: Bool, ieeeOffset: Int?, ieeeLength: Int, hasBurstWrite: Bool = true,
        hasOlderRegisterMap: Bool = false, hasBankedOlderMap: Bool = false
    ) {
        self.name = name
        self.family = family
        self.targetID = targetID
        self.chipID = chipID
        self.flashSize = flashSize
        self.flashSizeCode = flashSizeCode
        self.pageSize = pageSize
        self.ramSize = ramSize
        self.hasUSB = hasUSB
        self.ieeeOffset = ieeeOffset
        self.ieeeLength = ieeeLength
        self.hasBurstWrite = hasBurstWrite
        self.hasOlderRegisterMap = hasOlderRegisterMap || hasBankedOlderMap
        self.hasBankedOlderMap = hasBankedOlderMap
        flashWordSize = hasOlderRegisterMap && !hasBankedOlderMap ? 2 : 4
    }

    /// The XDATA addresses of the SRAM: from 0x0000 on the CC253x/4x, up to 0xFFFF on the older
    /// parts (whose smaller variants are modelled with nothing below their SRAM: whether the
    /// silicon mirrors it lower is not in our sources).
    public var ram: Range<Int> { hasOlderRegisterMap ? (0x10000 - ramSize)..<0x10000 : 0..<ramSize }

    /// The name.
    public var description: String { name }

    /// The part every emulated debugger holds unless told otherwise.
    public static let cc2541F256 = all.first { $0.name == "CC2541F256" }!

    /// The parts modelled: the CC253x/CC254x family, which CHIPINFO0 tells apart by size (the
    /// CC2543/44/45 code 18 KiB as 1 and 32 KiB as 7), and the CC251x/111x, which report no size
    /// (code 0 here; 8, 16 or 32 KiB with 1, 2 or 4 KiB of SRAM), and the CC2430/31 (no size
    /// either; 32, 64 or 128 KiB, 2 KiB pages, 8 KiB of SRAM).
    /// Sources: cc-debugger-protocol.md §6.1–§6.3 (cc-tool's chip table, SWRU191), chip-family.md,
    /// SDCC's cc2510fx.h (PARTNUM/VERSION at 0xDF36/0xDF37, the flash SFRs at 0xAB–0xAF) and
    /// cc2430.h (CHVER/CHIPID at 0xDF60/0xDF61, FMAP 0x9F, the same flash SFRs).
    public static let all: [EmulatedPart] = {
        // family, target ID, CHIPID, USB, BURST_WRITE, IEEE offset and length,
        // (size KiB, FLASHSIZE code, page, RAM KiB)
        let families: [(String, UInt16, UInt8, Bool, Bool, Int?, Int, [(Int, UInt8, Int, Int)])] = [
            (
                "CC2530", 0x2530, 0xA5, false, true, 0x0C, 8,
                [(32, 1, 2048, 8), (64, 2, 2048, 8), (128, 3, 2048, 8), (256, 4, 2048, 8)]
            ),
            ("CC2531", 0x2531, 0xB5, true, true, 0x0C, 8, [(128, 3, 2048, 8), (256, 4, 2048, 8)]),
            ("CC2533", 0x2533, 0x95, false, true, 0x0C, 8, [(32, 1, 1024, 4), (64, 2, 1024, 4), (96, 3, 1024, 6)]),
            ("CC2543", 0x2543, 0x43, false, false, nil, 0, [(18, 1, 1024, 1), (32, 7, 1024, 1)]),
            ("CC2544", 0x2544, 0x44, true, false, nil, 0, [(32, 7, 1024, 2)]),
            ("CC2545", 0x2545, 0x45, false, false, nil, 0, [(18, 1, 1024, 1), (32, 7, 1024, 1)]),
            ("CC2540", 0x2540, 0x8D, true, true, 0x0E, 6, [(128, 3, 2048, 8), (256, 4, 2048, 8)]),
            ("CC2541", 0x2541, 0x41, false, true, 0x0E, 6, [(128, 3, 2048, 8), (256, 4, 2048, 8)]),
        ]
        let current = families.flatMap { family, targetID, chipID, usb, burst, ieeeOffset, ieeeLength, sizes in
            sizes.map { kib, code, page, ram in
                EmulatedPart(
                    name: "\(family)F\(kib)", family: family, targetID: targetID, chipID: chipID,
                    flashSize: kib * 1024, flashSizeCode: code, pageSize: page, ramSize: ram * 1024, hasUSB: usb,
                    ieeeOffset: ieeeOffset, ieeeLength: ieeeLength, hasBurstWrite: burst)
            }
        }
        // family, target ID, PARTNUM, USB; each in 8, 16 and 32 KiB with 1, 2 and 4 KiB of SRAM.
        let older: [(String, UInt16, UInt8, Bool)] = [
            ("CC2510", 0x2510, 0x81, false), ("CC2511", 0x2511, 0x91, true),
            ("CC1110", 0x1110, 0x01, false), ("CC1111", 0x1111, 0x11, true),
        ]
        // family, target ID, CHIPID; each in 32, 64 and 128 KiB with 8 KiB of SRAM.
        let banked: [(String, UInt16, UInt8)] = [("CC2430", 0x2430, 0x85), ("CC2431", 0x2431, 0x89)]
        return current
            + older.flatMap { family, targetID, partNumber, usb in
                [(8, 1), (16, 2), (32, 4)].map { kib, ram in
                    EmulatedPart(
                        name: "\(family)F\(kib)", family: family, targetID: targetID, chipID: partNumber,
                        flashSize: kib * 1024, flashSizeCode: 0, pageSize: 1024, ramSize: ram * 1024, hasUSB: usb,
                        ieeeOffset: nil, ieeeLength: 0, hasBurstWrite: false, hasOlderRegisterMap: true)
                }
            }
            + banked.flatMap { family, targetID, chipID in
                [32, 64, 128].map { kib in
                    EmulatedPart(
                        name: "\(family)F\(kib)", family: family, targetID: targetID, chipID: chipID,
                        flashSize: kib * 1024, flashSizeCode: 0, pageSize: 2048, ramSize: 8192, hasUSB: false,
                        ieeeOffset: nil, ieeeLength: 0, hasBurstWrite: false, hasBankedOlderMap: true)
                }
            }
    }()

    /// The part called `name` (any case): a full name (`CC2541F128`), or a family's name alone for
    /// its largest part (`CC2541` is a CC2541F256).
    public static func named(_ name: String) -> EmulatedPart? {
        let wanted = name.uppercased()
        return all.first { $0.name == wanted } ?? all.filter { $0.family == wanted }.max { $0.flashSize < $1.flashSize }
    }
}
