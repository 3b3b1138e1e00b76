import Synchronization

/// A model of a chip of the CC253x/CC254x family (`EmulatedPart`; a CC2541F256 unless told
/// otherwise) as seen through its debug interface: the halted 8051 executing single instructions,
/// XDATA with SRAM, XREGs, the SFR mirror, the information page and the banked flash window, the
/// DMA controller, the flash controller and the CRC unit.
///
/// Only what the debug interface can reach is modelled; facts from cc-debugger-protocol.md §4–§7
/// and SWRU191 as quoted there.
///
/// A chip is one object however many hold it — a debugger's socket, a bench's drawer, a test
/// that looks at its flash after a burn — so it is a class; its state sits behind a lock, as a
/// test's thread may read it while a worker's transfer runs.
@dynamicMemberLookup
public final class EmulatedChip: Sendable {
    let model: Mutex<ChipModel>

    /// A blank (erased) `part` with `ieee` as its factory address (MSB first, as printed), fitted to
    /// the part's length after TI's OUI (the first three bytes): a 6-byte 00:12:4B:00:25:41 is
    /// 00:12:4B:00:00:00:25:41 on a part whose address has 8 bytes, and the other way round.
    public init(part: EmulatedPart = .cc2541F256, ieee: [UInt8]? = nil) {
        model = Mutex(ChipModel(part: part, ieee: ieee ?? [0x00, 0x12, 0x4B, 0x00, 0x25, 0x41]))
    }

    /// What the chip is.
    public var part: EmulatedPart { model.withLock { $0.part } }
    /// Flash size in bytes.
    public var flashSize: Int { model.withLock { $0.part.flashSize } }
    /// Flash contents (0xFF = erased).
    public var flash: [UInt8] {
        get { model.withLock { $0.flash } }
        set { model.withLock { $0.flash = newValue } }
    }
    /// The 2 KiB information page (read-only to the debugger).
    public var infoPage: [UInt8] {
        get { model.withLock { $0.infoPage } }
        set { model.withLock { $0.infoPage = newValue } }
    }
    /// True after reset into debug mode, until reset to run.
    public var halted: Bool { model.withLock { $0.halted } }
    /// True while the debug interface is locked (evaluated at reset).
    public var debugLocked: Bool { model.withLock { $0.debugLocked } }
    /// What a test may set about the chip (`Settings`), read and written as the chip's own
    /// properties: `chip.busyPolls = 3`, `chip.stuckAtZero[0x1234] = 0x01`.
    public subscript<Value: Sendable>(dynamicMember setting: WritableKeyPath<Settings, Value>) -> Value {
        get { model.withLock { $0.settings[keyPath: setting] } }
        set { model.withLock { $0.settings[keyPath: setting] = newValue } }
    }

    /// The factory address, MSB first (empty on a part that has none).
    public var ieeeAddress: [UInt8] { model.withLock { $0.ieeeAddress } }

    /// Locks the debug interface, as firmware writing the lock bits would (takes effect at reset).
    public func setDebugLockBit() { model.withLock { $0.setDebugLockBit() } }
    /// Reset: into debug mode (halted) or running.
    public func reset(halt: Bool) { model.withLock { $0.reset(halt: halt) } }
    /// A byte of XDATA as the 8051 reads it (registers included). Untimed: a flash operation
    /// running on device time reads as done.
    public func readXdata(_ address: Int) -> UInt8 {
        model.withLock { model in
            model.moment = nil
            return model.readXdata(address)
        }
    }
    /// Writes a byte of XDATA as the 8051 would (untimed: a flash operation it starts is done at once).
    public func writeXdata(_ address: Int, _ value: UInt8) {
        model.withLock { model in
            model.moment = nil
            model.writeXdata(address, value)
        }
    }
    /// Runs one debug command (command byte + parameters) at `moment` of device time (nil:
    /// untimed); returns the reply bytes.
    func debugCommand(_ command: [UInt8], at moment: DeviceMoment? = nil) -> [UInt8] {
        model.withLock { $0.debugCommand(command, at: moment) }
    }
    /// A burst write, as the debugger's BURST_WRITE delivers it.
    func burstWrite(_ bytes: ArraySlice<UInt8>) { model.withLock { $0.burstWrite(bytes) } }
}

extension EmulatedChip {
    /// What a test may set about a chip: the facts that make it another part, and its faults.
    public struct Settings: Sendable, Equatable {
        /// The chip revision (CHVER).
        public var revision: UInt8 = 0x13
        /// The CHIPINFO0.FLASHSIZE code the chip reports (set it to model a part ccbeacon does
        /// not know).
        public var flashSizeCode: UInt8
        /// Fault: the flash controller never finishes.
        public var flashStuckBusy = false
        /// Fault: the chip ignores a cleared DBGLOCK bit at reset (a failing part): locking it
        /// never takes.
        public var ignoresDebugLock = false
        /// Fault: a chip erase completes with the debug interface locked (a failing part): every
        /// erase ends in "still locked".
        public var eraseLeavesLocked = false
        /// Fault: flash cells whose bits read as 0 whatever is written (address → mask of stuck
        /// bits).
        public var stuckAtZero: [Int: UInt8] = [:]
        /// Polls a chip erase or a flash write stays busy, so hosts must poll (untimed; on device
        /// time the durations come from `DeviceTiming`).
        public var busyPolls = 1
        /// Reads of DMAIRQ after a manual DMA trigger that still show channel 0 busy (untimed: a
        /// CRC DMA that the host finds not done yet and must poll for).
        public var dmaBusyReads = 0
    }
}

/// The chip's state and behaviour, used under `EmulatedChip`'s lock.
struct ChipModel: Sendable {
    /// What the chip is.
    let part: EmulatedPart
    /// Flash size in bytes.
    var flashSize: Int { part.flashSize }
    /// What a test set (`EmulatedChip.Settings`).
    var settings: EmulatedChip.Settings
    /// Flash contents (0xFF = erased).
    var flash: [UInt8]
    /// The 2 KiB information page (read-only to the debugger).
    var infoPage: [UInt8]
    /// The SRAM, at `part.ram` in XDATA.
    var sram: [UInt8]
    /// SFRs 0x80–0xFF, indexed by address − 0x80.
    var sfr = [UInt8](repeating: 0, count: 0x80)
    /// Internal RAM 0x00–0x7F.
    var internalRAM = [UInt8](repeating: 0, count: 0x80)
    /// Debug configuration byte.
    var debugConfig: UInt8 = 0
    /// True after reset into debug mode, until reset to run.
    private(set) var halted = false
    /// True while the debug interface is locked (evaluated at reset).
    private(set) var debugLocked = false
    /// Status polls left until a running chip erase completes (untimed).
    var chipEraseRemaining = 0
    /// When a chip erase running on device time completes.
    var eraseDoneAt: Duration?
    /// The device time of the command being run, nil when untimed: busy flags then come from
    /// `DeviceTiming` rather than from counted polls.
    var moment: DeviceMoment?

    // Flash controller.
    var fctl: UInt8 = 0x04  // CM = 01
    var faddr: Int = 0  // word address
    var flashBusyPolls = 0
    /// When a flash write or page erase running on device time completes.
    var flashDoneAt: Duration?
    /// 32-bit words the flash controller has written (their count times a write's duration).
    var wordsWritten = 0
    var wordBuffer: [UInt8] = []
    /// Set by an erase under `eraseLeavesLocked`: the lock survives every reset from then on.
    var lockedByErase = false

    // CRC unit (RNDL/RNDH).
    var crc: UInt16 = 0

    // DMA.
    struct Channel {
        var source = 0
        var destination = 0
        var remaining = 0
        var trigger: UInt8 = 0
        var mode: UInt8 = 0
        var sourceIncrement = 0
        var destinationIncrement = 0
        var armed = false
    }
    var channels = [Channel](repeating: Channel(), count: 5)

    var dmaBusyReadsLeft = 0

    /// A blank (erased) `part` with `ieee` as its factory address (MSB first, fitted to the part's
    /// length after the OUI, as `EmulatedChip.init` says).
    init(part: EmulatedPart, ieee: [UInt8]) {
        self.part = part
        settings = EmulatedChip.Settings(flashSizeCode: part.flashSizeCode)
        flash = [UInt8](repeating: 0xFF, count: part.flashSize)
        sram = [UInt8](repeating: 0, count: part.ramSize)
        infoPage = [UInt8](repeating: 0xFF, count: 0x800)
        if let start = part.ieeeOffset {
            // Fitted after TI's OUI (the first three bytes): zeros put in, or bytes left out, there.
            let oui = Array(ieee.prefix(3))
            let rest = Array(ieee.dropFirst(3))
            let fill = [UInt8](repeating: 0, count: max(0, part.ieeeLength - ieee.count))
            let fitted = Array(
                (oui + fill + rest.suffix(part.ieeeLength - oui.count - fill.count)).prefix(part.ieeeLength))
            for (offset, byte) in fitted.reversed().enumerated() { infoPage[start + offset] = byte }
        }
        sfr[0xC7 - 0x80] = 0  // MEMCTR
        sfr[0x9F - 0x80] = 0  // FMAP
    }

    /// The factory address, MSB first.
    var ieeeAddress: [UInt8] {
        guard let start = part.ieeeOffset else { return [] }
        return Array(infoPage[start..<(start + part.ieeeLength)].reversed())
    }

    /// Locks the debug interface, as firmware writing the lock bits would (takes effect at reset).
    mutating func setDebugLockBit() {
        if part.hasOlderRegisterMap { infoPage[Self.lockByteOffset] &= 0xFE } else { flash[flashSize - 1] &= 0x7F }
    }

    /// Where the older parts keep their lock byte in the information page: byte 1, where cc-tool
    /// and the Glasgow project write it (the latter notes it is "contrary to the data sheet";
    /// chip-family.md §6); bit 0 clear locks the debug interface.
    static let lockByteOffset = 1

    /// Whether the lock says the debug interface is locked (the last flash byte's bit 7, or the
    /// older parts' lock byte's bit 0).
    var lockBitCleared: Bool {
        part.hasOlderRegisterMap ? infoPage[Self.lockByteOffset] & 0x01 == 0 : flash[flashSize - 1] & 0x80 == 0
    }

    // MARK: - Reset and status

    /// Reset: into debug mode (halted) or running.
    mutating func reset(halt: Bool) {
        halted = halt
        debugLocked = lockedByErase || (!settings.ignoresDebugLock && lockBitCleared)
        sfr = [UInt8](repeating: 0, count: 0x80)
        for channel in channels.indices { channels[channel].armed = false }
        fctl = part.hasOlderRegisterMap ? 0 : 0x04
        flashBusyPolls = 0
        flashDoneAt = nil
    }

    var status: UInt8 {
        var value: UInt8 = 0x02  // oscillator stable
        // Bit 7 is CHIP_ERASE_BUSY on the CC253x/4x, CHIP_ERASE_DONE on the older parts.
        let erasing = chipEraseRemaining > 0 || eraseDoneAt != nil
        if erasing != part.hasOlderRegisterMap { value |= 0x80 }
        if halted { value |= 0x20 }
        if debugLocked { value |= 0x04 }
        return value
    }

    /// A chip erase ends: a failing part comes out of it locked.
    mutating func finishErase() {
        lockedByErase = lockedByErase || settings.eraseLeavesLocked
        debugLocked = lockedByErase
    }

    /// Whether an operation running on device time until `done` is over now (untimed: always).
    func isOver(_ done: Duration) -> Bool { moment.map { $0.now >= done } ?? true }

    /// Runs one debug command (command byte + parameters) at `moment` (nil: untimed); returns the
    /// reply bytes.
    mutating func debugCommand(_ command: [UInt8], at moment: DeviceMoment? = nil) -> [UInt8] {
        self.moment = moment
        if let done = eraseDoneAt, isOver(done) {
            eraseDoneAt = nil
            finishErase()
        }
        let opcode = command[0]
        switch opcode & 0xF8 {
        case 0x10:  // CHIP_ERASE
            // SWRU191 disables CHIP_ERASE after other commands, yet the reference client issues
            // them first and erases CC254x fine (§4.1); the model follows the silicon's practice.
            flash = [UInt8](repeating: 0xFF, count: flashSize)
            // The older parts' lock byte goes with the erase (their information page holds
            // nothing else the model knows).
            if part.hasOlderRegisterMap { infoPage = [UInt8](repeating: 0xFF, count: infoPage.count) }
            if let moment {
                eraseDoneAt = moment.now + moment.timing.chipErase
            } else {
                chipEraseRemaining = settings.busyPolls
            }
            return [status]
        case 0x18:  // WR_CONFIG
            if !debugLocked { debugConfig = command.count > 1 ? command[1] : 0 }
            return [status]
        case 0x20: return [debugConfig]  // RD_CONFIG
        case 0x30:  // READ_STATUS
            let reply = status
            if chipEraseRemaining > 0 {
                chipEraseRemaining -= 1
                if chipEraseRemaining == 0 { finishErase() }
            }
            return [reply]
        case 0x40, 0x48: return [status]  // HALT, RESUME
        case 0x50:  // DEBUG_INSTR
            guard halted, !debugLocked else { return [0] }
            execute(Array(command.dropFirst()))
            return [sfr[0xE0 - 0x80]]
        case 0x68: return [part.chipID, settings.revision]  // GET_CHIP_ID
        default: return [status]
        }
    }

    // MARK: - 8051 instructions

    var accumulator: UInt8 {
        get { sfr[0xE0 - 0x80] }
        set { sfr[0xE0 - 0x80] = newValue }
    }

    var dptr: Int {
        get {
            let second = sfr[0x92 - 0x80] & 1 == 1
            let low = sfr[(second ? 0x84 : 0x82) - 0x80]
            let high = sfr[(second ? 0x85 : 0x83) - 0x80]
            return Int(high) << 8 | Int(low)
        }
        set {
            let second = sfr[0x92 - 0x80] & 1 == 1
            sfr[(second ? 0x84 : 0x82) - 0x80] = UInt8(newValue & 0xFF)
            sfr[(second ? 0x85 : 0x83) - 0x80] = UInt8((newValue >> 8) & 0xFF)
        }
    }

    /// Executes one instruction of the subset debuggers use.
    mutating func execute(_ instruction: [UInt8]) {
        guard let opcode = instruction.first else { return }
        switch (opcode, instruction.count) {
        case (0x00, 1): break  // NOP
        case (0xE4, 1): accumulator = 0  // CLR A
        case (0xA3, 1): dptr = (dptr + 1) & 0xFFFF  // INC DPTR
        case (0xE0, 1): accumulator = readXdata(dptr)  // MOVX A,@DPTR
        case (0xF0, 1): writeXdata(dptr, accumulator)  // MOVX @DPTR,A
        case (0x93, 1): accumulator = readCode((Int(accumulator) + dptr) & 0xFFFF)  // MOVC A,@A+DPTR
        case (0x74, 2): accumulator = instruction[1]  // MOV A,#data
        case (0xE5, 2): accumulator = readDirect(instruction[1])  // MOV A,direct
        case (0xF5, 2): writeDirect(instruction[1], accumulator)  // MOV direct,A
        case (0x75, 3): writeDirect(instruction[1], instruction[2])  // MOV direct,#data
        case (0x90, 3): dptr = Int(instruction[1]) << 8 | Int(instruction[2])  // MOV DPTR,#data16
        default: break  // not used by debuggers; ignored
        }
    }

    mutating func readDirect(_ address: UInt8) -> UInt8 {
        address < 0x80 ? internalRAM[Int(address)] : readSFR(address)
    }

    mutating func writeDirect(_ address: UInt8, _ value: UInt8) {
        if address < 0x80 { internalRAM[Int(address)] = value } else { writeSFR(address, value) }
    }

    // MARK: - SFRs

    mutating func readSFR(_ address: UInt8) -> UInt8 {
        if part.hasOlderRegisterMap {  // the flash controller is SFRs there
            switch address {
            case 0xAC: return UInt8(faddr & 0xFF)
            case 0xAD: return UInt8((faddr >> 8) & 0xFF)
            case 0xAE: return readFCTL()
            default: break
            }
        }
        switch address {
        case 0xBC: return UInt8(crc & 0xFF)  // RNDL
        case 0xBD: return UInt8(crc >> 8)  // RNDH
        case 0xD1 where dmaBusyReadsLeft > 0:  // DMAIRQ while the modelled DMA still runs
            dmaBusyReadsLeft -= 1
            return sfr[Int(address) - 0x80] & ~0x01
        default: return sfr[Int(address) - 0x80]
        }
    }

    mutating func writeSFR(_ address: UInt8, _ value: UInt8) {
        if part.hasOlderRegisterMap {
            switch address {
            case 0xAC: faddr = faddr & 0xFF00 | Int(value)
            case 0xAD: faddr = faddr & 0x00FF | Int(value) << 8
            case 0xAE: writeFCTL(value)
            case 0xAF: feedFlashWord(value)
            default: break
            }
            if (0xAC...0xAF).contains(address) { return }
        }
        switch address {
        case 0xBC: crc = crc << 8 | UInt16(value)  // RNDL: seed, one byte at a time
        case 0xBD: crc = Self.crcStep(crc, value)  // RNDH: feed a byte through the CRC
        case 0xD6:  // DMAARM
            if value & 0x80 != 0 {  // ABORT
                for channel in 0..<5 where value & (1 << channel) != 0 { channels[channel].armed = false }
            } else {
                for channel in 0..<5 where value & (1 << channel) != 0 && !channels[channel].armed { arm(channel) }
            }
            sfr[Int(address) - 0x80] = value
        case 0xD7:  // DMAREQ: manual trigger
            for channel in 0..<5 where value & (1 << channel) != 0 && channels[channel].armed { runManual(channel) }
            if value & 0x01 != 0 { dmaBusyReadsLeft = settings.dmaBusyReads }
        default:
            sfr[Int(address) - 0x80] = value
        }
    }

    /// One bit-serial step of the RNG/CRC unit: polynomial 0x8005, byte fed MSB first.
    static func crcStep(_ crc: UInt16, _ byte: UInt8) -> UInt16 {
        var value = crc
        for bit in (0..<8).reversed() {
            let input = (byte >> UInt8(bit)) & 1
            let top = UInt8(value >> 15) & 1
            value <<= 1
            if input ^ top == 1 { value ^= 0x8005 }
        }
        return value
    }

    // MARK: - XDATA and CODE maps

    /// The XDATA map (cc-debugger-protocol.md §5.1; the older parts' in `readOlderXdata`).
    mutating func readXdata(_ address: Int) -> UInt8 {
        if part.hasOlderRegisterMap { return readOlderXdata(address) }
        switch address {
        case 0x0000..<part.ramSize: return sram[address]
        case 0x6249: return settings.revision
        case 0x624A: return part.chipID
        case 0x6260: return 0
        case 0x6270: return readFCTL()
        case 0x6271: return UInt8(faddr & 0xFF)
        case 0x6272: return UInt8((faddr >> 8) & 0xFF)
        case 0x6276: return settings.flashSizeCode << 4 | (part.hasUSB ? 0x08 : 0)  // CHIPINFO0: FLASHSIZE, USB
        case 0x6277: return UInt8(part.ramSize / 1024 - 1)  // CHIPINFO1: SRAM in KiB − 1
        case 0x7080..<0x7100: return readSFR(UInt8(address - 0x7000))
        case 0x7800..<0x8000: return infoPage[address - 0x7800]
        case 0x8000..<0x10000:
            let bank = Int(sfr[0xC7 - 0x80] & 0x07)
            return readFlash(bank * 0x8000 + address - 0x8000)
        default: return 0
        }
    }

    /// The older parts' XDATA map (SDCC's cc2510fx.h and cc2430.h, chip-family.md): flash from
    /// 0x0000 (on the CC243x, CODE space's view: bank 0, then the FMAP bank from 0x8000), the radio
    /// and ID registers at 0xDF00–0xDF7F, the SFRs at 0xDF80–0xDFFF, SRAM up to 0xFFFF.
    mutating func readOlderXdata(_ address: Int) -> UInt8 {
        switch address {
        case 0..<0xDF00 where part.hasBankedOlderMap: return readCode(address)
        case 0..<flashSize where !part.hasBankedOlderMap: return readFlash(address)
        case 0xDF60 where part.hasBankedOlderMap: return settings.revision  // CHVER
        case 0xDF61 where part.hasBankedOlderMap: return part.chipID  // CHIPID
        case 0xDF36 where !part.hasBankedOlderMap: return part.chipID  // PARTNUM
        case 0xDF37 where !part.hasBankedOlderMap: return settings.revision  // VERSION
        case 0xDF80..<0xE000: return readSFR(UInt8(address - 0xDF00))
        case part.ram: return sram[address - part.ram.lowerBound]
        default: return 0
        }
    }

    /// Writes through the XDATA map; read-only areas ignore the write.
    mutating func writeXdata(_ address: Int, _ value: UInt8) {
        if part.hasOlderRegisterMap {
            switch address {
            case 0xDF80..<0xE000: writeSFR(UInt8(address - 0xDF00), value)
            case part.ram: sram[address - part.ram.lowerBound] = value
            default: break
            }
            return
        }
        switch address {
        case 0x0000..<part.ramSize: sram[address] = value
        case 0x6270: writeFCTL(value)
        case 0x6271: faddr = faddr & 0xFF00 | Int(value)
        case 0x6272: faddr = faddr & 0x00FF | Int(value) << 8
        case 0x6273: feedFlashWord(value)
        case 0x7080..<0x7100: writeSFR(UInt8(address - 0x7000), value)
        default: break
        }
    }

    /// CODE space: bank 0 at 0x0000, the FMAP bank at 0x8000.
    mutating func readCode(_ address: Int) -> UInt8 {
        if address < 0x8000 { return readFlash(address) }
        let bank = Int(sfr[0x9F - 0x80] & 0x07)
        return readFlash(bank * 0x8000 + address - 0x8000)
    }

    mutating func readFlash(_ address: Int) -> UInt8 {
        guard address < flashSize else { return 0xFF }
        return flash[address] & ~(settings.stuckAtZero[address] ?? 0)
    }

    // MARK: - Flash controller

    mutating func readFCTL() -> UInt8 {
        if let done = flashDoneAt, isOver(done) { flashDoneAt = nil }
        if flashBusyPolls > 0, !settings.flashStuckBusy { flashBusyPolls -= 1 }
        return fctl | (flashBusyPolls > 0 || flashDoneAt != nil || settings.flashStuckBusy ? 0x80 : 0)
    }

    /// The flash controller is busy for `duration` of device time from now, or for `busyPolls`
    /// reads of FCTL when untimed.
    mutating func flashBusy(for duration: (DeviceTiming) -> Duration) {
        if let moment {
            flashDoneAt = moment.now + duration(moment.timing)
        } else {
            flashBusyPolls = settings.busyPolls
        }
    }

    mutating func pageLocked(_ page: Int) -> Bool {
        // The older parts' lock byte protects a size from the top (LSIZE), not modelled: no page
        // is locked there.
        guard !part.hasOlderRegisterMap else { return false }
        let lockBase = flashSize - 16
        guard page < flashSize / part.pageSize - 1 else { return false }  // the lock page has no bit of its own
        return flash[lockBase + page / 8] & (1 << UInt8(page % 8)) == 0
    }

    mutating func writeFCTL(_ value: UInt8) {
        fctl = value & 0x0C | (fctl & 0x20)
        if value & 0x01 != 0 {  // page erase
            let page = faddr * part.flashWordSize / part.pageSize
            if page >= flashSize / part.pageSize || pageLocked(page) {
                fctl |= 0x20
            } else {
                fctl &= ~0x20
                for address in (page * part.pageSize)..<((page + 1) * part.pageSize) { flash[address] = 0xFF }
            }
            flashBusy { $0.pageErase }
        } else if value & 0x02 != 0 {  // write: pull data through DMA channels triggered by FLASH
            fctl &= ~0x20
            wordBuffer = []
            let before = wordsWritten
            for channel in 0..<5 where channels[channel].armed && channels[channel].trigger == 18 {
                while channels[channel].armed { transferOne(channel) }
            }
            let words = wordsWritten - before
            flashBusy { $0.flashWriteTime(words: words) }
        }
    }

    /// FWDATA receives a byte; every word's last completes a word written at FADDR (into the
    /// information page on an older part while the debug configuration selects it).
    mutating func feedFlashWord(_ value: UInt8) {
        wordBuffer.append(value)
        let size = part.flashWordSize
        guard wordBuffer.count == size else { return }
        let address = faddr * size
        let page = address / part.pageSize
        if part.hasOlderRegisterMap, debugConfig & 0x01 != 0 {  // SEL_FLASH_INFO_PAGE
            if address + size <= part.pageSize {
                for offset in 0..<size { infoPage[address + offset] &= wordBuffer[offset] }
            } else {
                fctl |= 0x20
            }
        } else if address + size <= flashSize, !pageLocked(page) {
            for offset in 0..<size { flash[address + offset] &= wordBuffer[offset] }
        } else {
            fctl |= 0x20  // ABORT
        }
        faddr = (faddr + 1) & 0xFFFF
        wordsWritten += 1
        wordBuffer = []
    }

    // MARK: - DMA

    mutating func arm(_ channel: Int) {
        let configLow = channel == 0 ? 0xD4 : 0xD2
        let base = Int(sfr[configLow + 1 - 0x80]) << 8 | Int(sfr[configLow - 0x80])
        let address = base + (channel == 0 ? 0 : 8 * (channel - 1))
        let descriptor = (0..<8).map { readXdata(address + $0) }
        func increment(_ bits: UInt8) -> Int { [0, 1, 2, -1][Int(bits & 3)] }
        channels[channel] = Channel(
            source: Int(descriptor[0]) << 8 | Int(descriptor[1]),
            destination: Int(descriptor[2]) << 8 | Int(descriptor[3]),
            remaining: Int(descriptor[4] & 0x1F) << 8 | Int(descriptor[5]),
            trigger: descriptor[6] & 0x1F, mode: (descriptor[6] >> 5) & 3,
            sourceIncrement: increment(descriptor[7] >> 6), destinationIncrement: increment(descriptor[7] >> 4),
            armed: true)
    }

    /// Moves one byte on `channel`; disarms and raises its DMAIRQ flag when the count is done.
    mutating func transferOne(_ channel: Int) {
        var state = channels[channel]
        guard state.armed, state.remaining > 0 else {
            channels[channel].armed = false
            return
        }
        // DBGDATA (XDATA 0x6260) is the CC253x/4x's; on the older map that address is flash.
        let fromDebugData = state.source == 0x6260 && !part.hasOlderRegisterMap
        let value = fromDebugData ? pendingBurstByte : readXdata(state.source)
        writeXdata(state.destination, value)
        state.source += state.sourceIncrement
        state.destination += state.destinationIncrement
        state.remaining -= 1
        if state.remaining == 0 {
            state.armed = false
            sfr[0xD1 - 0x80] |= 1 << UInt8(channel)
        }
        channels[channel] = state
    }

    mutating func runManual(_ channel: Int) {
        if channels[channel].mode == 1 {  // block: the whole count on one trigger
            while channels[channel].armed { transferOne(channel) }
        } else {
            transferOne(channel)
        }
    }

    /// The byte BURST_WRITE just put in DBGDATA.
    var pendingBurstByte: UInt8 = 0

    /// BURST_WRITE: each byte goes to DBGDATA and raises DMA trigger 31 (DBG_BW); a part without
    /// it (`EmulatedPart.hasBurstWrite`) takes nothing.
    mutating func burstWrite(_ bytes: ArraySlice<UInt8>) {
        guard part.hasBurstWrite else { return }
        for byte in bytes {
            pendingBurstByte = byte
            for channel in 0..<5 where channels[channel].armed && channels[channel].trigger == 31 {
                transferOne(channel)
            }
        }
    }
}
