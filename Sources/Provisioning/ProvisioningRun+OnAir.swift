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
    /// What listening for a station found, and what became of its chip.
    struct Hearing {
        enum Result {
            case heard(OnAirCheck)
            case notHeard
        }
        var result: Result
        /// What was heard (nil when the listener could not listen).
        var check: OnAirCheck?
        /// Why it is not verified.
        var reason: String?
        /// Whether the chip was erased (else the identity may still be on it).
        var erased = true
        /// A debugger failure the worker handles once the outcome is recorded (a transfer that
        /// failed: the debugger is opened again; a chip fault: the chip is reset and let go).
        var failure: DebuggerError?
    }

    /// Resets the chip to run and listens for the station on air with `listener`. Not heard (or
    /// no radio to listen with): the chip is halted again and erased, so that only a chip
    /// recorded as verified ever carries the identity; a radio that cannot listen stops the run.
    func hear(
        _ image: StationImage, with listener: any OnAirListener, station: String, chip: String, secondary: [UInt8]?,
        session: CC254xSession, debugger: String
    ) throws(ProvisioningError) -> Hearing {
        let seconds = Self.seconds(options.scanSeconds)
        var hearing: Hearing
        do {
            try session.resetAndRun()
            events(.listening(debugger: debugger, station: station, chip: chip, seconds: options.scanSeconds))
            let check = try listener.listen(
                for: expectation(image, secondary: secondary), seconds: options.scanSeconds)
            if check.heard { return Hearing(result: .heard(check), check: check) }
            let others =
                check.othersFromAddress > 0
                ? " (\(check.othersFromAddress) advertisement(s) from its address with other bytes)" : ""
            hearing = Hearing(
                result: .notHeard, check: check, reason: "not heard on air within \(seconds) s\(others)")
        } catch let error as OnAirError {
            requestStop()
            stop(debugger, "the on-air check cannot run: \(error.message)")
            hearing = Hearing(result: .notHeard, check: nil, reason: "the on-air check could not run: \(error.message)")
        } catch let error as DebuggerError {
            hearing = Hearing(
                result: .notHeard, check: nil,
                reason: "the chip could not be reset to run for the on-air check: \(error)")
            if case .transport = error {
                hearing.erased = false
                hearing.reason! +=
                    "; the chip may carry the identity, so the station is held until it is attached again"
                hearing.failure = error
                return hearing
            }
        } catch {
            hearing = Hearing(result: .notHeard, check: nil, reason: "\(error)")
        }
        do throws(DebuggerError) {
            let state = try session.open()
            guard state.targetID != 0 else { throw .noTarget }
            _ = try session.connect(targetID: state.targetID)
            // Only the chip that was burned is erased: one swapped in while the run listened is
            // another chip, and the burned one is gone with the identity on it.
            let attached = try attachedChip(session, expecting: chip)
            guard attached == chip else {
                hearing.erased = false
                hearing.reason =
                    (hearing.reason ?? "")
                    + "; the chip was taken off before it could be erased (\(attached) is attached now): it carries the identity, so the station is held until it is attached again"
                return hearing
            }
            try erase(chip, session: session)
            hearing.reason = (hearing.reason ?? "") + "; the chip was erased"
        } catch {
            hearing.erased = false
            hearing.reason =
                (hearing.reason ?? "")
                + "; erasing it then failed (\(error)): the chip may carry the identity, so the station is held until it is attached again"
            hearing.failure = error
        }
        return hearing
    }

    /// The name of the chip attached now (connected): its primary address, or — when chips are
    /// named by their secondary address and the primary is not `expected` — its secondary one.
    func attachedChip(_ session: CC254xSession, expecting expected: String) throws(DebuggerError) -> String {
        var attached = try primaryName(session)
        if attached != expected, options.chipIdentity == .secondary,
            let secondary = try session.secondaryAddress(chip: template.chip)
        {
            attached = HexText.colonSeparated(secondary)
        }
        return attached
    }

    /// The advertisement the station's image makes: the advertising data field's bytes, from the
    /// image's advertiser address (or the chip's secondary address `secondary`, written for it).
    func expectation(_ image: StationImage, secondary: [UInt8]? = nil) -> OnAirExpectation {
        let field = template.manifest.fields.first { $0.address == image.payloadAddress }
        let length = field?.kind.length ?? PatchField.Kind.iBeaconAdvertisingData.length
        return OnAirExpectation(
            address: secondary ?? image.settings.address,
            advertisingData: image.file.memory.bytes(in: image.payloadAddress..<(image.payloadAddress + length)),
            isWhole: field?.kind != .iBeaconManufacturerData)
    }

    /// Erase, program and verify `image` (the station's, as recorded in the ledger): the
    /// template's identity bytes (fields and OAD header) are always read back byte for byte, the
    /// rest is checked as `options.verify` says.
    /// A chip named by its secondary address keeps it (`keeping`): it is written back into the
    /// last page and read back like the identity.
    func burn(
        _ station: Station, image: StationImage, keeping secondaryAddress: [UInt8]?, session: CC254xSession,
        progress: (FlashProgress) -> Void = { _ in }
    ) throws(FlashError) -> BurnReport {
        let flashOptions = FlashOptions(
            verify: options.burnVerification, readBack: template.identityRanges,
            secondaryAddress: secondaryAddress.map { .write($0) } ?? .leave, resetToRun: false)
        return try FlashProgrammer(session: session).flash(
            image.file.memory, chip: template.chip, options: flashOptions
        ) {
            event in
            switch event {
            case .erasing(let step), .programming(let step), .verifying(let step): progress(step)
            default: break
            }
        }
        .report
    }

}

/// A thread of its own (a pthread: the run's workers wait on devices and chips, so each needs one
/// rather than a share of a pool) that can be waited for.
public struct JoinableThread: Sendable {
    let thread: pthread_t?

    /// Starts `body` on a new thread (on the caller's, when none can be made).
    public static func start(_ body: @escaping @Sendable () -> Void) -> JoinableThread {
        JoinableThread(thread: ProvisioningRun.startThread(body))
    }

    /// Waits until the thread's body returned.
    public func join() { if let thread { pthread_join(thread, nil) } }
}
