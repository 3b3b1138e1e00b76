import BeaconPayload
import CCDebugger
import CCDebuggerEmulator
import FirmwareTemplate
import Foundation
import Provisioning
import Synchronization

/// How the bench's debuggers are driven.
enum WorkerMode: String {
    /// One `ProvisioningRun` over all debuggers, as `ccbeacon provision` does.
    case run
    /// A thread per debugger, each with a `ProvisioningRun` of its own debugger, all on the one
    /// ledger: every debugger works all the time, however many cores the host has.
    case thread
}

/// `ccbeacon-bench provision-timed DEBUGGERS STATIONS SWAP-SECONDS [run|thread]`: provisioning
/// the bundled template on one bench of timed emulated debuggers (`DeviceTiming.hardware`, really
/// waited for), each new chip put in SWAP-SECONDS after the previous one was released; the
/// ledger is SQLite with provisioning's durability. One JSON line.
func timedProvisioningBenchmark(debuggers count: Int, stations: Int, swapSeconds: Double, mode: WorkerMode) throws {
    let template = try TemplateFolder.load(
        FileManager.default.currentDirectoryPath + "/firmware-templates/cc2541-ibeacon", catalog: try shippedCatalog())
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("timed-\(UUID().uuidString).sqlite").path
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    let ledger = try SQLiteLedger(path: path)
    let uuid = UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60")!
    try ledger.register(
        (0..<stations).map { Station(name: "s\($0)", identity: IBeacon(uuid: uuid, major: 1, minor: UInt16($0))) })
    // Every chip a new one, with its own factory address.
    let issued = Atomic<Int>(0)
    let newChip = { @Sendable () -> EmulatedCC2541 in
        let number = issued.add(1, ordering: .relaxed).newValue
        return EmulatedCC2541(ieee: [
            0x00, 0x12, 0x4B, UInt8(number >> 16), UInt8((number >> 8) & 0xFF), UInt8(number & 0xFF),
        ])
    }
    let bench = (0..<count).map { _ in EmulatedDebugger(chip: newChip(), timing: .hardware) }
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
    switch mode {
    case .run:
        let run = ProvisioningRun(template: template, ledger: ledger, options: options) { _ in }
        verified.store(run.run(workers).verified.count, ordering: .relaxed)
    case .thread:
        let done = DispatchGroup()
        for worker in workers {
            done.enter()
            Thread {
                let run = ProvisioningRun(template: template, ledger: ledger, options: options) { _ in }
                verified.add(run.run([worker]).verified.count, ordering: .relaxed)
                done.leave()
            }.start()
        }
        done.wait()
    }
    let seconds = MonotonicClock.now - start
    let count = verified.load(ordering: .relaxed)
    let deviceSeconds = bench.reduce(0.0) { $0 + milliseconds($1.accountedTime) / 1000 }
    print(
        """
        {"debuggers": \(bench.count), "mode": "\(mode)", "stations": \(stations), "verified": \(count), \
        "swapSeconds": \(swapSeconds), "seconds": \(seconds), "stationsPerMinute": \(Double(count) / seconds * 60), \
        "deviceSecondsPerStation": \(deviceSeconds / Double(max(1, count)))}
        """)
}
