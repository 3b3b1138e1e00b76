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

/// `ccbeacon-bench provision-timed DEBUGGERS STATIONS SWAP-SECONDS [BENCHES URL]`: provisioning the
/// bundled template on timed emulated debuggers (`DeviceTiming.hardware`, really waited for), each
/// new chip put in SWAP-SECONDS after the previous one was released. With one bench the ledger is
/// SQLite with provisioning's durability, or the PostgreSQL database at URL; with BENCHES benches
/// (each DEBUGGERS debuggers, its own `ProvisioningRun` and its own connection, as separate
/// machines) it is the PostgreSQL database at URL (an empty one). One JSON line.
func timedProvisioningBenchmark(
    debuggers count: Int, stations: Int, swapSeconds: Double, benches: Int = 1, url: String? = nil
) throws {
    let template = try TemplateFolder.load(
        FileManager.default.currentDirectoryPath + "/firmware-templates/cc2541-ibeacon", catalog: try shippedCatalog())
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("timed-\(UUID().uuidString).sqlite").path
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    let ledgers: [any ProvisioningLedger & Sendable] =
        if let url {
            try (1...benches).map { try PostgresLedger(url: url, bench: "bench-\($0)", exclusive: true) }
        } else {
            [try SQLiteLedger(path: path)]
        }
    let uuid = UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60")!
    try ledgers[0].register(
        (0..<stations).map { Station(name: "s\($0)", identity: IBeacon(uuid: uuid, major: 1, minor: UInt16($0))) })
    // Every chip a new one, with its own factory address.
    let issued = Atomic<Int>(0)
    let newChip = { @Sendable () -> EmulatedChip in
        let number = issued.add(1, ordering: .relaxed).newValue
        return EmulatedChip(ieee: [
            0x00, 0x12, 0x4B, UInt8(number >> 16), UInt8((number >> 8) & 0xFF), UInt8(number & 0xFF),
        ])
    }
    let bench = (0..<(count * ledgers.count)).map { _ in EmulatedDebugger(chip: newChip(), timing: .hardware) }
    for debugger in bench {
        debugger.onResetToRun = { debugger in
            if swapSeconds > 0 {
                debugger.insertChip(newChip(), after: .seconds(swapSeconds))
            } else {
                debugger.chip = newChip()
            }
        }
    }
    let options = {
        var options = ProvisionOptions()  // provision's own defaults: CRC verify, a poll every 0.25 s
        options.targetTimeoutSeconds = swapSeconds + 5
        return options
    }()
    let workers = bench.enumerated().map { index, debugger in
        ProvisioningDebugger(name: "emu\(index)") { () throws(DebuggerError) in debugger }
    }
    let verified = Atomic<Int>(0)
    let start = MonotonicClock.now
    // Each bench its own run over its own debuggers, all at once.
    onThreadsEach(ledgers.count) { index in
        let run = ProvisioningRun(template: template, ledger: ledgers[index], options: options) { _ in }
        let mine = Array(workers[(index * count)..<((index + 1) * count)])
        verified.add(run.run(mine).verified.count, ordering: .relaxed)
    }
    let seconds = MonotonicClock.now - start
    let total = verified.load(ordering: .relaxed)
    let deviceSeconds = bench.reduce(0.0) { $0 + milliseconds($1.accountedTime) / 1000 }
    print(
        """
        {"benches": \(ledgers.count), "debuggers": \(count), "ledger": "\(url == nil ? "sqlite" : "postgresql")", \
        "stations": \(stations), "verified": \(total), \
        "swapSeconds": \(swapSeconds), "seconds": \(seconds), "stationsPerMinute": \(Double(total) / seconds * 60), \
        "deviceSecondsPerStation": \(deviceSeconds / Double(max(1, total)))}
        """)
}
