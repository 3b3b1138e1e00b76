import Foundation
import Testing

@testable import StationLedger

/// A ledger's write-ahead log damaged inside itself is told from one a crash cut short or a
/// transaction left open (the ninth and tenth reviews: a byte changed in an unmerged log made
/// SQLite drop every commit from there on, and provision burned those stations again).
struct WriteAheadLogTests {
    /// A database in WAL mode with `commits` one-row commits never merged into the main file,
    /// copied as a kill leaves it (and, with `openTransaction`, a large transaction still open);
    /// its log and page size.
    static func crashImage(commits: Int, openTransaction: Bool = false) throws -> (
        folder: String, log: [UInt8], pageSize: Int
    ) {
        let folder = NSTemporaryDirectory() + "wal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let database = try SQLiteDatabase(path: folder + "/live.sqlite", mode: .create)
        for statement in [
            "CREATE TABLE burns(id INTEGER PRIMARY KEY, station TEXT)",
            "CREATE TABLE stations(name TEXT PRIMARY KEY, code TEXT UNIQUE)", "PRAGMA journal_mode=WAL",
            "PRAGMA synchronous=FULL", "PRAGMA wal_autocheckpoint=0",
        ] { try database.execute(statement, [], "") }
        for index in 0..<commits {
            try database.execute("INSERT INTO burns(station) VALUES (?)", [.text("s\(index)")], "")
        }
        if openTransaction {
            // A list of 60,000 stations registered in one transaction, as provision does.
            try database.execute("BEGIN", [], "")
            try database.execute(
                "WITH RECURSIVE n(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM n WHERE v < 60000) INSERT INTO stations SELECT 'station-' || v, hex(randomblob(8)) FROM n",
                [], "")
        }
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(
                atPath: folder + "/live.sqlite" + suffix, toPath: folder + "/c.sqlite" + suffix)
        }
        if openTransaction { try database.execute("ROLLBACK", [], "") }
        let log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/c.sqlite-wal")))
        let main = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/c.sqlite")))
        return (folder, log, Int(main[16]) << 8 | Int(main[17]))
    }

    /// What the check finds in `log`.
    static func damage(_ log: [UInt8], _ pageSize: Int) -> String? {
        WriteAheadLog.damage(pageSize: pageSize) { offset, count in
            offset + count <= log.count ? Array(log[offset..<(offset + count)]) : nil
        }
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

    /// Each place a byte of a six-commit log may be damaged: the first bytes of what the check
    /// reports, or nil where it cannot be told from what a crash or power cut leaves (SQLite reads
    /// the log as it ends). `frame` counts from 1; offsets inside a frame count from its header.
    static let damages: [(what: String, offset: @Sendable (Int) -> Int, finding: String?)] = [
        (
            "frame 3's page", { 32 + 2 * $0 + 24 + 100 },
            "frame 3 does not hold (its checksum or salts), and commit frames 4 and 5"
        ),
        (
            "frame 3's salt", { 32 + 2 * $0 + 9 },
            "frame 3 does not hold (its checksum or salts), and commit frames 4 and 5"
        ),
        (
            "frame 4's checksum field", { 32 + 3 * $0 + 17 },
            "frame 4 does not hold (its checksum or salts), and commit frames 5 and 6"
        ),
        // One commit after the damage is what a power cut mid-commit may leave: not told apart.
        ("frame 5's page", { 32 + 4 * $0 + 30 }, nil),
        ("the last frame's page", { 32 + 5 * $0 + 30 }, nil),
        ("the header's checkpoint count", { _ in 15 }, "its header is damaged, and commit frames 1 and 2"),
        ("the header's salt", { _ in 17 }, "its header is damaged, and commit frames 1 and 2"),
        ("the header's magic", { _ in 3 }, "its header is damaged, and commit frames 1 and 2"),
        ("the header's page size", { _ in 10 }, "its header is damaged, and commit frames 1 and 2"),
        ("the header's stored checksum", { _ in 26 }, "its header is damaged, and commit frames 2 and 3"),
    ]

    @Test func aLogDamagedInsideIsFoundAndOneCutShortIsNot() throws {
        let (folder, log, pageSize) = try Self.crashImage(commits: 6)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let frame = 24 + pageSize
        #expect((log.count - 32) / frame == 6 && Self.damage(log, pageSize) == nil)
        #expect(try Self.rowsRead(folder, log) == 6)
        // Cut anywhere: what a crash leaves, SQLite's to end there.
        for cut in [log.count - frame / 2, 32 + 3 * frame, 32 + 10, 20] {
            #expect(Self.damage(Array(log[..<cut]), pageSize) == nil, "cut at \(cut)")
        }
        for (what, offset, finding) in Self.damages {
            var damaged = log
            damaged[offset(frame)] ^= 0x01
            let found = Self.damage(damaged, pageSize)
            #expect(found?.hasPrefix(finding ?? "-") ?? (finding == nil), "\(what): \(found ?? "nothing")")
            // Where it is found, SQLite itself reads fewer commits than were made.
            if finding != nil { #expect(try Self.rowsRead(folder, damaged) < 6, "\(what)") }
        }
    }

    /// Damage that takes the header and the first frame's header with it (the eleventh review: a
    /// zeroed first sector, or a header bit with a bit of frame 1's salts, left the log's salts
    /// unknown and passed): the log's salts are those two frames after it share.
    @Test func aLogWhoseHeaderAndFirstFrameAreDamagedIsFound() throws {
        let (folder, log, pageSize) = try Self.crashImage(commits: 6)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var zeroed = log
        zeroed.replaceSubrange(0..<512, with: [UInt8](repeating: 0, count: 512))
        #expect(Self.damage(zeroed, pageSize)?.hasPrefix("its header is damaged, and commit frames 3 and 4") == true)
        #expect(try Self.rowsRead(folder, zeroed) == 0)
        var twice = log
        twice[17] ^= 0x01
        twice[32 + 9] ^= 0x01
        #expect(Self.damage(twice, pageSize)?.hasPrefix("its header is damaged, and commit frames 2 and 3") == true)
        #expect(try Self.rowsRead(folder, twice) == 0)
    }

    /// A large transaction still open when the run was killed: its pages spilled into the log and
    /// some rewritten there (SQLite re-checksums the frames after them only at the commit), so
    /// frames after a break hold, but none is a commit (the tenth review:
    /// healthy ledgers were refused after a kill mid-registration, and under live readers).
    @Test func aTransactionLeftOpenIsNoDamage() throws {
        let (folder, log, pageSize) = try Self.crashImage(commits: 3, openTransaction: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect((log.count - 32) / (24 + pageSize) > 20, "the open transaction spilled into the log")
        #expect(Self.damage(log, pageSize) == nil)
        #expect(try Self.rowsRead(folder, log) == 3)
    }
}
