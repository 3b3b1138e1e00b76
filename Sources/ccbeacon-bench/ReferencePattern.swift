import CCDebugger
import IntelHex

/// The reference client's `cc-tool -e -w IMAGE -v` (CRC verify) as the transfers it sends, built
/// from the documented templates and sequence (cc-debugger-protocol.md §3.3, §7.1, §7.3, §7.6,
/// §9, and the transfer sizes of cc-tool-urb-trace.txt), not from cc-tool's code. Run against the
/// timed emulator it gives the device-time model's figure for cc-tool's traffic; the emulated
/// chip must then hold the image, which checks that the pattern is the one that works.
///
/// Left out, for both clients alike: the two string-descriptor requests and libusb's setup.
struct ReferencePattern {
    /// The debugger, usually a `CountingTransport` around the timed emulator.
    let transport: any DebuggerTransport
    /// The host's sleeps (cc-tool sleeps 500 ms between chip-erase polls): on a virtual clock,
    /// time moved on.
    let sleep: (Duration) -> Void

    /// The phases cc-tool reports on its own: its "Completed (x s.)" lines time the write and the
    /// verify alone.
    enum Phase { case connect, erase, write, verify, reset }

    func out(_ bytes: [UInt8]) throws(TransportError) { try transport.bulkOut(bytes, timeoutMilliseconds: 3000) }
    func input(_ count: Int) throws(TransportError) -> [UInt8] {
        try transport.bulkIn(length: count, timeoutMilliseconds: 3000)
    }
    func control(_ request: UInt8, value: UInt16 = 0, index: UInt16 = 0, data: [UInt8] = []) throws(TransportError) {
        try transport.controlOut(request: request, value: value, index: index, data: data, timeoutMilliseconds: 3000)
    }
    /// T1: READ_STATUS.
    func status() throws(TransportError) -> UInt8 {
        try out(Frames.readStatus)
        return try input(1)[0]
    }
    /// T5: `count` bytes of XDATA.
    func read(_ address: UInt16, count: Int) throws(TransportError) -> [UInt8] {
        try out(Frames.readXdata(address, count: count))
        return try input(count)
    }
    /// T6: XDATA bytes, one transfer.
    func write(_ address: UInt16, _ bytes: [UInt8]) throws(TransportError) {
        try out(Frames.writeXdata(address, bytes))
    }

    /// §9 steps 8–14: prepare, chip info, reset into debug mode, status, debug config, the three
    /// identification reads, the lock check.
    func connect() throws(TransportError) {
        try control(Frames.Request.prepareDebugMode)
        try control(
            Frames.Request.setChipInfo, value: 1, data: Frames.chipInfoText(target: "CC2541", debuggerID: 0x8662))
        try control(Frames.Request.reset, index: 1)
        _ = try status()
        try out(Frames.writeConfig(0x22))
        _ = try read(0x6276, count: 2)
        _ = try read(0x6249, count: 1)
        _ = try read(0x624A, count: 1)
        _ = try status()
    }

    /// Polls FCTL until BUSY clears (cc-tool: no timeout; a bound here keeps a broken model from
    /// hanging the benchmark).
    func waitForFlash() throws {
        for _ in 0..<100_000 {
            if try read(0x6270, count: 1)[0] & 0x80 == 0 { return }
        }
        throw TransportError.other("the flash controller stayed busy")
    }

    /// The whole job; `phase` is called as each phase begins.
    func run(_ image: MemoryImage, phase: (Phase) -> Void) throws {
        phase(.connect)
        _ = try transport.controlIn(
            request: Frames.Request.getState, value: 0, index: 0, length: 8, timeoutMilliseconds: 3000)
        try control(Frames.Request.setSpeed, value: 1)  // slow, cc-tool's default
        try connect()

        // §7.1: CHIP_ERASE, poll at once, then every 500 ms (8 s at most); reconnect.
        phase(.erase)
        try out(Frames.chipErase)
        var waited = Duration.zero
        while try status() & Frames.Status.chipEraseBusy != 0 {
            guard waited < .seconds(8) else { throw TransportError.other("the chip erase did not finish") }
            sleep(.milliseconds(500))
            waited += .milliseconds(500)
        }
        try connect()

        // §7.3: every 1 KiB block from 0 to the image's end (0xFF blocks too), double-buffered
        // through channels 1/3 and 2/4, FADDR set once.
        phase(.write)
        let end = image.endAddress ?? 0
        let blocks = (end + 1023) / 1024
        try write(
            0x0800,
            [0x62, 0x60, 0x00, 0x00, 0x04, 0x00, 0x1F, 0x11, 0x62, 0x60, 0x04, 0x00, 0x04, 0x00, 0x1F, 0x11]
                + [0x00, 0x00, 0x62, 0x73, 0x04, 0x00, 0x12, 0x42, 0x04, 0x00, 0x62, 0x73, 0x04, 0x00, 0x12, 0x42])
        try write(0x70D2, [0x00])
        try write(0x70D3, [0x08])
        try write(0x6271, [0x00])
        try write(0x6272, [0x00])
        for block in 0..<blocks {
            let even = block % 2 == 0
            try write(0x70D6, [even ? 0x02 : 0x04])
            try out(Frames.burstWrite1024(image.bytes(in: (block * 1024)..<((block + 1) * 1024))))
            try waitForFlash()
            try write(0x70D6, [even ? 0x08 : 0x10])
            try write(0x6270, [0x06])
        }
        try waitForFlash()

        // §7.6: per chunk of ≤ 1 KiB of the image's own bytes, inside one 32 KiB bank: descriptor,
        // seed twice, arm, trigger, poll DMAIRQ, read the CRC.
        phase(.verify)
        try write(0x70D6, [0x00])
        try write(0x70D4, [0x00])
        try write(0x70D5, [0x08])
        var bank = -1
        for segment in image.segments {
            var start = segment.start
            while start < segment.end {
                let stop = min(segment.end, start + 1024, (start / 0x8000 + 1) * 0x8000)
                if start / 0x8000 != bank {
                    bank = start / 0x8000
                    try write(0x70C7, [UInt8(bank)])
                }
                let source = 0x8000 + start % 0x8000
                let length = stop - start
                try write(
                    0x0800,
                    [
                        UInt8(source >> 8), UInt8(source & 0xFF), 0x70, 0xBD, UInt8(length >> 8), UInt8(length & 0xFF),
                        0x20, 0x42,
                    ])
                try write(0x70BC, [0xFF])
                try write(0x70BC, [0xFF])
                try write(0x70D6, [0x01])
                try write(0x70D7, [0x01])
                var polls = 0
                while try read(0x70D1, count: 1)[0] & 0x01 == 0 {
                    polls += 1
                    guard polls < 100_000 else { throw TransportError.other("the CRC DMA never finished") }
                }
                let crc = try read(0x70BC, count: 2)
                guard UInt16(crc[0]) | UInt16(crc[1]) << 8 == CC254xSession.crc(image.bytes(in: start..<stop)) else {
                    throw TransportError.other("CRC mismatch at \(start)")
                }
                start = stop
            }
        }

        // §9 step 20: reset, the target runs.
        phase(.reset)
        try control(Frames.Request.reset, index: 0)
    }
}
