import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// The write-ahead log beside a WAL ledger (`NAME-wal`), read the way SQLite's file format
/// describes it: a 32-byte header (magic, version, page size, checkpoint count, two salts, a
/// checksum of its first 24 bytes), then frames of a 24-byte header (page number, the database's
/// size in pages on a commit frame, else 0, the two salts, a checksum) and one page. Each checksum
/// runs on from the one before it. SQLite reads frames while each holds and uses them up to the
/// last commit among them: the first that does not hold is the log's end to it — a torn write a
/// crash left, by design. With `synchronous=FULL` (every ledger's) a commit is on the disk before
/// the next transaction writes, so where two *commit* frames of this log hold on their own after
/// the point where SQLite stops reading, the first commit was on the disk before the second was
/// written, with all before it, and something there was damaged since: those commits, and every
/// one after, would be dropped without a word — a verified burn forgotten, its station burned
/// again. One commit alone after a break may be one a power cut caught half-written (the disk
/// keeps an unsynced write's frames in any order), never acknowledged; frames that hold after a
/// break but end in no commit are a transaction left open (SQLite rewrites its spilled frames in
/// place and re-checksums them only at the commit). Damage within the last two commits' frames of
/// a log is so not seen: SQLite reads such a log as it ends.
enum WriteAheadLog {
    /// What is wrong with the log at `path` of a database of `pageSize`-byte pages, or `nil`
    /// (`damage(pageSize:read:)`). A log found damaged is read once more, and only a second
    /// finding counts: a reader beside a running writer may catch a frame half-written, or the
    /// log restarted, while it reads. A log this process cannot open is left to SQLite, which
    /// then cannot open the ledger either and says why.
    static func damage(at path: String, pageSize: Int) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let read = { (offset: Int, count: Int) -> [UInt8]? in
            var bytes = [UInt8](repeating: 0, count: count)
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
            return got == count ? bytes : nil
        }
        guard damage(pageSize: pageSize, read: read) != nil else { return nil }
        return damage(pageSize: pageSize, read: read)
    }

    /// What is wrong with the log `read` gives (`read(offset, count)`: those bytes, or `nil` past
    /// its end), of a database of `pageSize`-byte pages; `nil` unless two commits SQLite would drop
    /// hold on their own. A frame holds on its own when its salts are its log's (the header's, or
    /// the first two frames share where the header is damaged) and its checksum is right chained
    /// from the checksum stored in the frame before it, or from the one that frame should have
    /// stored.
    /// The page size is the database's; the byte order the magic's, or either where it is damaged.
    static func damage(pageSize: Int, read: (Int, Int) -> [UInt8]?) -> String? {
        guard let header = read(0, 32) else { return nil }
        // The magic's byte order where the header holds in it; else either (the magic may be the
        // damaged byte).
        let magicOrder = word(header, 0, bigEndian: true) & 1 == 1
        let orders = headerHolds(header, pageSize: pageSize, bigEndian: magicOrder) ? [magicOrder] : [true, false]
        for bigEndian in orders {
            if let found = damage(header: header, pageSize: pageSize, bigEndian: bigEndian, read: read) {
                return found
            }
        }
        return nil
    }

    /// `damage(pageSize:read:)` for one byte order.
    static func damage(header: [UInt8], pageSize: Int, bigEndian: Bool, read: (Int, Int) -> [UInt8]?) -> String? {
        let headerHolds = headerHolds(header, pageSize: pageSize, bigEndian: bigEndian)
        // Where SQLite stops reading (0: it reads no frame).
        var stop: Int? = headerHolds ? nil : 0
        // The salts of this log: the header's; where the header is damaged, the first that two frames
        // holding on their own share (this log fills the file from its start, an older one's
        // frames lie after it; one frame's salts may be the damaged bytes).
        var generation = headerHolds ? header[16..<24] : nil
        var saltsSeen: [ArraySlice<UInt8>] = []
        // After the break: each commit frame that holds by its checksum, with its salts.
        var commits: [(frame: Int, salts: ArraySlice<UInt8>)] = []
        var seeds = [(word(header, 24, bigEndian: true), word(header, 28, bigEndian: true))]
        var frame = 0
        while let bytes = read(32 + frame * (24 + pageSize), 24 + pageSize) {
            frame += 1
            let own = (word(bytes, 16, bigEndian: true), word(bytes, 20, bigEndian: true))
            // Chained from the checksum stored in the frame before, or from the one it should hold.
            let computed = seeds.map { checksum(bytes, [0..<8, 24..<bytes.count], seed: $0, bigEndian: bigEndian) }
            let salts = bytes[8..<16]
            if stop == nil, !(salts == generation && computed[0] == own) { stop = frame }
            seeds = [own, computed[0]]
            guard let stop, computed.contains(where: { $0 == own }) else { continue }
            if generation == nil {
                if saltsSeen.contains(salts) { generation = salts } else { saltsSeen.append(salts) }
            }
            if word(bytes, 4, bigEndian: true) != 0 { commits.append((frame, salts)) }
            // Two commits after the break: the first was on the disk before the second was written,
            // and so was everything before it. One alone may be a commit a power cut caught half on
            // the disk (its frames in any order), never acknowledged.
            let held = commits.filter { $0.salts == generation }
            guard held.count >= 2 else { continue }
            let (first, second) = (held[0].frame, held[1].frame)
            return stop == 0
                ? "its header is damaged, and commit frames \(first) and \(second) after it hold: SQLite would read the ledger without any commit in the log"
                : "frame \(stop) does not hold (its checksum or salts), and commit frames \(first) and \(second) of the same log after it do: SQLite would read the ledger without the commits from frame \(stop) on"
        }
        return nil
    }

    /// Whether SQLite reads the log whose 32-byte header is `header` at all: its magic (in the byte
    /// order given), version, page size and checksum right.
    static func headerHolds(_ header: [UInt8], pageSize: Int, bigEndian: Bool) -> Bool {
        word(header, 0, bigEndian: true) == (bigEndian ? 0x377F_0683 : 0x377F_0682)
            && word(header, 4, bigEndian: true) == 3_007_000 && Int(word(header, 8, bigEndian: true)) == pageSize
            && checksum(header, [0..<24], seed: (0, 0), bigEndian: bigEndian)
                == (word(header, 24, bigEndian: true), word(header, 28, bigEndian: true))
    }

    /// Bytes `offset..<offset+4` of `bytes` as a 32-bit number in the order given.
    static func word(_ bytes: [UInt8], _ offset: Int, bigEndian: Bool) -> UInt32 {
        let (b0, b1, b2, b3) = (
            UInt32(bytes[offset]), UInt32(bytes[offset + 1]), UInt32(bytes[offset + 2]), UInt32(bytes[offset + 3])
        )
        return bigEndian ? b0 << 24 | b1 << 16 | b2 << 8 | b3 : b3 << 24 | b2 << 16 | b1 << 8 | b0
    }

    /// SQLite's WAL checksum of `ranges` of `bytes` (each a whole number of 8 bytes) from `seed`:
    /// for each pair of words x0, x1, s0 += x0 + s1, then s1 += x1 + s0.
    static func checksum(_ bytes: [UInt8], _ ranges: [Range<Int>], seed: (UInt32, UInt32), bigEndian: Bool)
        -> (UInt32, UInt32)
    {
        var (s0, s1) = seed
        for range in ranges {
            for start in stride(from: range.lowerBound, to: range.upperBound, by: 8) {
                s0 = s0 &+ word(bytes, start, bigEndian: bigEndian) &+ s1
                s1 = s1 &+ word(bytes, start + 4, bigEndian: bigEndian) &+ s0
            }
        }
        return (s0, s1)
    }
}
