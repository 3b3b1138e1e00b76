import CCDebuggerEmulator
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `--save-chips DIR`: every chip leaves its flash behind in DIR when it is taken off (bench mode)
/// or when the command ends, as `00-12-4B-00-25-41.bin` (its IEEE address): the flash up to its
/// last programmed byte, so a test can read what each chip carries after a whole run. A chip in
/// hand when the emulator is killed is lost with it, as on a bench whose power is cut.
func saveChip(_ chip: EmulatedCC2541, in folder: String) {
    let name = chip.ieeeAddress.map { byte in
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }.joined(separator: "-")
    let flash = chip.flash
    let end = (flash.lastIndex { $0 != 0xFF } ?? -1) + 1
    // Written whole under a temporary name, then renamed into place: never through a link planted
    // at the name, never half a file.
    let path = "\(folder)/\(name).bin"
    let temporary = "\(folder)/.\(name).bin.\(getpid())"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
    var written = 0
    if descriptor >= 0 {
        while written < end {
            let count = flash[written..<end].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            written += count
        }
        close(descriptor)
    }
    guard descriptor >= 0, written == end, rename(temporary, path) == 0 else {
        unlink(temporary)
        chipsNotSaved.add(1, ordering: .relaxed)
        let line = Array(
            "cc-debugger-emulator: cannot save chip \(name) in \(folder): \(String(cString: strerror(errno)))\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        return
    }
}

/// Chips whose flash could not be saved (the run then fails).
let chipsNotSaved = Atomic<Int>(0)

/// Makes each debugger save the chip it holds before a bench swaps it (see `saveChip`).
func saveChipsOnSwap(_ debuggers: [EmulatedDebugger], in folder: String) {
    for debugger in debuggers {
        let swap = debugger.onResetToRun
        debugger.onResetToRun = { debugger in
            if let chip = debugger.chip { saveChip(chip, in: folder) }
            swap?(debugger)
        }
    }
}
