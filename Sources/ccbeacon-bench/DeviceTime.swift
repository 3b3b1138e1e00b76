import CCDebugger
import CCDebuggerEmulator
import Foundation
import IntelHex
import TargetData

/// A benchmark that cannot go on, in words.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

/// The shipped chip and board facts (`boards/` of the checkout scripts/bench runs in).
func shippedCatalog() throws -> BoardCatalog {
    let boards = FileManager.default.currentDirectoryPath + "/boards"
    let files = try FileManager.default.contentsOfDirectory(atPath: boards).sorted().map {
        (name: $0, bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: boards + "/" + $0))))
    }
    return try BoardCatalog.load(files: files, directory: boards)
}

/// The shipped chip facts for the CC2541F256.
func shippedCC2541() throws -> Chip {
    guard let chip = try shippedCatalog().chip(named: "CC2541F256") else {
        throw BenchFailure(description: "boards/chips.json has no CC2541F256")
    }
    return chip
}

/// A dense 256 KiB image (pseudo-random bytes) whose last 16 bytes, the lock bits, stay 0xFF: the
/// whole flash written, nothing locked.
func fullFlashImage() throws -> MemoryImage {
    var state: UInt32 = 2541
    var bytes = (0..<(256 * 1024)).map { _ -> UInt8 in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
    }
    for index in (bytes.count - 16)..<bytes.count { bytes[index] = 0xFF }
    return try MemoryImage(bytes: bytes, at: 0)
}

/// What one client's job took on the model: its transfers and the device time of each phase.
struct ModelledJob {
    var statistics = TransferStatistics()
    var phases: [String: Duration] = [:]
    var total = Duration.zero

    var json: String {
        func ms(_ phase: String) -> String { String(format: "%.1f", milliseconds(phases[phase] ?? .zero)) }
        return """
            {"transfers": \(statistics.transfers), "bytesOut": \(statistics.bytesOut), \
            "connectMs": \(ms("connect")), "eraseMs": \(ms("erase")), "writeMs": \(ms("write")), \
            "verifyMs": \(ms("verify")), "totalMs": \(String(format: "%.1f", milliseconds(total)))}
            """
    }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
}

/// Splits a job's device time into phases as it marks their starts.
final class PhaseClock {
    let clock: VirtualDeviceClock
    var current: (name: String, start: Duration)?
    var phases: [String: Duration] = [:]
    let start: Duration

    init(_ clock: VirtualDeviceClock) {
        self.clock = clock
        start = clock.now
    }

    func begin(_ name: String) {
        let now = clock.now
        if let current { phases[current.name, default: .zero] += now - current.start }
        current = (name, now)
    }

    func finish() -> (phases: [String: Duration], total: Duration) {
        begin("")
        return (phases, clock.now - start)
    }
}

/// ccbeacon's `flash` (erase, program, CRC verify, reset to run) on the timed emulator.
func ccbeaconJob(_ image: MemoryImage, chip: Chip, timing: DeviceTiming) throws -> ModelledJob {
    let clock = VirtualDeviceClock()
    let debugger = EmulatedDebugger(timing: timing, clock: clock)
    let counting = CountingTransport(debugger)
    let marks = PhaseClock(clock)
    marks.begin("connect")
    let session = CC254xSession(transport: counting, chips: [chip])
    let state = try session.open()
    let identity = try session.connect(targetID: state.targetID)
    let options = FlashOptions(verify: .crc, allowLastPage: image.endAddress ?? 0 > chip.flashSize - chip.pageSize)
    _ = try FlashProgrammer(session: session).flash(
        image, targetID: state.targetID, identity: identity, options: options
    ) { event in
        switch event {
        case .started: marks.begin("erase")
        case .erased: marks.begin("write")
        case .identityReadBack: marks.begin("verify")
        case .verified: marks.begin("reset")
        default: break
        }
    }
    try check(debugger, holds: image)
    let (phases, total) = marks.finish()
    return ModelledJob(statistics: counting.statistics, phases: phases, total: total)
}

/// The reference client's `-e -w -v` traffic (`ReferencePattern`) on the timed emulator.
func referenceJob(_ image: MemoryImage, timing: DeviceTiming) throws -> ModelledJob {
    let clock = VirtualDeviceClock()
    let debugger = EmulatedDebugger(timing: timing, clock: clock)
    let counting = CountingTransport(debugger)
    let marks = PhaseClock(clock)
    try ReferencePattern(transport: counting, sleep: { clock.advance(by: $0) }).run(image) { phase in
        marks.begin("\(phase)")
    }
    try check(debugger, holds: image)
    let (phases, total) = marks.finish()
    return ModelledJob(statistics: counting.statistics, phases: phases, total: total)
}

/// The benchmark counts only jobs that did what they claim: the chip holds the image.
func check(_ debugger: EmulatedDebugger, holds image: MemoryImage) throws {
    let flash = debugger.chip?.flash ?? []
    for segment in image.segments where Array(flash[segment.range]) != segment.bytes {
        throw BenchFailure(description: "the chip's flash differs from the image at \(segment.start)")
    }
}

/// `ccbeacon-bench device-time [--debug-clock HZ] NAME=IMAGE…`: the device-time model's figures
/// for ccbeacon's and the reference client's jobs on each image (IMAGE: an Intel HEX file, or
/// `full256` for a dense 256 KiB image), one JSON line per image. `--debug-clock` replaces the
/// model's assumed debug clock (to see what another rate would predict).
func deviceTimeBenchmark(_ arguments: [String]) throws {
    let chip = try shippedCC2541()
    var timing = DeviceTiming.hardware
    var images = arguments[...]
    if images.first == "--debug-clock" {
        guard images.count >= 2, let hertz = Int(images[images.startIndex + 1]), hertz > 0 else {
            throw BenchFailure(description: "--debug-clock takes hertz")
        }
        timing.debugClockHertz = hertz
        images = images.dropFirst(2)
    }
    for argument in images {
        let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { throw BenchFailure(description: "NAME=IMAGE, not \(argument)") }
        let image =
            parts[1] == "full256"
            ? try fullFlashImage()
            : try IntelHexFile(text: [UInt8](try Data(contentsOf: URL(fileURLWithPath: parts[1])))).memory
        let ours = try ccbeaconJob(image, chip: chip, timing: timing)
        let reference = try referenceJob(image, timing: timing)
        print(
            """
            {"image": "\(parts[0])", "dataKiB": \(Double(image.byteCount) / 1024), \
            "blocksToTop": \(((image.endAddress ?? 0) + 1023) / 1024), \
            "debugClockHz": \(timing.debugClockHertz), "ccbeacon": \(ours.json), "reference": \(reference.json)}
            """)
    }
}
