import Storage

/// The write-ahead log beside a WAL ledger (`NAME-wal`), read the way SQLite's file format
/// describes it: a 32-byte header (magic, version, page size, checkpoint count, two salts, a
/// checksum of its first 24 bytes), then frames of a 24-byte header (page number, the database's
/// size after a commit, the two salts, a checksum) and one page. Each checksum runs on from the
/// one before it. SQLite reads frames until the first whose salts or checksum do not hold, and
/// takes that for the end of the log: a torn last write after a crash, by design. With
/// `synchronous=FULL` (every ledger's) each commit is on the disk before the next is written, so
/// a frame of this log that holds *after* one that does not was written later, and the frame
/// before it was damaged since: every commit from there on would be dropped without a word — a
/// verified burn forgotten, its station burned again.
enum WriteAheadLog {
    /// What is wrong with the log at `path` (`damage(in:)`), or `nil`. A log found damaged is read
    /// once more, and only a second finding counts: a reader beside a running writer may catch a
    /// frame half-written, or the log restarted, while it reads.
    static func damage(at path: String) -> String? {
        guard let first = try? Files.read(path), damage(in: first) != nil else { return nil }
        return (try? Files.read(path)).flatMap { damage(in: $0) }
    }

    /// What is wrong with the log `bytes`, or `nil` when it is whole, ends early (what a crash
    /// leaves), or is not one SQLite would read (too short, another magic, a page size SQLite never
    /// writes: SQLite then ignores the log, and so does this check).
    static func damage(in bytes: [UInt8]) -> String? {
        guard bytes.count >= 32 else { return nil }
        let magic = word(bytes, 0, bigEndian: true)
        guard magic & 0xFFFF_FFFE == 0x377F_0682 else { return nil }
        let bigEndian = magic & 1 == 1
        let pageSize = Int(word(bytes, 8, bigEndian: true))
        guard (512...65536).contains(pageSize), pageSize & (pageSize - 1) == 0 else { return nil }
        let salts = bytes[16..<24]
        let frameSize = 24 + pageSize
        var seed = (word(bytes, 24, bigEndian: true), word(bytes, 28, bigEndian: true))
        var firstBroken: Int? = checksum(bytes, 0..<24, seed: (0, 0), bigEndian: bigEndian) == seed ? nil : 0
        var frame = 0
        var offset = 32
        while offset + frameSize <= bytes.count {
            frame += 1
            let stored = (word(bytes, offset + 16, bigEndian: true), word(bytes, offset + 20, bigEndian: true))
            // Checked against the checksum stored before it, so a frame stands on its own.
            let holds =
                bytes[(offset + 8)..<(offset + 16)] == salts
                && checksum(
                    bytes, offset..<(offset + 8), then: (offset + 24)..<(offset + frameSize), seed: seed,
                    bigEndian: bigEndian) == stored
            if let broken = firstBroken, holds {
                return broken == 0
                    ? "its header fails its checksum, and frame \(frame) of that log after it holds: SQLite would read the ledger without any commit in the log"
                    : "frame \(broken) fails its checksum, and frame \(frame) of the same log after it holds: SQLite would read the ledger without the commits from frame \(broken) on"
            }
            if !holds, firstBroken == nil { firstBroken = frame }
            seed = stored
            offset += frameSize
        }
        return nil
    }

    /// Bytes `offset..<offset+4` as a 32-bit number in the order given.
    static func word(_ bytes: [UInt8], _ offset: Int, bigEndian: Bool) -> UInt32 {
        let four = Array(bytes[offset..<(offset + 4)])
        return (bigEndian ? four : four.reversed()).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// SQLite's WAL checksum of `first` then `then` (both whole numbers of 8 bytes), starting
    /// from `seed`: for each pair of words x0, x1, s0 += x0 + s1, then s1 += x1 + s0.
    static func checksum(
        _ bytes: [UInt8], _ first: Range<Int>, then: Range<Int> = 0..<0, seed: (UInt32, UInt32), bigEndian: Bool
    ) -> (UInt32, UInt32) {
        var (s0, s1) = seed
        for range in [first, then] {
            for start in stride(from: range.lowerBound, to: range.upperBound, by: 8) {
                s0 = s0 &+ word(bytes, start, bigEndian: bigEndian) &+ s1
                s1 = s1 &+ word(bytes, start + 4, bigEndian: bigEndian) &+ s0
            }
        }
        return (s0, s1)
    }
}
