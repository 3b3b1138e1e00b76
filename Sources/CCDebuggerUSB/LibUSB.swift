public import CCDebugger
import CLibUSB
import Synchronization
import TargetData

/// CC Debuggers on the real USB bus, through libusb-1.0. This module is the only code that
/// touches libusb.
///
/// `@unchecked Sendable`: the only state is the libusb context, which libusb-1.0 documents as
/// safe to use from several threads at once.
public final class LibUSBProvider: DebuggerProvider, @unchecked Sendable {
    let context: OpaquePointer

    /// Initialises libusb.
    public init() throws(DebuggerError) {
        var context: OpaquePointer?
        let result = libusb_init(&context)
        guard result == 0, let context else { throw .transport(LibUSBError.map(result), during: .startingLibUSB) }
        self.context = context
    }

    deinit { libusb_exit(context) }

    /// The libusb this process runs with (its version, as the library reports it).
    public var backend: String {
        guard let version = libusb_get_version() else { return "libusb" }
        let value = version.pointee
        return "libusb \(value.major).\(value.minor).\(value.micro)"
    }

    /// Every supported debugger on the bus. Names and serial numbers come from the string
    /// descriptors when the device can be opened (without the udev rule it cannot; the known
    /// name is used then).
    public func devices() throws(DebuggerError) -> [DebuggerDevice] { try devices(tracing: nil) }

    /// `devices()`, its string descriptor requests recorded in `trace`.
    public func devices(tracing trace: USBTrace?) throws(DebuggerError) -> [DebuggerDevice] {
        var list: UnsafeMutablePointer<OpaquePointer?>?
        let count = libusb_get_device_list(context, &list)
        guard count >= 0, let list else {
            throw .transport(LibUSBError.map(Int32(count)), during: .listingDevices)
        }
        defer { libusb_free_device_list(list, 1) }
        var found: [DebuggerDevice] = []
        for index in 0..<Int(count) {
            guard let device = list[index] else { continue }
            var descriptor = libusb_device_descriptor()
            guard libusb_get_device_descriptor(device, &descriptor) == 0,
                let known = DebuggerModel.model(vendorID: descriptor.idVendor, productID: descriptor.idProduct)
            else { continue }
            var product = known.name
            var serial: String?
            var handle: OpaquePointer?
            let bus = Int(libusb_get_bus_number(device))
            let address = Int(libusb_get_device_address(device))
            if libusb_open(device, &handle) == 0, let handle {
                let strings = StringReader(handle: handle, trace: trace, bus: bus, device: address)
                product = strings.string(descriptor.iProduct) ?? product
                serial = strings.string(descriptor.iSerialNumber)
                libusb_close(handle)
            }
            // The port chain from the root hub (USB 3 allows 7 tiers).
            var ports = [UInt8](repeating: 0, count: 7)
            let depth = libusb_get_port_numbers(device, &ports, Int32(ports.count))
            found.append(
                DebuggerDevice(
                    bus: bus, address: address,
                    vendorID: descriptor.idVendor, productID: descriptor.idProduct, product: product, serial: serial,
                    debuggerID: descriptor.bcdDevice,
                    portPath: depth > 0
                        ? "\(bus)-" + ports.prefix(Int(depth)).map { String($0) }.joined(separator: ".") : nil))
        }
        return found.sorted { ($0.bus, $0.address) < ($1.bus, $1.address) }
    }

    /// Opens `device`: configuration 1, interface 0 claimed.
    public func open(_ device: DebuggerDevice) throws(DebuggerError) -> any DebuggerTransport {
        try open(device, tracing: nil)
    }

    /// `open(_:)`, its SET_CONFIGURATION recorded in `trace`.
    public func open(_ device: DebuggerDevice, tracing trace: USBTrace?) throws(DebuggerError)
        -> any DebuggerTransport
    {
        var list: UnsafeMutablePointer<OpaquePointer?>?
        let count = libusb_get_device_list(context, &list)
        guard count >= 0, let list else {
            throw .transport(LibUSBError.map(Int32(count)), during: .listingDevices)
        }
        defer { libusb_free_device_list(list, 1) }
        for index in 0..<Int(count) {
            guard let candidate = list[index], Int(libusb_get_bus_number(candidate)) == device.bus,
                Int(libusb_get_device_address(candidate)) == device.address
            else { continue }
            var handle: OpaquePointer?
            let opened = libusb_open(candidate, &handle)
            guard opened == 0, let handle else {
                throw .transport(LibUSBError.map(opened), during: .opening(selector: nil))
            }
            // SET_CONFIGURATION(1), a standard request on endpoint 0 (usbmon shows it so).
            let id = trace?.submit(
                .control, endpoint: 0x00, bus: device.bus, device: device.address,
                setup: [0x00, 0x09, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00], length: 0)
            let configured = libusb_set_configuration(handle, 1)
            if let id {
                trace?.complete(
                    id, .control, endpoint: 0x00, bus: device.bus, device: device.address,
                    status: configured == 0 ? 0 : USBTrace.status(for: LibUSBError.map(configured)), length: 0)
            }
            if configured != 0 && configured != Int32(LIBUSB_ERROR_BUSY.rawValue) {
                libusb_close(handle)
                throw .transport(LibUSBError.map(configured), during: .configuring)
            }
            let claimed = libusb_claim_interface(handle, 0)
            guard claimed == 0 else {
                libusb_close(handle)
                throw .transport(LibUSBError.map(claimed), during: .claimingInterface)
            }
            return LibUSBTransport(handle: handle)
        }
        throw .transport(.noDevice, during: .opening(selector: device.selector))
    }

}

/// Reads string descriptors as the USB standard has them (GET_DESCRIPTOR(STRING) for the
/// language IDs, then the string in the first language), each request traced: a clone's strings
/// are kept as it sends them (UTF-16), not cut to ASCII.
struct StringReader {
    let handle: OpaquePointer
    let trace: USBTrace?
    let bus: Int
    let device: Int

    /// The string at `index`; nil for index 0 or a device that does not answer.
    func string(_ index: UInt8) -> String? {
        guard index != 0, let languages = descriptor(0, language: 0), languages.count >= 4 else { return nil }
        let language = UInt16(languages[2]) | UInt16(languages[3]) << 8
        guard let bytes = descriptor(index, language: language) else { return nil }
        let units = stride(from: 2, to: bytes.count - 1, by: 2).map { UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8 }
        return String(decoding: units, as: UTF16.self)
    }

    /// One GET_DESCRIPTOR(STRING, `index`, `language`): the descriptor's bytes within its own
    /// bLength, or nil when it failed or is not a string descriptor.
    func descriptor(_ index: UInt8, language: UInt16) -> [UInt8]? {
        let value = 0x0300 | UInt16(index)
        let setup: [UInt8] = [0x80, 0x06] + bytes(value) + bytes(language) + bytes(UInt16(255))
        let id = trace?.submit(.control, endpoint: 0x80, bus: bus, device: device, setup: setup, length: 255)
        var buffer = [UInt8](repeating: 0, count: 255)
        let result = libusb_control_transfer(handle, 0x80, 0x06, value, language, &buffer, 255, 1000)
        let reply = result > 0 ? Array(buffer.prefix(Int(result))) : []
        if let id {
            trace?.complete(
                id, .control, endpoint: 0x80, bus: bus, device: device,
                status: result < 0 ? USBTrace.status(for: LibUSBError.map(result)) : 0, data: reply,
                length: reply.count)
        }
        guard reply.count >= 2, reply[1] == 0x03 else { return nil }
        return Array(reply.prefix(min(reply.count, Int(reply[0]))))
    }

    private func bytes(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
}

/// One open debugger: vendor control requests on endpoint 0, bulk EP4 OUT (0x04) and IN (0x84).
public final class LibUSBTransport: DebuggerTransport {
    let handle: OpaquePointer
    static let bulkOutEndpoint: UInt8 = 0x04
    static let bulkInEndpoint: UInt8 = 0x84

    init(handle: OpaquePointer) { self.handle = handle }

    deinit {
        libusb_release_interface(handle, 0)
        libusb_close(handle)
    }

    /// A vendor control transfer from the device.
    public func controlIn(request: UInt8, value: UInt16, index: UInt16, length: Int, timeoutMilliseconds: Int)
        throws(TransportError) -> [UInt8]
    {
        var buffer = [UInt8](repeating: 0, count: length)
        let result = libusb_control_transfer(
            handle, 0xC0, request, value, index, &buffer, UInt16(length), UInt32(timeoutMilliseconds))
        guard result >= 0 else { throw LibUSBError.map(result) }
        return Array(buffer[0..<Int(result)])
    }

    /// A vendor control transfer to the device.
    public func controlOut(request: UInt8, value: UInt16, index: UInt16, data: [UInt8], timeoutMilliseconds: Int)
        throws(TransportError)
    {
        var buffer = data
        let result = libusb_control_transfer(
            handle, 0x40, request, value, index, &buffer, UInt16(data.count), UInt32(timeoutMilliseconds))
        guard result >= 0 else { throw LibUSBError.map(result) }
        guard Int(result) == data.count else { throw .shortTransfer(expected: data.count, actual: Int(result)) }
    }

    /// A bulk OUT transfer; fewer bytes moved than given is an error.
    public func bulkOut(_ data: [UInt8], timeoutMilliseconds: Int) throws(TransportError) {
        var buffer = data
        var transferred: Int32 = 0
        let result = libusb_bulk_transfer(
            handle, Self.bulkOutEndpoint, &buffer, Int32(data.count), &transferred, UInt32(timeoutMilliseconds))
        guard result == 0 else { throw LibUSBError.map(result) }
        guard Int(transferred) == data.count else {
            throw .shortTransfer(expected: data.count, actual: Int(transferred))
        }
    }

    /// A bulk IN transfer of exactly `length` bytes.
    public func bulkIn(length: Int, timeoutMilliseconds: Int) throws(TransportError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: length)
        var transferred: Int32 = 0
        let result = libusb_bulk_transfer(
            handle, Self.bulkInEndpoint, &buffer, Int32(length), &transferred, UInt32(timeoutMilliseconds))
        guard result == 0 else { throw LibUSBError.map(result) }
        guard Int(transferred) == length else { throw .shortTransfer(expected: length, actual: Int(transferred)) }
        return buffer
    }
}

/// libusb error codes as `TransportError`s.
enum LibUSBError {
    static func map(_ code: Int32) -> TransportError {
        switch code {
        case Int32(LIBUSB_ERROR_TIMEOUT.rawValue): return .timeout
        case Int32(LIBUSB_ERROR_NO_DEVICE.rawValue): return .noDevice
        case Int32(LIBUSB_ERROR_ACCESS.rawValue): return .accessDenied
        case Int32(LIBUSB_ERROR_BUSY.rawValue): return .busy
        case Int32(LIBUSB_ERROR_PIPE.rawValue): return .pipe
        default: return .libusb(LibUSBErrorCode(rawValue: code, name: String(cString: libusb_error_name(code))))
        }
    }
}

/// Starts libusb on first use, so commands that need no debugger never pay for it; if libusb
/// cannot start, every use reports why.
public final class LazyLibUSBProvider: DebuggerProvider {
    private let provider = Mutex<LibUSBProvider?>(nil)

    /// Nothing happens until a debugger is asked for.
    public init() {}

    private func started() throws(DebuggerError) -> LibUSBProvider {
        try provider.withLock { provider throws(DebuggerError) in
            if let provider { return provider }
            let started = try LibUSBProvider()
            provider = started
            return started
        }
    }

    /// See `LibUSBProvider.devices()`.
    public func devices() throws(DebuggerError) -> [DebuggerDevice] { try started().devices() }

    /// See `LibUSBProvider.backend` (libusb is started to ask it).
    public var backend: String { (try? started().backend) ?? "libusb (cannot start)" }

    /// See `LibUSBProvider.open(_:)`.
    public func open(_ device: DebuggerDevice) throws(DebuggerError) -> any DebuggerTransport {
        try started().open(device)
    }

    /// See `LibUSBProvider.devices(tracing:)`.
    public func devices(tracing trace: USBTrace?) throws(DebuggerError) -> [DebuggerDevice] {
        try started().devices(tracing: trace)
    }

    /// See `LibUSBProvider.open(_:tracing:)`.
    public func open(_ device: DebuggerDevice, tracing trace: USBTrace?) throws(DebuggerError)
        -> any DebuggerTransport
    { try started().open(device, tracing: trace) }
}
