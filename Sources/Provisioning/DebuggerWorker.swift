import CCDebugger
import FirmwareTemplate
import HexText
import StationLedger

#if canImport(Glibc)
    import Glibc
#endif

/// One debugger's worker in a `ProvisioningRun`: on its own thread it waits for a chip, names it,
/// has it handled (burned, resumed, refused or set aside) and resets it to run, until nothing is
/// left, the debugger fails or the run stops. It owns everything it remembers between chips; the
/// run holds only what the workers share (the ledger, the options, the summary).
final class DebuggerWorker {
    let run: ProvisioningRun
    let debugger: ProvisioningDebugger
    /// The debugger's name, as events and the summary give it.
    var name: String { debugger.name }

    /// The open session; `nil` until opened and after a failed transfer (then opened again).
    var session: CC254xSession?
    /// The chip handled last (or set aside), while it is attached: a chip is handled once.
    var lastChip: String?
    /// The last chip was left debug-locked (by its burn, or set aside locked): while no chip was
    /// taken off since, a locked chip on the debugger is that one.
    var lastChipLocked = false
    /// Whether handling the chip in hand locked its debug interface (its burn, or its resume).
    var lockedTheChip = false
    /// When the wait for a new chip began; `nil` while not waiting.
    var waitingSince: Double?
    /// When the wait last asked the ledger whether any work is left.
    var lastWorkCheck = 0.0
    /// Whether any chip was attached during the wait (the timeout's message says which wait it was).
    var sawTargetWhileWaiting = false
    /// Every failure of a station on this debugger's chips, toward `--retries`.
    var tally = RetryTally()
    /// Failed transfers in a row: the third stops the worker.
    var transportFailures = 0
    /// A chip whose outcome is recorded but whose reset to run failed: reset before anything else.
    var unreleased: String?

    /// A worker for `debugger` in `run`.
    init(run: ProvisioningRun, debugger: ProvisioningDebugger) {
        self.run = run
        self.debugger = debugger
    }

    var ledger: any ProvisioningLedger & Sendable { run.ledger }
    var options: ProvisionOptions { run.options }
    var template: StationTemplate { run.template }
    var events: @Sendable (ProvisionEvent) -> Void { run.events }
    func note(_ update: (inout ProvisionSummary) -> Void) { run.note(update) }

    /// What `lastChip` holds while a locked chip set aside is on the debugger (it has no name).
    static let lockedChip = "debug-locked"

    /// What the worker does after one pass.
    enum Next {
        /// Look at the debugger again.
        case again
        /// The worker is done (the reason is recorded).
        case stop
    }

    /// The worker's loop, until it stops or the run does.
    func work() {
        while !run.stopping {
            let next: Next
            do throws(ProvisioningError) {
                next = try pass()
            } catch {
                next = recover(from: error)
            }
            if case .stop = next { return }
        }
    }

    /// One look at the debugger: the chip attached is handled, or the wait for one goes on.
    func pass() throws(ProvisioningError) -> Next {
        let active = try openSession()
        let state = try run.device { () throws(DebuggerError) in try active.open() }
        var arrival: ChipArrival?
        if state.targetID != 0 {
            arrival = try name(targetID: state.targetID, session: active)
            sawTargetWhileWaiting = true
        } else {
            lastChip = nil  // the chip was taken off: whatever comes next is a new chip
        }
        var chip: String?
        switch arrival {
        case .named(let named)?: chip = named.chip
        case .setAside(let address, let reason)?:
            if address != lastChip {
                events(.setAside(debugger: name, address: address, reason: reason))
                note { $0.setAside += 1 }
                lastChip = address
                try release(address, session: active)
            }
        case .sameLockedChip(let same)?: chip = same
        case nil: break
        }
        if unreleased != nil, chip != unreleased { unreleased = nil }  // taken off meanwhile
        if let chip, chip == unreleased {
            try release(chip, session: active)
            lastChip = chip
            transportFailures = 0
            return .again
        }
        guard let chip, chip != lastChip, case .named(let named)? = arrival else {
            // No chip, or still the one just done: wait for the next.
            return waitForChip(targetAttached: state.targetID != 0)
        }
        waitingSince = nil
        transportFailures = 0
        events(.chipAttached(debugger: name, chip: chip))
        lockedTheChip = false
        let disposition = try handle(
            chip: chip, secondaryAddress: named.secondary, erasedOnArrival: named.erasedOnArrival, session: active)
        lastChipLocked = lockedTheChip
        guard case .release = disposition else {
            run.stop(name, Self.nothingLeft(givenUp: tally.givenUp))
            return .stop
        }
        lastChip = chip
        try release(chip, session: active)
        return .again
    }

    /// The session, opened when there is none.
    func openSession() throws(ProvisioningError) -> CC254xSession {
        if let session { return session }
        do throws(DebuggerError) {
            let opened = CC254xSession(transport: try debugger.open(), chips: [template.chip])
            opened.framing = options.usbFraming
            session = opened
            return opened
        } catch {
            throw .debugger(error)
        }
    }

    /// A chip the worker found attached.
    enum ChipArrival {
        /// A chip to handle: its name, the secondary address that names it (with
        /// `ChipIdentitySource.secondary`), and whether connecting erased it (it arrived locked).
        case named(NamedChip)
        /// Still the chip this debugger left locked, or a locked chip set aside: not handled again.
        case sameLockedChip(String)
        /// A chip to set aside, by the address it shows.
        case setAside(address: String, reason: SetAsideReason)
    }

    /// A chip to handle (`ChipArrival.named`).
    struct NamedChip {
        var chip: String
        var secondary: [UInt8]?
        var erasedOnArrival: Bool
    }

    /// Connects to the attached chip and names it.
    func name(targetID: UInt16, session active: CC254xSession) throws(ProvisioningError) -> ChipArrival {
        var identity = try run.device { () throws(DebuggerError) in try active.connect(targetID: targetID) }
        if identity.locked, lastChip != nil, lastChipLocked {
            // Still the chip this debugger left locked: no chip was taken off since.
            return .sameLockedChip(lastChip ?? Self.lockedChip)
        }
        if identity.locked, !options.reprovision, try run.lockedChipsRecorded() {
            // It may be a chip this pool locked, carrying its station: erasing it (the only way to
            // read it) is for --reprovision.
            if lastChip != Self.lockedChip {
                events(.setAside(debugger: name, address: "locked", reason: .debugLocked))
                note { $0.setAside += 1 }
                try release(Self.lockedChip, session: active)
            }
            lastChip = Self.lockedChip
            lastChipLocked = true
            return .sameLockedChip(Self.lockedChip)
        }
        var erasedOnArrival = false
        if identity.locked {
            // The lock hides everything, the address and the size too; only an erase lifts it.
            identity = try run.device { () throws(DebuggerError) in try active.chipErase(targetID: targetID) }
            erasedOnArrival = true
        }
        return try identify(identity, session: active, erasedOnArrival: erasedOnArrival)
    }

    /// Names the chip just connected (unlocked, or unlocked by an erase): its primary address, or
    /// with `ChipIdentitySource.secondary` its secondary one; set aside when neither names it or
    /// it is not the template's chip.
    func identify(
        _ identity: ChipIdentity, session active: CC254xSession, erasedOnArrival: Bool
    ) throws(ProvisioningError) -> ChipArrival {
        let primary = try run.device { () throws(DebuggerError) in try run.primaryName(active) }
        if identity.flashSizeCode != template.chip.flashSizeCode {
            // Another part of the family (its flash size says so): the template's addresses,
            // pages and lock bits are not this chip's.
            return .setAside(
                address: primary,
                reason: .notTheTemplatesChip(
                    flashSizeCode: identity.flashSizeCode, templateChip: template.chip.name,
                    erased: erasedOnArrival))
        }
        if ChipID.isValid(primary) {
            return .named(NamedChip(chip: primary, secondary: nil, erasedOnArrival: erasedOnArrival))
        }
        if options.chipIdentity == .secondary,
            let address = try run.device({ () throws(DebuggerError) in
                try active.secondaryAddress(chip: template.chip)
            }),
            ChipID.isValid(HexText.colonSeparated(address))
        {
            return .named(
                NamedChip(
                    chip: HexText.colonSeparated(address), secondary: address, erasedOnArrival: erasedOnArrival))
        }
        return .setAside(
            address: primary, reason: .indistinguishable(secondaryTried: options.chipIdentity == .secondary))
    }

    /// No chip, or still the one just done: waits a poll interval for the next — unless nothing
    /// is left that a chip could take, or the wait has lasted `--target-timeout`.
    func waitForChip(targetAttached: Bool) -> Next {
        let now = MonotonicClock.now
        // Asked when the wait begins and every second of it: the other debuggers may take the
        // last stations meanwhile, and then this one has nothing to wait for.
        if waitingSince == nil || now - lastWorkCheck >= 1 {
            lastWorkCheck = now
            if !run.workLeft(givenUp: tally.givenUp) {
                run.stop(name, Self.nothingLeft(givenUp: tally.givenUp))
                return .stop
            }
        }
        if waitingSince == nil {
            waitingSince = now
            sawTargetWhileWaiting = targetAttached
            events(.waitingForChip(debugger: name))
        }
        if now - (waitingSince ?? now) > options.targetTimeoutSeconds {
            let wait = ProvisioningRun.seconds(options.targetTimeoutSeconds)
            run.stop(
                name,
                sawTargetWhileWaiting
                    ? "no new chip within \(wait) s"
                    : "no target chip within \(wait) s (none attached, or check the wiring and power)")
            return .stop
        }
        usleep(UInt32(options.pollIntervalSeconds * 1_000_000))
        return .again
    }

    /// After a pass failed: a failed transfer opens the debugger again (three in a row stop the
    /// worker: an unplugged debugger can still "open" and then fail every transfer); anything
    /// else stops it.
    func recover(from error: ProvisioningError) -> Next {
        guard case .debugger(.transport) = error else {
            run.stop(name, error.description)
            return .stop
        }
        session = nil
        transportFailures += 1
        if transportFailures >= 3 || (try? debugger.open()) == nil {
            let chipLeft = unreleased.map { "; chip \($0) is done but was not reset to run" } ?? ""
            run.stop(name, error.description + chipLeft)
            return .stop
        }
        usleep(UInt32(options.pollIntervalSeconds * 1_000_000))
        return .again
    }

    /// Resets a chip the worker is done with, so that it runs and the bench can take it off. A
    /// failed reset is reported and remembered (`unreleased`), never swallowed: the worker opens
    /// the debugger again and retries the reset before it takes another chip.
    func release(_ chip: String, session: CC254xSession) throws(ProvisioningError) {
        do {
            try session.resetAndRun()
            unreleased = nil
        } catch {
            unreleased = chip
            events(.resetFailed(debugger: name, chip: chip, reason: error.description))
            throw .debugger(error)
        }
    }

    /// Why a debugger stops when no station is left for it to try: the stations it gave up on
    /// (failed more often than `--retries` allows, or not heard without `--retry-unheard`) are
    /// still pending, and the reason says so rather than that none is left.
    static func nothingLeft(givenUp: Set<String>) -> String {
        guard !givenUp.isEmpty else { return "no pending stations left" }
        let names = givenUp.sorted()
        return
            "no pending stations left but \(names.count) given up after failing (\(names.prefix(5).joined(separator: ", "))\(names.count > 5 ? ", …" : ""); see --retries and --retry-unheard)"
    }
}
