import CCDebugger
import CCDebuggerEmulator
import FirmwareTemplate
import Foundation
import IntelHex
import TargetData

/// `ccbeacon-bench transfers IMAGE.hex [proven|packed]`: USB transfers and bytes per KiB for
/// program and CRC verify of an image with `framing`, through the in-process emulator, as JSON.
func transferBenchmark(_ path: String, framing: USBFraming) throws {
    let image = try IntelHexFile(text: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))).memory
    // The shipped chip facts; scripts/bench runs this from the checkout.
    let chip = try shippedCC2541()
    let debugger = EmulatedDebugger()
    // Flash writes finish before the next burst arrives, as on hardware at the default speed.
    debugger.chip!.busyPolls = 0
    let counting = CountingTransport(debugger)
    let session = CC254xSession(transport: counting, chips: [chip])
    session.framing = framing
    let state = try session.open()
    let identity = try session.connect(targetID: state.targetID)
    // The programmer's events split the transfers into erase, program (+ the empty identity
    // read-back) and verify.
    var program = counting.statistics
    var verify = counting.statistics
    let result = try FlashProgrammer(session: session).flash(
        image, targetID: state.targetID, identity: identity, options: FlashOptions(verify: .crc, resetToRun: false)
    ) { event in
        switch event {
        case .erased: counting.reset()
        case .identityReadBack:
            program = counting.statistics
            counting.reset()
        case .verified: verify = counting.statistics
        default: break
        }
    }
    // The reference client writes every 1 KiB block from 0 to the image's end and CRC-verifies
    // the image's bytes in chunks of at most 1 KiB (cc-debugger-protocol.md §7.3, §7.6, §8).
    let referenceBlocks = ((image.endAddress ?? 0) + 1023) / 1024
    let verifyChunks = image.segments.reduce(0) { total, segment in
        var count = 0
        var start = segment.start
        while start < segment.end {
            start = min(segment.end, start + 1024, (start / 0x8000 + 1) * 0x8000)
            count += 1
        }
        return total + count
    }
    let kib = Double(image.byteCount) / 1024
    print(
        """
        {"image": "\(path)", "framing": "\(framing.rawValue)", "dataKiB": \(kib), "blocksWritten": \(result.report.blocksWritten), \
        "programTransfers": \(program.transfers), "programBytesOut": \(program.bytesOut), \
        "verifyTransfers": \(verify.transfers), "verifyBytesOut": \(verify.bytesOut), \
        "referenceProgramTransfers": \(6 * referenceBlocks), "referenceVerifyTransfers": \(9 * verifyChunks)}
        """)
}
