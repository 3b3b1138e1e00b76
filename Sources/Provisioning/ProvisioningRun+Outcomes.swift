import BeaconPayload
import CCDebugger
import Checksums
import Dispatch
import FirmwareTemplate
import HexText
import IntelHex
import StationLedger
import StructuredText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension ProvisioningRun {
    /// Deals with one attached chip (the worker resets it afterwards): refuses it, settles an
    /// interrupted attempt on it, or burns the next pending station into it.
    func handle(
        chip: String, secondaryAddress: [UInt8]?, erasedOnArrival: Bool, session: CC254xSession, debugger: String,
        tally: inout RetryTally, locked: inout Bool
    ) throws(ProvisioningError) -> ChipDisposition {
        // The station whose burn (or check) is on this chip now: if the lease is lost before its
        // outcome is recorded, the chip is erased so that the identity is only where the ledger
        // says.
        var inHand: String?
        do {
            let outside = outsideList.withLock { $0 }
            var skipping = tally.givenUp.union(outside)
            var reprovisioning = false
            var burningAgain: String?
            let carried = try ledger.verifiedStation(forChip: chip)
            if let carried, erasedOnArrival {
                // Unlocking erased the chip: it no longer carries its station, which is pending
                // again (and may well come back to this very chip).
                try ledger.supersede(chip: chip, reason: "the chip arrived debug-locked; unlocking it erased its flash")
                events(.erasedOnArrival(debugger: debugger, chip: chip, station: carried))
            } else if let carried {
                if !options.reprovision {
                    note { $0.refused.append(chip) }
                    events(.refused(debugger: debugger, chip: chip, carries: carried))
                    return .release  // untouched
                }
                if !outside.contains(carried), let change = try recalibration(of: carried, on: chip) {
                    // Calibrated since it was burned: the same station again, on its own chip.
                    burningAgain = carried
                    events(
                        .burningAgain(
                            debugger: debugger, station: carried, chip: chip, burned: change.burned,
                            calibrated: change.calibrated))
                } else {
                    // Reprovisioning gives the chip another station (its old one becomes pending) —
                    // but only once there is one to give: the record changes after the claim.
                    reprovisioning = true
                    skipping.insert(carried)
                }
            }
            if let interrupted = try ledger.interruptedAttempt(forChip: chip) {
                if outside.contains(interrupted.station) {
                    // Another list's station, burned with that list's settings: only a run of that
                    // list can check it. Leave the chip as it is.
                    note { $0.refused.append(chip) }
                    events(.interruptedForAnotherList(debugger: debugger, chip: chip, station: interrupted.station))
                    return .release
                }
                // Only a chip that may hold the interrupted station is erased when the lease is
                // lost; one that still carries another verified station keeps it.
                if carried == nil { inHand = interrupted.station }
                switch try resume(
                    interrupted, carrying: carried, session: session, debugger: debugger, tally: &tally, locked: &locked
                )
                {
                case .verified, .leftHeld: return .release
                case .notOnChip:
                    // A burn that was cut off (a failed transfer, a crash) and left the chip
                    // without the station counts as a failure of it: a debugger that cuts off
                    // every burn of it must not burn it again without end.
                    if tally.failed(interrupted.station, retries: options.retries) {
                        skipping.insert(interrupted.station)
                    }
                case .notHeard(let station, let erased):
                    if tally.failed(station, retries: options.retries, mayRetry: options.retryUnheard) {
                        skipping.insert(station)
                    }
                    // A chip not erased may carry the identity (or is another chip now): nothing
                    // more goes into it.
                    if !erased { return .release }
                }
                inHand = nil  // settled and recorded
            }
            // A stop asked for meanwhile (a radio that failed, a signal): no new station.
            if stopping { return .release }
            do {
                // The image whose digest the ledger records is the one burned.
                var claimedImage: StationImage?
                let record = { (station: Station) -> (sha256: String, advertiserAddress: String?) in
                    let image = self.image(for: station)
                    claimedImage = image
                    return (SHA256.hexDigest(image.file.text), self.advertiserAddress(of: station, image: image))
                }
                let claimed =
                    if let burningAgain {
                        try ledger.claimAgain(
                            station: burningAgain, chip: chip, debugger: debugger, template: template.manifest.name,
                            templateSHA256: template.manifest.imageSHA256,
                            verifyMethod: options.burnVerification.rawValue,
                            reason: "burned again with its calibrated measured power", image: record)
                    } else {
                        try ledger.claimNextStation(
                            chip: chip, debugger: debugger, template: template.manifest.name,
                            templateSHA256: template.manifest.imageSHA256,
                            verifyMethod: options.burnVerification.rawValue, skipping: skipping, image: record)
                    }
                guard let (station, attempt) = claimed else {
                    // Nothing pending; with --reprovision a calibrated station's chip may still
                    // come, so this chip is let go and the worker waits.
                    return try recalibratedLeft(except: outsideList.withLock { $0 }) ? .release : .nothingLeft
                }
                // Superseded first: until then the chip still carries its old station, verified.
                if reprovisioning { try ledger.supersede(chip: chip) }
                inHand = station.name
                events(.started(debugger: debugger, station: station.name, chip: chip))
                var burnError: DebuggerError?
                var burned: BurnReport?
                do throws(FlashError) {
                    burned = try burn(
                        station, image: claimedImage ?? image(for: station),
                        keeping: writtenSecondaryAddress(for: station) ?? secondaryAddress, session: session
                    ) { progress in
                        self.events(
                            .progress(debugger: debugger, station: station.name, chip: chip, progress: progress))
                    }
                } catch {
                    let debuggerFailure: DebuggerError? =
                        switch error {
                        case .debugger(let failure), .flashChanged(let failure): failure
                        default: nil
                        }
                    guard let failure = debuggerFailure else {
                        // Refused before the chip was touched: the template's image does not fit
                        // its own chip. Every station would fail alike: record it and stop.
                        try ledger.finish(
                            attempt.id, outcome: .failed, reason: "\(error); nothing was written to the chip")
                        throw ProvisioningError.image(station: station.name, error)
                    }
                    burnError = failure
                }
                if let burnError {
                    throw try failBurn(
                        burnError, attempt: attempt, station: station.name, chip: chip, session: session,
                        debugger: debugger, tally: &tally)
                }
                var onAir: OnAirCheck?
                if let listener = options.onAir {
                    let heard = try hear(
                        claimedImage ?? image(for: station), with: listener, station: station.name, chip: chip,
                        secondary: writtenSecondaryAddress(for: station), session: session, debugger: debugger)
                    guard case .heard(let check) = heard.result else {
                        let reason = heard.reason ?? "not heard on air"
                        try ledger.finish(
                            attempt.id, outcome: heard.erased ? .failed : .interrupted, reason: reason,
                            readBack: burned?.readBackText, onAir: heard.check)
                        tally.failed(station.name, retries: options.retries, mayRetry: options.retryUnheard)
                        note { $0.failed[station.name] = reason }
                        events(
                            .finished(
                                debugger: debugger, station: station.name, chip: chip,
                                outcome: heard.erased ? .failed : .interrupted, reason: reason))
                        if let failure = heard.failure { throw failure }
                        return .release
                    }
                    onAir = check
                }
                var verifiedReason: String?
                var readBack = burned?.readBack ?? []
                if options.lockDebug {
                    do throws(DebuggerError) {
                        if let gone = try lockDebugInterface(chip: chip, session: session) {
                            verifiedReason = gone
                        } else {
                            readBack.append(template.chip.lockBits)
                        }
                    } catch {
                        throw try failBurn(
                            error, attempt: attempt, station: station.name, chip: chip, session: session,
                            debugger: debugger, tally: &tally, step: "locking the debug interface")
                    }
                }
                try ledger.finish(
                    attempt.id, outcome: .verified, reason: verifiedReason,
                    readBack: burned.map { _ in BurnReport.describe(readBack) }, onAir: onAir,
                    debugLocked: options.lockDebug && verifiedReason == nil)
                if options.lockDebug, verifiedReason == nil { locked = true }
                note {
                    $0.verified.append(station.name)
                    $0.failed[station.name] = nil
                }
                events(
                    .finished(debugger: debugger, station: station.name, chip: chip, outcome: .verified, reason: nil))
                return .release
            }
        } catch let error as LedgerError {
            // Nothing more may be burned that could not be recorded.
            requestStop()
            if error.kind == .leaseLost {
                let erased = inHand != nil && eraseUnrecorded(chip, session: session)
                let lost = ProvisioningError.leaseLost(
                    error, station: inHand, chip: inHand.map { _ in chip }, erased: erased)
                loseLease(lost.description)
                throw lost
            }
            throw .ledger(error)
        } catch let error as DebuggerError {
            if case .transport = error { throw .debugger(error) }
            return .release  // a chip fault: reset it and wait for the next chip
        } catch let error as ProvisioningError {
            throw error
        } catch {
            // Every step above throws one of the three; Swift cannot see that through `do`.
            throw .ledger(LedgerError(operation: "provisioning", message: "\(error)", kind: .database))
        }
    }

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

    /// See `erase`.
    func writeBackName(_ chip: String, session: CC254xSession) throws(DebuggerError) {
        guard options.chipIdentity == .secondary,
            !ChipID.isValid(HexText.colonSeparated(try session.primaryAddress(chip: template.chip))),
            let name = HexText.parseColonSeparated(chip, count: 6),
            let image = try? FlashPlan.withLastPage(
                MemoryImage(), chip: template.chip, secondaryAddress: name, lockDebug: false),
            let plan = try? FlashPlan(image: image, chip: template.chip, allowLastPage: true)
        else { return }
        try session.program(plan)
        try session.verifyRanges([template.chip.secondaryAddress], of: image)
    }

    /// Records a burn (or the lock after it) that failed on `chip` with `burnError` and returns
    /// the error the worker goes on with. A failed burn may have left the identity on the chip. A
    /// chip fault: erase the chip, so that only a chip recorded as verified can ever carry it,
    /// then record the failure (the station may go to another chip). A failed transfer — here or
    /// in that erase — leaves the chip's content unknown: the attempt is recorded as interrupted,
    /// and the station is held until this chip is back and checked (or released), whoever swaps
    /// what meanwhile.
    func failBurn(
        _ burnError: DebuggerError, attempt: Attempt, station: String, chip: String, session: CC254xSession,
        debugger: String, tally: inout RetryTally, step: String? = nil
    ) throws(LedgerError) -> DebuggerError {
        var cause = burnError
        var erased = false
        if case .transport = burnError {
        } else {
            do {
                try erase(chip, session: session)
                erased = true
            } catch { cause = error }
        }
        // Not erased — a failed transfer, or an erase that failed in any way — leaves the chip's
        // content unknown.
        let unknown = !erased
        let eraseFailed: Bool = if case .transport = burnError { false } else { !erased }
        let what = step.map { "\($0): " } ?? ""
        let reason =
            unknown
            ? "\(what)\(burnError.description)\(eraseFailed ? "; erasing it then failed: \(cause)" : ""); the chip may carry the identity, so the station is held until it is attached again"
            : "\(what)\(burnError.description); the chip was erased"
        try ledger.finish(attempt.id, outcome: unknown ? .interrupted : .failed, reason: reason)
        if !unknown { tally.failed(station, retries: options.retries) }
        note { $0.failed[station] = reason }
        events(
            .finished(
                debugger: debugger, station: station, chip: chip, outcome: unknown ? .interrupted : .failed,
                reason: reason))
        // A bad chip gets no further station and is reset so the bench (or the operator, told by
        // the event) swaps it; after a failed transfer the worker opens the debugger again.
        return cause
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
