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
