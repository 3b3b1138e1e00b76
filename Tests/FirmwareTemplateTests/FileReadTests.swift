import Foundation
import Storage
import TestSupport
import Testing

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
            #expect(error.reason.hasPrefix("it is \(size == 1 << 36 ? "64 GiB" : "256 MiB")"), "\(error.reason)")
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
