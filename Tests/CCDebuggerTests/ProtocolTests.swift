import CCDebuggerEmulator
import IntelHex
import TestSupport
import Testing

@testable import CCDebugger

/// Frames and sequences byte for byte against cc-debugger-protocol.md §3.3, §7 and §9.
struct FrameTests {
    static func bytes(_ text: String) -> [UInt8] { text.split(separator: " ").map { UInt8($0, radix: 16)! } }

    @Test func statusEraseAndConfigFrames() {
        #expect(Frames.readStatus == Self.bytes("1F 34"))
        #expect(Frames.chipErase == Self.bytes("1C 14"))
        #expect(Frames.writeConfig(0x22) == Self.bytes("4C 1D 22"))
    }

    @Test func xdataReadTemplateT5() {
        let one = Frames.readXdata(0x6276, count: 1)
        #expect(one.count == 41)
        #expect(
            one
                == Self.bytes(
                    "40 55 00 72 56 E5 92 BE 57 75 92 00 74 56 E5 83 76 56 E5 82 BE 57 90 62 76 4F 55 E0 5E 55 A3 D4 57 90 C2 57 75 92 90 56 74"
                ))
        #expect(Frames.readXdata(0, count: 2).count == 47)
        let long = Frames.readXdata(0, count: 128)
        #expect(long.count == 803)
        // Flush on the 64th, the 128th (last) item only.
        let items = stride(from: 25, to: 25 + 6 * 128, by: 6).map { long[$0] }
        #expect(items.enumerated().filter { $0.element == 0x4F }.map(\.offset) == [63, 127])
    }

    @Test func xdataWriteTemplateT6() {
        #expect(Frames.writeXdata(0x70D6, [0x02]).count == 45)
        #expect(
            Frames.writeXdata(0x70D6, [0x02])[20..<35]
                == Self.bytes("BE 57 90 70 D6 8E 56 74 02 5E 55 F0 5E 55 A3")[...])
        #expect(Frames.writeXdata(0, [UInt8](repeating: 0, count: 8)).count == 115)
        #expect(Frames.writeXdata(0, [UInt8](repeating: 0, count: 32)).count == 355)
        #expect(Frames.writeXdata(0, [UInt8](repeating: 0, count: 1024)).count == 10_275)
    }

    @Test func codeReadBurstAndChipInfo() {
        #expect(Frames.codeReadBegin.count == 28)
        #expect(Frames.codeReadEnd.count == 18)
        #expect(Frames.readCode(count: 128).count == 1152)
        #expect(Frames.burstWrite1024([UInt8](repeating: 0xAB, count: 1024)).prefix(3) == [0xEE, 0x84, 0x00])
        #expect(Frames.burstWrite1024([UInt8](repeating: 0xAB, count: 1024)).count == 1027)
        #expect(Frames.setFMAP(3) == Self.bytes("BE 57 75 9F 03"))
        let text = Frames.chipInfoText(target: "CC2541", debuggerID: 0x8662)
        #expect(text.count == 0x30)
        #expect(
            String(decoding: text, as: UTF8.self) == "CC2541          DID: 8662" + String(repeating: " ", count: 23))
        #expect(CC254xSession.burstDescriptors(.burst).prefix(8) == Self.bytes("62 60 00 00 04 00 1F 11")[...])
        #expect(CC254xSession.burstDescriptors(.burst)[16..<24] == Self.bytes("00 00 62 73 04 00 12 42")[...])
        #expect(CC254xSession.crc(Array("123456789".utf8)) == 0xAEE7)  // CRC-16/CMS, as the chip seeds it
    }

    /// The connect sequence as it crosses the wire (§9 steps 5–13, with identification batched).
    @Test func connectSequenceOnTheWire() throws {
        let debugger = EmulatedDebugger()
        debugger.logging = true
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        let state = try session.open()
        _ = try session.connect(targetID: state.targetID, debuggerID: 0x8662)
        let log = debugger.log.map {
            "\($0.kind) \($0.bytes.prefix(4).map { String($0, radix: 16) }.joined(separator: " "))"
        }
        #expect(
            log.prefix(7) == [
                "ctrl-in c0 ", "ctrl-out cf 1 0 ", "ctrl-out c5 0 0 ", "ctrl-out c8 1 0 43 43 32 35",
                "ctrl-out c9 0 1 ",
                "out 1f 34", "in 22",
            ])
        #expect(debugger.log[7].kind == "out")
        #expect(debugger.log[7].bytes.prefix(3) == [0x4C, 0x1D, 0x22])
        #expect(debugger.log[8].bytes == [0x40, 0x07, 0x13, 0x41])  // CHIPINFO0, CHIPINFO1, CHVER, CHIPID
    }

    /// One block, proven framing: arm the burst channel; the burst alone (no FCTL read: no write
    /// runs yet) — then start the write with its status read.
    @Test func programmingAKiBSendsTheBurstAlone() throws {
        let debugger = EmulatedDebugger()
        debugger.chip!.busyPolls = 0
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        let state = try session.open()
        _ = try session.connect(targetID: state.targetID)
        debugger.logging = true
        let image = try IntelHex.MemoryImage(bytes: [UInt8](repeating: 0x5A, count: 1024), at: 0x400)
        try session.program(try FlashPlan(image: image, chip: cc2541))
        #expect(debugger.log.map(\.kind) == ["out", "out", "out", "out", "in"])
        #expect(debugger.log[1].bytes == [0xBE, 0x57, 0x75, 0xD6, 0x02])  // DMAARM := 0x02 (burst → buffer 0)
        #expect(debugger.log[2].bytes.count == 1027 && debugger.log[2].bytes.prefix(3) == [0xEE, 0x84, 0x00])
        #expect(debugger.chip!.flash[0x400..<0x800].allSatisfy { $0 == 0x5A })
    }

    /// One block, packed framing: one OUT (arm the burst channel, burst; the first block has no
    /// FCTL read), then the write started with its status read.
    @Test func programmingAKiBPackedIsOneOutAndOneIn() throws {
        let debugger = EmulatedDebugger()
        debugger.chip!.busyPolls = 0
        let session = CC254xSession(transport: debugger, chips: try BundledData.boards().chips)
        session.framing = .packed
        let state = try session.open()
        _ = try session.connect(targetID: state.targetID)
        debugger.logging = true
        let image = try IntelHex.MemoryImage(bytes: [UInt8](repeating: 0x5A, count: 1024), at: 0x400)
        try session.program(try FlashPlan(image: image, chip: cc2541))
        let kinds = debugger.log.map(\.kind)
        #expect(kinds == ["out", "out", "out", "in"])  // DMA setup; block; start write; status
        #expect(debugger.log[1].bytes.count == 5 + 1027)
        let block = debugger.log[1].bytes
        #expect(block.prefix(5) == [0xBE, 0x57, 0x75, 0xD6, 0x02])  // DMAARM := 0x02 (burst → buffer 0)
        #expect(block[5..<8] == [0xEE, 0x84, 0x00])
        #expect(debugger.chip!.flash[0x400..<0x800].allSatisfy { $0 == 0x5A })
    }
}
