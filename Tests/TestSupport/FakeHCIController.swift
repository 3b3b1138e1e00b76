public import BeaconScan
import Synchronization

/// A scripted Bluetooth controller behind `HCITransport`, on a virtual clock: it answers LE scan
/// commands with Command Complete (status 0, or the status `refusing` gives the opcode), and
/// while scanning hears, every `period` of virtual time (the first half a period in), one legacy
/// advertising report from each
/// advertiser `onAir` returns. Time passes only when `receive` waits with nothing to give, so a
/// 5 s scan takes no real time. Every packet it was sent is kept (`sent`).
public final class FakeHCIController: HCITransport {
    /// An advertiser on air.
    public struct Advertiser: Sendable, Equatable {
        /// Its address, most significant byte first.
        public var address: [UInt8]
        /// Its advertising data.
        public var data: [UInt8]
        /// The RSSI it is heard with.
        public var rssi: Int8
        /// Legacy event type (0x03: ADV_NONCONN_IND).
        public var eventType: UInt8

        /// An advertiser.
        public init(address: [UInt8], data: [UInt8], rssi: Int8 = -60, eventType: UInt8 = 0x03) {
            self.address = address
            self.data = data
            self.rssi = rssi
            self.eventType = eventType
        }
    }

    struct State {
        var time = Duration.zero
        var scanning = false
        var nextReportAt = Duration.zero
        var queue: [[UInt8]] = []
        var sent: [[UInt8]] = []
        var statusFirst: [UInt16: UInt8] = [:]
    }

    let state = Mutex(State())
    let refusing: [UInt16: UInt8]
    let period: Duration
    let silent: Set<UInt16>
    let onAir: @Sendable (Duration) -> [Advertiser]
    /// Packets put out before every answer (another program's events, noise).
    let chatter: [[UInt8]]

    /// A controller; `onAir` says who advertises at a virtual time. `silent` opcodes get no
    /// answer at all; `chatter` packets come before each answer.
    public init(
        refusing: [UInt16: UInt8] = [:], silent: Set<UInt16> = [], chatter: [[UInt8]] = [],
        period: Duration = .milliseconds(100), onAir: @escaping @Sendable (Duration) -> [Advertiser]
    ) {
        self.refusing = refusing
        self.silent = silent
        self.chatter = chatter
        self.period = period
        self.onAir = onAir
    }

    /// Queues `packet` as if the controller had sent it before anything else (another program's
    /// traffic waiting in the socket).
    public func inject(_ packet: [UInt8]) { state.withLock { $0.queue.append(packet) } }

    /// Answers for opcodes with a Command Status first (status, then Complete when 0).
    public var statusFirst: [UInt16: UInt8] {
        get { state.withLock { $0.statusFirst } }
        set { state.withLock { $0.statusFirst = newValue } }
    }

    /// The virtual time now.
    public var now: Duration { state.withLock { $0.time } }

    /// Scans through it run on its virtual time.
    public var clock: (@Sendable () -> Duration)? { { [self] in now } }

    /// Every packet sent to it, in order.
    public var sent: [[UInt8]] { state.withLock { $0.sent } }

    /// Whether it is scanning now.
    public var scanning: Bool { state.withLock { $0.scanning } }

    /// The opcodes of the commands sent to it, in order.
    public var commands: [UInt16] {
        sent.compactMap { $0.count >= 3 && $0[0] == 0x01 ? UInt16($0[1]) | UInt16($0[2]) << 8 : nil }
    }

    /// Takes a command and queues its answer (and `chatter` before it).
    public func send(_ packet: [UInt8]) throws(HCIError) {
        state.withLock { state in
            state.sent.append(packet)
            guard packet.count >= 4, packet[0] == 0x01 else { return }
            let opcode = UInt16(packet[1]) | UInt16(packet[2]) << 8
            guard !silent.contains(opcode) else { return }
            let status = refusing[opcode] ?? 0
            if status == 0, opcode == 0x200C || opcode == 0x2042, packet.count >= 5 {
                state.scanning = packet[4] == 1
                // Half a period in: a round never falls on a scan's deadline.
                state.nextReportAt = state.time + period / 2
            }
            state.queue += chatter
            if let first = state.statusFirst[opcode] {
                state.queue.append([0x04, 0x0F, 0x04, first, 0x01, packet[1], packet[2]])
                if first != 0 { return }
            }
            state.queue.append([0x04, 0x0E, 0x04, 0x01, packet[1], packet[2], status])
        }
    }

    /// The next queued packet, or the next round of reports when scanning and due within
    /// `timeout`; otherwise `timeout` passes and `nil`.
    public func receive(timeout: Duration) throws(HCIError) -> [UInt8]? {
        state.withLock { state in
            if !state.queue.isEmpty { return state.queue.removeFirst() }
            guard state.scanning, state.nextReportAt <= state.time + timeout else {
                state.time += timeout
                return nil
            }
            state.time = state.nextReportAt
            state.nextReportAt += period
            state.queue = onAir(state.time).map(Self.report)
            return state.queue.isEmpty ? nil : state.queue.removeFirst()
        }
    }

    /// An LE Advertising Report event with one report.
    public static func report(_ advertiser: Advertiser) -> [UInt8] {
        let body: [UInt8] =
            [0x02, 0x01, advertiser.eventType, 0x01] + advertiser.address.reversed() + [UInt8(advertiser.data.count)]
            + advertiser.data + [UInt8(bitPattern: advertiser.rssi)]
        return [0x04, 0x3E, UInt8(body.count)] + body
    }
}

/// Opens fake controllers by name.
public struct FakeHCIProvider: HCIControllerProvider {
    let controllers: [String: FakeHCIController]

    /// A provider of `controllers`; other names are "no such controller".
    public init(_ controllers: [String: FakeHCIController]) { self.controllers = controllers }

    /// The controller of that name.
    public func open(_ name: String) throws(HCIError) -> any HCITransport {
        guard let controller = controllers[name] else {
            throw HCIError(controller: name, kind: .noController, message: "no such controller (fake)")
        }
        return controller
    }
}
