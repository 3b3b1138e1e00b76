import StructuredText
import TargetData
import TestSupport
import Testing

@testable import Checksums
@testable import FirmwareTemplate

struct DigestTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (String(repeating: "a", count: 1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
        // 55 bytes: the padding fits the last block exactly; 56 bytes: it needs one more.
        (String(repeating: "x", count: 55), "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"),
        (String(repeating: "y", count: 56), "4877e564e5e36e367c7c8d59670774becd3350610b6df4c399c9fa9b66da5813"),
    ])
    func sha256KnownAnswers(message: String, digest: String) {
        #expect(SHA256.hexDigest(Array(message.utf8)) == digest)
        // The Swift rounds, whatever the processor has.
        var portable = SHA256(accelerated: false)
        portable.update(Array(message.utf8))
        #expect(portable.finalize().map { String(format: "%02x", $0) }.joined() == digest)
    }

    /// The processor's SHA instructions (where there are any) and the Swift rounds give the same
    /// digest for every length around the block and padding edges and for long, many-block inputs,
    /// fed in one piece and in odd pieces.
    @Test func sha256AcceleratedAndPortableAgree() {
        var generator = SeededGenerator(seed: 2541, stream: 0)
        let data = (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for length in Array(0...200) + [511, 512, 513, 4_095, 4_096, 19_999, 20_000] {
            let message = Array(data.prefix(length))
            var fast = SHA256()
            var portable = SHA256(accelerated: false)
            for chunk in stride(from: 0, to: length, by: 97) {
                let piece = Array(message[chunk..<min(chunk + 97, length)])
                fast.update(piece)
                portable.update(piece)
            }
            #expect(fast.finalize() == portable.finalize(), "length \(length)")
        }
    }

    /// On a processor with the SHA extensions the fast path is the one taken (so the comparison
    /// above compares two implementations, not one with itself).
    @Test(.enabled(if: SHA256.hardwareAcceleration)) func sha256UsesTheProcessorsInstructions() {
        #expect(SHA256().accelerated)
        #expect(!SHA256(accelerated: false).accelerated)
    }

    @Test func sha256StreamingMatchesOneShotAtEveryBlockEdge() {
        let data = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        for length in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 300] {
            var hasher = SHA256()
            let message = Array(data.prefix(length))
            for chunk in stride(from: 0, to: message.count, by: 7) {
                hasher.update(Array(message[chunk..<min(chunk + 7, message.count)]))
            }
            #expect(hasher.finalize() == SHA256.hash(message), "length \(length)")
        }
    }

    @Test(.enabled(if: SharedFixtures.available)) func sha256MatchesTheCorpusREADME() throws {
        let bytes = try SharedFixtures.bytes(
            SharedFixtures.directory!.appendingPathComponent(
                "corpus/01_ghostyu-SimpleBLEPeripheral-ibeacon-CC2541-IAR.hex"))
        #expect(SHA256.hexDigest(bytes) == "4937a9ad017a7af45e3ca5224695464ff70f98a7e46109ac964b6a3bde3903f3")
    }

    @Test func crc16UMTSKnownAnswers() {
        #expect(CRC16UMTS.checksum(Array("123456789".utf8)) == 0xFEE8)
        let seed: [UInt8] = [
            0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15, 0x76, 0x34, 0xA4, 0x85, 0x17, 0x32, 0x4B, 0x7D, 0xAB,
            0x44, 0xD5, 0x05, 0xD8, 0xA2, 0x4C, 0x60, 0x00, 0x01, 0x00, 0x02, 0xCD,
        ]
        #expect(CRC16UMTS.checksum(seed) == 0x04BC)
    }
}

struct BoardCatalogTests {
    static func loadBundled() throws -> BoardCatalog { try BundledData.boards() }

    @Test func everyBundledBoardAndChipLoads() throws {
        let catalog = try Self.loadBundled()
        #expect(
            catalog.chips.map(\.name) == [
                "CC2530F32", "CC2530F64", "CC2530F128", "CC2530F256", "CC2531F128", "CC2531F256", "CC2533F32",
                "CC2533F64", "CC2533F96", "CC2543F18", "CC2543F32", "CC2544F32", "CC2545F18", "CC2545F32",
                "CC2541F256", "CC2541F128", "CC2540F256", "CC2540F128", "CC2510F8", "CC2510F16", "CC2510F32",
                "CC2511F8", "CC2511F16", "CC2511F32", "CC1110F8", "CC1110F16", "CC1110F32", "CC1111F8", "CC1111F16",
                "CC1111F32", "CC2430F32", "CC2430F64", "CC2430F128", "CC2431F32", "CC2431F64", "CC2431F128",
            ])
        #expect(catalog.boards.map(\.name) == ["cc2541-keyfob", "cc2541-sensortag", "hm10", "smartrf05eb-cc2541em"])
        let f256 = try #require(catalog.chip(named: "cc2541f256"))
        #expect(f256.secondaryAddress == 0x3FFEA..<0x3FFF0)
        #expect(f256.lockBits == 0x3FFF0..<0x40000)
        #expect(f256.nvRange == 0x3E800..<0x3F800)
        #expect(f256.pageCount == 128)
        #expect(try #require(catalog.chip(named: "CC2541F128")).nvRange == 0x1E800..<0x1F800)
        #expect(f256.reservedUse(of: 0x3E900) == "the NV pages the BLE stack writes at first boot")
        #expect(f256.reservedUse(of: 0x3FFF5) == "the lock bits")
        #expect(f256.reservedUse(of: 0x32A) == nil)
        for board in catalog.boards {
            #expect(board.defaultTemplate == "cc2541-ibeacon")
            #expect(["0451:16A2", "0451:16A0"].contains(board.debugger.usb))
        }
    }

    static let goodChips = """
        {"format": 1, "chips": [{"name": "CC2541F256", "family": "CC2541", "chipId": "0x41", "debuggerTargetId": "0x2541",
        "flashSize": "0x40000", "flashSizeCode": 4, "pageSize": 2048, "ramSize": 8192, "primaryAddress": {"xdata": "0x780E", "length": 6},
        "secondaryAddress": {"address": "0x3FFEA", "length": 6}, "lockBits": {"address": "0x3FFF0", "length": 16},
        "nvPages": {"first": 125, "count": 2}}]}
        """

    static func load(chips: String = goodChips, boards: [String: String]) throws -> BoardCatalog {
        var files = [(name: "chips.json", bytes: Array(chips.utf8))]
        for (name, text) in boards.sorted(by: { $0.key < $1.key }) { files.append((name, Array(text.utf8))) }
        return try BoardCatalog.load(files: files, directory: "boards")
    }

    static let board =
        #"{"format": 1, "name": "b", "title": "B", "chip": "CC2541F256", "debugger": {"name": "CC Debugger", "usb": "0451:16A2"}, "measuredPower": {"dBm": -59, "source": "s"}, "defaultTemplate": "t"}"#

    @Test(arguments: [
        (
            #"{"format": 2, "name": "b"}"#,
            "boards/b.json:1:12: format: version 2 is not supported; this ccbeacon reads version 1"
        ),
        (
            board.replacingOccurrences(of: "\"t\"}", with: "\"t\", \"colour\": 1}"),
            "boards/b.json:1:201: colour: unknown key; the keys here are: chip, debugger, defaultTemplate, format, measuredPower, name, notes, title"
        ),
        (
            board.replacingOccurrences(of: "CC2541F256", with: "CC9999"),
            "boards/b.json:1:50: chip: 'CC9999' is not in chips.json; known: CC2541F256"
        ),
        (
            board.replacingOccurrences(of: "0451:16A2", with: "0451-16A2"),
            "boards/b.json:1:107: debugger.usb: '0451-16A2' is not a USB ID; write VVVV:PPPP in hex"
        ),
        (
            board.replacingOccurrences(of: "0451:16A2", with: "1234:ABCD"),
            "boards/b.json:1:107: debugger.usb: '1234:ABCD' is not a debugger ccbeacon drives; it drives CC Debugger (0451:16A2), SmartRF05EB (0451:16A0) and SmartRF04EB (11A0:DB20)"
        ),
        (
            board.replacingOccurrences(of: "\"name\": \"b\"", with: "\"name\": \"c\""),
            "boards/b.json:1:23: name: must match the file name (b)"
        ),
        (
            board.replacingOccurrences(of: ", \"defaultTemplate\": \"t\"", with: ""),
            "boards/b.json:1:1: defaultTemplate: is missing"
        ),
        (
            board.replacingOccurrences(of: "\"source\": \"s\"", with: "\"source\": \" \""),
            "boards/b.json:1:161: measuredPower.source: is empty; say where the figure comes from (or that it is the generic default)"
        ),
        (
            board.replacingOccurrences(of: "-59", with: "59"),
            "boards/b.json:1:146: measuredPower.dBm: 59 is out of range; allowed: -127…20"
        ),
    ])
    func badBoardFilesNameFileLineAndKey(text: String, message: String) {
        #expect { try Self.load(boards: ["b.json": text]) } throws: { error in
            (error as? DataFileError)?.description == message
        }
    }

    @Test func chipFactsAreCrossChecked() {
        let badLock = Self.goodChips.replacingOccurrences(
            of: "\"0x3FFF0\", \"length\": 16", with: "\"0x3FF00\", \"length\": 16")
        #expect { try Self.load(chips: badLock, boards: [:]) } throws: { error in
            (error as? DataFileError)?.message == "must be the last 16 bytes of flash (end at 0x40000)"
        }
        let badNV = Self.goodChips.replacingOccurrences(of: "\"first\": 125", with: "\"first\": 127")
        #expect { try Self.load(chips: badNV, boards: [:]) } throws: { error in
            (error as? DataFileError)?.message == "must lie below the last page (page 127)"
        }
        #expect(throws: DataFileError.self) { try BoardCatalog.load(files: [], directory: "boards") }
        #expect { try Self.load(chips: #"{"format": 1, "chips": []}"#, boards: [:]) } throws: { error in
            (error as? DataFileError)?.message == "lists no chip; ccbeacon programs only the chips listed here"
        }
    }

    /// How a chip is written is checked where it is written down, with its place in the file.
    @Test(arguments: [
        (
            #"{"path": "dma", "blockSize": 1024, "descriptor": "0x0800"}"#,
            "chips[0].flashWrite.path: must be burst or xdata, not 'dma'"
        ),
        (
            #"{"path": "burst", "blockSize": 1024, "descriptor": "0x2000"}"#,
            "chips[0].flashWrite: the descriptors at 0x2000 lie beyond the chip's 8192 bytes of SRAM"
        ),
        (
            #"{"path": "xdata", "blockSize": 512, "descriptor": "0x0100"}"#,
            "chips[0].flashWrite: the descriptors at 0x100 overlap the block buffers (up to 0x200)"
        ),
        (#"{"path": "xdata", "blockSize": 512}"#, "chips[0].flashWrite.descriptor: is missing"),
    ])
    func aWrongWayOfWritingIsSaidWhere(flashWrite: String, message: String) {
        let chips = Self.goodChips.replacingOccurrences(
            of: "\"nvPages\"", with: "\"flashWrite\": \(flashWrite), \"nvPages\"")
        #expect { try Self.load(chips: chips, boards: [:]) } throws: { error in
            "\(error)".hasPrefix("boards/chips.json:") && "\(error)".hasSuffix(message)
        }
    }

    /// The debugger tells chips apart by target ID and CHIPINFO0.FLASHSIZE code: a second chip
    /// alike in both could never be chosen, so the file is refused.
    @Test func twoChipsADebuggerCannotTellApartAreRefused() throws {
        let chip = try #require(Self.goodChips.firstRange(of: "{\"name\"")).lowerBound
        let object = String(Self.goodChips[chip...].dropLast(2))
        let twin = object.replacingOccurrences(of: "CC2541F256", with: "CC2541X")
        let twins = Self.goodChips.replacingOccurrences(of: object, with: object + ", " + twin)
        #expect { try Self.load(chips: twins, boards: [:]) } throws: { error in
            (error as? DataFileError)?.message
                == "chip CC2541X has the debugger target ID and FLASHSIZE code of CC2541F256; a debugger could not tell them apart"
        }
        // 0 is what every locked chip reports: it names no chip.
        let zero = Self.goodChips.replacingOccurrences(of: "\"flashSizeCode\": 4", with: "\"flashSizeCode\": 0")
        #expect { try Self.load(chips: zero, boards: [:]) } throws: { error in
            (error as? DataFileError)?.keyPath == "chips[0].flashSizeCode"
        }
        let distinct = twins.replacingOccurrences(
            of: "\"CC2541X\", \"family\": \"CC2541\", \"chipId\": \"0x41\", \"debuggerTargetId\": \"0x2541\"",
            with: "\"CC2541X\", \"family\": \"CC2541\", \"chipId\": \"0x41\", \"debuggerTargetId\": \"0x2542\"")
        #expect(try Self.load(chips: distinct, boards: [:]).chips.count == 2)
    }

    /// A chip with the older register map (the CC251x/111x): told by target ID and the size the
    /// user gives, its SRAM at the top of XDATA, its lock byte not in flash.
    static func olderChip(_ name: String = "CC2510F16", size: String = "0x4000", extra: String = "") -> String {
        """
        {"name": "\(name)", "family": "CC2510", "chipId": "0x81", "debuggerTargetId": "0x2510", "registers": "sfr",
        "wordSize": 2, "flashSize": "\(size)", "pageSize": 1024, "ramSize": 2048\(extra),
        "flashWrite": {"path": "xdata", "blockSize": 512, "buffer": "0xF800", "descriptor": "0xFA00"}}
        """
    }

    @Test func anOlderChipLoads() throws {
        let catalog = try Self.load(
            chips: #"{"format": 1, "chips": ["# + Self.olderChip() + ", " + Self.olderChip("CC2510F32", size: "0x8000")
                + "]}",
            boards: [:])
        let chip = catalog.chips[0]
        #expect(chip.registerMap == .sfr && chip.flashWordSize == 2 && chip.flashSizeCode == 0)
        #expect(chip.lockBits == nil && chip.ram == 0xF800..<0x10000)
        #expect(chip.flashWriting.buffers == [0xF800])
        #expect(chip.reservedUse(of: 0x3FFF) == nil, "no last page is reserved without lock bits in flash")
        #expect(
            Chip.reporting(targetID: 0x2510, flashSizeCode: 0, flashSize: 0x8000, in: catalog.chips)?.name
                == "CC2510F32")
        #expect(Chip.reporting(targetID: 0x2510, flashSizeCode: 0, in: catalog.chips) == nil)
    }

    /// A CC243x: the older map with banks; no factory address, its secondary one ending the flash
    /// (no lock bits there), SRAM at 0xE000, verified by reading back.
    static func bankedChip(extra: String = "", secondary: String = "0x7FF8") -> String {
        """
        {"name": "CC2430F32", "family": "CC2430", "chipId": "0x85", "debuggerTargetId": "0x2430",
        "registers": "sfr-banked", "wordSize": 4, "flashSize": "0x8000", "pageSize": 2048, "ramSize": 8192,
        "secondaryAddress": {"address": "\(secondary)", "length": 8}\(extra),
        "flashWrite": {"path": "xdata", "blockSize": 1024, "buffer": "0xE000", "descriptor": "0xE400"}}
        """
    }

    @Test func aBankedOlderChipLoads() throws {
        let chip = try Self.load(chips: #"{"format": 1, "chips": ["# + Self.bankedChip() + "]}", boards: [:]).chips[0]
        #expect(chip.registerMap == .sfrBanked && chip.registerMap.isOlder && !chip.registerMap.verifiesByCRC)
        #expect(chip.secondaryAddress == 0x7FF8..<0x8000 && chip.primaryAddress == nil && chip.lockBits == nil)
        #expect(chip.ram == 0xE000..<0x10000 && !chip.reportsFlashSize)
        #expect(chip.reservedUse(of: 0x7FF9) == "the secondary address")
        #expect(chip.reservedUse(of: 0x7FF7) == nil)
    }

    @Test(arguments: [
        (
            #""address": "0x7FF8""#, #""address": "0x7FF0""#, "chips[0].secondaryAddress",
            "must be the last bytes of flash (end at 0x8000)"
        ),
        (
            #""ramSize": 8192"#, #""ramSize": 8192, "primaryAddress": {"xdata": "0xDF43", "length": 8}"#,
            "chips[0].primaryAddress", "has no factory address"
        ),
        (#""wordSize": 4, "#, "", "chips[0].wordSize", "4 on the CC243x"),
        (#""wordSize": 4"#, #""wordSize": 2"#, "chips[0].wordSize", "the CC243x flash word is 4 bytes"),
        // FADDR counts 65536 words: 256 KiB of 4-byte words (a larger chip trapped the flasher).
        (
            #""flashSize": "0x8000""#, #""flashSize": "0x80000""#, "chips[0].flashSize",
            "FADDR reaches 65536 words of 4 bytes: at most 0x40000"
        ),
    ])
    func aBankedOlderChipWithFactsItCannotHaveIsRefused(from: String, to: String, keyPath: String, message: String) {
        let chip = Self.bankedChip().replacingOccurrences(of: from, with: to)
        #expect {
            try Self.load(chips: #"{"format": 1, "chips": ["# + chip + "]}", boards: [:])
        } throws: { error in
            let error = error as? DataFileError
            return error?.keyPath == keyPath && error?.message.contains(message) == true
        }
    }

    @Test(arguments: [
        (#", "flashSizeCode": 2"#, "chips[0].flashSizeCode", "does not report its flash size"),
        (#", "lockBits": {"address": "0x3FF0", "length": 16}"#, "chips[0].lockBits", "in the information page"),
        (#", "registers": "banked""#, "chips[0].registers", "must be xreg, sfr or sfr-banked, not 'banked'"),
        (
            #", "secondaryAddress": {"address": "0x3FF8", "length": 8}"#, "chips[0].secondaryAddress",
            "keeps no address"
        ),
    ])
    func anOlderChipWithFactsOfTheOtherMapIsRefused(extra: String, keyPath: String, message: String) {
        var chip = Self.olderChip(extra: extra)
        if extra.contains("registers") { chip = chip.replacingOccurrences(of: #""registers": "sfr","#, with: "") }
        #expect {
            try Self.load(chips: #"{"format": 1, "chips": ["# + chip + "]}", boards: [:])
        } throws: { error in
            let error = error as? DataFileError
            return error?.keyPath == keyPath && error?.message.contains(message) == true
        }
    }

    @Test(arguments: [
        (#""buffer": "0xF800", "descriptor": "0xFA00""#, #""buffer": "0xF000", "descriptor": "0xFA00""#, "outside"),
        (#""blockSize": 512"#, #""blockSize": 384"#, "divide the page"),
        (#""descriptor": "0xFA00""#, #""descriptor": "0xFFFC""#, "beyond"),
    ])
    func anOlderChipsWritingMustFitItsSRAM(from: String, to: String, message: String) {
        let chip = Self.olderChip().replacingOccurrences(of: from, with: to)
        #expect {
            try Self.load(chips: #"{"format": 1, "chips": ["# + chip + "]}", boards: [:])
        } throws: { error in
            (error as? DataFileError)?.message.contains(message) == true
        }
    }

    /// Facts no chip of the map could have are refused where they are written: a burst path or a
    /// factory address on the older map, a flash word it does not state or one the CC253x/4x do not
    /// have, SRAM that would reach the registers, buffers that run past SRAM's end.
    @Test(arguments: [
        (
            olderChip().replacingOccurrences(of: #""path": "xdata""#, with: #""path": "burst""#)
                .replacingOccurrences(of: #""blockSize": 512"#, with: #""blockSize": 1024"#), "chips[0].flashWrite",
            "no BURST_WRITE"
        ),
        (olderChip().replacingOccurrences(of: #""wordSize": 2, "#, with: ""), "chips[0].wordSize", "is missing"),
        (
            olderChip().replacingOccurrences(of: #""wordSize": 2"#, with: #""wordSize": 3"#), "chips[0].wordSize",
            "2 or 4"
        ),
        (
            olderChip(extra: #", "primaryAddress": {"xdata": "0x780C", "length": 8}"#), "chips[0].primaryAddress",
            "no factory address"
        ),
        (
            olderChip().replacingOccurrences(of: #""ramSize": 2048"#, with: #""ramSize": 8448"#), "chips[0].ramSize",
            "0xDF00"
        ),
        (
            olderChip().replacingOccurrences(of: #""buffer": "0xF800""#, with: #""buffer": "0xFFFF""#),
            "chips[0].flashWrite", "outside"
        ),
    ])
    func factsNoChipOfItsMapHasAreRefused(chip: String, keyPath: String, message: String) {
        #expect {
            try Self.load(chips: #"{"format": 1, "chips": ["# + chip + "]}", boards: [:])
        } throws: { error in
            let error = error as? DataFileError
            return error?.keyPath == keyPath && error?.message.contains(message) == true
        }
        let xreg = Self.goodChips.replacingOccurrences(
            of: #""pageSize": 2048"#, with: #""wordSize": 2, "pageSize": 2048"#)
        #expect { try Self.load(chips: xreg, boards: [:]) } throws: { error in
            (error as? DataFileError)?.message == "the CC253x/4x flash word is 4 bytes"
        }
    }

    /// One debugger target ID is one family: a chip of another register map under it is refused.
    @Test func oneTargetIDIsOneRegisterMap() {
        let mixed = Self.olderChip().replacingOccurrences(
            of: #""debuggerTargetId": "0x2510""#, with: #""debuggerTargetId": "0x2541""#)
        let chips = String(Self.goodChips.dropLast(2)) + ", " + mixed + "]}"
        #expect { try Self.load(chips: chips, boards: [:]) } throws: { error in
            (error as? DataFileError)?.message.contains("has the debugger target ID of CC2541F256 but other registers")
                == true
        }
    }

    @Test func twoOlderChipsOfOneSizeAreRefused() {
        let twins = #"{"format": 1, "chips": ["# + Self.olderChip() + ", " + Self.olderChip("CC2510X") + "]}"
        #expect { try Self.load(chips: twins, boards: [:]) } throws: { error in
            (error as? DataFileError)?.message.contains("chip CC2510X has the debugger target ID") == true
        }
    }
}
