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
    /// What checking a chip from an interrupted run found.
    enum ResumeOutcome: Equatable {
        /// It holds the image (and was heard, with `--scan-verify`): the attempt is verified.
        case verified
        /// It does not hold the image: the chip was erased and the attempt failed; the chip is
        /// free for a station.
        case notOnChip
        /// It holds the image but was not heard on air; `erased`: the chip was erased (free for
        /// another station), else it may carry the identity or was swapped meanwhile.
        case notHeard(station: String, erased: Bool)
        /// It does not hold the image and could not be erased: the attempt stays interrupted and
        /// nothing goes into the chip.
        case leftHeld
    }

    /// A chip whose burn was interrupted came back: check what it holds. `carried`: the station
    /// the ledger records as verified on it, if any.
    func resume(
        _ attempt: Attempt, carrying carried: String?, session: CC254xSession
    ) throws -> ResumeOutcome {
        guard let station = try ledger.station(named: attempt.station) else { return .notOnChip }
        if let carried, carried != attempt.station {
            // Reprovisioning claims the new station first and supersedes the old one before it
            // burns: an attempt interrupted while the old one is still recorded never reached
            // the chip, which still holds the old station. Nothing is erased.
            let reason = "interrupted before its burn began; the chip still carries '\(carried)'"
            try ledger.finish(attempt.id, outcome: .failed, reason: reason, readBack: nil, onAir: nil)
            events(
                .finished(
                    debugger: name, station: station.name, chip: attempt.chip, outcome: .failed, reason: reason))
            return .notOnChip
        }
        let image = run.image(for: station)
        var verified = false
        var readBack = template.identityRanges
        var memory = image.file.memory
        // The address the attempt wrote as the chip's secondary address, if it did (a template
        // without an address field whose attempt recorded one): the chip must hold it — whatever
        // this run is given — and it must be what this run would write.
        let recorded =
            template.manifest.field(.advertiserAddress) == nil
            ? attempt.advertiserAddress.flatMap(RandomStaticAddress.bytes(parsing:)) : nil
        if let recorded, let place = template.chip.secondaryAddress,
            let withAddress = try? FlashPlan.withLastPage(
                memory, chip: template.chip, secondaryAddress: recorded, lockDebug: false)
        {
            // The station's address is on the chip too: read back like its identity.
            memory = withAddress
            readBack.append(place)
        }
        if SHA256.hexDigest(image.file.text) == attempt.imageSHA256,
            recorded == run.writtenSecondaryAddress(for: station)
        {
            // The same proof as a fresh burn: identity bytes read back, then the CRC of the rest.
            do {
                _ = try FlashProgrammer(session: session).check(memory, readBack: readBack, verify: .crc)
                verified = true
            } catch {
                // A failed transfer says nothing about the chip: the attempt stays interrupted, the
                // worker opens the debugger again and the chip is checked once more.
                if case .transport = error { throw error }
            }
        }
        var onAir: OnAirCheck?
        if verified, let listener = options.onAir {
            // Confirmed on the chip, and with --scan-verify on air too, as a fresh burn is.
            let heard = try run.hear(
                image, with: listener, station: station.name, chip: attempt.chip,
                secondary: run.writtenSecondaryAddress(for: station), session: session, debugger: name)
            guard case .heard(let check) = heard.result else {
                // A chip that could not be erased stays interrupted: its station stays held.
                if heard.erased {
                    try ledger.finish(
                        attempt.id, outcome: .failed, reason: heard.reason, readBack: nil, onAir: heard.check)
                }
                events(
                    .finished(
                        debugger: name, station: station.name, chip: attempt.chip,
                        outcome: heard.erased ? .failed : .interrupted, reason: heard.reason))
                if let failure = heard.failure { throw failure }
                return .notHeard(station: station.name, erased: heard.erased)
            }
            onAir = check
        }
        if !verified {
            // Not the recorded image — another one (other settings, a calibration since), a part
            // of it, or a check that failed on the chip — yet the identity may be on it: the chip
            // is erased before the station may go anywhere else. An erase that fails leaves the
            // attempt interrupted, and the station held for this chip.
            do throws(DebuggerError) {
                // The chip checked must still be the one attached: a chip swapped in meanwhile is
                // another one (it may carry a station of its own) and is not erased.
                guard try run.attachedChip(session, expecting: attempt.chip) == attempt.chip else {
                    events(
                        .finished(
                            debugger: name, station: station.name, chip: attempt.chip, outcome: .interrupted,
                            reason: "the chip was taken off during its check; the station stays held for it"))
                    return .leftHeld
                }
                try run.erase(attempt.chip, session: session)
            } catch {
                if case .transport = error { throw error }
                events(
                    .finished(
                        debugger: name, station: station.name, chip: attempt.chip, outcome: .interrupted,
                        reason:
                            "the chip does not hold the recorded image, and erasing it failed (\(error)); the station stays held"
                    ))
                return .leftHeld
            }
        }
        var lockNote = ""
        if verified, options.lockDebug {
            // Locked as a fresh burn would be.
            do throws(DebuggerError) {
                if let gone = try run.lockDebugInterface(chip: attempt.chip, session: session) {
                    lockNote = "; \(gone)"
                } else {
                    lockedTheChip = true
                    readBack += [template.chip.lockBits].compactMap { $0 }
                }
            } catch {
                // Counted toward --retries as a fresh burn's failure is.
                throw try failBurn(
                    error, attempt: attempt, station: station.name, chip: attempt.chip, session: session,
                    step: "locking the debug interface")
            }
        }
        try ledger.finish(
            attempt.id, outcome: verified ? .verified : .failed,
            reason: verified
                ? "confirmed on the chip after the interruption\(lockNote)"
                : "the chip did not hold the recorded image after the interruption; it was erased",
            readBack: verified ? BurnReport.describe(readBack) : nil, onAir: onAir, debugLocked: lockedTheChip)
        events(.resumed(debugger: name, station: station.name, chip: attempt.chip, verified: verified))
        if verified { note { $0.verified.append(station.name) } }
        return verified ? .verified : .notOnChip
    }
}
