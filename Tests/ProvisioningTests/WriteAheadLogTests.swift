import Foundation
import Testing

@testable import StationLedger

/// A ledger's write-ahead log damaged inside itself is told from one a crash cut short (the ninth
/// review: a byte flipped in an unmerged log made SQLite drop every commit from there on, and
/// provision burned those stations again).
struct WriteAheadLogTests {
    /// A database in WAL mode with `commits` one-row commits that were never merged into the
    /// main file, copied as a crash would leave it; its log's bytes and page size.
    static func crashImage(commits: Int) throws -> (folder: String, log: [UInt8], frame: Int) {
        let folder = NSTemporaryDirectory() + "wal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let database = try SQLiteDatabase(path: folder + "/live.sqlite", mode: .create)
        for statement in [
            "CREATE TABLE burns(id INTEGER PRIMARY KEY, station TEXT)", "PRAGMA journal_mode=WAL",
            "PRAGMA synchronous=FULL", "PRAGMA wal_autocheckpoint=0",
        ] { try database.execute(statement, [], "") }
        for index in 0..<commits {
            try database.execute("INSERT INTO burns(station) VALUES (?)", [.text("s\(index)")], "")
        }
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(
                atPath: folder + "/live.sqlite" + suffix, toPath: folder + "/c.sqlite" + suffix)
        }
        let log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/c.sqlite-wal")))
        let pageSize = Int(log[8]) << 24 | Int(log[9]) << 16 | Int(log[10]) << 8 | Int(log[11])
        return (folder, log, 24 + pageSize)
    }

    /// The rows SQLite reads with `log` as the log of a fresh copy of the crash image's main
    /// file (read-only: nothing is merged back).
    static func rowsRead(_ folder: String, _ log: [UInt8]) throws -> Int {
        let copy = folder + "/read-\(UUID().uuidString).sqlite"
        try FileManager.default.copyItem(atPath: folder + "/c.sqlite", toPath: copy)
        try Data(log).write(to: URL(fileURLWithPath: copy + "-wal"))
        let database = try SQLiteDatabase(path: copy, mode: .readOnly)
        return try database.query("SELECT count(*) FROM burns", [], "").first?.first?.int ?? -1
    }

    @Test func aLogDamagedInsideIsFoundAndOneCutShortIsNot() throws {
        let (folder, log, frame) = try Self.crashImage(commits: 6)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let frames = (log.count - 32) / frame
        #expect(frames >= 6 && WriteAheadLog.damage(in: log) == nil)
        #expect(try Self.rowsRead(folder, log) == 6)
        // Cut inside its last frame, or at any frame: what a crash leaves, SQLite's to end there.
        for cut in [log.count - frame / 2, 32 + 3 * frame, 32 + 10] {
            #expect(WriteAheadLog.damage(in: Array(log[..<cut])) == nil, "cut at \(cut)")
        }
        // A byte of frame 3's page changed: SQLite drops the commits from there on, this says so.
        var damaged = log
        damaged[32 + 2 * frame + 24 + 100] ^= 0x01
        #expect(
            WriteAheadLog.damage(in: damaged)
                == "frame 3 fails its checksum, and frame 4 of the same log after it holds: SQLite would read the ledger without the commits from frame 3 on"
        )
        #expect(try Self.rowsRead(folder, damaged) < 6)
        // Its salt changed: the same.
        var salted = log
        salted[32 + 2 * frame + 9] ^= 0x01
        #expect(WriteAheadLog.damage(in: salted)?.hasPrefix("frame 3 fails its checksum") == true)
        // The last frame changed is what a torn last write looks like: not told apart, left to SQLite.
        var last = log
        last[32 + (frames - 1) * frame + 30] ^= 0x01
        #expect(WriteAheadLog.damage(in: last) == nil)
        // The header's checksummed bytes changed (the checkpoint count): SQLite ignores the whole log.
        var header = log
        header[15] ^= 0x01
        #expect(WriteAheadLog.damage(in: header)?.hasPrefix("its header fails its checksum, and frame 1") == true)
        #expect(try Self.rowsRead(folder, header) == 0)
    }
}
