import CCDebugger
import CCDebuggerEmulator
import CUSBEmulation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The state the C glue reaches through its callbacks (umockdev's worker thread) and the main
/// thread sets up.
struct BridgeState {
    var debuggers: [EmulatedDebugger] = []
    /// The `--log` file's descriptor, -1 for none.
    var log: Int32 = -1
    /// `--log-data`: the bytes of every bulk transfer go to the log too.
    var logData = false
    var chipsIssued = 0
    /// The IEEE address the next chip gets (`--ieee` sets the first; each chip gets the next number).
    var nextIEEE: [UInt8] = [0x00, 0x12, 0x4B, 0x00, 0x25, 0x41]
    /// What every chip is (`--chip`).
    var part = EmulatedPart.cc2541F256
}

/// The one bridge state. A callback takes what it needs under the lock and drives the emulated
/// debugger outside it (a reset to run hands out a fresh chip, which takes the lock again).
let bridge = Mutex(BridgeState())

/// The emulated debugger behind umockdev's device number `device`.
func bridgeDebugger(_ device: Int32) -> EmulatedDebugger { bridge.withLock { $0.debuggers[Int(device)] } }

/// A blank chip with the next IEEE address, or nil once `limit` chips have been handed out.
func freshChip(limit: Int = .max) -> EmulatedChip? {
    bridge.withLock { state in
        guard state.chipsIssued < limit else { return nil }
        state.chipsIssued += 1
        let chip = EmulatedChip(part: state.part, ieee: state.nextIEEE)
        for index in stride(from: state.nextIEEE.count - 1, through: 0, by: -1) {
            state.nextIEEE[index] &+= 1
            if state.nextIEEE[index] != 0 { break }
        }
        return chip
    }
}

/// Bench mode: after a job resets its chip to run, the chip is taken away and a blank one (with a
/// new IEEE address) offered, until `chipLimit` chips have been handed out. With `swapSeconds`,
/// the new chip is in the socket that long after the old one was released (the operator's hand):
/// the debugger finds no target until then.
func installBench(on debuggers: [EmulatedDebugger], chipLimit: Int, swapSeconds: Double = 0) {
    for debugger in debuggers {
        debugger.onResetToRun = { debugger in
            let next = freshChip(limit: chipLimit)
            if swapSeconds > 0 {
                debugger.insertChip(next, after: .seconds(swapSeconds))
            } else {
                debugger.chip = next
            }
        }
    }
}

/// With `--log-data`: a `DATA OUT|IN DEVICE HEX` line (before the transfer's own line) with the
/// bytes a bulk transfer moved.
func logData(_ direction: String, device: Int32, _ bytes: [UInt8]) {
    let (log, wanted) = bridge.withLock { ($0.log, $0.logData) }
    guard wanted, log >= 0 else { return }
    let digits = Array("0123456789abcdef".utf8)
    var line = Array("DATA \(direction) \(device) ".utf8)
    line.reserveCapacity(line.count + 2 * bytes.count + 1)
    for byte in bytes { line += [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]] }
    line.append(0x0A)
    _ = line.withUnsafeBytes { write(log, $0.baseAddress, $0.count) }
}

func errnoFor(_ error: TransportError) -> Int32 {
    switch error {
    case .noDevice: return -ENODEV
    case .timeout: return -ETIMEDOUT
    case .pipe: return -EPIPE
    default: return -EIO
    }
}

/// The callbacks the C glue calls for every transfer.
func bridgeCallbacks(logging: Bool) -> usbemu_callbacks {
    usbemu_callbacks(
        control: { _, device, setup, data, length in
            guard let setup, let data else { return -EINVAL }
            let debugger = bridgeDebugger(device)
            let request = setup[1]
            let value = UInt16(setup[2]) | UInt16(setup[3]) << 8
            let index = UInt16(setup[4]) | UInt16(setup[5]) << 8
            do throws(TransportError) {
                if setup[0] & 0x80 != 0 {
                    let reply = try debugger.controlIn(
                        request: request, value: value, index: index, length: Int(length), timeoutMilliseconds: 0)
                    for (offset, byte) in reply.enumerated() { data[offset] = byte }
                    return Int32(reply.count)
                }
                try debugger.controlOut(
                    request: request, value: value, index: index,
                    data: Array(UnsafeBufferPointer(start: data, count: Int(length))), timeoutMilliseconds: 0)
                return length
            } catch { return errnoFor(error) }
        },
        bulk_out: { _, device, data, length in
            guard let data else { return -EINVAL }
            let bytes = Array(UnsafeBufferPointer(start: data, count: Int(length)))
            logData("OUT", device: device, bytes)
            do throws(TransportError) {
                try bridgeDebugger(device).bulkOut(bytes, timeoutMilliseconds: 0)
                return 0
            } catch { return errnoFor(error) }
        },
        bulk_in: { _, device, data, length in
            guard let data else { return -EINVAL }
            do throws(TransportError) {
                guard let reply = try bridgeDebugger(device).takeReply(upTo: Int(length)) else { return -EAGAIN }
                for (offset, byte) in reply.enumerated() { data[offset] = byte }
                logData("IN", device: device, reply)
                return Int32(reply.count)
            } catch { return errnoFor(error) }
        },
        log: logging
            ? { _, line in
                guard let line else { return }
                let log = bridge.withLock { $0.log }
                guard log >= 0 else { return }
                // One write per line (line and newline together), so lines never interleave.
                let text = Array(String(cString: line).utf8) + [0x0A]
                _ = text.withUnsafeBytes { write(log, $0.baseAddress, $0.count) }
            } : nil,
        ready: { _, device in
            // The device time the emulator charged (with --timing): the URB is reaped then.
            guard let end = bridgeDebugger(device).busyUntil else { return 0 }
            let (seconds, attoseconds) = end.components
            return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        },
        context: nil)
}
