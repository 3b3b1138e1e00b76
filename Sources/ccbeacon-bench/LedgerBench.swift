import BeaconPayload
import Foundation
import Provisioning

/// A distinct valid chip id (`XX:XX:XX:XX:XX:XX`, see `ChipID`) per station of the benchmark.
func chipID(_ index: Int) -> String {
    String(format: "00:12:4B:%02X:%02X:%02X", (index >> 16) & 0xFF, (index >> 8) & 0xFF, index & 0xFF)
}

/// `ccbeacon-bench ledger N`: the ledger's cost per station (register, claim, finish as verified),
/// in a temporary SQLite file with the durability settings provisioning uses.
func ledgerBenchmark(_ count: Int) throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-bench-\(UUID().uuidString).sqlite")
        .path
    defer {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    let ledger = try SQLiteLedger(path: path)
    let uuid = UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60")!
    let stations = (0..<count).map {
        Station(name: "s\($0)", identity: IBeacon(uuid: uuid, major: UInt16($0 / 65536 + 1), minor: UInt16($0 % 65536)))
    }
    let start = DispatchTime.now().uptimeNanoseconds
    try ledger.register(stations)
    let registered = DispatchTime.now().uptimeNanoseconds
    for index in 0..<count {
        guard
            let (_, attempt) = try ledger.claimNextStation(
                chip: chipID(index), debugger: "bench", template: "t", templateSHA256: "x", verifyMethod: "crc",
                skipping: [], image: { _ in ("i", nil) })
        else { break }
        try ledger.finish(attempt.id, outcome: .verified, reason: nil)
    }
    let done = DispatchTime.now().uptimeNanoseconds
    print(
        """
        {"stations": \(count), "registerMs": \(Double(registered - start) / 1e6), \
        "claimAndFinishMsPerStation": \(Double(done - registered) / 1e6 / Double(count))}
        """)
}
