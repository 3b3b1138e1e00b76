public import CCDebugger
import TargetData

/// Several emulated debuggers on an imaginary USB bus, for tests of commands that select one.
public final class EmulatorProvider: DebuggerProvider {
    /// In process.
    public var backend: String { "emulated (in process)" }

    /// The debuggers, each on bus 1 at address 10 + its index.
    public let debuggers: [EmulatedDebugger]
    /// Serial numbers, `EMU0001`…
    public let serials: [String?]

    /// `count` debuggers, each with a blank CC2541 (distinct IEEE addresses); with `timing`, their
    /// transfers take device time on `clock` (see `DeviceTiming`), each debugger on its own.
    public init(count: Int = 1, timing: DeviceTiming? = nil, clock: any DeviceClock = MonotonicDeviceClock()) {
        debuggers = (0..<count).map { index in
            EmulatedDebugger(
                chip: EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0x25, UInt8(0x41 + index)]), timing: timing,
                clock: clock)
        }
        serials = (0..<count).map { "EMU\(String(repeating: "0", count: 3 - String($0 + 1).count))\($0 + 1)" }
    }

    /// Lists the emulated debuggers.
    public func devices() throws(DebuggerError) -> [DebuggerDevice] {
        debuggers.indices.map { index in
            DebuggerDevice(
                bus: 1, address: 10 + index, vendorID: DebuggerModel.ccDebugger.vendorID,
                productID: DebuggerModel.ccDebugger.productID,
                product: DebuggerModel.ccDebugger.name,
                serial: serials[index], debuggerID: debuggers[index].debuggerID, portPath: "1-\(index + 1)")
        }
    }

    /// Hands out the emulated debugger itself as the transport.
    public func open(_ device: DebuggerDevice) throws(DebuggerError) -> any DebuggerTransport {
        debuggers[device.address - 10]
    }
}
