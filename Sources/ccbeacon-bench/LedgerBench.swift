import BeaconPayload
import Foundation
import PostgresLedger
import Provisioning
import StationLedger
import Synchronization

/// A distinct valid chip id (`XX:XX:XX:XX:XX:XX`, see `ChipID`) per station of the benchmark.
func chipID(_ index: Int) -> String {
    String(format: "00:12:4B:%02X:%02X:%02X", (index >> 16) & 0xFF, (index >> 8) & 0xFF, index & 0xFF)
}

/// `ccbeacon-bench ledger N [URL]`: the ledger's cost per station (register, claim, finish as
/// verified), in a temporary SQLite file with the durability settings provisioning uses, or —
/// given the URL of an empty PostgreSQL database — on that server, as one bench and then as three
/// benches claiming at once (each on its own connection, as three machines would).
func ledgerBenchmark(_ count: Int, url: String? = nil) throws {
    let uuid = UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60")!
    let stations = (0..<count).map {
        Station(name: "s\($0)", identity: IBeacon(uuid: uuid, major: UInt16($0 / 65536 + 1), minor: UInt16($0 % 65536)))
    }
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-\(UUID().uuidString).sqlite")
        .path
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    let server = try url.map { try PostgresLedger(url: $0, bench: "bench-1", exclusive: true) }
    let ledger: any ProvisioningLedger = try server ?? SQLiteLedger(path: path)
    let start = DispatchTime.now().uptimeNanoseconds
    try ledger.register(stations)
    let registered = DispatchTime.now().uptimeNanoseconds
    // One bench burns the first half alone.
    let alone = count / 2
    try burn(alone, on: ledger, offset: 0)
    let done = DispatchTime.now().uptimeNanoseconds
    var concurrent = ""
    if let url, let server {
        // Three benches take the rest at once.
        let others = try (2...3).map { try PostgresLedger(url: url, bench: "bench-\($0)", exclusive: true) }
        let benches = [server] + others
        let rest = count - alone
        let failures = Mutex(0)
        let together = DispatchTime.now().uptimeNanoseconds
        onThreadsEach(benches.count) { index in
            do { try burn(rest, on: benches[index], offset: alone + index * rest) } catch {
                failures.withLock { $0 += 1 }
            }
        }
        let finished = DispatchTime.now().uptimeNanoseconds
        let verified = try ledger.attempts().filter { $0.outcome == .verified }.count
        concurrent =
            ", \"threeBenchesMsPerStation\": \(Double(finished - together) / 1e6 / Double(rest)), \"verified\": \(verified), \"failedBenches\": \(failures.withLock { $0 })"
    }
    print(
        """
        {"backend": "\(url == nil ? "sqlite" : "postgresql")", "stations": \(count), "registerMs": \(Double(registered - start) / 1e6), \
        "claimAndFinishMsPerStation": \(Double(done - registered) / 1e6 / Double(alone))\(concurrent)}
        """)
}

/// Claims and records as verified up to `count` stations on `ledger` (chips numbered from
/// `offset`), until none is pending.
func burn(_ count: Int, on ledger: any ProvisioningLedger, offset: Int) throws {
    for index in 0..<count {
        guard
            let (_, attempt) = try ledger.claimNextStation(
                chip: chipID(offset + index), debugger: "bench", template: "t", templateSHA256: "x",
                verifyMethod: "crc", skipping: [], image: { _ in ("i", nil) })
        else { return }
        try ledger.finish(attempt.id, outcome: .verified, reason: nil)
    }
}

/// Runs `body(0)`, `body(1)`, … `body(count - 1)` each on a thread of its own, all at once, and
/// returns when all are done (`concurrentPerform` would run only as many at once as there are
/// cores: benches and debuggers mostly wait, and must all run together).
func onThreadsEach(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        Thread {
            body(index)
            done.leave()
        }.start()
    }
    done.wait()
}
