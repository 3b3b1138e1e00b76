import Foundation
import Synchronization
import TestSupport
import Testing

@testable import BeaconScan
@testable import HCISocket

/// The live scan's command sequence and report collection, against a scripted controller on a
/// virtual clock, and the socket transport through a real socket pair.
struct LiveScanTests {
    static let a = FakeHCIController.Advertiser(address: [0xC0, 0, 0, 0, 0, 1], data: [0x02, 0x01, 0x06], rssi: -61)
    static let b = FakeHCIController.Advertiser(address: [0xC0, 0, 0, 0, 0, 2], data: [0x02, 0x01, 0x04], rssi: -70)

    static func scan(_ controller: FakeHCIController) -> LiveScan {
        LiveScan(transport: controller, controller: "hci0", now: { controller.now })
    }

    @Test func aPassiveLegacyScanRunsForItsTimeAndIsSwitchedOffAfter() throws {
        let controller = FakeHCIController { _ in [Self.a, Self.b] }
        let reports = try Self.scan(controller).listen(for: .seconds(2))
        // Passive, 10 ms interval and window, public own address, no filter; duplicates not filtered.
        #expect(
            controller.sent == [
                [0x01, 0x0B, 0x20, 0x07, 0x00, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00],
                [0x01, 0x0C, 0x20, 0x02, 0x01, 0x00], [0x01, 0x0C, 0x20, 0x02, 0x00, 0x00],
            ])
        #expect(!controller.scanning)
        // Every 100 ms one report from each, for 2 s: 20 rounds.
        #expect(reports.count == 40)
        #expect(reports.filter { $0.address == Self.a.address }.allSatisfy { $0.rssi == -61 && $0.data == Self.a.data })
        #expect(reports[1].addressText == "C0:00:00:00:00:02" && reports[1].eventType == 3 && !reports[1].extended)
        #expect(controller.now >= .seconds(2) && controller.now < .seconds(3))
    }

    @Test func itStopsAsSoonAsTheQuestionIsAnswered() throws {
        let controller = FakeHCIController { time in time >= .milliseconds(700) ? [Self.a] : [Self.b] }
        let reports = try Self.scan(controller).listen(for: .seconds(5)) { $0.address == Self.a.address }
        #expect(reports.count == 8 && reports.last?.address == Self.a.address)
        #expect(controller.commands.last == 0x200C && !controller.scanning)
        #expect(controller.now < .seconds(1))
    }

    /// A controller the kernel drives with the extended commands refuses the legacy ones.
    @Test func aControllerThatRefusesLegacyScanningIsScannedWithTheExtendedCommands() throws {
        let controller = FakeHCIController(refusing: [0x200B: 0x0C]) { _ in [Self.a] }
        let reports = try Self.scan(controller).listen(for: .milliseconds(500))
        #expect(controller.commands == [0x200B, 0x2041, 0x2042, 0x2042])
        #expect(controller.sent[1] == [0x01, 0x41, 0x20, 0x08, 0x00, 0x00, 0x01, 0x00, 0x10, 0x00, 0x10, 0x00])
        #expect(controller.sent[2] == [0x01, 0x42, 0x20, 0x06, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00])
        #expect(controller.sent[3] == [0x01, 0x42, 0x20, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        #expect(reports.count == 5)
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let refusing: [UInt16: UInt8]
        let command: String
        let status: UInt8
        let commands: [UInt16]
        var testDescription: String { "\(command) 0x\(String(status, radix: 16))" }
    }

    @Test(arguments: [
        Refusal(refusing: [0x200B: 0x12], command: "LE Set Scan Parameters", status: 0x12, commands: [0x200B]),
        Refusal(
            refusing: [0x200B: 0x0C, 0x2041: 0x0C], command: "LE Set Scan Parameters", status: 0x0C,
            commands: [0x200B, 0x2041]),
        // Refused to start scanning: it is still switched off, as it was.
        Refusal(refusing: [0x200C: 0x0C], command: "LE Set Scan Enable", status: 0x0C, commands: [0x200B, 0x200C]),
    ])
    func aRefusedCommandIsNamedWithItsStatus(_ case: Refusal) {
        let controller = FakeHCIController(refusing: `case`.refusing) { _ in [Self.a] }
        #expect(throws: HCIError.self) { try Self.scan(controller).listen(for: .seconds(1)) }
        do {
            _ = try Self.scan(controller).listen(for: .seconds(1))
        } catch {
            #expect(error.kind == .refused(command: `case`.command, status: `case`.status))
            #expect(error.description.contains(`case`.command) && error.description.hasPrefix("hci0: "))
        }
        #expect(Array(controller.commands.prefix(`case`.commands.count)) == `case`.commands)
        #expect(!controller.scanning)
    }

    @Test func aControllerThatDoesNotAnswerIsReportedAfterTheCommandTimeout() {
        let controller = FakeHCIController(silent: [0x200B]) { _ in [] }
        #expect {
            try Self.scan(controller).listen(for: .seconds(1))
        } throws: { error in
            (error as? HCIError)?.kind == .noAnswer(command: "LE Set Scan Parameters")
        }
        #expect(controller.now >= LiveScan.commandTimeout)
    }

    /// Other programs' events (another command's Command Complete, an inquiry result) and reports
    /// before the scan is on are passed over.
    @Test func otherEventsAreNotTakenForTheAnswer() throws {
        let chatter: [[UInt8]] = [
            [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x0C],  // HCI Reset's Command Complete, status 0x0C
            [0x04, 0x0F, 0x04, 0x00, 0x01, 0x01, 0x04],  // Inquiry's Command Status
            [0x02, 0x01, 0x20, 0x00, 0x00],  // ACL data
        ]
        let controller = FakeHCIController(chatter: chatter) { _ in [Self.a] }
        let reports = try Self.scan(controller).listen(for: .milliseconds(300))
        #expect(reports.count == 3)
    }

    /// A stale answer waiting in the socket (another program's command of the same opcode,
    /// refused) is drained before the command is sent, not taken for its answer.
    @Test func aStaleAnswerQueuedBeforeTheCommandIsNotTakenForIt() throws {
        let controller = FakeHCIController { _ in [Self.a] }
        controller.inject([0x04, 0x0E, 0x04, 0x01, 0x0B, 0x20, 0x0C])
        controller.inject(FakeHCIController.report(Self.b))
        let reports = try Self.scan(controller).listen(for: .milliseconds(300))
        #expect(controller.commands == [0x200B, 0x200C, 0x200C])
        #expect(reports.count == 3 && reports.allSatisfy { $0.address == Self.a.address })
    }

    /// A Command Status of 0 means "under way": the Command Complete is the answer; a Command
    /// Status with an error is the refusal.
    @Test func aCommandStatusAnswersOnlyWhenItRefuses() throws {
        let pending = FakeHCIController { _ in [Self.a] }
        pending.statusFirst = [0x200B: 0x00]
        #expect(try Self.scan(pending).listen(for: .milliseconds(300)).count == 3)
        let refusing = FakeHCIController { _ in [Self.a] }
        refusing.statusFirst = [0x200B: 0x12]
        #expect {
            try Self.scan(refusing).listen(for: .milliseconds(300))
        } throws: { error in
            (error as? HCIError)?.kind == .refused(command: "LE Set Scan Parameters", status: 0x12)
        }
    }

    @Test(arguments: [
        [UInt8]([0x04, 0x3E]), [0x04, 0x3E, 0x05, 0x02], [0x04, 0x3E, 0x03, 0x02, 0x01, 0x03],
    ])
    func aBrokenEventIsAnErrorAndScanningIsSwitchedOff(_ packet: [UInt8]) {
        let controller = FakeHCIController(chatter: []) { time in
            time > .milliseconds(150) ? [] : [Self.a]
        }
        let broken = BrokenAfterEnable(controller: controller, packet: packet)
        #expect(throws: HCIError.self) {
            try LiveScan(transport: broken, controller: "hci0", now: { controller.now }).listen(for: .seconds(1))
        }
        #expect(controller.commands.last == 0x200C && !controller.scanning)
    }

    /// Puts one broken packet in after scanning is enabled.
    final class BrokenAfterEnable: HCITransport {
        let controller: FakeHCIController
        let packet: [UInt8]
        let given = Mutex(false)
        init(controller: FakeHCIController, packet: [UInt8]) {
            self.controller = controller
            self.packet = packet
        }
        func send(_ packet: [UInt8]) throws(HCIError) { try controller.send(packet) }
        func receive(timeout: Duration) throws(HCIError) -> [UInt8]? {
            if controller.scanning, controller.now > .zero,
                given.withLock({ given in
                    defer { given = true }; return !given
                })
            {
                return packet
            }
            return try controller.receive(timeout: timeout)
        }
    }

    @Test(
        arguments: [
            ("hci0", UInt16(0)), ("hci1", 1), ("hci65534", 65534), ("hci65535", nil), ("hci", nil), ("hci01", nil),
            ("hci-1", nil), ("hci1 ", nil), ("HCI0", nil), ("0", nil), ("hci٣", nil),
        ] as [(String, UInt16?)])
    func controllerNames(_ name: String, _ index: UInt16?) {
        #expect(HCIController.index(name) == index)
    }

    // MARK: the socket transport

    @Test(arguments: [
        (EPERM, HCIError.Kind.permission), (EACCES, .permission), (EAFNOSUPPORT, .noBluetooth), (ENODEV, .noController),
        (ENETDOWN, .down), (EIO, .io),
    ])
    func systemErrorsAreTold(_ code: Int32, _ kind: HCIError.Kind) {
        let error = HCISocketTransport.failure(code, opening: "hci0")
        #expect(error.kind == kind && error.controller == "hci0")
        #expect(error.message.contains(String(cString: strerror(code))))
        if kind == .permission { #expect(error.message.contains("CAP_NET_RAW")) }
    }

    /// No machine has controller 65534: opening it fails with a told error (no Bluetooth here, or
    /// no such controller), never a crash or a descriptor left open.
    @Test func openingAControllerThatIsNotThereFails() {
        for name in ["hci65534", "hci-1", "bt0"] {
            #expect(throws: HCIError.self) { try HCISocketProvider().open(name) }
        }
    }

    /// The transport through a SOCK_SEQPACKET pair, with the scripted controller on the other end
    /// answering in its own thread: packets keep their boundaries both ways, the scan runs on the
    /// real clock and stops when both advertisers were heard.
    @Test func theSocketTransportCarriesAWholeScan() throws {
        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) == 0)
        let controller = FakeHCIController { _ in [Self.a, Self.b] }
        let far = ends[1]
        let bridge = Thread {
            var buffer = [UInt8](repeating: 0, count: 1024)
            while true {
                var poller = pollfd(fd: far, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, 5) > 0 {
                    let count = buffer.withUnsafeMutableBytes { read(far, $0.baseAddress, $0.count) }
                    if count <= 0 { break }
                    try? controller.send(Array(buffer[..<count]))
                }
                while let packet = try? controller.receive(timeout: .milliseconds(10)) {
                    _ = packet.withUnsafeBytes { write(far, $0.baseAddress, $0.count) }
                }
            }
            close(far)
        }
        bridge.start()
        var heard: Set<[UInt8]> = []
        do {
            let transport = HCISocketTransport(descriptor: ends[0], controller: "hci0")
            let reports = try LiveScan(transport: transport, controller: "hci0").listen(for: .seconds(60)) {
                heard.insert($0.address)
                return heard.count == 2
            }
            #expect(Set(reports.map(\.address)) == [Self.a.address, Self.b.address])
            #expect(
                reports.allSatisfy {
                    [Self.a, Self.b].contains(.init(address: $0.address, data: $0.data, rssi: $0.rssi))
                })
        }
        // The transport closed its end when it went away: the bridge sees the end and stops.
        while !bridge.isFinished { usleep(1000) }
        #expect(controller.commands == [0x200B, 0x200C, 0x200C] && !controller.scanning)
    }

    @Test func aClosedSocketIsAnErrorNotAnEndlessWait() throws {
        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) == 0)
        close(ends[1])
        let transport = HCISocketTransport(descriptor: ends[0], controller: "hci0")
        #expect(throws: HCIError.self) { try transport.receive(timeout: .seconds(10)) }
    }
}
