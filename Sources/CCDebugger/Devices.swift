import HexText
import StructuredText
import TargetData

/// One debugger on the USB bus.
public struct DebuggerDevice: Sendable, Equatable {
    /// USB bus number.
    public var bus: Int
    /// Device address on the bus.
    public var address: Int
    /// USB vendor ID.
    public var vendorID: UInt16
    /// USB product ID.
    public var productID: UInt16
    /// Product name (string descriptor, else the known name of the ID), as the device gave it.
    public var product: String
    /// Serial number string, when the device has one, as the device gave it.
    public var serial: String?
    /// bcdDevice, which the reference client prints as the "Debugger ID".
    public var debuggerID: UInt16
    /// Where it is plugged in, as Linux names the port: `BUS-PORT[.PORT…]` (`1-2.3`: bus 1, port 3
    /// of the hub on port 2). Unlike the address it stays the same when the debugger is replugged
    /// into the same socket, and unlike the serial number no two debuggers share it. `nil` when the
    /// system does not say.
    public var portPath: String?

    /// Creates a device record. The strings are kept as the device gave them, whatever they hold
    /// (a line break, an escape sequence): each way out encodes them (the console makes them
    /// visible, JSON escapes them), and a serial number selects as given or as shown.
    public init(
        bus: Int, address: Int, vendorID: UInt16, productID: UInt16, product: String, serial: String?,
        debuggerID: UInt16, portPath: String? = nil
    ) {
        self.portPath = portPath
        self.bus = bus
        self.address = address
        self.vendorID = vendorID
        self.productID = productID
        self.product = product
        self.serial = serial
        self.debuggerID = debuggerID
    }

    /// `bus:address`, the form `--device` takes.
    public var selector: String { "\(bus):\(address)" }

    /// `port:1-2.3`, the selector that names the socket rather than the device.
    public var portSelector: String? { portPath.map { "port:" + $0 } }

    /// `0451:16A2`.
    public var usbID: String { hex4(vendorID) + ":" + hex4(productID) }

}

/// Where debuggers come from: libusb in the product, emulated ones in tests.
public protocol DebuggerProvider: AnyObject, Sendable {
    /// Every supported debugger attached now.
    func devices() throws(DebuggerError) -> [DebuggerDevice]
    /// Opens one (configuration 1, interface 0 claimed).
    func open(_ device: DebuggerDevice) throws(DebuggerError) -> any DebuggerTransport
    /// What drives the debuggers, for `doctor` (`libusb 1.0.26`, `emulated`).
    var backend: String { get }
    /// `devices()`, recording in `trace` the USB requests listing makes (string descriptors).
    func devices(tracing trace: USBTrace?) throws(DebuggerError) -> [DebuggerDevice]
    /// `open(_:)`, recording in `trace` the USB requests opening makes (SET_CONFIGURATION).
    func open(_ device: DebuggerDevice, tracing trace: USBTrace?) throws(DebuggerError) -> any DebuggerTransport
}

extension DebuggerProvider {
    /// Unnamed.
    public var backend: String { "unnamed" }

    /// `devices()`: a provider that makes no USB requests to list its debuggers has none to trace.
    public func devices(tracing trace: USBTrace?) throws(DebuggerError) -> [DebuggerDevice] { try devices() }

    /// `open(_:)`: a provider that makes no USB requests to open a debugger has none to trace.
    public func open(_ device: DebuggerDevice, tracing trace: USBTrace?) throws(DebuggerError)
        -> any DebuggerTransport
    { try open(device) }
}

/// The command-line option through which the running command selects debuggers. Messages name
/// it, so that each command suggests its own option (`flash --device`, `provision --devices`).
package struct DeviceSelector: Sendable, Equatable {
    /// The option, e.g. `--device`.
    package var option: String
    /// Whether it takes several debuggers (`all`, or a comma-separated list).
    package var takesSeveral: Bool

    /// Creates a selector description.
    package init(option: String, takesSeveral: Bool) {
        self.option = option
        self.takesSeveral = takesSeveral
    }
}

/// Why no single debugger could be chosen.
package enum DeviceSelectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// None attached.
    case noDebugger
    /// The selector names none of them.
    case notFound(selector: String, devices: [DebuggerDevice])
    /// Several attached and none selected through `by`: ccbeacon never picks one at random.
    case ambiguous([DebuggerDevice], by: DeviceSelector)
    /// Several debuggers carry the serial number given: it names none of them.
    case sharedSerial(String, [DebuggerDevice])

    /// Plain-words reason, with the debuggers listed where it helps (`lines`, one per line).
    package var description: String { lines.joined(separator: "\n") }

    /// The reason as lines: the first says what is wrong, the others (indented) list the debuggers.
    package var lines: [String] {
        switch self {
        case .noDebugger:
            let models = DebuggerModel.supported
            return [
                "no CC Debugger found (USB \(models[0].usbID), "
                    + models.dropFirst().map { "\($0.shortName) \($0.usbID)" }.joined(separator: " or ") + ")"
            ]
        case .notFound(let selector, let devices):
            return [
                "no debugger '\(selector)'; attached: "
                    + (devices.isEmpty
                        ? "none"
                        : devices.map { "\($0.selector)\($0.portSelector.map { " " + $0 } ?? "") (\($0.product))" }
                            .joined(separator: ", "))
            ]
        case .ambiguous(let devices, let selector):
            return [
                "\(devices.count) debuggers are attached; choose \(selector.takesSeveral ? "" : "one ")with \(selector.option):"
            ]
                + devices.map {
                    "  \($0.selector)\($0.portSelector.map { "  " + $0 } ?? "")  \($0.product)\($0.serial.map { "  serial \($0)" } ?? "")"
                }
        case .sharedSerial(let serial, let devices):
            return [
                "\(devices.count) debuggers share the serial number '\(serial)': "
                    + devices.map { $0.portSelector ?? $0.selector }.joined(separator: ", ")
                    + "; name each by its port (port:BUS-PORT) or bus:address"
            ]
        }
    }

}

/// Chooses the debugger a command works with.
package enum DeviceSelection {
    /// Why `selector` can name no debugger, or nil: it is empty, `port:` with no path, or a port
    /// path that is not `BUS-PORT[.PORT…]` in decimal, as Linux names ports and `devices` lists
    /// them. (Anything else may be a serial number.)
    package static func problem(with selector: String) -> String? {
        guard !selector.isEmpty else { return "needs a debugger (BUS:ADDRESS, port:BUS-PORT or a serial number)" }
        guard selector.hasPrefix("port:") else { return nil }
        let path = selector.dropFirst("port:".count)
        guard !path.isEmpty else { return "names no port (port:BUS-PORT[.PORT…], as 'ccbeacon devices' lists it)" }
        let parts = path.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        let numbers =
            parts.count == 2 ? [parts[0]] + parts[1].split(separator: ".", omittingEmptySubsequences: false) : []
        guard !numbers.isEmpty,
            numbers.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy { $0.isASCII && $0.isNumber } })
        else { return "is not a port path (port:BUS-PORT[.PORT…], as 'ccbeacon devices' lists it)" }
        return nil
    }

    /// Whether `text` has the form of a `bus:address` or `port:…` selector (a serial number of
    /// that form names nothing: the selector it reads as comes first).
    package static func readsAsSelector(_ text: String) -> Bool {
        if text.hasPrefix("port:") { return true }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    /// The device `selector` (`bus:address`, `port:BUS-PORT[.PORT…]` or a serial number: as the
    /// device gives it, else as ccbeacon shows it, `VisibleText.escaped`) names, or the only one
    /// attached. A serial number two debuggers share names neither (CC Debuggers often
    /// share one): the port tells them apart.
    /// `option` is how the running command selects, for the message when several are attached.
    package static func choose(
        _ devices: [DebuggerDevice], selector: String?, option: DeviceSelector
    ) throws(DeviceSelectionError) -> DebuggerDevice {
        guard let selector else {
            guard !devices.isEmpty else { throw .noDebugger }
            guard devices.count == 1 else { throw .ambiguous(devices, by: option) }
            return devices[0]
        }
        if selector.hasPrefix("port:") {
            if let match = devices.first(where: { $0.portSelector == selector }) { return match }
            throw .notFound(selector: selector, devices: devices)
        }
        if let match = devices.first(where: { $0.selector == selector }) { return match }
        // As given first: a serial written like another's escape (`A\x1b`) selects its own.
        let given = devices.filter { $0.serial == selector }
        let serials =
            given.isEmpty ? devices.filter { $0.serial.map(VisibleText.escaped) == selector } : given
        if serials.count > 1 { throw .sharedSerial(selector, serials) }
        if let match = serials.first { return match }
        throw .notFound(selector: selector, devices: devices)
    }
}

func hex4(_ value: UInt16) -> String { HexText.digits(value, width: 4) }
