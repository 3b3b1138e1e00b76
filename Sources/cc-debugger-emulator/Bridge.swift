import CCDebugger
import CCDebuggerEmulator
import CUSBEmulation

#if canImport(Glibc)
    import Glibc
#endif

// The state the C glue reaches through its callbacks. umockdev serves every ioctl on its one worker
// thread while the main thread only waits for the command, so these are never used concurrently.
nonisolated(unsafe) var bridgeDebuggers: [EmulatedDebugger] = []
nonisolated(unsafe) var bridgeLog: UnsafeMutablePointer<FILE>?
nonisolated(unsafe) var chipsIssued = 0
/// The IEEE address the next chip gets (`--ieee` sets the first; each chip gets the next number).
nonisolated(unsafe) var nextIEEE: [UInt8] = [0x00, 0x12, 0x4B, 0x00, 0x25, 0x41]

/// A blank chip with the next IEEE address.
func freshChip() -> EmulatedCC2541 {
    chipsIssued += 1
    let chip = EmulatedCC2541(ieee: nextIEEE)
    for index in stride(from: 5, through: 0, by: -1) {
        nextIEEE[index] &+= 1
        if nextIEEE[index] != 0 { break }
    }
    return chip
}

/// Bench mode: after a job resets its chip to run, the chip is taken away and a blank one (with a
/// new IEEE address) offered, until `chipLimit` chips have been handed out.
func installBench(on debuggers: [EmulatedDebugger], chipLimit: Int) {
    for debugger in debuggers {
        debugger.onResetToRun = { debugger in
            debugger.chip = chipsIssued < chipLimit ? freshChip() : nil
        }
    }
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
            let debugger = bridgeDebuggers[Int(device)]
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
            do throws(TransportError) {
                try bridgeDebuggers[Int(device)].bulkOut(
                    Array(UnsafeBufferPointer(start: data, count: Int(length))), timeoutMilliseconds: 0)
                return 0
            } catch { return errnoFor(error) }
        },
        bulk_in: { _, device, data, length in
            guard let data else { return -EINVAL }
            do throws(TransportError) {
                guard let reply = try bridgeDebuggers[Int(device)].takeReply(upTo: Int(length)) else { return -EAGAIN }
                for (offset, byte) in reply.enumerated() { data[offset] = byte }
                return Int32(reply.count)
            } catch { return errnoFor(error) }
        },
        log: logging
            ? { _, line in
                guard let line, let bridgeLog else { return }
                fputs(line, bridgeLog)
                fputs("\n", bridgeLog)
            } : nil,
        context: nil)
}
