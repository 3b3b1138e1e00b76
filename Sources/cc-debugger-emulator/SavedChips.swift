import CCDebuggerEmulator

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
    let descriptor = open("\(folder)/\(name).bin", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    var written = 0
    while written < end {
        let count = flash[written..<end].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return }
        written += count
    }
}

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
