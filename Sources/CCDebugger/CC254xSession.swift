import Checksums
import HexText
public import IntelHex
public import TargetData

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One connection to a CC254x through a CC Debugger: the operations of
/// cc-debugger-protocol.md §7, batched into as few USB transfers as the frame protocol allows.
public final class CC254xSession {
    /// The transport.
    public let transport: any DebuggerTransport
    /// The chips this session may connect to (from `boards/chips.json`): a target whose debugger
    /// ID none of them has is refused before it is touched.
    public let chips: [Chip]
    /// Timeout for every transfer (the reference client uses 3000 ms).
    public var timeoutMilliseconds = 3000
    /// Polls before a busy flash controller or DMA counts as stuck (also bounded by 2 s).
    public var maximumPolls = 10_000
    /// Status polls before a chip erase counts as failed (also bounded by 8 s, as the reference
    /// client allows).
    public var maximumErasePolls = 100_000
    /// Seconds a chip erase may take.
    public var eraseTimeoutSeconds = 8.0
    /// Seconds one flash write or CRC DMA may take.
    public var busyTimeoutSeconds = 2.0
    /// How programming lays out its frames (`proven` unless asked otherwise).
    public var framing = USBFraming.proven
    /// The clock the polls' deadlines are measured on (monotonic seconds; tests give a clock of
    /// their own to model a host paused past a deadline).
    var clock: () -> Double = { MonotonicClock.now }
    /// The chip the last `connect` identified (`nil` before, and while the chip is debug-locked or
    /// unknown): where its SRAM holds DMA descriptors.
    public private(set) var chip: Chip?
    /// The flash size the user gave (`--flash-size`, bytes) for a chip that does not report its
    /// own (`RegisterMap.sfr`): `connect` takes the chip of that size. `connect` refuses a size
    /// the family does not come in, and one a chip that reports its size contradicts.
    public var assumedFlashSize: Int?

    /// Wraps a transport, for the chips the catalog describes.
    public init(transport: any DebuggerTransport, chips: [Chip]) {
        self.transport = transport
        self.chips = chips
    }

    // MARK: - Low level

    func out(_ bytes: [UInt8], _ during: DebuggerOperation) throws(DebuggerError) {
        do { try transport.bulkOut(bytes, timeoutMilliseconds: timeoutMilliseconds) } catch {
            throw .transport(error, during: during)
        }
    }

    func input(_ count: Int, _ during: DebuggerOperation) throws(DebuggerError) -> [UInt8] {
        do { return try transport.bulkIn(length: count, timeoutMilliseconds: timeoutMilliseconds) } catch {
            throw .transport(error, during: during)
        }
    }

    func control(
        _ request: UInt8, value: UInt16 = 0, index: UInt16 = 0, data: [UInt8] = [], _ during: DebuggerOperation
    )
        throws(DebuggerError)
    {
        do {
            try transport.controlOut(
                request: request, value: value, index: index, data: data, timeoutMilliseconds: timeoutMilliseconds)
        } catch { throw .transport(error, during: during) }
    }

    /// `MOV direct,#value` as a frame (5 bytes), for SFRs: shorter than an XDATA-mirror write and
    /// independent of the mirror (§13.6).
    static func setSFR(_ address: UInt8, _ value: UInt8) -> [UInt8] { [0xBE, 0x57, 0x75, address, value] }

    /// Frames that read XDATA bytes at several addresses into the output queue; the last one flushes.
    static func readList(_ addresses: [UInt16]) -> [UInt8] {
        var frames: [UInt8] = []
        for (index, address) in addresses.enumerated() {
            frames += Frames.setPointer(address) + [index == addresses.count - 1 ? 0x4F : 0x4E, 0x55, 0xE0]
        }
        return frames
    }

    /// READ_STATUS; `operation` names what the status is read for.
    func readStatus(_ operation: DebuggerOperation = .readingStatus) throws(DebuggerError) -> UInt8 {
        try out(Frames.readStatus, operation)
        return try input(1, operation)[0]
    }

    // MARK: - Connect and identify

    /// The register map of the chips with `targetID` (one family shares one map).
    func registerMap(targetID: UInt16) -> RegisterMap {
        ChipFamily(targetID: targetID, in: chips)?.registerMap ?? .xreg
    }

    /// The registers of the chips with `targetID`.
    func registers(targetID: UInt16) -> Registers { .of(registerMap(targetID: targetID)) }

    /// The connected chip's registers.
    var registers: Registers { .of(chip?.registerMap ?? .xreg) }

    /// Whether the size of the chip `identity` describes is `assumedFlashSize`'s alone, unconfirmed
    /// by the chip: a size was given, and the chip tells none (its family reports no size, or it is
    /// debug-locked). Messages then point at the size given.
    public func sizeIsAssumed(_ identity: ChipIdentity, targetID: UInt16) -> Bool {
        guard assumedFlashSize != nil else { return false }
        return identity.locked || ChipFamily(targetID: targetID, in: chips)?.reportsFlashSize == false
    }

    /// The chips with `targetID` the target may be: the one of `assumedFlashSize` when a size is
    /// given (a chip that reports another is refused once it can tell, `flashSizeContradicted`);
    /// without one, any of a family that reports its size (the chip tells which) and none of a
    /// family that does not.
    public func possibleChips(targetID: UInt16) -> [Chip] {
        ChipFamily(targetID: targetID, in: chips)?.members.filter { chip in
            assumedFlashSize.map { chip.flashSize == $0 } ?? chip.reportsFlashSize
        } ?? []
    }

    /// The chip families of `chips`, each once, in order (CC2540, CC2541).
    public static func families(_ chips: [Chip]) -> [String] {
        Array(Set(chips.map(\.family))).sorted()
    }

    /// GET_STATE and the debug-interface speed.
    public func open(fast: Bool = false) throws(DebuggerError) -> DebuggerState {
        let state: [UInt8]
        do {
            state = try transport.controlIn(
                request: Frames.Request.getState, value: 0, index: 0, length: 8,
                timeoutMilliseconds: timeoutMilliseconds)
        } catch { throw .transport(error, during: .askingState) }
        guard state.count == 8 else {
            throw .transport(
                .shortTransfer(expected: 8, actual: state.count), during: .askingState)
        }
        try control(Frames.Request.setSpeed, value: fast ? 0 : 1, .settingSpeed)
        return DebuggerState(
            targetID: UInt16(state[0]) | UInt16(state[1]) << 8, firmwareID: UInt16(state[2]) | UInt16(state[3]) << 8,
            firmwareRevision: UInt16(state[4]) | UInt16(state[5]) << 8)
    }

    /// Resets the target into debug mode and identifies it; a locked chip is reported, not refused.
    public func connect(targetID: UInt16, debuggerID: UInt16 = 0) throws(DebuggerError) -> ChipIdentity {
        guard targetID != 0 else { throw .noTarget }
        guard let family = ChipFamily(targetID: targetID, in: chips) else {
            throw .unsupportedTarget(targetID, known: Self.families(chips))
        }
        // A size given must be one the family comes in, whether or not the chip reports its own
        // (a debug-locked chip tells its size only once erased).
        if let given = assumedFlashSize, !family.flashSizes.contains(given) {
            throw .flashSizeNotMade(given: given, family: family.name, sizes: family.flashSizes)
        }
        try control(Frames.Request.prepareDebugMode, .preparingDebugMode)
        try control(
            Frames.Request.setChipInfo, value: 1,
            data: Frames.chipInfoText(
                target: "CC" + HexText.digits(targetID), debuggerID: debuggerID),
            .sendingChipInfo)
        try control(Frames.Request.reset, index: 1, .resettingIntoDebugMode)
        let status = try readStatus()
        chip = nil
        if status & Frames.Status.debugLocked != 0 {
            return ChipIdentity(chipID: 0, revision: 0, flashSizeCode: 0, flashSize: 0, ramSize: 0, locked: true)
        }
        guard status & Frames.Status.cpuHalted != 0 else { throw .targetNotResponding(status: status) }
        if registerMap(targetID: targetID).isOlder {
            // No CHIPINFO: the ID and revision, and the size the user named.
            let registers = registers(targetID: targetID)
            try out(
                Frames.writeConfig(0x22) + Self.setSFR(SFR.dps, 0)
                    + Self.readList([registers.chipIDAddress, registers.revisionAddress]),
                .identifying)
            let id = try input(2, .identifying)
            let chip = Chip.reporting(targetID: targetID, flashSizeCode: 0, flashSize: assumedFlashSize, in: chips)
            if let chip { try checkSRAM(of: chip) }
            self.chip = chip
            return ChipIdentity(
                chipID: id[0], revision: id[1], flashSizeCode: 0, flashSize: chip?.flashSize ?? 0,
                ramSize: chip?.ramSize ?? 0, locked: false)
        }
        // Debug config 0x22 (DMA not paused) and DPTR0 selected; then CHIPINFO0/1, CHVER, CHIPID.
        try out(
            Frames.writeConfig(0x22) + Self.setSFR(SFR.dps, 0)
                + Self.readList([XREG.chipinfo0, XREG.chipinfo1, XREG.chver, XREG.chipid]),
            .identifying)
        let info = try input(4, .identifying)
        let code = ChipInfo.flashSizeCode(chipinfo0: info[0])
        let chip = Chip.reporting(targetID: targetID, flashSizeCode: code, in: chips)
        if let chip, let given = assumedFlashSize, chip.flashSize != given {
            throw .flashSizeContradicted(given: given, chip: chip.name, reported: chip.flashSize)
        }
        self.chip = chip
        return ChipIdentity(
            chipID: info[3], revision: info[2], flashSizeCode: code, flashSize: chip?.flashSize ?? 0,
            ramSize: ChipInfo.ramSize(chipinfo1: info[1]), locked: false)
    }

    /// The size a user gave for a chip that reports none, checked against the chip: the part of
    /// that size has SRAM from `chip.ram.lowerBound` (where the flash programmer's buffer goes), and
    /// a smaller part has none there (as the emulator models it; TI's data sheets put each part's
    /// SRAM at the top of XDATA). Two bytes there are written, read back and restored: a chip that
    /// does not keep them is refused before anything else is done to it.
    func checkSRAM(of chip: Chip) throws(DebuggerError) {
        let start = UInt16(chip.ram.lowerBound)
        let probe: [UInt8] = [0x5A, 0xA5]
        try out(Frames.setPointer(start) + Frames.readBody(count: 2), .identifying)
        let kept = try input(2, .identifying)
        try out(Frames.writeXdata(start, probe) + Frames.setPointer(start) + Frames.readBody(count: 2), .identifying)
        let back = try input(2, .identifying)
        try out(Frames.writeXdata(start, kept), .identifying)
        guard back == probe else { throw .flashSizeRefuted(chip: chip.name, ramStart: chip.ram.lowerBound) }
    }

    // MARK: - Erase

    /// Chip erase: reset into debug mode, CHIP_ERASE, poll with READ_STATUS only (bounded), then
    /// reconnect and confirm the chip is unlocked.
    public func chipErase(targetID: UInt16, progress: (FlashProgress) -> Void = { _ in }) throws(DebuggerError)
        -> ChipIdentity
    {
        try control(Frames.Request.reset, index: 1, .resettingBeforeErase)
        try out(Frames.chipErase, .startingErase)
        progress(FlashProgress(phase: .erase, done: 0, total: 1))
        let registers = registers(targetID: targetID)
        var wait = BoundedWait(seconds: eraseTimeoutSeconds, polls: maximumErasePolls, clock: clock)
        while registers.eraseBusy(status: try readStatus(.waitingForErase)) {
            guard wait.pollAgain() else { throw .eraseTimeout }
        }
        progress(FlashProgress(phase: .erase, done: 1, total: 1))
        let identity = try connect(targetID: targetID)
        guard !identity.locked else { throw .stillLockedAfterErase }
        return identity
    }

    // MARK: - Program

    /// Where the DMA descriptors sit in the connected chip's SRAM (`FlashWriting`; the CC253x/4x
    /// place until a chip is known).
    var descriptorBase: UInt16 { UInt16((chip?.flashWriting ?? .burst).descriptorAddress) }

    /// The burst path's four descriptors: channels 1–2 take a burst into buffer 0/1 (trigger
    /// DBG_BW, destination incremented), channels 3–4 feed the flash from buffer 0/1 (trigger
    /// FLASH, source incremented, high priority); cc-debugger-protocol.md §8.
    static func burstDescriptors(_ writing: FlashWriting) -> [UInt8] {
        writing.buffers.flatMap { buffer in
            DMADescriptor(
                source: XREG.dbgdata, destination: UInt16(buffer), length: writing.blockSize, mode: 0x1F, flags: 0x11
            ).bytes
        }
            + writing.buffers.flatMap { buffer in
                DMADescriptor(
                    source: UInt16(buffer), destination: XREG.fwdata, length: writing.blockSize, mode: 0x12,
                    flags: 0x42
                ).bytes
            }
    }
    /// DMAARM bits: channel 1 or 2 takes the burst into buffer 0 or 1; channel 3 or 4 feeds the
    /// flash from it.
    static func burstChannel(buffer: Int) -> UInt8 { buffer == 0 ? 0x02 : 0x04 }
    static func flashChannel(buffer: Int) -> UInt8 { buffer == 0 ? 0x08 : 0x10 }

    /// Writes the plan's blocks into erased flash, on the plan's path (`FlashWriting`); FCTL.ABORT
    /// is checked for every block; blocks that are all 0xFF are skipped. `progress` follows the
    /// blocks handed to the debugger; `writeStarting` is told a block's address just before the
    /// transfer that starts its flash write (on the burst path, one block after its progress).
    public func program(
        _ plan: FlashPlan, progress: (FlashProgress) -> Void = { _ in }, writeStarting: (Int) -> Void = { _ in }
    ) throws(DebuggerError) {
        guard !plan.blocks.isEmpty else { return }
        switch plan.writing.path {
        case .burst: try programInBursts(plan, progress: progress, writeStarting: writeStarting)
        case .xdata: try programThroughXdata(plan, progress: progress, writeStarting: writeStarting)
        }
    }

    /// The burst path. Per block, `framing` `.proven`: one bulk OUT that starts the previous
    /// block's flash write and arms the burst channel, the BURST_WRITE alone in the next, FCTL read
    /// in a third, one bulk IN; `.packed`: all four in one bulk OUT, one bulk IN. The first block
    /// has no FCTL read (no write is running yet).
    func programInBursts(
        _ plan: FlashPlan, progress: (FlashProgress) -> Void, writeStarting: (Int) -> Void
    ) throws(DebuggerError) {
        let writing = plan.writing
        let base = UInt16(writing.descriptorAddress)
        let total = plan.blocks.count * writing.blockSize
        try out(
            Frames.writeXdata(base, Self.burstDescriptors(writing))
                + Self.setSFR(SFR.dma1cfgl, UInt8(base & 0xFF)) + Self.setSFR(SFR.dma1cfgh, UInt8(base >> 8)),
            .settingUpDMA)
        var nextWordAddress = -1  // where FADDR points after the last started write
        var pending: (address: Int, buffer: Int)?
        for (index, block) in plan.blocks.enumerated() {
            let buffer = index % 2
            if let pending { writeStarting(pending.address) }
            let arming =
                startWrite(pending, blockSize: writing.blockSize, nextWordAddress: &nextWordAddress)
                + Self.setSFR(SFR.dmaarm, Self.burstChannel(buffer: buffer))
            let burst = Frames.burstWrite1024(block.bytes)
            // Until a flash write has been started there is nothing to wait for.
            let reading = pending == nil ? [] : Self.readList([XREG.fctl])
            switch framing {
            case .packed: try out(arming + burst + reading, .programming(address: block.address))
            case .proven:
                try out(arming, .programming(address: block.address))
                try out(burst, .programming(address: block.address))
                if !reading.isEmpty { try out(reading, .programming(address: block.address)) }
            }
            if let pending {
                try waitForFlash(firstReply: try input(1, .programming(address: nil)), address: pending.address)
            }
            pending = (block.address, buffer)
            progress(FlashProgress(phase: .program, done: (index + 1) * writing.blockSize, total: total))
        }
        if let pending { writeStarting(pending.address) }
        try out(
            startWrite(pending, blockSize: writing.blockSize, nextWordAddress: &nextWordAddress)
                + Self.readList([XREG.fctl]),
            .programming(address: nil))
        try waitForFlash(firstReply: try input(1, .programming(address: nil)), address: pending?.address ?? 0)
    }

    /// The XDATA path (cc-debugger-protocol.md §7.4): channel 0 feeds the flash controller from
    /// the one buffer at the start of SRAM. Per block one bulk OUT — the block into the buffer,
    /// FADDR when it does not follow the previous block, arm, start the write, read FCTL — and
    /// one bulk IN, then FCTL polled until the write is done: the buffer is free only then.
    func programThroughXdata(
        _ plan: FlashPlan, progress: (FlashProgress) -> Void, writeStarting: (Int) -> Void
    ) throws(DebuggerError) {
        let writing = plan.writing
        let total = plan.blocks.count * writing.blockSize
        try out(xdataChannel(writing, length: writing.blockSize), .settingUpDMA)
        var nextWordAddress = -1
        for (index, block) in plan.blocks.enumerated() {
            writeStarting(block.address)
            try out(
                xdataBlock(block.bytes, at: block.address, writing, nextWordAddress: &nextWordAddress),
                .programming(address: block.address))
            try waitForFlash(firstReply: try input(1, .programming(address: nil)), address: block.address)
            progress(FlashProgress(phase: .program, done: (index + 1) * writing.blockSize, total: total))
        }
    }

    /// The XDATA path's channel 0: a descriptor that feeds `length` bytes from the buffer into
    /// FWDATA on the FLASH trigger, and DMA0CFG pointed at it.
    func xdataChannel(_ writing: FlashWriting, length: Int) -> [UInt8] {
        let base = UInt16(writing.descriptorAddress)
        let descriptor = DMADescriptor(
            source: UInt16(writing.bufferAddress), destination: registers.fwdata, length: length, mode: 0x12,
            flags: 0x42)
        return Frames.writeXdata(base, descriptor.bytes)
            + Self.setSFR(SFR.dma0cfgl, UInt8(base & 0xFF)) + Self.setSFR(SFR.dma0cfgh, UInt8(base >> 8))
    }

    /// One block on the XDATA path: `bytes` into the buffer, FADDR when it does not follow the
    /// previous block, channel 0 armed, the write started, FCTL read (one byte to come back).
    func xdataBlock(_ bytes: [UInt8], at address: Int, _ writing: FlashWriting, nextWordAddress: inout Int)
        -> [UInt8]
    {
        Frames.writeXdata(UInt16(writing.bufferAddress), bytes)
            + pointFlash(at: address, blockSize: bytes.count, nextWordAddress: &nextWordAddress)
            + Self.setSFR(SFR.dmaarm, 0x01) + Frames.writeXdata(registers.fctl, [registers.startWrite])
            + Self.readList([registers.fctl])
    }

    /// Frames that start the flash write of the block waiting in `pending`'s buffer (setting
    /// FADDR first when the block does not follow the previous one).
    func startWrite(_ pending: (address: Int, buffer: Int)?, blockSize: Int, nextWordAddress: inout Int) -> [UInt8] {
        guard let pending else { return [] }
        return pointFlash(at: pending.address, blockSize: blockSize, nextWordAddress: &nextWordAddress)
            + Self.setSFR(SFR.dmaarm, Self.flashChannel(buffer: pending.buffer))
            + Frames.writeXdata(XREG.fctl, [FlashControl.startWrite])
    }

    /// FADDR set to the word of `address` (the connected chip's words), unless the previous
    /// block's write left it there (`nextWordAddress`, which then moves past this block).
    func pointFlash(at address: Int, blockSize: Int, nextWordAddress: inout Int) -> [UInt8] {
        let wordSize = chip?.flashWordSize ?? 4
        let word = address / wordSize
        defer { nextWordAddress = word + blockSize / wordSize }
        return word == nextWordAddress
            ? [] : Frames.writeXdata(registers.faddrl, [UInt8(word & 0xFF), UInt8(word >> 8)])
    }

    /// Writes the older map's lock byte (`RegisterMap.sfr`): with the debug configuration's
    /// SEL_FLASH_INFO_PAGE set, the word at information page offset 0 becomes 0xFF and `lock`
    /// (byte 1, where cc-tool and the Glasgow project put it; chip-family.md §6), then the
    /// configuration is restored. It takes effect at the next reset.
    public func writeLockByte(_ lock: UInt8) throws(DebuggerError) {
        guard let chip, chip.registerMap.isOlder else { throw .lockNotTaken }
        let word = [0xFF, lock] + [UInt8](repeating: 0xFF, count: max(0, chip.flashWordSize - 2))
        var nextWordAddress = -1  // FADDR is set, to word 0
        try out(
            Frames.writeConfig(0x23) + xdataChannel(chip.flashWriting, length: word.count)
                + xdataBlock(word, at: 0, chip.flashWriting, nextWordAddress: &nextWordAddress),
            .programming(address: nil))
        try waitForFlash(firstReply: try input(1, .programming(address: nil)), address: 0)
        try out(Frames.writeConfig(0x22), .programming(address: nil))
    }

    /// Polls FCTL until BUSY clears (bounded); fails on ABORT.
    func waitForFlash(firstReply: [UInt8], address: Int) throws(DebuggerError) {
        var fctl = firstReply[0]
        var wait = BoundedWait(seconds: busyTimeoutSeconds, polls: maximumPolls, clock: clock)
        while fctl & FlashControl.busy != 0 {
            guard wait.pollAgain() else { throw .flashBusy(address: address) }
            try out(Self.readList([registers.fctl]), .waitingForFlash)
            fctl = try input(1, .waitingForFlash)[0]
        }
        if fctl & FlashControl.abort != 0 { throw .writeAborted(address: address) }
    }

    // MARK: - Verify

    /// CRC-16 (0x8005, init 0xFFFF) as the chip's RNG unit computes it after seeding RNDL twice with 0xFF.
    public static func crc(_ bytes: some Sequence<UInt8>) -> UInt16 { CRC16UMTS.update(0xFFFF, bytes) }

    /// Verifies every byte of the image with the on-chip CRC: per chunk of ≤ 4 KiB inside one
    /// 32 KiB bank, one OUT (bank, descriptor, clear DMAIRQ, seed, arm, trigger, read back) and one IN.
    /// On a chip whose flash the CRC cannot see (`VerifyMode.effective(on:)`), every byte is read
    /// back instead (`verifyRead`).
    public func verifyCRC(_ image: MemoryImage, progress: (FlashProgress) -> Void = { _ in }) throws(DebuggerError) {
        guard VerifyMode.crc.effective(on: chip) == .crc else { return try verifyRead(image, progress: progress) }
        let chunks = Self.verifyChunks(image)
        let total = chunks.reduce(0) { $0 + $1.count }
        var done = 0
        var bank = -1
        // One chunk per round trip: the DMA of 4 KiB may still run when its CRC is first read
        // (then polled), and one flushing read per transfer is what known clients send.
        for chunk in chunks {
            try out(crcFrames(chunk, bank: &bank) + crcReadList, .verifying(address: chunk.lowerBound))
            try checkCRC(chunk, of: image, reply: try input(3, .verifying(address: chunk.lowerBound)))
            done += chunk.count
            progress(FlashProgress(phase: .verify, done: done, total: total))
        }
    }

    /// The frames that run the CRC DMA over `chunk` (switching the bank window first when `bank`
    /// is another one; a chip without banks shows all its flash from XDATA 0x0000).
    func crcFrames(_ chunk: Range<Int>, bank: inout Int) -> [UInt8] {
        var frames: [UInt8] = []
        let registers = registers
        if chunk.lowerBound / 0x8000 != bank {
            bank = chunk.lowerBound / 0x8000
            if registers.banksFlashWindow { frames += Self.setSFR(SFR.memctr, UInt8(bank)) }
            frames += Self.setSFR(SFR.dma0cfgl, UInt8(descriptorBase & 0xFF))
            frames += Self.setSFR(SFR.dma0cfgh, UInt8(descriptorBase >> 8))
        }
        let source = registers.banksFlashWindow ? 0x8000 + chunk.lowerBound % 0x8000 : chunk.lowerBound
        // Channel 0 feeds the chunk, read through the XDATA flash window, into RNDH as one block
        // transfer started by DMAREQ.
        let descriptor = DMADescriptor(
            source: UInt16(source), destination: registers.mirror(SFR.rndh), length: chunk.count, mode: 0x20,
            flags: 0x42)
        frames += Frames.writeXdata(descriptorBase, descriptor.bytes)
        frames += Self.setSFR(SFR.dmairq, 0x00) + Self.setSFR(SFR.rndl, 0xFF) + Self.setSFR(SFR.rndl, 0xFF)
        frames += Self.setSFR(SFR.dmaarm, 0x01) + Self.setSFR(SFR.dmareq, 0x01)
        return frames
    }

    /// Waits (polling DMAIRQ from `reply` on) until the CRC DMA over `chunk` is done, then
    /// compares its CRC with the image's.
    func checkCRC(_ chunk: Range<Int>, of image: MemoryImage, reply first: [UInt8]) throws(DebuggerError) {
        var reply = first
        var wait = BoundedWait(seconds: busyTimeoutSeconds, polls: maximumPolls, clock: clock)
        while reply[0] & 0x01 == 0 {
            guard wait.pollAgain() else { throw .dmaTimeout(address: chunk.lowerBound) }
            try out(crcReadList, .waitingForCRC)
            reply = try input(3, .waitingForCRC)
        }
        let crc = UInt16(reply[1]) | UInt16(reply[2]) << 8
        guard crc == Self.crc(image.bytes(in: chunk, fill: 0xFF)) else { throw .verifyMismatch(in: chunk) }
    }

    /// Reads DMAIRQ (channel 0 done?) and the CRC, RNDL then RNDH.
    var crcReadList: [UInt8] {
        Self.readList([registers.mirror(SFR.dmairq), registers.mirror(SFR.rndl), registers.mirror(SFR.rndh)])
    }

    /// The most bytes one CRC DMA covers. The descriptor's LEN has 13 bits (up to 8,191 bytes,
    /// SWRU191 "DMA Controller"); the reference client feeds 1 KiB per round trip. 4 KiB per
    /// transfer pair quarters the verify's USB transfers (cc-debugger-protocol.md §8: 9 per KiB
    /// there) and the DMA of 4 KiB is done long before the next round trip; a mismatch is then
    /// named within 4 KiB, and `--verify read` names the byte.
    static let crcChunkLimit = 4096

    /// What a verify compares, in either mode: every 1 KiB block the image touches, whole (merged
    /// where they meet), against the image with its gaps as 0xFF. Whole blocks because programming
    /// writes whole blocks into erased flash, so a gap inside a block is 0xFF on the chip; a stray
    /// byte there is found, and an image of many small segments (interrupt vectors) costs no round
    /// trip per segment.
    public static func verifiedSpans(_ image: MemoryImage) -> [Range<Int>] {
        let block = FlashPlan.blockSize
        var spans: [Range<Int>] = []
        for segment in image.segments {
            let span = (segment.start / block * block)..<((segment.end + block - 1) / block * block)
            if let last = spans.last, last.upperBound >= span.lowerBound {
                spans[spans.count - 1] = last.lowerBound..<max(last.upperBound, span.upperBound)
            } else {
                spans.append(span)
            }
        }
        return spans
    }

    /// `verifiedSpans` in chunks of at most `crcChunkLimit` that never cross a 32 KiB bank.
    static func verifyChunks(_ image: MemoryImage) -> [Range<Int>] {
        var chunks: [Range<Int>] = []
        for span in verifiedSpans(image) {
            var start = span.lowerBound
            while start < span.upperBound {
                let end = min(span.upperBound, start + crcChunkLimit, (start / 0x8000 + 1) * 0x8000)
                chunks.append(start..<end)
                start = end
            }
        }
        return chunks
    }

    // MARK: - Read

    /// Reads flash through CODE space: FMAP selects the bank (set by DEBUG_INSTR), then one OUT
    /// and one IN per KiB.
    public func readFlash(_ range: Range<Int>, progress: (FlashProgress) -> Void = { _ in }) throws(DebuggerError)
        -> [UInt8]
    {
        do {
            _ = try transport.controlIn(
                request: Frames.Request.prepareRead, value: 0, index: 0, length: 1,
                timeoutMilliseconds: timeoutMilliseconds)
        } catch { throw .transport(error, during: .preparingRead) }
        var result: [UInt8] = []
        result.reserveCapacity(range.count)
        var address = range.lowerBound
        var bank = -1
        while address < range.upperBound {
            let end = min(range.upperBound, address + 1024, (address / 0x8000 + 1) * 0x8000)
            var frames: [UInt8] = []
            let codeAddress: Int
            if address < 0x8000 {
                codeAddress = address
            } else {
                if address / 0x8000 != bank {
                    bank = address / 0x8000
                    frames += Frames.setFMAP(UInt8(bank))
                }
                codeAddress = 0x8000 + address % 0x8000
            }
            frames += Frames.codePointer(UInt16(codeAddress)) + Frames.readCode(count: end - address)
            try out(frames, .readingFlash(address: address))
            result += try input(end - address, .readingFlash(address: address))
            address = end
            progress(FlashProgress(phase: .read, done: address - range.lowerBound, total: range.count))
        }
        return result
    }

    /// Reads `count` bytes of XDATA (info page, registers) in one OUT and one IN per KiB.
    public func readXdata(_ address: Int, count: Int) throws(DebuggerError) -> [UInt8] {
        var result: [UInt8] = []
        var offset = 0
        while offset < count {
            let chunk = min(1024, count - offset)
            try out(
                Frames.setPointer(UInt16(address + offset)) + Frames.readBody(count: chunk),
                .readingXdata(address: address + offset))
            result += try input(chunk, .readingXdata(address: nil))
            offset += chunk
        }
        return result
    }

    /// The factory address from the info page, MSB first; `nil` on a chip that has none.
    public func primaryAddress(chip: Chip) throws(DebuggerError) -> [UInt8]? {
        guard let place = chip.primaryAddress else { return nil }
        return Array(try readXdata(place.lowerBound, count: place.count).reversed())
    }

    /// The secondary address in the last flash page, MSB first; `nil` when it is erased (all 0xFF)
    /// or the chip has no place for one. On a chip whose size the user gave (all CC2430/31 sizes
    /// have the same SRAM, so a size too small cannot be refuted) and that comes in a larger size,
    /// the rest of that page must be erased: otherwise it may be the middle of a larger chip's
    /// firmware, and `DebuggerError.secondaryAddressDoubtful` says so rather than take code for an
    /// address.
    public func secondaryAddress(chip: Chip) throws(DebuggerError) -> [UInt8]? {
        guard let place = chip.secondaryAddress else { return nil }
        let page = chip.lastPageRange
        let bytes: [UInt8]
        let couldBeLarger =
            ChipFamily(targetID: chip.debuggerTargetID, in: chips)?.flashSizes.contains { $0 > chip.flashSize } ?? false
        if chip.reportsFlashSize || !couldBeLarger {
            bytes = try readFlash(place)
        } else {
            let read = try readFlash(page)
            let offset = place.lowerBound - page.lowerBound
            let beside = read[..<offset] + read[(offset + place.count)...]
            guard beside.allSatisfy({ $0 == 0xFF }) else { throw .secondaryAddressDoubtful(chip: chip.name) }
            bytes = Array(read[offset..<(offset + place.count)])
        }
        return bytes.allSatisfy { $0 == 0xFF } ? nil : Array(bytes.reversed())
    }

    /// Verifies by reading back every byte `verifiedSpans` names (the image, its gaps inside the
    /// blocks it touches as 0xFF); the mismatch names the exact address.
    public func verifyRead(_ image: MemoryImage, progress: (FlashProgress) -> Void = { _ in }) throws(DebuggerError) {
        let spans = Self.verifiedSpans(image)
        let total = spans.reduce(0) { $0 + $1.count }
        var done = 0
        for span in spans {
            if let address = try firstDifference(in: span, from: image.bytes(in: span, fill: 0xFF)) {
                throw .verifyMismatch(in: address..<(address + 1))
            }
            done += span.count
            progress(FlashProgress(phase: .verify, done: done, total: total))
        }
    }

    /// Resets the target and lets it run.
    public func resetAndRun() throws(DebuggerError) {
        try control(Frames.Request.reset, index: 0, .resettingToRun)
    }
}

func hex(_ value: Int) -> String { HexText.address(value) }

/// The one clock deadlines and waits are measured with: monotonic seconds (never set back by
/// NTP or the user, unlike the wall clock).
package enum MonotonicClock {
    /// Seconds since an arbitrary start.
    package static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

extension CC254xSession {
    /// Reads `ranges` of flash back and compares them byte for byte with `image` (0xFF where the
    /// image holds nothing); a mismatch names the exact address.
    public func verifyRanges(_ ranges: [Range<Int>], of image: MemoryImage) throws(DebuggerError) {
        for range in MemoryImage.merged(ranges) {
            if let address = try firstDifference(in: range, from: image.bytes(in: range, fill: 0xFF)) {
                throw .identityMismatch(address: address)
            }
        }
    }

    /// Reads `range` of flash and returns the first address whose byte differs from `expected`
    /// (the bytes the range should hold), or nil when every byte matches.
    func firstDifference(in range: Range<Int>, from expected: [UInt8]) throws(DebuggerError) -> Int? {
        let read = try readFlash(range)
        return zip(read, expected).enumerated().first { $0.element.0 != $0.element.1 }.map {
            range.lowerBound + $0.offset
        }
    }
}
