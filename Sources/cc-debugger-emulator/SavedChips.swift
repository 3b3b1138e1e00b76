import CCDebuggerEmulator
import Storage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `--save-chips DIR`: every chip leaves its flash behind in DIR when it is taken off (bench mode)
/// or when the command ends, as `00-12-4B-00-25-41.bin` (its IEEE address): the flash up to its
/// last programmed byte, so a test can read what each chip carries after a whole run. A chip in
/// hand when the emulator is killed is lost with it, as on a bench whose power is cut.
func saveChip(_ chip: EmulatedChip, in folder: String) {
    let name = chip.ieeeAddress.map { byte in
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }.joined(separator: "-")
    let flash = chip.flash
    let end = (flash.lastIndex { $0 != 0xFF } ?? -1) + 1
    // Written whole under a temporary name, then renamed into place: never through a link planted
    // at the name, never half a file.
    do { try Files.writeAtomically(Array(flash[..<end]), to: "\(folder)/\(name).bin") } catch {
        chipsNotSaved.add(1, ordering: .relaxed)
        let line = Array("cc-debugger-emulator: cannot save chip \(name) in \(folder): \(error)\n".utf8)
        _ = line.withUnsafeBytes { Files.writeAll($0, to: 2) }
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
