import TargetData

/// The CC253x/CC254x registers the debugger drives through the debug interface, each named once
/// as TI's CC253x/CC2540/41 User's Guide (SWRU191) names it, with the guide's chapter. The
/// addresses and bits used here are collected in cc-debugger-protocol.md §5.2–§5.3 and §8.
enum SFR {
    /// DPS, data-pointer select (chapter "8051 CPU"): 0 selects DPTR0, the pointer the debug
    /// commands load.
    static let dps: UInt8 = 0x92
    /// FMAP, the flash bank mapped at CODE 0x8000–0xFFFF (chapter "8051 CPU", memory).
    static let fmap: UInt8 = 0x9F
    /// RNDL, the CRC register's low byte (chapter "Random-Number Generator"): two writes of 0xFF
    /// seed the CRC with 0xFFFF.
    static let rndl: UInt8 = 0xBC
    /// RNDH, the CRC register's high byte; a byte written to it is fed to the CRC.
    static let rndh: UInt8 = 0xBD
    /// MEMCTR (chapter "8051 CPU", memory): bits 2..0 XBANK choose the flash bank seen at XDATA
    /// 0x8000–0xFFFF.
    static let memctr: UInt8 = 0xC7
    /// DMAIRQ (chapter "DMA Controller"): bit n is set when channel n has finished.
    static let dmairq: UInt8 = 0xD1
    /// DMA1CFGL/H: where the descriptors of channels 1–4 start (8 bytes each, contiguous).
    static let dma1cfgl: UInt8 = 0xD2
    static let dma1cfgh: UInt8 = 0xD3
    /// DMA0CFGL/H: where channel 0's descriptor is.
    static let dma0cfgl: UInt8 = 0xD4
    static let dma0cfgh: UInt8 = 0xD5
    /// DMAARM: bit n arms channel n.
    static let dmaarm: UInt8 = 0xD6
    /// DMAREQ: bit n triggers channel n by hand.
    static let dmareq: UInt8 = 0xD7
}

/// XDATA-mapped registers (XREG), from the same guide.
enum XREG {
    /// CHVER, the chip revision (chapter "Debug Interface").
    static let chver: UInt16 = 0x6249
    /// CHIPID, the chip's ID, 0x41 on a CC2541 (chapter "Debug Interface").
    static let chipid: UInt16 = 0x624A
    /// DBGDATA, where BURST_WRITE puts each byte; the source of the burst DMA channel.
    static let dbgdata: UInt16 = 0x6260
    /// FCTL, flash control (chapter "Flash Controller"); see `FlashControl` for its bits.
    static let fctl: UInt16 = 0x6270
    /// FADDRL/FADDRH, the flash word address (byte address / 4), incremented by each word written.
    static let faddrl: UInt16 = 0x6271
    /// FWDATA, the flash write data register; the destination of the flash DMA channels.
    static let fwdata: UInt16 = 0x6273
    /// CHIPINFO0 (chapter "Debug Interface"): bits 6..4 FLASHSIZE, bit 3 USB.
    static let chipinfo0: UInt16 = 0x6276
    /// CHIPINFO1: bits 2..0 SRAMSIZE (KiB − 1).
    static let chipinfo1: UInt16 = 0x6277
}

/// FCTL's bits and the values written to it (cc-debugger-protocol.md §5.3).
enum FlashControl {
    /// BUSY: a write or erase is in progress.
    static let busy: UInt8 = 0x80
    /// ABORT: the last write or erase was aborted (a locked page, say).
    static let abort: UInt8 = 0x20
    /// WRITE with cache mode 01 (the normal mode): start writing what the DMA feeds FWDATA.
    static let startWrite: UInt8 = 0x06
}

/// CHIPINFO0/1 decoded (cc-debugger-protocol.md §6.2).
enum ChipInfo {
    /// CHIPINFO0.FLASHSIZE, the code each chip of `boards/chips.json` names (`flashSizeCode`):
    /// what size it means is the family's to say, so the chips carry it.
    static func flashSizeCode(chipinfo0: UInt8) -> UInt8 { (chipinfo0 >> 4) & 7 }

    /// The SRAM size CHIPINFO1.SRAMSIZE gives, in bytes.
    static func ramSize(chipinfo1: UInt8) -> Int { (Int(chipinfo1 & 7) + 1) * 1024 }
}

/// One 8-byte DMA descriptor (SWRU191 chapter "DMA Controller": SRCADDR, DESTADDR, VLEN/LEN,
/// then the trigger/mode byte and the increment/priority byte), in the chip's byte order.
struct DMADescriptor: Equatable {
    var source: UInt16
    var destination: UInt16
    var length: Int
    /// Byte 6: word size, transfer mode and trigger (0x1F: single transfer on DBG_BW, the burst
    /// write; 0x12: single on FLASH; 0x20: block transfer, no trigger but DMAREQ).
    var mode: UInt8
    /// Byte 7: source/destination increment, interrupt mask and priority.
    var flags: UInt8

    var bytes: [UInt8] {
        [
            UInt8(source >> 8), UInt8(source & 0xFF), UInt8(destination >> 8), UInt8(destination & 0xFF),
            UInt8(length >> 8), UInt8(length & 0xFF), mode, flags,
        ]
    }
}

/// The addresses a session drives on the chip's register map (`RegisterMap`): the flash
/// controller, the SFRs as XDATA sees them, the write command and the sense of READ_STATUS bit 7.
/// The SFR numbers themselves (DMA, CRC, DPS) are one 8051 core's and the same on every map.
struct Registers: Equatable {
    /// FCTL, FADDRL (FADDRH follows it) and FWDATA in XDATA.
    var fctl: UInt16
    var faddrl: UInt16
    var fwdata: UInt16
    /// Where XDATA shows SFR 0x00 (the SFRs sit at this plus their number).
    var sfrBase: UInt16
    /// FCTL's value that starts a write (WRITE, with cache mode 01 on the CC253x/4x).
    var startWrite: UInt8
    /// Where the chip's flash shows in XDATA for the CRC DMA: the MEMCTR bank window at 0x8000, or
    /// all of it from 0x0000 (no banks).
    var banksFlashWindow: Bool
    /// Whether READ_STATUS bit 7 set means the chip erase is done (the older map) rather than busy.
    var eraseBitMeansDone: Bool
    /// Where the chip's ID and its revision are read in XDATA (CHIPID and CHVER; PARTNUM and
    /// VERSION on the CC251x/111x).
    var chipIDAddress: UInt16
    var revisionAddress: UInt16

    /// The XDATA address through which an SFR is read.
    func mirror(_ sfr: UInt8) -> UInt16 { sfrBase + UInt16(sfr) }

    /// Whether a chip erase still runs, by READ_STATUS.
    func eraseBusy(status: UInt8) -> Bool { (status & Frames.Status.chipEraseBusy != 0) != eraseBitMeansDone }

    /// The CC253x/4x (SWRU191; cc-debugger-protocol.md §5.2–§5.3).
    static let xreg = Registers(
        fctl: XREG.fctl, faddrl: XREG.faddrl, fwdata: XREG.fwdata, sfrBase: 0x7000,
        startWrite: FlashControl.startWrite, banksFlashWindow: true, eraseBitMeansDone: false,
        chipIDAddress: XREG.chipid, revisionAddress: XREG.chver)
    /// The CC251x/111x (SWRA124; SDCC's cc2510fx.h: FADDRL 0xAC, FCTL 0xAE, FWDATA 0xAF, seen at
    /// 0xDF00 + SFR; write command 0x02; PARTNUM 0xDF36, VERSION 0xDF37; chip-family.md §1 for the
    /// erase bit).
    static let sfr = Registers(
        fctl: 0xDFAE, faddrl: 0xDFAC, fwdata: 0xDFAF, sfrBase: 0xDF00, startWrite: 0x02, banksFlashWindow: false,
        eraseBitMeansDone: true, chipIDAddress: 0xDF36, revisionAddress: 0xDF37)
    /// The CC243x: the CC251x/111x's flash controller and SFRs (SDCC's cc2430.h has the same
    /// addresses), CHIPID at 0xDF61 and CHVER at 0xDF60. Its flash is never read through XDATA
    /// (`RegisterMap.verifiesByCRC`), so `banksFlashWindow` does not apply.
    static let sfrBanked: Registers = {
        var registers = sfr
        (registers.chipIDAddress, registers.revisionAddress) = (0xDF61, 0xDF60)
        return registers
    }()

    /// The registers of `map`.
    static func of(_ map: RegisterMap) -> Registers {
        switch map {
        case .xreg: .xreg
        case .sfr: .sfr
        case .sfrBanked: .sfrBanked
        }
    }
}
