/// Bytes to put at an address.
public struct MemoryPatch: Sendable, Equatable {
    /// Address of the first byte.
    public var address: Int
    /// The new bytes.
    public var bytes: [UInt8]

    /// Creates a patch.
    public init(address: Int, bytes: [UInt8]) {
        self.address = address
        self.bytes = bytes
    }
}

/// A line-preserving patch that cannot be applied.
public enum HexPatchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No record of the file holds this address, so there is no line to rewrite.
    case addressNotInFile(address: Int)

    /// Plain-words reason.
    public var description: String {
        switch self {
        case .addressNotInFile(let address):
            return
                "no record of the file holds address \(hex32(address)); a line-preserving patch can only change bytes the file already has"
        }
    }
}

/// The outcome of a line-preserving patch.
public struct PatchedHexFile: Sendable {
    /// The patched file (text, payloads and memory all updated).
    public var file: IntelHexFile
    /// Line numbers of the records whose text changed, ascending.
    public var rewrittenLines: [Int]
}

extension IntelHexFile {
    /// Applies `patches` by rewriting only the records that hold a changed byte: their data digits
    /// and checksum. Every other byte of the file stays as it was — line endings, digit case, record
    /// order and lengths, blank lines, start record. A byte held by two identical overlapping
    /// records is changed in both. Later patches win where patches overlap.
    public func patchingRecords(_ patches: [MemoryPatch]) throws(HexPatchError) -> PatchedHexFile {
        var result = self
        var touchedRecords = Set<Int>()
        var defaultLowercase: Bool?

        for patch in patches {
            for (index, newByte) in patch.bytes.enumerated() {
                let address = patch.address + index
                let holders = placements(covering: address)
                guard !holders.isEmpty else { throw .addressNotInFile(address: address) }
                for placement in holders {
                    let record = records[placement.recordIndex]
                    let indexInRecord = placement.payloadOffset + (address - placement.address)
                    let storeIndex = record.payloadRange.lowerBound + indexInRecord
                    guard result.payloadStore[storeIndex] != newByte else { continue }
                    result.payloadStore[storeIndex] = newByte
                    touchedRecords.insert(placement.recordIndex)
                    let lowercase =
                        recordDigitCase(record)
                        ?? {
                            if defaultLowercase == nil { defaultLowercase = fileDigitCaseIsLower() }
                            return defaultLowercase!
                        }()
                    result.writeDigits(newByte, at: record.textOffset + 9 + 2 * indexInRecord, lowercase: lowercase)
                }
            }
        }

        for recordIndex in touchedRecords {
            let record = records[recordIndex]
            var sum = UInt8(truncatingIfNeeded: record.byteCount)
            sum &+= UInt8(record.addressField >> 8) &+ UInt8(record.addressField & 0xFF) &+ record.type.rawValue
            for byte in result.payloadStore[record.payloadRange] { sum &+= byte }
            let lowercase = recordDigitCase(record) ?? defaultLowercase ?? fileDigitCaseIsLower()
            result.writeDigits(0 &- sum, at: record.textOffset + 9 + 2 * record.byteCount, lowercase: lowercase)
        }

        for patch in patches {
            // Every address was found in a record above, so it lies inside the 4 GiB space.
            try? result.memory.write(patch.bytes, at: patch.address)
        }
        return PatchedHexFile(file: result, rewrittenLines: touchedRecords.map { records[$0].line }.sorted())
    }

    /// The data placements that hold `address` (more than one only for identical overlaps).
    func placements(covering address: Int) -> [Placement] {
        var low = 0
        var high = placements.count
        while low < high {  // first placement starting after `address`
            let middle = (low + high) / 2
            if placements[middle].address > address { high = middle } else { low = middle + 1 }
        }
        var found: [Placement] = []
        var index = low - 1
        // A record carries at most 255 bytes, so no placement starting further back can reach.
        while index >= 0, placements[index].address > address - 256 {
            if address < placements[index].end { found.append(placements[index]) }
            index -= 1
        }
        return found
    }

    /// `true` for lower-case, `false` for upper-case, `nil` when the record has no letter digits.
    private func recordDigitCase(_ record: HexRecord) -> Bool? {
        let end = record.textOffset + 11 + 2 * record.byteCount
        for offset in (record.textOffset + 1)..<end {
            let (upper, lower) = HexDigits.isLetterDigit(text[offset])
            if upper { return false }
            if lower { return true }
        }
        return nil
    }

    /// The case of the first letter digit in the file; upper-case when there is none.
    private func fileDigitCaseIsLower() -> Bool {
        for record in records {
            if let lower = recordDigitCase(record) { return lower }
        }
        return false
    }

    private mutating func writeDigits(_ value: UInt8, at offset: Int, lowercase: Bool) {
        let alphabet = lowercase ? HexDigits.lower : HexDigits.upper
        text[offset] = alphabet[Int(value >> 4)]
        text[offset + 1] = alphabet[Int(value & 0x0F)]
    }
}
