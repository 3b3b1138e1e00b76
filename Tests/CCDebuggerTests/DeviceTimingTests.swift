import CCDebuggerEmulator
import IntelHex
import TestSupport
import Testing

@testable import CCDebugger

/// The emulator's device-time model charges what `DeviceTiming` says, checked on a virtual clock
/// (no test sleeps): every expected time below is worked out by hand from the documented rules —
/// whole USB frames per transfer, 8 debug-clock periods per byte on the debug interface, and the
/// user's guide's flash durations — not taken from the emulator.
struct DeviceTimingTests {
    let timing = DeviceTiming.hardware
    let clock = VirtualDeviceClock()
    let debugger: EmulatedDebugger

    init() { debugger = EmulatedDebugger(timing: .hardware, clock: clock) }

    /// One byte on the debug interface at the modelled 1 MHz debug clock.
    var byte: Duration { .microseconds(8) }

    /// A bulk OUT of `frames`: its USB frames, then its debug bytes. Every frame trades its header
    /// byte (which stays in the debugger) for the reply byte the chip clocks back, so the debug
    /// bytes are the transfer's bytes plus those the debugger restores from its slots (4 in the
    /// reference client's XDATA read/write templates, none in status or burst frames).
    func cost(_ frames: [UInt8], restored: Int = 0) -> Duration {
        timing.usbTime(bytes: frames.count) + byte * (frames.count + restored)
    }

    @Test func aTransferCostsItsFramesAndItsDebugBytes() throws {
        try debugger.controlOut(request: Frames.Request.reset, value: 0, index: 1, data: [], timeoutMilliseconds: 0)
        #expect(clock.now == .milliseconds(1), "a control transfer: one frame")
        try debugger.bulkOut(Frames.readStatus, timeoutMilliseconds: 0)
        #expect(clock.now == .milliseconds(2) + .microseconds(16), "READ_STATUS and its reply: 2 bytes")
        _ = try debugger.bulkIn(length: 1, timeoutMilliseconds: 0)
        #expect(clock.now == .milliseconds(3) + .microseconds(16), "a bulk IN: one frame")
        try debugger.bulkOut(Frames.burstWrite1024([UInt8](repeating: 0x5A, count: 1024)), timeoutMilliseconds: 0)
        // BURST_WRITE's 2 command bytes, 1,024 data bytes and its status byte at 8 µs each.
        #expect(clock.now == .milliseconds(4) + .microseconds(16) + .microseconds(8 * 1027))
        let before = clock.now
        // The reference client's slow write of 1 KiB: 10,275 bytes need 9 frames of 1,216.
        let slowWrite = Frames.writeXdata(0x0000, [UInt8](repeating: 0xA5, count: 1024))
        try debugger.bulkOut(slowWrite, timeoutMilliseconds: 0)
        #expect(slowWrite.count == 10_275)
        #expect(clock.now - before == .milliseconds(9) + .microseconds(8 * 10_279))
        #expect(debugger.accountedTime == clock.now, "the transfers ran back to back: all of it is theirs")
        #expect(debugger.busyUntil == clock.now)
    }

    @Test func aChipEraseStaysBusyForTwentyMilliseconds() throws {
        try debugger.bulkOut(Frames.chipErase, timeoutMilliseconds: 0)
        // CHIP_ERASE acts once its command byte is in: after the frame and 8 µs.
        let eraseEnds = .milliseconds(1) + byte + timing.chipErase
        #expect(eraseEnds == .milliseconds(21) + .microseconds(8))
        // A READ_STATUS acts one frame and one byte after its transfer starts.
        clock.wait(until: eraseEnds - .milliseconds(1) - byte - .microseconds(1))
        try debugger.bulkOut(Frames.readStatus, timeoutMilliseconds: 0)
        #expect(try debugger.bulkIn(length: 1, timeoutMilliseconds: 0)[0] & Frames.Status.chipEraseBusy != 0)
        try debugger.bulkOut(Frames.readStatus, timeoutMilliseconds: 0)
        #expect(try debugger.bulkIn(length: 1, timeoutMilliseconds: 0)[0] & Frames.Status.chipEraseBusy == 0)
        #expect(debugger.chip!.flash.allSatisfy { $0 == 0xFF })
    }

    /// A chip erase and programming two 1 KiB blocks the way the reference client does it
    /// (cc-debugger-protocol.md §7.1, §7.3), each transfer and each busy flag at the time the rules
    /// give.
    @Test func eraseAndProgrammingTwoBlocksTakeThePredictedTime() throws {
        let data = (0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        /// Sends `frames` and checks the transfer's cost.
        func send(_ frames: [UInt8], restored: Int = 0) throws {
            let start = clock.now
            try debugger.bulkOut(frames, timeoutMilliseconds: 0)
            #expect(clock.now - start == cost(frames, restored: restored))
        }
        /// XDATA byte writes (template T6: 45 bytes, 4 restored).
        func write(_ address: UInt16, _ bytes: [UInt8]) throws {
            try send(Frames.writeXdata(address, bytes), restored: 4)
        }
        /// Polls until `register` (status or FCTL) is no longer busy; each poll's reply must say busy
        /// exactly while its command acts before `done`. Returns the polls.
        func poll(fctl: Bool, until done: Duration) throws -> Int {
            for polls in 1...100 {
                let start = clock.now
                // READ_STATUS acts after its 1 byte; the FCTL read's MOVX after the template's
                // 20-byte prologue, 5-byte pointer and its own 2 bytes.
                let acts = start + timing.frame + byte * (fctl ? 27 : 1)
                if fctl {
                    try send(Frames.readXdata(0x6270, count: 1), restored: 4)
                } else {
                    try send(Frames.readStatus)
                }
                let reply = try debugger.bulkIn(length: 1, timeoutMilliseconds: 0)[0]
                #expect(
                    clock.now == start
                        + cost(fctl ? Frames.readXdata(0x6270, count: 1) : Frames.readStatus, restored: fctl ? 4 : 0)
                        + timing.frame)
                #expect((reply & 0x80 != 0) == (acts < done), "poll \(polls) at \(acts), done at \(done)")
                if reply & 0x80 == 0 { return polls }
            }
            Issue.record("still busy after 100 polls")
            return 100
        }

        try debugger.controlOut(request: Frames.Request.reset, value: 0, index: 1, data: [], timeoutMilliseconds: 0)
        var start = clock.now
        try send(Frames.chipErase)
        let eraseDone = start + timing.frame + byte + .milliseconds(20)
        let erasePolls = try poll(fctl: false, until: eraseDone)
        // Each poll takes 2 frames and 16 µs; the erase ends 20 ms after it started.
        #expect(erasePolls == 11)
        #expect(clock.now >= eraseDone)

        // DMA channels 1 and 3 (burst → buffer 0 → flash), FADDR = 0 (§7.3).
        try write(
            0x0800,
            [0x62, 0x60, 0x00, 0x00, 0x04, 0x00, 0x1F, 0x11, 0x62, 0x60, 0x04, 0x00, 0x04, 0x00, 0x1F, 0x11]
                + [0x00, 0x00, 0x62, 0x73, 0x04, 0x00, 0x12, 0x42, 0x04, 0x00, 0x62, 0x73, 0x04, 0x00, 0x12, 0x42])
        try write(0x70D2, [0x00])
        try write(0x70D3, [0x08])
        try write(0x6271, [0x00])
        try write(0x6272, [0x00])
        var flashDone = Duration.zero
        for block in 0..<2 {
            try write(0x70D6, [block == 0 ? 0x02 : 0x04])
            try send(Frames.burstWrite1024(Array(data[(block * 1024)..<((block + 1) * 1024)])))
            _ = try poll(fctl: true, until: flashDone)
            try write(0x70D6, [block == 0 ? 0x08 : 0x10])
            start = clock.now
            try write(0x6270, [0x06])
            // The write starts when MOVX @DPTR,A acts (prologue 20, pointer 5, MOV A 4, MOVX 2
            // bytes) and takes 256 words × 20 µs.
            flashDone = start + timing.frame + byte * 31 + .microseconds(20) * 256
        }
        let lastPolls = try poll(fctl: true, until: flashDone)
        #expect(lastPolls > 1, "the host waits for the last block's 5.12 ms")
        #expect(clock.now >= flashDone)
        #expect(Array(debugger.chip!.flash[0..<2048]) == data)
        #expect(debugger.accountedTime == clock.now, "nothing but the transfers took time")
    }

    /// ccbeacon's own programmer through the timed emulator: the burn is right, and its device
    /// time is that of its transfers, the chip erase's 20 ms among them.
    @Test func aBurnOnDeviceTimeIsTheTimeOfItsTransfers() throws {
        let image = try sampleImage()
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        let state = try session.open()
        let identity = try session.connect(targetID: state.targetID)
        var erasing: Duration?
        var erased: Duration?
        _ = try FlashProgrammer(session: session).flash(
            image, targetID: state.targetID, identity: identity, options: FlashOptions(resetToRun: false)
        ) { event in
            switch event {
            case .erasing(let progress) where progress.done == 0: erasing = clock.now
            case .erased: erased = clock.now
            default: break
            }
        }
        for segment in image.segments {
            #expect(Array(debugger.chip!.flash[segment.range]) == segment.bytes)
        }
        #expect(debugger.accountedTime == clock.now)
        let erase = try #require(erased) - (try #require(erasing))
        // At least the erase itself; at most that plus one status poll (2 frames, 16 µs) and a
        // reconnect's few transfers.
        #expect(erase >= .milliseconds(20) && erase < .milliseconds(40), "\(erase)")
    }

    @Test func aChipPutInByHandAppearsAfterItsDelay() throws {
        debugger.insertChip(EmulatedChip(), after: .seconds(2))
        let state = {
            try self.debugger.controlIn(
                request: Frames.Request.getState, value: 0, index: 0, length: 8, timeoutMilliseconds: 0)
        }
        #expect(try state()[0..<2] == [0, 0], "the socket is empty")
        clock.advance(by: .seconds(2) - .milliseconds(2))
        #expect(try state()[0..<2] == [0, 0], "not yet")
        clock.advance(by: .milliseconds(1))
        #expect(try state()[0..<2] == [0x41, 0x25])
    }

    @Test func withoutTimingNothingTakesDeviceTime() throws {
        let untimed = EmulatedDebugger(clock: clock)
        let provider = EmulatorProvider(count: 2, timing: .hardware, clock: clock)
        #expect(provider.debuggers.allSatisfy { $0.timing == .hardware })
        _ = try burn(try sampleImage(), on: untimed)
        #expect(untimed.accountedTime == .zero && untimed.busyUntil == nil && clock.now == .zero)
    }
}
