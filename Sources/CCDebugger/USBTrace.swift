import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A USB trace as Linux's usbmon records it, in a pcap file (link type 220,
/// LINKTYPE_USB_LINUX_MMAPPED) that Wireshark and `tshark` dissect: for every transfer a
/// submission record ('S': setup, data sent) and a completion record ('C': status, data
/// received), each with the wall-clock time it happened.
///
/// Records go to `sink` as they happen, one call per record (header and data together), so a
/// process killed in the middle leaves a file of whole records up to that moment. Thread-safe:
/// the workers of a pool record into one trace, told apart by bus and device number.
public final class USBTrace: Sendable {
    /// The kind of transfer, as usbmon numbers it.
    public enum TransferType: UInt8, Sendable {
        /// Endpoint 0.
        case control = 2
        /// The bulk endpoints.
        case bulk = 3
    }

    struct State {
        var nextID: UInt64 = 1
        var records = 0
        var headerWritten = false
        var failure: String?
    }

    private let sink: @Sendable ([UInt8]) -> String?
    private let state = Mutex(State())
    private let clock: @Sendable () -> (seconds: Int64, microseconds: Int32)

    /// A trace whose bytes go to `sink`, which returns `nil` on success or why it could not write
    /// (the first such reason is kept in `failure`; later records are not written). The pcap file
    /// header goes out with the first record (or `start()`), so a command that never reaches a
    /// debugger writes nothing. `clock`: wall-clock time of a record (tests fix it).
    public init(
        sink: @escaping @Sendable ([UInt8]) -> String?,
        clock: @escaping @Sendable () -> (seconds: Int64, microseconds: Int32) = USBTrace.wallClock
    ) {
        self.sink = sink
        self.clock = clock
    }

    /// Writes the file header if nothing is written yet: a trace of no transfers is still a
    /// file the dissectors open.
    public func start() { write(nil) }

    /// The pcap file header: little-endian, microsecond times, version 2.4, link type 220, and
    /// ccbeacon's mark (`writerMark`) where pcap keeps a field every reader ignores.
    public static let fileHeader: [UInt8] =
        littleEndian(UInt32(0xA1B2_C3D4)) + littleEndian(UInt16(2)) + littleEndian(UInt16(4))
        + littleEndian(UInt32(0)) + writerMark + littleEndian(UInt32(USBTrace.snapLength))
        + littleEndian(UInt32(220))

    /// "ccbt" in the header's `sigfigs` field, which the pcap format says writers set to 0 and
    /// readers ignore: it tells a trace ccbeacon wrote (which a new trace may replace) from a
    /// capture someone made with tcpdump or Wireshark (which it never replaces).
    public static let writerMark: [UInt8] = Array("ccbt".utf8)

    /// What a file's first 24 bytes say it is.
    public enum FileKind: Sendable, Equatable {
        /// A trace ccbeacon wrote.
        case ccbeaconTrace
        /// A pcap or pcapng capture (any link type, either byte order) without ccbeacon's mark.
        case otherCapture
        /// Anything else.
        case notACapture
    }

    /// Classifies a file by its first bytes (`header`, at most 24 of them).
    public static func kind(ofFileStartingWith header: [UInt8]) -> FileKind {
        guard header.count >= 24 else { return .notACapture }
        let magic = Array(header[0..<4])
        let magics: [[UInt8]] = [
            [0xD4, 0xC3, 0xB2, 0xA1], [0xA1, 0xB2, 0xC3, 0xD4], [0x4D, 0x3C, 0xB2, 0xA1], [0xA1, 0xB2, 0x3C, 0x4D],
            [0x0A, 0x0D, 0x0D, 0x0A],  // pcapng's section header
        ]
        guard magics.contains(magic) else { return .notACapture }
        return Array(header[0..<24]) == fileHeader ? .ccbeaconTrace : .otherCapture
    }

    /// The most data bytes a record carries (more than any transfer ccbeacon makes).
    public static let snapLength = 65_536

    /// Why the trace stopped being written, if it did.
    public var failure: String? { state.withLock { $0.failure } }

    /// Records written (submissions and completions).
    public var records: Int { state.withLock { $0.records } }

    /// The current wall-clock time.
    @Sendable public static func wallClock() -> (seconds: Int64, microseconds: Int32) {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return (Int64(time.tv_sec), Int32(time.tv_nsec / 1000))
    }

    /// Records a transfer's submission and returns its id, which its completion takes. `setup`:
    /// the 8 setup bytes of a control transfer; `data`: what is sent (OUT); `length`: the bytes
    /// asked for (the data's count for OUT, the buffer's for IN).
    public func submit(
        _ type: TransferType, endpoint: UInt8, bus: Int, device: Int, setup: [UInt8]? = nil, data: [UInt8] = [],
        length: Int
    ) -> UInt64 {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let isIn = endpoint & 0x80 != 0
        write(
            Self.record(
                id: id, event: .submission, type: type, endpoint: endpoint, bus: bus, device: device,
                setup: setup, status: -115, length: length, data: isIn ? nil : data, time: clock()))
        return id
    }

    /// Records the completion of transfer `id`: `status` 0 or a negative errno as Linux reports
    /// it (`status(for:)`), `data` what came back (IN), `length` the bytes moved.
    public func complete(
        _ id: UInt64, _ type: TransferType, endpoint: UInt8, bus: Int, device: Int, status: Int32,
        data: [UInt8] = [], length: Int
    ) {
        let isIn = endpoint & 0x80 != 0
        write(
            Self.record(
                id: id, event: .completion, type: type, endpoint: endpoint, bus: bus, device: device, setup: nil,
                status: status, length: length, data: isIn ? data : nil, time: clock()))
    }

    private func write(_ record: [UInt8]?) {
        // One sink call per record (the first with the file header), in the order of the calls:
        // the lock keeps records whole and ordered when several workers record at once.
        state.withLock { state in
            guard state.failure == nil, record != nil || !state.headerWritten else { return }
            let bytes = (state.headerWritten ? [] : Self.fileHeader) + (record ?? [])
            if let failure = sink(bytes) { return state.failure = failure }
            state.headerWritten = true
            if record != nil { state.records += 1 }
        }
    }

    /// A record's event: a submission or a completion.
    public enum Event: UInt8, Sendable {
        /// 'S'.
        case submission = 0x53
        /// 'C'.
        case completion = 0x43
    }

    /// One pcap record: the record header, usbmon's 64-byte header, then the data. `data` nil:
    /// none belongs to this event (an IN's submission, an OUT's completion: flag '<' or '>').
    public static func record(
        id: UInt64, event: Event, type: TransferType, endpoint: UInt8, bus: Int, device: Int, setup: [UInt8]?,
        status: Int32, length: Int, data: [UInt8]?, time: (seconds: Int64, microseconds: Int32)
    ) -> [UInt8] {
        let isIn = endpoint & 0x80 != 0
        let captured = Array((data ?? []).prefix(snapLength))
        var header: [UInt8] = littleEndian(id)
        header += [event.rawValue, type.rawValue, endpoint, UInt8(truncatingIfNeeded: device)]
        header += littleEndian(UInt16(truncatingIfNeeded: bus))
        // 0 says "present"; otherwise usbmon's reason for leaving it out.
        let setupFlag: UInt8 = setup != nil ? 0 : 0x2D  // '-'
        let dataFlag: UInt8 = data == nil ? (isIn ? 0x3C : 0x3E) : 0  // '<' IN not yet, '>' OUT already sent
        header += [setupFlag, dataFlag]
        header += littleEndian(UInt64(bitPattern: time.seconds)) + littleEndian(UInt32(bitPattern: time.microseconds))
        header += littleEndian(UInt32(bitPattern: status))
        header += littleEndian(UInt32(truncatingIfNeeded: length)) + littleEndian(UInt32(captured.count))
        header += (setup ?? []).prefix(8) + [UInt8](repeating: 0, count: 8 - min(8, setup?.count ?? 0))
        header += littleEndian(UInt32(0)) + littleEndian(UInt32(0))  // interval, start frame
        header += littleEndian(UInt32(isIn ? 0x200 : 0))  // URB_DIR_IN
        header += littleEndian(UInt32(0))  // isochronous descriptors
        let packet = header + captured
        return littleEndian(UInt32(truncatingIfNeeded: time.seconds))
            + littleEndian(UInt32(bitPattern: time.microseconds))
            + littleEndian(UInt32(packet.count)) + littleEndian(UInt32(packet.count)) + packet
    }

    /// The status Linux gives a transfer that ended with `error` (0 for none): what a usbmon
    /// capture of the same failure would show.
    public static func status(for error: TransportError?) -> Int32 {
        switch error {
        case nil: return 0
        case .timeout: return -2  // ENOENT: libusb cancels the URB when its time is up
        case .noDevice: return -19  // ENODEV
        case .pipe: return -32  // EPIPE: a stall
        case .accessDenied: return -13  // EACCES
        case .busy: return -16  // EBUSY
        case .shortTransfer: return 0  // completed, with fewer bytes
        case .libusb(let code) where code.rawValue == -8: return -75  // LIBUSB_ERROR_OVERFLOW: EOVERFLOW
        case .libusb, .other: return -71  // EPROTO
        }
    }

    /// The bytes a transfer that ended with `error` moved: what came of a short one, none of any
    /// other.
    public static func bytesMoved(by error: TransportError) -> Int {
        if case .shortTransfer(_, let actual) = error { return actual }
        return 0
    }

    /// The 8 setup bytes of a vendor request (bmRequestType 0xC0 in, 0x40 out).
    public static func vendorSetup(isIn: Bool, request: UInt8, value: UInt16, index: UInt16, length: Int) -> [UInt8] {
        [isIn ? 0xC0 : 0x40, request] + littleEndian(value) + littleEndian(index)
            + littleEndian(UInt16(truncatingIfNeeded: length))
    }
}

func littleEndian<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
}

/// Wraps a transport and records every transfer in a `USBTrace` (as the debugger at `bus`,
/// `device`), then passes it on unchanged — failures included.
public final class TracingTransport: DebuggerTransport {
    /// The wrapped transport.
    public let inner: any DebuggerTransport
    /// Where the records go.
    public let trace: USBTrace
    /// The debugger's bus and device number, as records name it.
    public let bus: Int
    /// The debugger's device number on its bus.
    public let device: Int
    /// The bulk endpoints of a CC Debugger (EP4 OUT, EP4 IN).
    static let bulkOutEndpoint: UInt8 = 0x04
    static let bulkInEndpoint: UInt8 = 0x84

    /// Wraps `inner`.
    public init(_ inner: any DebuggerTransport, trace: USBTrace, bus: Int, device: Int) {
        self.inner = inner
        self.trace = trace
        self.bus = bus
        self.device = device
    }

    /// Records, forwards: a vendor control transfer from the device.
    public func controlIn(request: UInt8, value: UInt16, index: UInt16, length: Int, timeoutMilliseconds: Int)
        throws(TransportError) -> [UInt8]
    {
        let id = trace.submit(
            .control, endpoint: 0x80, bus: bus, device: device,
            setup: USBTrace.vendorSetup(isIn: true, request: request, value: value, index: index, length: length),
            length: length)
        do {
            let reply = try inner.controlIn(
                request: request, value: value, index: index, length: length, timeoutMilliseconds: timeoutMilliseconds)
            trace.complete(
                id, .control, endpoint: 0x80, bus: bus, device: device, status: 0, data: reply, length: reply.count)
            return reply
        } catch {
            trace.complete(
                id, .control, endpoint: 0x80, bus: bus, device: device, status: USBTrace.status(for: error),
                length: USBTrace.bytesMoved(by: error))
            throw error
        }
    }

    /// Records, forwards: a vendor control transfer to the device.
    public func controlOut(request: UInt8, value: UInt16, index: UInt16, data: [UInt8], timeoutMilliseconds: Int)
        throws(TransportError)
    {
        let id = trace.submit(
            .control, endpoint: 0x00, bus: bus, device: device,
            setup: USBTrace.vendorSetup(isIn: false, request: request, value: value, index: index, length: data.count),
            data: data, length: data.count)
        do {
            try inner.controlOut(
                request: request, value: value, index: index, data: data, timeoutMilliseconds: timeoutMilliseconds)
            trace.complete(id, .control, endpoint: 0x00, bus: bus, device: device, status: 0, length: data.count)
        } catch {
            trace.complete(
                id, .control, endpoint: 0x00, bus: bus, device: device, status: USBTrace.status(for: error),
                length: USBTrace.bytesMoved(by: error))
            throw error
        }
    }

    /// Records, forwards: a bulk OUT transfer.
    public func bulkOut(_ data: [UInt8], timeoutMilliseconds: Int) throws(TransportError) {
        let endpoint = Self.bulkOutEndpoint
        let id = trace.submit(.bulk, endpoint: endpoint, bus: bus, device: device, data: data, length: data.count)
        do {
            try inner.bulkOut(data, timeoutMilliseconds: timeoutMilliseconds)
            trace.complete(id, .bulk, endpoint: endpoint, bus: bus, device: device, status: 0, length: data.count)
        } catch {
            trace.complete(
                id, .bulk, endpoint: endpoint, bus: bus, device: device, status: USBTrace.status(for: error),
                length: USBTrace.bytesMoved(by: error))
            throw error
        }
    }

    /// Records, forwards: a bulk IN transfer of exactly `length` bytes.
    public func bulkIn(length: Int, timeoutMilliseconds: Int) throws(TransportError) -> [UInt8] {
        let endpoint = Self.bulkInEndpoint
        let id = trace.submit(.bulk, endpoint: endpoint, bus: bus, device: device, length: length)
        do {
            let reply = try inner.bulkIn(length: length, timeoutMilliseconds: timeoutMilliseconds)
            trace.complete(
                id, .bulk, endpoint: endpoint, bus: bus, device: device, status: 0, data: reply, length: reply.count)
            return reply
        } catch {
            trace.complete(
                id, .bulk, endpoint: endpoint, bus: bus, device: device, status: USBTrace.status(for: error),
                length: USBTrace.bytesMoved(by: error))
            throw error
        }
    }
}

/// Wraps a provider: every debugger it opens is traced (`TracingTransport`), and so are the
/// descriptor requests it makes while listing them (where the provider reads any).
public final class TracingProvider: DebuggerProvider {
    /// The wrapped provider.
    public let inner: any DebuggerProvider
    /// Where the records go.
    public let trace: USBTrace

    /// Wraps `inner`.
    public init(_ inner: any DebuggerProvider, trace: USBTrace) {
        self.inner = inner
        self.trace = trace
    }

    /// The wrapped provider's debuggers, its descriptor requests traced.
    public func devices() throws(DebuggerError) -> [DebuggerDevice] { try inner.devices(tracing: trace) }

    /// The same, traced into this trace whatever `trace` says.
    public func devices(tracing trace: USBTrace?) throws(DebuggerError) -> [DebuggerDevice] {
        try inner.devices(tracing: self.trace)
    }

    /// Opens `device` through the wrapped provider, traced.
    public func open(_ device: DebuggerDevice) throws(DebuggerError) -> any DebuggerTransport {
        TracingTransport(try inner.open(device, tracing: trace), trace: trace, bus: device.bus, device: device.address)
    }

    /// The same, traced into this trace whatever `trace` says.
    public func open(_ device: DebuggerDevice, tracing trace: USBTrace?) throws(DebuggerError)
        -> any DebuggerTransport
    { try open(device) }

    /// The wrapped provider's backend.
    public var backend: String { inner.backend }
}
