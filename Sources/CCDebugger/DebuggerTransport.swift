/// The lowest level that has to be faked: vendor control transfers on endpoint 0 and one bulk
/// OUT / bulk IN endpoint pair. `LibUSBTransport` implements it over libusb; the emulator
/// implements it in process.
public protocol DebuggerTransport: AnyObject {
    /// A vendor control transfer from the device (bmRequestType 0xC0).
    func controlIn(request: UInt8, value: UInt16, index: UInt16, length: Int, timeoutMilliseconds: Int)
        throws(TransportError) -> [UInt8]
    /// A vendor control transfer to the device (bmRequestType 0x40).
    func controlOut(request: UInt8, value: UInt16, index: UInt16, data: [UInt8], timeoutMilliseconds: Int)
        throws(TransportError)
    /// A bulk OUT transfer of `data`.
    func bulkOut(_ data: [UInt8], timeoutMilliseconds: Int) throws(TransportError)
    /// A bulk IN transfer of exactly `length` bytes.
    func bulkIn(length: Int, timeoutMilliseconds: Int) throws(TransportError) -> [UInt8]
}

/// A USB transfer that failed, in libusb's terms with Swift names.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The transfer did not complete in time.
    case timeout
    /// The device is gone (unplugged).
    case noDevice
    /// The operating system refused access (udev rule missing).
    case accessDenied
    /// The device is claimed by another program.
    case busy
    /// The endpoint stalled.
    case pipe
    /// Fewer bytes moved than asked for.
    case shortTransfer(expected: Int, actual: Int)
    /// Any other libusb error, its code kept.
    case libusb(LibUSBErrorCode)
    /// A failure that is not libusb's (an emulated transport's), in words.
    case other(String)

    /// Plain-words reason.
    public var description: String {
        switch self {
        case .timeout: return "USB transfer timed out"
        case .noDevice: return "the debugger is gone (unplugged?)"
        case .accessDenied: return "access to the debugger was denied"
        case .busy: return "the debugger is in use by another program"
        case .pipe: return "the debugger stalled the transfer"
        case .shortTransfer(let expected, let actual): return "USB transfer moved \(actual) of \(expected) bytes"
        case .libusb(let code): return "USB error \(code)"
        case .other(let name): return "USB error \(name)"
        }
    }
}

/// Counts of what crossed the transport, for benchmarks and tests.
public struct TransferStatistics: Sendable, Equatable {
    /// Bulk OUT transfers.
    public var bulkOut = 0
    /// Bulk IN transfers.
    public var bulkIn = 0
    /// Control transfers (either direction).
    public var control = 0
    /// Bytes sent in bulk OUT transfers.
    public var bytesOut = 0
    /// Bytes received in bulk IN transfers.
    public var bytesIn = 0

    /// Creates zeroed statistics.
    public init() {}

    /// All transfers.
    public var transfers: Int { bulkOut + bulkIn + control }
}

/// Wraps a transport and counts its transfers.
public final class CountingTransport: DebuggerTransport {
    /// The wrapped transport.
    public let inner: any DebuggerTransport
    /// What has crossed so far.
    public private(set) var statistics = TransferStatistics()

    /// Wraps `inner`.
    public init(_ inner: any DebuggerTransport) { self.inner = inner }

    /// Starts counting again from zero.
    public func reset() { statistics = TransferStatistics() }

    /// Counts, then forwards: a vendor control transfer from the device.
    public func controlIn(request: UInt8, value: UInt16, index: UInt16, length: Int, timeoutMilliseconds: Int)
        throws(TransportError) -> [UInt8]
    {
        statistics.control += 1
        return try inner.controlIn(
            request: request, value: value, index: index, length: length, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Counts, then forwards: a vendor control transfer to the device.
    public func controlOut(request: UInt8, value: UInt16, index: UInt16, data: [UInt8], timeoutMilliseconds: Int)
        throws(TransportError)
    {
        statistics.control += 1
        try inner.controlOut(
            request: request, value: value, index: index, data: data, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Counts, then forwards: a bulk OUT transfer.
    public func bulkOut(_ data: [UInt8], timeoutMilliseconds: Int) throws(TransportError) {
        statistics.bulkOut += 1
        statistics.bytesOut += data.count
        try inner.bulkOut(data, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Counts, then forwards: a bulk IN transfer of exactly `length` bytes.
    public func bulkIn(length: Int, timeoutMilliseconds: Int) throws(TransportError) -> [UInt8] {
        statistics.bulkIn += 1
        let bytes = try inner.bulkIn(length: length, timeoutMilliseconds: timeoutMilliseconds)
        statistics.bytesIn += bytes.count
        return bytes
    }
}
