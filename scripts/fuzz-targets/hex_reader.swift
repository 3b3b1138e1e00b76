// libFuzzer target for the Intel HEX readers, compiled together with Sources/IntelHex by
// scripts/fuzz. Besides "never crash", it checks that the memory-only reader (HexImage) reads what
// the line-keeping one (IntelHexFile) reads, or fails with the same error, and invariants on every
// accepted input: the writer's output reads back to the same memory, and a line-preserving patch
// of nothing or of a byte keeps the file readable and changes exactly that byte.

/// libFuzzer entry point: one input, treated as the bytes of a HEX file.
@_cdecl("LLVMFuzzerTestOneInput")
public func hexReaderFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var image: HexImage?
    var imageError: HexReadError?
    do { image = try HexImage(text: bytes) } catch { imageError = error }
    let file: IntelHexFile
    do { file = try IntelHexFile(text: bytes) } catch {
        precondition(imageError == error, "the readers fail differently")
        return 0
    }
    precondition(
        image?.memory == file.memory && image?.startAddress == file.startAddress, "the readers read different images")

    for length in [16, 32] {
        let written = HexWriter(recordLength: length).text(for: file.memory, startAddress: file.startAddress)
        guard let reread = try? IntelHexFile(text: written) else { fatalError("writer output does not read back") }
        precondition(reread.memory == file.memory, "writer changed the memory")
        precondition(reread.startAddress == file.startAddress, "writer changed the start address")
    }
    guard let unchanged = try? file.patchingRecords([]) else { fatalError("empty patch failed") }
    precondition(unchanged.file.text == bytes, "empty patch changed the text")

    if let segment = file.memory.segments.first {
        let address = segment.start + segment.bytes.count / 2
        let newByte = ~segment.bytes[segment.bytes.count / 2]
        guard let patched = try? file.patchingRecords([MemoryPatch(address: address, bytes: [newByte])]) else {
            fatalError("patch of a held byte failed")
        }
        guard let reread = try? IntelHexFile(text: patched.file.text) else { fatalError("patched text does not read") }
        var expected = file.memory
        try? expected.write([newByte], at: address)
        precondition(reread.memory == expected, "patch changed more than its byte")
        precondition(patched.file.text.count == bytes.count, "patch changed the file length")
    }
    _ = try? file.memory.binary(sizeLimit: 1 << 20)
    return 0
}
