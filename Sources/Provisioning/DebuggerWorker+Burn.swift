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

extension DebuggerWorker {
    /// Deals with one attached chip (the worker resets it afterwards): refuses it, settles an
    /// interrupted attempt on it, or burns the next pending station into it.
    func handle(
        chip: String, secondaryAddress: [UInt8]?, erasedOnArrival: Bool, session: CC254xSession
    ) throws(ProvisioningError) -> ChipDisposition {
        // The station whose burn (or check) is on this chip now: if the lease is lost before its
        // outcome is recorded, the chip is erased so that the identity is only where the ledger
        // says.
        var inHand: String?
        do {
            let outside = run.outsideList.withLock { $0 }
            var skipping = tally.givenUp.union(outside)
            var reprovisioning = false
            var burningAgain: String?
            let carried = try ledger.verifiedStation(forChip: chip)
            if let carried, erasedOnArrival {
                // Unlocking erased the chip: it no longer carries its station, which is pending
                // again (and may well come back to this very chip).
                try ledger.supersede(chip: chip, reason: "the chip arrived debug-locked; unlocking it erased its flash")
                events(.erasedOnArrival(debugger: name, chip: chip, station: carried))
            } else if let carried {
                if !options.reprovision {
                    note { $0.refused.append(chip) }
                    events(.refused(debugger: name, chip: chip, carries: carried))
                    return .release  // untouched
                }
                if !outside.contains(carried), let change = try run.recalibration(of: carried, on: chip) {
                    // Calibrated since it was burned: the same station again, on its own chip.
                    burningAgain = carried
                    events(
                        .burningAgain(
                            debugger: name, station: carried, chip: chip, burned: change.burned,
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
                    events(.interruptedForAnotherList(debugger: name, chip: chip, station: interrupted.station))
                    return .release
                }
                // Only a chip that may hold the interrupted station is erased when the lease is
                // lost; one that still carries another verified station keeps it.
                if carried == nil { inHand = interrupted.station }
                switch try resume(
                    interrupted, carrying: carried, session: session
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
            if run.stopping { return .release }
            do {
                // The image whose digest the ledger records is the one burned.
                var claimedImage: StationImage?
                let record = { (station: Station) -> (sha256: String, advertiserAddress: String?) in
                    let image = self.run.image(for: station)
                    claimedImage = image
                    return (SHA256.hexDigest(image.file.text), self.run.advertiserAddress(of: station, image: image))
                }
                let claimed =
                    if let burningAgain {
                        try ledger.claimAgain(
                            station: burningAgain, chip: chip, debugger: name, template: template.manifest.name,
                            templateSHA256: template.manifest.imageSHA256,
                            verifyMethod: options.burnVerification.rawValue,
                            reason: "burned again with its calibrated measured power", image: record)
                    } else {
                        try ledger.claimNextStation(
                            chip: chip, debugger: name, template: template.manifest.name,
                            templateSHA256: template.manifest.imageSHA256,
                            verifyMethod: options.burnVerification.rawValue, skipping: skipping, image: record)
                    }
                guard let (station, attempt) = claimed else {
                    // Nothing pending; with --reprovision a calibrated station's chip may still
                    // come, so this chip is let go and the worker waits.
                    return try run.recalibratedLeft(except: run.outsideList.withLock { $0 }) ? .release : .nothingLeft
                }
                // Superseded first: until then the chip still carries its old station, verified.
                if reprovisioning { try ledger.supersede(chip: chip) }
                inHand = station.name
                events(.started(debugger: name, station: station.name, chip: chip))
                var burnError: DebuggerError?
                var burned: BurnReport?
                do throws(FlashError) {
                    burned = try run.burn(
                        station, image: claimedImage ?? run.image(for: station),
                        keeping: run.writtenSecondaryAddress(for: station) ?? secondaryAddress, session: session
                    ) { progress in
                        self.events(
                            .progress(debugger: name, station: station.name, chip: chip, progress: progress))
                    }
                } catch {
                    let debuggerFailure: DebuggerError? =
                        switch error {
                        case .debugger(let failure), .flashChanged(let failure, _), .notStarted(let failure, _): failure
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
                        burnError, attempt: attempt, station: station.name, chip: chip, session: session)
                }
                var onAir: OnAirCheck?
                if let listener = options.onAir {
                    let heard = try run.hear(
                        claimedImage ?? run.image(for: station), with: listener, station: station.name, chip: chip,
                        secondary: run.writtenSecondaryAddress(for: station), session: session, debugger: name)
                    guard case .heard(let check) = heard.result else {
                        let reason = heard.reason ?? "not heard on air"
                        try ledger.finish(
                            attempt.id, outcome: heard.erased ? .failed : .interrupted, reason: reason,
                            readBack: burned?.readBackText, onAir: heard.check)
                        tally.failed(station.name, retries: options.retries, mayRetry: options.retryUnheard)
                        note { $0.failed[station.name] = reason }
                        events(
                            .finished(
                                debugger: name, station: station.name, chip: chip,
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
                        if let gone = try run.lockDebugInterface(chip: chip, session: session) {
                            verifiedReason = gone
                        } else {
                            readBack += [template.chip.lockBits].compactMap { $0 }
                        }
                    } catch {
                        throw try failBurn(
                            error, attempt: attempt, station: station.name, chip: chip, session: session,
                            step: "locking the debug interface")
                    }
                }
                try ledger.finish(
                    attempt.id, outcome: .verified, reason: verifiedReason,
                    readBack: burned.map { _ in BurnReport.describe(readBack) }, onAir: onAir,
                    debugLocked: options.lockDebug && verifiedReason == nil)
                if options.lockDebug, verifiedReason == nil { lockedTheChip = true }
                note {
                    $0.verified.append(station.name)
                    $0.failed[station.name] = nil
                }
                events(
                    .finished(debugger: name, station: station.name, chip: chip, outcome: .verified, reason: nil))
                return .release
            }
        } catch let error as LedgerError {
            // Nothing more may be burned that could not be recorded.
            run.requestStop()
            if error.kind == .leaseLost {
                let erased = inHand != nil && run.eraseUnrecorded(chip, session: session)
                let lost = ProvisioningError.leaseLost(
                    error, station: inHand, chip: inHand.map { _ in chip }, erased: erased)
                run.loseLease(lost.description)
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

    /// Records a burn (or the lock after it) that failed on `chip` with `burnError` and returns
    /// the error the worker goes on with. A failed burn may have left the identity on the chip. A
    /// chip fault: erase the chip, so that only a chip recorded as verified can ever carry it,
    /// then record the failure (the station may go to another chip). A failed transfer — here or
    /// in that erase — leaves the chip's content unknown: the attempt is recorded as interrupted,
    /// and the station is held until this chip is back and checked (or released), whoever swaps
    /// what meanwhile.
    func failBurn(
        _ burnError: DebuggerError, attempt: Attempt, station: String, chip: String, session: CC254xSession,
        step: String? = nil
    ) throws(LedgerError) -> DebuggerError {
        var cause = burnError
        var erased = false
        if case .transport = burnError {
        } else {
            do {
                try run.erase(chip, session: session)
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
                debugger: name, station: station, chip: chip, outcome: unknown ? .interrupted : .failed,
                reason: reason))
        // A bad chip gets no further station and is reset so the bench (or the operator, told by
        // the event) swaps it; after a failed transfer the worker opens the debugger again.
        return cause
    }
}
