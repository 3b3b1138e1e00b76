import BeaconPayload
import CCDebugger
import Checksums
import Dispatch
import FirmwareTemplate
import HexText
import IntelHex
import StationLedger
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension ProvisioningRun {
    /// Erases `chip`, which holds (or may hold) a station whose outcome can no longer be recorded
    /// (the run's lease was lost): only if it is still the chip attached. Whether it was erased.
    func eraseUnrecorded(_ chip: String, session: CC254xSession) -> Bool {
        do throws(DebuggerError) {
            let state = try session.open()
            guard state.targetID != 0 else { return false }
            _ = try session.connect(targetID: state.targetID)
            guard try attachedChip(session, expecting: chip) == chip else { return false }
            try erase(chip, session: session)
            return true
        } catch {
            return false
        }
    }

    /// Erases `chip` (attached and connected). A chip the run names by its secondary address
    /// (`ChipIdentitySource.secondary`: its primary one cannot name it) gets that address back
    /// at once, read back: the erase takes the chip's only name with it, and a chip without one
    /// is set aside for good the next time it is attached. Only the erase can fail this: once it
    /// is done the identity is gone, whatever becomes of the name (a chip whose name could not be
    /// written back is set aside, and says why, when it is attached again).
    func erase(_ chip: String, session: CC254xSession) throws(DebuggerError) {
        _ = try session.chipErase(targetID: template.chip.debuggerTargetID)
        try? writeBackName(chip, session: session)
    }

    /// The attached chip's factory address as the ledger names chips, or "" on a part without one
    /// (which `ChipID.isValid` refuses, as it refuses an erased address).
    func primaryName(_ session: CC254xSession) throws(DebuggerError) -> String {
        try session.primaryAddress(chip: template.chip).map(HexText.colonSeparated) ?? ""
    }

    /// See `erase`.
    func writeBackName(_ chip: String, session: CC254xSession) throws(DebuggerError) {
        guard options.chipIdentity == .secondary, let place = template.chip.secondaryAddress,
            !ChipID.isValid(try primaryName(session)),
            let name = HexText.parseColonSeparated(chip, count: 6),
            let image = try? FlashPlan.withLastPage(
                MemoryImage(), chip: template.chip, secondaryAddress: name, lockDebug: false),
            let plan = try? FlashPlan(image: image, chip: template.chip, allowLastPage: true)
        else { return }
        try session.program(plan)
        try session.verifyRanges([place], of: image)
    }

    /// Locks the debug interface of `chip`, whose burn was just verified
    /// (`FlashProgrammer.lockDebugInterface`). A chip heard running (with an on-air check) is
    /// halted first and must still be `chip`; when another is attached, nothing
    /// is written and the reason is returned (the station stays verified on the chip that left,
    /// unlocked). `nil`: locked.
    func lockDebugInterface(chip: String, session: CC254xSession) throws(DebuggerError) -> String? {
        let targetID = template.chip.debuggerTargetID
        if options.onAir != nil {
            guard try session.open().targetID != 0 else {
                return "the chip was taken off before its debug interface could be locked"
            }
            _ = try session.connect(targetID: targetID)
            let attached = try attachedChip(session, expecting: chip)
            guard attached == chip else {
                return "the chip was taken off before its debug interface could be locked (\(attached) is attached now)"
            }
        }
        try FlashProgrammer(session: session).lockDebugInterface(chip: template.chip)
        return nil
    }

    /// With reprovisioning: whether a station calibrated since its burn, other than `except`,
    /// waits for its chip.
    func recalibratedLeft(except: Set<String>) throws(LedgerError) -> Bool {
        guard options.reprovision else { return false }
        return try ledger.recalibratedStations().keys.contains { !except.contains($0) }
    }

    /// The station a chip carries, when its power in the ledger (a calibration) is no longer the
    /// power its verified attempt burned: both values; `nil` when they agree or the attempt was
    /// recorded before ledgers kept the burned power.
    func recalibration(of station: String, on chip: String) throws(LedgerError) -> (burned: Int, calibrated: Int)? {
        guard
            let burned = try ledger.burnedStations().first(where: {
                $0.station.name == station && $0.attempt.chip == chip
            }), burned.isRecalibrated
        else { return nil }
        return (Int(burned.carried.measuredPower), Int(burned.station.identity.measuredPower))
    }
}
