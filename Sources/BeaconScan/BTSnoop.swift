/// A btsnoop capture (what `btmon -w` and Android's HCI snoop log write), read for the HCI events
/// it holds. Two datalinks: 1002, HCI UART (each packet starts with its H4 type byte, 0x04 for an
/// event), and 2001, the Linux monitor (no type byte; a record's flags are `(index << 16) |
/// opcode`, opcode 3 an event). test-services.md gives the layout.
public struct BTSnoopCapture: Sendable, Equatable {
    /// The datalinks this reader takes.
    public enum Datalink: UInt32, Sendable {
        /// HCI UART (H4).
        case hciUART = 1002
        /// Linux monitor.
        case monitor = 2001
    }

    /// One HCI event from the capture.
    public struct Event: Sendable, Equatable {
        /// Its record's position in the capture (1-based), for messages.
        public var record: Int
        /// Microseconds since 0000-01-01, as the capture records them.
        public var timestamp: Int64
        /// The event code (0x3E: LE Meta event).
        public var code: UInt8
        /// The event's parameters (after the code and length bytes).
        public var parameters: [UInt8]
        /// The file offset of the first parameter byte, so errors inside name the file's byte.
        public var parametersOffset: Int
        /// The controller that received it (the monitor's index; 0 on the UART datalink).
        public var controller: Int
    }

    /// The capture's datalink.
    public var datalink: Datalink
    /// Every HCI event received from a controller, in capture order. Other packets (commands,
    /// ACL data, monitor notes) are skipped.
    public var events: [Event]
    /// Where the capture ends inside its last record, or `nil` when it ends where a record does. A
    /// capture copied or stopped while it was being written (an Android snoop log pulled with
    /// Bluetooth on, a `btmon -w` killed) ends so: the records before that one are read, as
    /// Wireshark reads them, and the caller says what was left out.
    public var cutShort: CaptureError?

    static let magic: [UInt8] = Array("btsnoop".utf8) + [0]

    /// The most bytes a record may hold: the largest HCI packet, an ACL packet (4-byte header and
    /// 65,535 bytes of data) with its H4 type byte.
    static let largestPacket = 1 + 4 + 65_535

    /// Reads `bytes`; `file` names the capture in errors.
    public init(bytes: [UInt8], file: String) throws(CaptureError) {
        func fail(_ offset: Int, _ problem: String) -> CaptureError {
            CaptureError(file: file, offset: offset, problem: problem)
        }
        guard bytes.count >= 8, Array(bytes[0..<8]) == Self.magic else {
            throw fail(0, "is not a btsnoop capture (it does not start with \"btsnoop\\0\")")
        }
        guard bytes.count >= 16 else {
            throw fail(bytes.count, "ends after \(bytes.count) bytes, inside the 16-byte btsnoop header")
        }
        let version = Self.u32(bytes, 8)
        guard version == 1 else { throw fail(8, "is btsnoop version \(version); version 1 is read") }
        let link = Self.u32(bytes, 12)
        guard let datalink = Datalink(rawValue: link) else {
            throw fail(
                12, "has datalink \(link); 1002 (HCI UART, as btmon -w and Android write) and 2001 (monitor) are read")
        }
        self.datalink = datalink
        var events: [Event] = []
        var offset = 16
        var record = 0
        while offset < bytes.count {
            record += 1
            guard bytes.count - offset >= 24 else {
                cutShort = fail(
                    offset, "record \(record) is cut short after \(bytes.count - offset) of its header's 24 bytes")
                break
            }
            let original = Int(Self.u32(bytes, offset))
            let included = Int(Self.u32(bytes, offset + 4))
            let flags = Self.u32(bytes, offset + 8)
            let timestamp = Int64(
                bitPattern: UInt64(Self.u32(bytes, offset + 16)) << 32 | UInt64(Self.u32(bytes, offset + 20)))
            let start = offset + 24
            // No HCI packet is larger (an ACL packet's 4-byte header and 65,535 bytes, and its
            // type byte): a record that says so has a damaged header, wherever it stands.
            guard included <= Self.largestPacket else {
                throw fail(
                    offset + 4,
                    "record \(record) says \(included) bytes follow, more than any HCI packet (\(Self.largestPacket)): the header is damaged"
                )
            }
            // A record that runs past the end is the cut-short last one only if its header is whole:
            // a record never includes more than its packet's original length. More is damage.
            guard included <= bytes.count - start else {
                let problem = "record \(record) says \(included) bytes follow, but only \(bytes.count - start) do"
                guard included <= original else {
                    throw fail(offset + 4, problem + " (and its packet had \(original): the header is damaged)")
                }
                cutShort = fail(offset + 4, problem)
                break
            }
            let packet = bytes[start..<(start + included)]
            offset = start + included
            var body: ArraySlice<UInt8>
            var controller = 0
            switch datalink {
            case .hciUART:
                // Flags bit 1: a command or event; bit 0: received. An event from the controller is 3.
                guard flags & 3 == 3, packet.first == 0x04 else { continue }
                body = packet.dropFirst()
            case .monitor:
                guard flags & 0xFFFF == 3 else { continue }
                controller = Int(flags >> 16)
                guard controller != 0xFFFF else {
                    throw fail(offset - included - 16, "record \(record) is an event of no controller (index 0xFFFF)")
                }
                body = packet
            }
            guard body.count >= 2 else {
                throw fail(start, "record \(record) holds an HCI event of \(body.count) bytes; an event has at least 2")
            }
            let code = body[body.startIndex]
            let length = Int(body[body.startIndex + 1])
            guard body.count - 2 == length else {
                throw fail(
                    start,
                    "record \(record): the HCI event says \(length) parameter bytes, the record holds \(body.count - 2)"
                )
            }
            events.append(
                Event(
                    record: record, timestamp: timestamp, code: code, parameters: Array(body.dropFirst(2)),
                    parametersOffset: body.startIndex + 2, controller: controller))
        }
        self.events = events
    }

    static func u32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// A capture that cannot be read: the file, the byte offset and what is wrong.
public struct CaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The capture's path.
    public var file: String
    /// Byte offset of the problem.
    public var offset: Int
    /// What is wrong there.
    public var problem: String

    /// `file: at byte N: problem`.
    public var description: String { "\(file): \(located)" }

    /// `at byte N: problem`, for where the file is named already.
    public var located: String { "at byte \(offset): \(problem)" }
}
