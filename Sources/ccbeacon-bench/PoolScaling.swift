import BeaconPayload
import CCDebugger
import CCDebuggerEmulator
import FirmwareTemplate
import Foundation
import PostgresLedger
import Provisioning
import StationLedger
import Synchronization
import TemplateFiles

/// `ccbeacon-bench pool-scaling LIST BURNED [URL]`: the host's cost per station as the pool grows.
/// A ledger holding a list of LIST stations, half of them verified already (copied in as a
/// history), then a provisioning run of the bundled template on two untimed emulated debuggers
/// burning BURNED more, each new chip put in 20 ms after the last was released (so that the
/// debuggers wait, and poll the ledger, as on a bench). In a temporary SQLite file, or in the
/// empty PostgreSQL database at URL. One JSON line: this process's CPU time and the wall time
/// per station burned.
func poolScalingBenchmark(list count: Int, url: String?, burned: Int) throws {
    let template = try TemplateFolder.load(
        FileManager.default.currentDirectoryPath + "/firmware-templates/cc2541-ibeacon", catalog: try shippedCatalog())
    let uuid = UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60")!
    let stations = (0..<count).map {
        Station(name: "s\($0)", identity: IBeacon(uuid: uuid, major: UInt16($0 / 65536 + 1), minor: UInt16($0 % 65536)))
    }
    // Half the list done: verified attempts on chips of their own, in list order.
    let done = count / 2
    let attempts = (0..<done).map { index in
        Attempt(
            id: index + 1, station: "s\(index)", chip: chipID(0x80_0000 + index), debugger: "earlier", template: "t",
            templateSHA256: "x", imageSHA256: "i", startedAt: "2026-01-01T00:00:00.000Z",
            finishedAt: "2026-01-01T00:00:01.000Z", outcome: .verified, reason: nil, verifyMethod: "crc",
            power: Int(stations[index].identity.measuredPower), bench: "bench-1")
    }
    let history = LedgerHistory(stations: stations, attempts: attempts, calibrations: [])
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("pool-\(UUID().uuidString).sqlite").path
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    let ledger: any ProvisioningLedger & Sendable
    if let url {
        let server = try PostgresLedger(url: url, bench: "bench-1")
        try server.importHistory(history)
        ledger = try PostgresLedger(url: url, bench: "bench-1", exclusive: true)
    } else {
        let file = try SQLiteLedger(path: path)
        try file.importHistory(history)
        ledger = file
    }
    let issued = Atomic<Int>(0)
    let newChip = { @Sendable () -> EmulatedChip in
        let number = issued.add(1, ordering: .relaxed).newValue
        return EmulatedChip(ieee: [
            0x00, 0x12, 0x4B, UInt8(number >> 16), UInt8((number >> 8) & 0xFF), UInt8(number & 0xFF),
        ])
    }
    let debuggers = (0..<2).map { _ in EmulatedDebugger(chip: newChip()) }
    for debugger in debuggers {
        debugger.onResetToRun = { debugger in
            // The chips run out after `burned` of them: the run then stops waiting.
            if issued.load(ordering: .relaxed) < burned + debuggers.count - 1 {
                debugger.insertChip(newChip(), after: .milliseconds(20))
            } else {
                debugger.chip = nil
            }
        }
    }
    var options = ProvisionOptions()
    options.targetTimeoutSeconds = 0.5
    let run = ProvisioningRun(template: template, ledger: ledger, options: options) { _ in }
    let cpuBefore = processSeconds()
    let start = MonotonicClock.now
    let summary = run.run(
        debuggers.enumerated().map { index, debugger in
            ProvisioningDebugger(name: "emu\(index)") { () throws(DebuggerError) in debugger }
        })
    let wall = MonotonicClock.now - start - options.targetTimeoutSeconds
    let cpu = processSeconds() - cpuBefore
    let verified = summary.verified.count
    print(
        """
        {"ledger": "\(url == nil ? "sqlite" : "postgresql")", "list": \(count), "done": \(done), \
        "verified": \(verified), "cpuMsPerStation": \(cpu * 1000 / Double(max(1, verified))), \
        "wallMsPerStation": \(wall * 1000 / Double(max(1, verified)))}
        """)
}

/// This process's CPU time so far (user and system), in seconds.
func processSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}
