import BeaconPayload
import BeaconScan
import CCDebugger
import CommandLineKit
import FirmwareTemplate
import PostgresLedger
import Provisioning
import StationLedger
import Storage
import StructuredText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `provision --scan-verify`: one controller for every debugger's worker, one scan at a time.
final class ControllerListener: OnAirListener {
    let controller: String
    let transport: Mutex<any HCITransport>
    /// Matching advertisements after which a scan stops early: enough for an RSSI median.
    static let enough = 5

    init(controller: String, transport: any HCITransport) {
        self.controller = controller
        self.transport = Mutex(transport)
    }

    /// Opens `controller` and scans briefly, so that a radio that cannot scan is told before the
    /// run burns anything.
    static func open(_ controller: String, radios: (any HCIControllerProvider)?) throws(CommandFailure)
        -> ControllerListener
    {
        guard let radios else { throw CommandFailure(.failure, "\(controller): this build has no Bluetooth support") }
        do {
            let transport = try radios.open(controller)
            _ = try LiveScan(transport: transport, controller: controller).listen(for: .milliseconds(200))
            return ControllerListener(controller: controller, transport: transport)
        } catch {
            let failure = ScanCommand.failure(error)
            throw CommandFailure(
                .failure, "--scan-verify: \(failure.message); nothing was burned", hint: failure.hint)
        }
    }

    func listen(for expected: OnAirExpectation, seconds: Double) throws(OnAirError) -> OnAirCheck {
        try transport.withLock { transport throws(OnAirError) -> OnAirCheck in
            var rssi: [Int] = []
            var matches = 0
            var others = 0
            do throws(HCIError) {
                _ = try LiveScan(transport: transport, controller: controller).listen(for: .seconds(seconds)) {
                    report in
                    if expected.matches(address: report.address, data: report.data) {
                        matches += 1
                        if report.rssi != 127 { rssi.append(Int(report.rssi)) }
                    } else if expected.address == report.address {
                        others += 1
                    }
                    return matches >= Self.enough
                }
            } catch { throw OnAirError(error.description) }
            rssi.sort()
            return OnAirCheck(
                heard: matches > 0, rssiCount: rssi.count, rssiMedian: rssi.isEmpty ? nil : rssi[(rssi.count - 1) / 2],
                othersFromAddress: others)
        }
    }
}
