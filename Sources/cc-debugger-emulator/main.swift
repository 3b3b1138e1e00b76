import CCDebugger
import CCDebuggerEmulator
import CUSBEmulation
import IntelHex
import Storage
// cc-debugger-emulator: runs a command with N emulated CC Debuggers (each with its own CC2541)
// visible to it as real USB devices through umockdev, so unmodified libusb programs (ccbeacon,
// cc-tool) drive them. Serves the transfers with the same Swift emulator as the in-process tests.
// Every option is in `usage` below (printed by --help).
import TargetData

#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String, status: Int32 = 64) -> Never {
    let line = Array("cc-debugger-emulator: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

let usage = """
    usage: cc-debugger-emulator [OPTIONS] -- COMMAND ARGS…

    Runs COMMAND with emulated CC Debuggers (0451:16A2), each with a chip (--chip; a CC2541F256 by
    default), that it sees as USB devices through umockdev. Exits with COMMAND's status. A stop
    signal (INT, TERM, HUP) leaves the emulator running until COMMAND ends; one sent to the
    emulator alone, from outside its process group, is passed to COMMAND.

    Options:
      --devices N               emulated debuggers, 1…16 (1)
      --chip NAME               the emulated chip: CC2530F32…F256, CC2531F128/F256, CC2533F32…F96,
                                CC2540F128/F256, CC2541F128/F256, CC2543F18/F32, CC2544F32,
                                CC2545F18/F32, CC2510/CC2511/CC1110/CC1111 F8/F16/F32,
                                CC2430/CC2431 F32/F64/F128, or a family for its largest part
                                (CC2541 = CC2541F256, the default)
      --flash IMAGE             flash every chip with IMAGE (.hex, or .bin at 0) before the start
      --ieee XX:XX:XX:XX:XX:XX[:XX:XX]
                                the first chip's IEEE address (6 or 8 bytes, fitted to the
                                part's length after the OUI: 00:12:4B:00:00:00:25:41 for a 6-byte
                                00:12:4B:00:25:41); each further chip gets the next
      --locked                  the chips' debug interface is locked
      --bursts-alone            model a debugger firmware that takes a BURST_WRITE only as the one
                                frame of its bulk OUT (a packed transfer stalls the endpoint)
      --model M                 the USB identity: cc-debugger (0451:16A2, the default),
                                smartrf05eb (0451:16A0) or smartrf04eb (11A0:DB20)
      --manufacturer TEXT, --product TEXT, --serial TEXT|none
                                the string descriptors (a clone's; UTF-8; default: TI's, EMU001…)
      --firmware-id HEX, --firmware-revision HEX
                                what GET_STATE reports (0x05CC, 0x0044; 0x0027 and 0x0032 are seen too)
      --no-target-until-reset   the debugger reports no target until its reset button is pressed
                                (it never is here: the first-contact trap)
      --debug-clock-khz N       with --timing hardware: the debug clock (1000; users' timings
                                imply about 150)
      --fault F                 unplug-after=N | timeout-at=N (transfers) | stuck-busy |
                                corrupt=ADDR:MASK (hex: bits stuck at 0) | no-target; repeatable
      --save-flash FILE         write each chip's flash at the end (FILE.N with several debuggers;
                                .hex or binary)
      --save-chips DIR          leave each chip's flash in DIR/XX-XX-XX-XX-XX-XX.bin (its IEEE
                                address) when it is taken off or the command ends (what a
                                killed emulator half-saved there is removed first)
      --log FILE                log every transfer
      --log-data                with --log: also each bulk transfer's bytes (DATA OUT|IN DEV HEX)
      --timing hardware|none    device time: hardware = every transfer takes what a real debugger
                                and CC2541 take (USB frames, debug-clock bytes, flash erase and
                                write times; see DeviceTiming); none = at once (the default)
      --bench                   after each reset to run, a fresh blank chip with a new IEEE address
        --chips N               …until N chips have been handed out
        --swap-seconds S        …put in S seconds after the previous chip was released (the
                                operator's hand; the socket is empty meanwhile)
      -h, --help                this text

    """

// MARK: - Options

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) {
    print(usage, terminator: "")
    exit(0)
}
guard let separator = arguments.firstIndex(of: "--"), separator + 1 < arguments.count else {
    fail("usage: cc-debugger-emulator [OPTIONS] -- COMMAND ARGS… (--help lists the options)")
}
let command = Array(arguments[(separator + 1)...])
arguments = Array(arguments[..<separator])
var deviceCount = 1
var flashImage: String?
var ieee: [UInt8]?
var locked = false
var burstsAlone = false
var faults: [String] = []
var saveFlash: String?
var saveChips: String?
var logPath: String?
var bench = false
var chipLimit = Int.max
var swapSeconds: Double?
var timingName = "none"
var modelName = "cc-debugger"
var manufacturer = "Texas Instruments"
var productName: String?
var serialText: String?
var firmwareID: UInt16 = 0x05CC
var firmwareRevision: UInt16 = 0x0044
var noTargetUntilReset = false
var debugClockKilohertz: Int?
var index = 0
@MainActor func value() -> String {
    index += 1
    guard index < arguments.count else { fail("\(arguments[index - 1]) needs a value") }
    return arguments[index]
}
while index < arguments.count {
    switch arguments[index] {
    case "--devices": deviceCount = Int(value()) ?? 0
    case "--chip":
        let name = value()
        guard let part = EmulatedPart.named(name) else {
            fail(
                "--chip takes one of \(EmulatedPart.all.map(\.name).joined(separator: ", ")) (or a family for its largest), not '\(name)'"
            )
        }
        bridge.withLock { $0.part = part }
    case "--flash": flashImage = value()
    case "--ieee":
        let groups = value().split(separator: ":", omittingEmptySubsequences: false)
        let parts = groups.compactMap { group in
            group.utf8.count == 2 && group.allSatisfy(\.isHexDigit) ? UInt8(group, radix: 16) : nil
        }
        guard parts.count == groups.count, parts.count == 6 || parts.count == 8 else {
            fail("--ieee takes 6 or 8 bytes, XX:XX:XX:XX:XX:XX[:XX:XX]")
        }
        ieee = parts
        bridge.withLock { $0.nextIEEE = parts }
    case "--locked": locked = true
    case "--bursts-alone": burstsAlone = true
    case "--fault": faults.append(value())
    case "--save-flash": saveFlash = value()
    case "--save-chips": saveChips = value()
    case "--log": logPath = value()
    case "--log-data": bridge.withLock { $0.logData = true }
    case "--bench": bench = true
    case "--swap-seconds": swapSeconds = Double(value()) ?? -1
    case "--timing": timingName = value()
    case "--chips": chipLimit = Int(value()) ?? 0
    case "--model": modelName = value().lowercased()
    case "--manufacturer": manufacturer = value()
    case "--product": productName = value()
    case "--serial": serialText = value()
    case "--firmware-id", "--firmware-revision":
        let option = arguments[index]
        let text = value()
        guard let number = UInt16(text.hasPrefix("0x") ? String(text.dropFirst(2)) : text, radix: 16) else {
            fail("\(option) takes a 16-bit hex number, not '\(text)'")
        }
        if option == "--firmware-id" { firmwareID = number } else { firmwareRevision = number }
    case "--no-target-until-reset": noTargetUntilReset = true
    case "--debug-clock-khz":
        guard let kilohertz = Int(value()), (1...100_000).contains(kilohertz) else {
            fail("--debug-clock-khz takes kilohertz, 1…100000")
        }
        debugClockKilohertz = kilohertz
    default: fail("unknown option \(arguments[index])")
    }
    index += 1
}
guard (1...16).contains(deviceCount) else { fail("--devices must be 1…16") }
var timing: DeviceTiming?
switch timingName {
case "hardware": timing = .hardware
case "none": timing = nil
default: fail("--timing takes hardware or none, not '\(timingName)'")
}
if let debugClockKilohertz {
    guard timing != nil else { fail("--debug-clock-khz is for --timing hardware") }
    timing?.debugClockHertz = debugClockKilohertz * 1000
}
let models = [
    "cc-debugger": DebuggerModel.supported[0], "smartrf05eb": DebuggerModel.supported[1],
    "smartrf04eb": DebuggerModel.supported[2],
]
guard let model = models[modelName] else {
    fail("--model takes cc-debugger, smartrf05eb or smartrf04eb, not '\(modelName)'")
}
for (name, text) in [
    ("--manufacturer", manufacturer), ("--product", productName ?? ""), ("--serial", serialText ?? ""),
]
where text.utf16.count > 126 || text.utf8.contains(0) {
    fail("\(name) takes at most 126 UTF-16 units and no NUL")
}
if let swapSeconds {
    guard bench else { fail("--swap-seconds is for --bench") }
    guard swapSeconds >= 0, swapSeconds <= 86_400 else { fail("--swap-seconds takes seconds, 0…86400") }
}

// MARK: - Emulators

var image: MemoryImage?
if let flashImage {
    do {
        let bytes = try Files.read(flashImage)
        image =
            Files.pathExtension(flashImage).lowercased() == "bin"
            ? try MemoryImage(bytes: bytes, at: 0) : try IntelHexFile(text: bytes, fileName: flashImage).memory
    } catch { fail("cannot load \(flashImage): \(error)", status: 65) }
}

let debuggers: [EmulatedDebugger] = (0..<deviceCount).map { number in
    let chip = freshChip()!  // no limit: always a chip
    if let image {
        for segment in image.segments where segment.end <= chip.flashSize {
            chip.flash.replaceSubrange(segment.range, with: segment.bytes)
        }
    }
    if locked { chip.setDebugLockBit() }
    let debugger = EmulatedDebugger(chip: chip, timing: timing)
    debugger.takesBurstsOnlyAlone = burstsAlone
    debugger.firmware = (firmwareID, firmwareRevision)
    debugger.seesTargetOnlyAfterResetButton = noTargetUntilReset
    // umockdev's one worker thread serves every device: it must not sleep. The device's time is
    // kept all the same, and each URB reaped only when the device is done with it (Bridge.swift).
    debugger.waitsForDevice = false
    return debugger
}
for fault in faults {
    let parts = fault.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    guard let kind = parts.first, !kind.isEmpty else { fail("--fault needs a fault: unplug-after=N, timeout-at=N, …") }
    for debugger in debuggers {
        switch parts[0] {
        case "unplug-after", "timeout-at":
            guard parts.count == 2, let count = Int(parts[1]), count >= 0 else {
                fail("--fault \(parts[0])=N needs a number of transfers, not '\(parts.last!)'")
            }
            if parts[0] == "unplug-after" {
                debugger.faults.unplugAfterTransfers = count
            } else {
                debugger.faults.timeoutAtTransfer = count
            }
        case "stuck-busy": debugger.chip?.flashStuckBusy = true
        case "no-target": debugger.chip = nil
        case "corrupt":
            let pieces = parts.last!.split(separator: ":").compactMap {
                Int($0.hasPrefix("0x") ? $0.dropFirst(2) : $0, radix: 16)
            }
            guard pieces.count == 2 else { fail("--fault corrupt=ADDR:MASK (hex)") }
            debugger.chip?.stuckAtZero[pieces[0]] = UInt8(pieces[1] & 0xFF)
        default: fail("unknown fault \(fault)")
        }
    }
}
if bench { installBench(on: debuggers, chipLimit: chipLimit, swapSeconds: swapSeconds ?? 0) }
if let saveChips {
    // The folder is checked before anything runs: a chip that cannot be saved later is reported.
    guard Files.isDirectory(saveChips), access(saveChips, W_OK) == 0 else {
        fail(
            !Files.exists(saveChips)
                ? "--save-chips \(saveChips) does not exist; create the folder first"
                : "--save-chips \(saveChips) is not a folder this user may write")
    }
    // What an emulator killed while saving a chip left there (its temporary file) goes first:
    // the folder then holds whole chips only.
    _ = Files.removeAbandonedTemporaryFiles(in: saveChips)
    saveChipsOnSwap(debuggers, in: saveChips)
}

// MARK: - USB bridge (see Bridge.swift: it runs on umockdev's worker thread)

if let logPath {
    let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard log >= 0 else { fail("cannot write \(logPath)", status: 1) }
    bridge.withLock { $0.log = log }
}
bridge.withLock { $0.debuggers = debuggers }
let callbacks = bridgeCallbacks(logging: logPath != nil)

let names = (0..<deviceCount).map { strdup("EMU\(String(repeating: "0", count: 3 - String($0 + 1).count))\($0 + 1)") }
let infos = (0..<deviceCount).map { number in
    usbemu_device_info(
        vendor_id: model.vendorID, product_id: model.productID, bcd_device: debuggers[number].debuggerID,
        manufacturer: UnsafePointer(strdup(manufacturer)), product: UnsafePointer(strdup(productName ?? model.name)),
        // --serial none: a device without a serial number string (index 0), as some clones are.
        serial: serialText == "none" ? nil : UnsafePointer(serialText.map { strdup($0) } ?? names[number]))
}
var startError: UnsafePointer<CChar>?
guard usbemu_start(Int32(deviceCount), infos, callbacks, &startError) == 0 else {
    fail("cannot start the USB emulation: \(startError.map { String(cString: $0) } ?? "?")", status: 1)
}

// MARK: - Run the command under the preload

// umockdev's preload sleeps after every emulated ioctl; a 1 ns timer slack (inherited by the
// child) halves the round trip (usb-emulation.md, pitfall 1).
usbemu_lower_timer_slack()
let preload = "libumockdev-preload.so.0"
setenv("LD_PRELOAD", (Files.environment("LD_PRELOAD").map { "\(preload):\($0)" }) ?? preload, 1)
var pid: pid_t = 0
let argv = command.map { strdup($0) } + [nil]
let spawned = posix_spawnp(&pid, command[0], nil, nil, argv, environ)
guard spawned == 0 else { fail("cannot run \(command[0]): \(String(cString: strerror(spawned)))", status: 127) }
commandProcess.store(pid, ordering: .relaxed)
passStopSignalsToCommand()
var status: Int32 = 0
while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
let log = bridge.withLock { $0.log }
if log >= 0 { close(log) }

if let saveFlash {
    for (number, debugger) in debuggers.enumerated() {
        guard let chip = debugger.chip else { continue }
        let path = deviceCount == 1 ? saveFlash : "\(saveFlash).\(number + 1)"
        let bytes =
            Files.pathExtension(path).lowercased() == "hex"
            ? HexWriter().text(for: (try? MemoryImage(bytes: chip.flash, at: 0)) ?? MemoryImage()) : chip.flash
        do { try Files.writeAtomically(bytes, to: path) } catch { fail("cannot save the flash: \(error)", status: 1) }
    }
}
if let saveChips {
    for debugger in debuggers { if let chip = debugger.chip { saveChip(chip, in: saveChips) } }
}
// A chip whose flash could not be saved makes the run fail, whatever the command said.
if chipsNotSaved.load(ordering: .relaxed) > 0, status == 0 {
    fail("\(chipsNotSaved.load(ordering: .relaxed)) chip(s) could not be saved in --save-chips", status: 1)
}
// The command's own status: its exit code, or 128 + signal.
let exitCode = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
exit(exitCode)
