import Foundation
import TestSupport
import Testing

@testable import Storage

/// `Files.read` (here because Storage has no test target of its own; templates are what it reads
/// most).
struct FileReadTests {
    /// The buffer is the file's size: reading never grows it, since growing an array copies it and
    /// a large image would then be held twice while it is read.
    @Test(arguments: [0, 1, 4095, 65536, 1 << 20, (1 << 20) + 17])
    func readsIntoABufferOfTheFilesSize(size: Int) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let content = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let path = folder.path("f.bin")
        try Data(content).write(to: URL(fileURLWithPath: path))
        let bytes = try Files.read(path)
        #expect(bytes == content)
        #expect(bytes.capacity < size + 4096, "capacity \(bytes.capacity) for \(size) bytes")
    }

    /// A file whose size says nothing (a /proc file says 0) is read to its end all the same.
    @Test func aFileLongerThanItsStatedSizeIsReadToItsEnd() throws {
        let bytes = try Files.read("/proc/self/status")
        #expect(bytes.count > 100)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("Name:"))
        #expect(bytes.last == 0x0A, "read to the last line")
    }
}

/// The size limit: a file above `Files.maximumReadSize` is refused from its size alone, before a
/// buffer is allocated (a sparse 64 GiB file used to abort the process in the allocation).
struct FileSizeLimitTests {
    @Test(arguments: [Files.maximumReadSize + 1, 1 << 36])
    func aFileAboveTheLimitIsRefusedBeforeItIsRead(size: Int) throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let path = folder.path("huge.hex")
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, off_t(size)) == 0)
        #expect(throws: FileError.self) { try Files.read(path) }
        do {
            _ = try Files.read(path)
        } catch {
            #expect(error.isTooLarge)
            // Just over the limit, the size is given in bytes: rounded it would read as the limit.
            #expect(
                error.reason.hasPrefix("it is \(size == 1 << 36 ? "64 GiB" : "268435457 bytes")"), "\(error.reason)")
            #expect(error.reason.contains("larger than the 256 MiB ccbeacon reads"), "\(error.reason)")
        }
    }

    @Test(arguments: [
        (0, "0 bytes"), (1023, "1023 bytes"), (1536, "1.5 KiB"), (720_000, "703 KiB"),
        (256 << 20, "256 MiB"), ((256 << 20) + 1, "256 MiB"), (1 << 36, "64 GiB"),
    ])
    func sizesAreSaidInBinaryUnits(bytes: Int, said: String) {
        #expect(Files.describeSize(bytes) == said)
    }
}

/// Temporary names stay within NAME_MAX (255 bytes) whatever the final name: a 250-character
/// output name used to fail with ENAMETOOLONG because its temporary name was longer.
struct TemporaryNameTests {
    @Test(arguments: [1, 200, 222, 240, 250, 255])
    func aTemporaryNameFitsInNameMax(length: Int) throws {
        for unit in ["a", "é", "😀"] {
            var name = String(repeating: unit, count: length / unit.utf8.count) + ".hex"
            while name.utf8.count > 255 { name.removeFirst() }
            let temporary = Files.temporaryName(for: name, inFolder: "/tmp")
            #expect(temporary.utf8.count <= 255, "\(temporary.utf8.count) bytes for \(name.utf8.count)")
            #expect(temporary.contains(Files.temporaryMarker))
            let parts = temporary.split(separator: ".", omittingEmptySubsequences: false)
            #expect(Int32(parts[parts.count - 2]) == getpid(), "the pid stays the next-to-last part")
            #expect(String(validating: Array(temporary.utf8), as: UTF8.self) != nil, "cut between characters")
        }
    }

    /// A staged file of another machine — another host or container sharing the folder, where
    /// its process ID names no process of ours while its writer runs — or of a ccbeacon from
    /// before the machine's token is not judged by its process: it stays until it is a day old.
    /// This machine's file of an ended process goes at once; of a live one, never — unless that
    /// process started over an hour after the file was written (its ID given to another).
    @Test func onlyThisMachinesEndedWritersFilesGoAtOnce() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var dead: Int32 = 4_000_000
        while kill(dead, 0) == 0 || errno != ESRCH { dead -= 1 }
        let ended = Files.temporaryName(for: "a.hex", inFolder: folder.url.path, process: dead)
        let live = Files.temporaryName(for: "b.hex", inFolder: folder.url.path)
        let token = LocalProcesses.machineToken
        let otherToken = token == "00000000" ? "00000001" : "00000000"
        let foreign = Files.temporaryName(for: "c.hex", inFolder: folder.url.path, process: dead)
            .replacingOccurrences(
                of: Files.temporaryMarker + "\(dead)." + token, with: Files.temporaryMarker + "\(dead)." + otherToken)
        let older = ".d.hex" + Files.temporaryMarker + "\(dead).77"
        #expect(foreign.contains(otherToken) && !foreign.contains(token))
        for name in [ended, live, foreign, older] {
            #expect(FileManager.default.createFile(atPath: folder.path(name), contents: Data("half".utf8)))
        }
        // Names ccbeacon never gives, however old: a user's file that only holds the marker, a
        // signed ID, no NAME, a combining accent or full-width digits after the ID.
        let users = [
            ".photos.ccbeacon-tmp.2024.zip", ".x.ccbeacon-tmp.+5.1234", ".x.ccbeacon-tmp.-1.1234", ".ccbeacon-tmp.1.2",
            ".x.ccbeacon-tmp.5.1\u{301}", ".x.ccbeacon-tmp.5.\u{FF21}\u{FF22}\u{FF23}\u{FF24}\u{FF25}1",
        ]
        for name in users {
            #expect(FileManager.default.createFile(atPath: folder.path(name), contents: Data("mine".utf8)))
        }
        #expect(Files.removeAbandonedTemporaryFiles(in: folder.url.path) == [ended])
        let dayOld = Date(timeIntervalSinceNow: -Double(Files.temporaryLifetime) - 60)
        for name in [foreign, older] + users {
            try FileManager.default.setAttributes([.modificationDate: dayOld], ofItemAtPath: folder.path(name))
        }
        #expect(Files.removeAbandonedTemporaryFiles(in: folder.url.path).sorted() == [foreign, older].sorted())
        #expect(try Files.list(folder.url.path).sorted() == ([live] + users).sorted())
        // A day before this process started, its ID was another's: that writer has ended.
        try FileManager.default.setAttributes([.modificationDate: dayOld], ofItemAtPath: folder.path(live))
        #expect(Files.removeAbandonedTemporaryFiles(in: folder.url.path) == [live])
    }

    /// A live writer's file stays however old it grows (a set waiting a day for a folder's lock).
    @Test func aLiveWritersFileStaysHoweverOld() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let started = try #require(LocalProcesses.startTime(Int(getpid())))
        #expect(abs(started - Date().timeIntervalSince1970) < 24 * 3600, "this test process started today")
        let live = Files.temporaryName(for: "b.hex", inFolder: folder.url.path)
        #expect(FileManager.default.createFile(atPath: folder.path(live), contents: Data("half".utf8)))
        // Written just as this process started (it ran for days since): kept.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: started)], ofItemAtPath: folder.path(live))
        #expect(Files.removeAbandonedTemporaryFiles(in: folder.url.path).isEmpty)
    }

    /// Written for real: a file whose name is 255 bytes long is written atomically, and the
    /// temporary file a dead writer left for it is recognised and removed.
    @Test func aFileWithALongNameIsWrittenAndItsLeftoversRemoved() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let name = String(repeating: "n", count: 251) + ".hex"
        try Files.writeAtomically(Array("x".utf8), to: folder.path(name))
        #expect(try Files.read(folder.path(name)) == Array("x".utf8))
        var dead: Int32 = 4_000_000
        while kill(dead, 0) == 0 || errno != ESRCH { dead -= 1 }
        // What the dead writer's run would have named it: cut to fit its own (longer) process ID.
        let leftover = Files.temporaryName(for: name, inFolder: folder.url.path, process: dead)
        #expect(leftover.utf8.count <= 255)
        #expect(FileManager.default.createFile(atPath: folder.path(leftover), contents: Data()))
        #expect(Files.removeAbandonedTemporaryFiles(in: folder.url.path) == [leftover])
        #expect(try Files.list(folder.url.path) == [name])
    }
}
