/// One Bluetooth controller's host controller interface, packet by packet: each packet starts with
/// its H4 type byte (0x01 a command, 0x04 an event), as BlueZ's raw HCI socket carries them. The
/// Linux socket is one implementation (module `HCISocket`); tests give a scripted controller.
public protocol HCITransport: AnyObject, Sendable {
    /// Sends one packet.
    func send(_ packet: [UInt8]) throws(HCIError)
    /// The next packet from the controller, or `nil` when none came within `timeout`.
    func receive(timeout: Duration) throws(HCIError) -> [UInt8]?
    /// The time the controller's packets come on, for a controller that keeps its own (a scripted
    /// one on a virtual clock); `nil`, the default: the system's monotonic clock.
    var clock: (@Sendable () -> Duration)? { get }
}

extension HCITransport {
    /// The system's monotonic clock.
    public var clock: (@Sendable () -> Duration)? { nil }
}

/// Opens controllers by name (`hci0`).
public protocol HCIControllerProvider: Sendable {
    /// Opens the controller `name` (see `HCIController.index`).
    func open(_ name: String) throws(HCIError) -> any HCITransport
}

/// Controller names as BlueZ gives them.
public enum HCIController {
    /// The index of `hciN` (0…65534), or `nil` when `name` is no controller name.
    public static func index(_ name: String) -> UInt16? {
        guard name.hasPrefix("hci"), name.count > 3, name.count <= 8 else { return nil }
        let digits = name.dropFirst(3)
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits == "0" || !digits.hasPrefix("0"),
            let index = UInt16(digits), index < 0xFFFF
        else { return nil }
        return index
    }
}

/// Why a controller could not be used.
public struct HCIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds the command line gives different advice for.
    public enum Kind: Sendable, Equatable {
        /// The system has no Bluetooth sockets (no kernel support, or a container without it).
        case noBluetooth
        /// No controller by that name.
        case noController
        /// The process may not send HCI commands (it lacks CAP_NET_RAW).
        case permission
        /// The controller is powered down.
        case down
        /// The controller answered a command with an error status.
        case refused(command: String, status: UInt8)
        /// The controller did not answer a command in time.
        case noAnswer(command: String)
        /// A system call failed, or the controller sent something that is no HCI event.
        case io
    }

    /// The controller (`hci0`).
    public var controller: String
    /// What kind of failure.
    public var kind: Kind
    /// What happened, in words.
    public var message: String

    /// Creates an error.
    public init(controller: String, kind: Kind, message: String) {
        self.controller = controller
        self.kind = kind
        self.message = message
    }

    /// `hci0: message`.
    public var description: String { "\(controller): \(message)" }

    /// The Core specification's name of an HCI error status (Vol 1 Part F), for the common ones.
    public static func statusName(_ status: UInt8) -> String {
        switch status {
        case 0x01: "Unknown HCI Command"
        case 0x0C: "Command Disallowed"
        case 0x11: "Unsupported Feature or Parameter Value"
        case 0x12: "Invalid HCI Command Parameters"
        case 0x1F: "Unspecified Error"
        default: "error"
        }
    }
}

/// A passive LE scan through one controller: set the scan parameters, enable scanning, collect
/// every LE advertising report (legacy and extended) until the time is up, disable scanning.
///
/// Legacy scan commands first (every LE controller has them); a controller the kernel already
/// drives with the extended commands refuses the legacy ones (Core spec Vol 4 Part E §3.1.1:
/// the two sets must not be mixed), so on "Command Disallowed" (or "Unknown HCI Command") the
/// extended commands are tried.
/// Duplicate filtering stays off: every advertisement counts for the RSSI.
public struct LiveScan: Sendable {
    /// Where the packets go.
    public let transport: any HCITransport
    /// The controller's name, for messages.
    public let controller: String
    /// Monotonic time since some fixed start.
    let now: @Sendable () -> Duration

    /// How long a command's answer may take.
    public static let commandTimeout = Duration.seconds(2)

    /// A scan through `transport`; `now` is the clock its deadlines are measured on (the
    /// transport's own clock, if it keeps one, or a monotonic clock).
    public init(transport: any HCITransport, controller: String, now: (@Sendable () -> Duration)? = nil) {
        self.transport = transport
        self.controller = controller
        if let now = now ?? transport.clock {
            self.now = now
        } else {
            let start = ContinuousClock.now
            self.now = { ContinuousClock.now - start }
        }
    }

    /// One command: its name for messages, opcode (OGF 0x08, LE) and parameters.
    struct Command {
        let name: String
        let opcode: UInt16
        let parameters: [UInt8]

        /// Passive, 10 ms interval and window (the controller listens all the time), public
        /// own address, no filter.
        static let legacyParameters = Command(
            name: "LE Set Scan Parameters", opcode: 0x200B, parameters: [0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])
        static func legacyEnable(_ on: Bool) -> Command {
            Command(name: "LE Set Scan Enable", opcode: 0x200C, parameters: [on ? 1 : 0, 0x00])
        }
        /// The same on the LE 1M PHY only (where ADV_NONCONN_IND is sent).
        static let extendedParameters = Command(
            name: "LE Set Extended Scan Parameters", opcode: 0x2041,
            parameters: [0x00, 0x00, 0x01, 0x00, 0x10, 0x00, 0x10, 0x00])
        /// Enable with no duration and no period: until disabled.
        static func extendedEnable(_ on: Bool) -> Command {
            Command(
                name: "LE Set Extended Scan Enable", opcode: 0x2042,
                parameters: [on ? 1 : 0, 0x00, 0x00, 0x00, 0x00, 0x00])
        }

        var packet: [UInt8] {
            [0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters
        }
    }

    /// Scans for `duration`, or until `enough` says a report (with those before it) answers the
    /// question. Reports are in the order heard; `record` numbers the controller's packets from 1.
    public func listen(for duration: Duration, until enough: (AdvertisingReport) -> Bool = { _ in false })
        throws(HCIError) -> [AdvertisingReport]
    {
        var extended = false
        let legacyStatus = try run(.legacyParameters)
        if legacyStatus == 0x0C || legacyStatus == 0x01 {
            let status = try run(.extendedParameters)
            guard status == 0 else { throw refusal(.legacyParameters, legacyStatus) }
            extended = true
        } else if legacyStatus != 0 {
            throw refusal(.legacyParameters, legacyStatus)
        }
        var reports: [AdvertisingReport] = []
        var failure: HCIError?
        do throws(HCIError) {
            let enable = extended ? Command.extendedEnable(true) : Command.legacyEnable(true)
            let enabled = try run(enable)
            guard enabled == 0 else { throw refusal(enable, enabled) }
            let deadline = now() + duration
            var packets = 0
            var done = false
            while !done {
                let left = deadline - now()
                guard left > .zero else { break }
                guard let packet = try transport.receive(timeout: left) else { continue }
                packets += 1
                guard let event = try event(packet, record: packets) else { continue }
                let heard: [AdvertisingReport]
                do { heard = try AdvertisingReport.reports(in: event, file: controller) } catch {
                    throw HCIError(
                        controller: controller, kind: .io,
                        message: "the controller sent an advertising report that cannot be read: \(error.problem)")
                }
                reports += heard
                done = heard.contains(where: enough)
            }
        } catch { failure = error }
        // Scanning is switched off even after a failure: the controller is left as it was found.
        let disable = extended ? Command.extendedEnable(false) : Command.legacyEnable(false)
        let disabled = Result { () throws(HCIError) in try run(disable) }
        if let failure { throw failure }
        switch disabled {
        case .failure(let error): throw error
        case .success(let status) where status != 0: throw refusal(disable, status)
        case .success: return reports
        }
    }

    /// Sends `command` and waits for its Command Complete (or Command Status); returns the status.
    /// Other events meanwhile (advertising reports, other programs' answers) are passed over.
    func run(_ command: Command) throws(HCIError) -> UInt8 {
        // What queued up meanwhile (other programs' events, reports heard while a chip was being
        // burned) goes first, so a full socket buffer cannot crowd out the answer.
        var drained = 0
        while drained < 100_000, try transport.receive(timeout: .zero) != nil { drained += 1 }
        try transport.send(command.packet)
        let deadline = now() + Self.commandTimeout
        while true {
            let left = deadline - now()
            guard left > .zero, let packet = try transport.receive(timeout: left) else {
                if now() < deadline { continue }
                throw HCIError(
                    controller: controller, kind: .noAnswer(command: command.name),
                    message: "no answer to \(command.name) within \(Self.commandTimeout)")
            }
            guard let event = try event(packet, record: 0) else { continue }
            let bytes = event.parameters
            // Command Complete: packets, opcode (2), status; Command Status: status, packets, opcode.
            if event.code == 0x0E, bytes.count >= 4, UInt16(bytes[1]) | UInt16(bytes[2]) << 8 == command.opcode {
                return bytes[3]
            }
            // A Command Status answers only when it refuses: status 0 means "under way", and the
            // Command Complete follows.
            if event.code == 0x0F, bytes.count >= 4, bytes[0] != 0,
                UInt16(bytes[2]) | UInt16(bytes[3]) << 8 == command.opcode
            {
                return bytes[0]
            }
        }
    }

    /// An HCI event packet taken apart; `nil` for packets that are no event.
    func event(_ packet: [UInt8], record: Int) throws(HCIError) -> BTSnoopCapture.Event? {
        guard packet.first == 0x04 else { return nil }
        guard packet.count >= 3, Int(packet[2]) == packet.count - 3 else {
            throw HCIError(
                controller: controller, kind: .io,
                message:
                    "the controller sent an HCI event of \(packet.count) bytes whose length byte says \(packet.count >= 3 ? Int(packet[2]) + 3 : 3)"
            )
        }
        return BTSnoopCapture.Event(
            record: record, timestamp: 0, code: packet[1], parameters: Array(packet[3...]), parametersOffset: 3,
            controller: 0)
    }

    func refusal(_ command: Command, _ status: UInt8) -> HCIError {
        HCIError(
            controller: controller, kind: .refused(command: command.name, status: status),
            message:
                "the controller refused \(command.name): status 0x\(String(status, radix: 16, uppercase: true)) (\(HCIError.statusName(status)))"
        )
    }
}
