import BeaconPayload
import CCDebuggerEmulator
import Checksums
import FirmwareTemplate
import Foundation
import IntelHex
import Synchronization
import TestSupport
import Testing

@testable import CCDebugger
@testable import Provisioning
@testable import StationLedger

/// Each layer's failures stay its own: a ledger that fails is a ledger failure — the run stops
/// and says so — never a "USB error" that makes the worker open the debugger again and again.
struct ProvisioningErrorTests {
    @Test func aLedgerFailureIsReportedAsOneAndTheDebuggerIsNotReopened() throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([Station(name: "s0", identity: identity(0))])
        let bench = Bench(debuggers: 1, chips: 2, seed: 1, faultyChips: false)
        let opened = Mutex(0)
        let run = ProvisioningRun(
            template: ProvisioningRunTests.template, ledger: LedgerFailingOnFinish(ledger),
            options: ProvisioningRunTests.benchOptions(wait: 0.2)
        ) { _ in }
        let summary = run.run([
            ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in
                opened.withLock { $0 += 1 }
                return bench.debuggers[0]
            }
        ])
        let reason = try #require(summary.stopped["emu"])
        #expect(reason.hasPrefix("ledger: finishing attempt 1: disk I/O error"), "\(reason)")
        #expect(!reason.contains("USB"), "\(reason)")
        #expect(opened.withLock { $0 } == 1, "the debugger was opened again for a ledger failure")
    }

    /// A run of one list must know which of the ledger's stations are another list's before it
    /// claims any: a ledger it cannot read stops the run, burning nothing.
    @Test func aLedgerThatCannotBeReadStopsAListRunBeforeAnyBurn() throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([
            Station(name: "mine", identity: identity(0)), Station(name: "theirs", identity: identity(1)),
        ])
        let bench = Bench(debuggers: 1, chips: 2, seed: 1, faultyChips: false)
        var options = ProvisioningRunTests.benchOptions(wait: 0.2)
        options.stations = ["mine"]
        let run = ProvisioningRun(
            template: ProvisioningRunTests.template, ledger: LedgerFailingOnFinish(ledger, failingStates: true),
            options: options
        ) { _ in }
        let summary = run.run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in bench.debuggers[0] }])
        #expect(summary.stopped["emu"]?.hasPrefix("ledger: reading the stations: disk I/O error") == true)
        #expect(summary.verified.isEmpty)
        #expect(try ledger.attempts().isEmpty, "nothing was claimed")
    }
}

/// A chip from an interrupted run that does not hold the recorded image may still carry the
/// identity (another image of it, part of it): it is erased before its station may go anywhere
/// else — even when the run stops right after the check and burns nothing more.
struct ResumeEraseTests {
    @Test func aChipNotHoldingTheRecordedImageIsErasedBeforeItsStationIsPending() throws {
        let template = ProvisioningRunTests.template
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([Station(name: "a", identity: identity(1))])
        let debugger = EmulatedDebugger()
        let chip = "00:12:4B:00:25:41"
        // An interrupted attempt whose recorded image is not what the chip holds: the chip got
        // the station with another power (here written by hand), the ledger recorded another image.
        let (_, attempt) = try #require(
            try ledger.claimNextStation(
                chip: chip, debugger: "emu", template: template.manifest.name,
                templateSHA256: template.manifest.imageSHA256, verifyMethod: "crc", skipping: [],
                image: { _ in ("not-the-image-on-the-chip", nil) }))
        let other = template.stationImage(
            for: identity(1, power: -70), settings: template.defaultSettings.with(address: nil))
        let session = CC254xSession(transport: debugger, chips: [template.chip])
        _ = try FlashProgrammer(session: session).flash(
            other.file.memory, chip: template.chip, options: FlashOptions(verify: .crc, resetToRun: false))
        _ = try ledger.recoverInterrupted()
        #expect(attempt.outcome == .inProgress)
        // The run stops as soon as the chip was checked (a Ctrl-C then).
        let runHolder = Mutex<ProvisioningRun?>(nil)
        let run = ProvisioningRun(
            template: template, ledger: ledger, options: ProvisioningRunTests.benchOptions(wait: 0.2)
        ) {
            event in
            if case .resumed = event { runHolder.withLock { $0?.requestStop() } }
        }
        runHolder.withLock { $0 = run }
        _ = run.run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in debugger }])
        guard case .pending = try ledger.states()[0].state else {
            Issue.record("a is pending again: \(try ledger.states()[0].state)")
            return
        }
        #expect(debugger.chip!.flash.allSatisfy { $0 == 0xFF }, "pending only once its chip holds nothing")
        #expect(try ledger.attempts().map(\.outcome) == [.failed])
    }

    /// A lock that fails while a resumed chip is confirmed counts toward `--retries` as a fresh
    /// burn's does: with `--retries 0` the station is given up, not burned on the next chip
    /// (the resume used to count the failure in a tally of its own and drop it).
    @Test func aLockThatFailsOnAResumedChipCountsTowardTheRetries() throws {
        let template = ProvisioningRunTests.template
        let sqlite = try SQLiteLedger(path: temporaryLedgerPath())
        try sqlite.register([Station(name: "a", identity: identity(1))])
        let debugger = EmulatedDebugger()
        // The first run burns and verifies a, and fails to record it: the attempt is left in
        // progress, the chip holds the recorded image.
        let first = ProvisioningRun(
            template: template, ledger: LedgerFailingOnFinish(sqlite),
            options: ProvisioningRunTests.benchOptions(wait: 0.2)
        ) { _ in }
        _ = first.run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in debugger }])
        _ = try sqlite.recoverInterrupted()
        #expect(try sqlite.attempts().map(\.outcome) == [.interrupted])
        // The chip comes back to a run that locks chips; its lock does not take.
        debugger.chip!.ignoresDebugLock = true
        var options = ProvisioningRunTests.benchOptions(wait: 0.2)
        options.lockDebug = true
        options.retries = 0
        let summary = ProvisioningRun(template: template, ledger: sqlite, options: options) { _ in }
            .run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in debugger }])
        #expect(try sqlite.attempts().map(\.outcome) == [.failed])
        #expect(
            summary.stopped["emu"]?.contains("1 given up after failing (a") == true, "\(summary.stopped)")
    }

    /// A ledger with stations a and b, a burned and verified into the emulated debugger's chip
    /// (still attached), and what the chip holds; `interruptedWithB`: a run then claimed b for
    /// this chip and was killed before superseding a (b is interrupted on it).
    static func chipCarryingA(interruptedWithB: Bool) throws -> (
        ledger: SQLiteLedger, debugger: EmulatedDebugger, chip: String, carried: [UInt8]
    ) {
        let template = ProvisioningRunTests.template
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([Station(name: "a", identity: identity(1)), Station(name: "b", identity: identity(2))])
        let debugger = EmulatedDebugger()
        var options = ProvisioningRunTests.benchOptions(wait: 0.2)
        options.stations = ["a"]
        _ = ProvisioningRun(template: template, ledger: ledger, options: options) { _ in }
            .run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in debugger }])
        let chip = "00:12:4B:00:25:41"
        #expect(try ledger.verifiedStation(forChip: chip) == "a")
        let carried = debugger.chip!.flash
        if interruptedWithB {
            _ = try ledger.claimNextStation(
                chip: chip, debugger: "emu", template: template.manifest.name,
                templateSHA256: template.manifest.imageSHA256, verifyMethod: "crc", skipping: [],
                image: { _ in ("x", nil) })
            _ = try ledger.recoverInterrupted()
        }
        return (ledger, debugger, chip, carried)
    }

    /// A reprovisioning killed between claiming the new station and superseding the old one
    /// leaves the chip with the old, verified station and an interrupted attempt of the new one,
    /// which never reached the chip: resuming it erases nothing (the old station stays on its
    /// chip, as the ledger says), even when the run stops right there.
    @Test func anInterruptedReprovisioningNeverErasesTheStationTheChipCarries() throws {
        let template = ProvisioningRunTests.template
        let (ledger, debugger, chip, carried) = try Self.chipCarryingA(interruptedWithB: true)
        var again = ProvisioningRunTests.benchOptions(wait: 0.2)
        again.reprovision = true
        let holder = Mutex<ProvisioningRun?>(nil)
        let run = ProvisioningRun(template: template, ledger: ledger, options: again) { event in
            if case .finished(_, "b", _, .failed, _) = event { holder.withLock { $0?.requestStop() } }
        }
        holder.withLock { $0 = run }
        _ = run.run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in debugger }])
        let unchanged = debugger.chip!.flash == carried
        #expect(unchanged, "the chip still holds a")
        #expect(try ledger.verifiedStation(forChip: chip) == "a")
        #expect(try ledger.attempts().last?.reason == "interrupted before its burn began; the chip still carries 'a'")
        #expect(ledger.check() == [])
    }

    /// A run whose lease is lost erases the chip in its hand — but never one that still carries
    /// another station the ledger records as verified on it: a reprovisioned chip before its old
    /// station is superseded, or a chip with an interrupted attempt of another station.
    @Test(arguments: [false, true])
    func aLostLeaseNeverErasesAStationTheChipCarries(interruptedOnIt: Bool) throws {
        let template = ProvisioningRunTests.template
        let (ledger, debugger, chip, carried) = try Self.chipCarryingA(interruptedWithB: interruptedOnIt)
        var again = ProvisioningRunTests.benchOptions(wait: 0.2)
        again.reprovision = true
        let losing = LedgerFailingOnFinish(ledger, losingLease: true)
        let summary = ProvisioningRun(template: template, ledger: losing, options: again) { _ in }
            .run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in debugger }])
        #expect(summary.leaseLost != nil, "\(summary)")
        let unchanged = debugger.chip!.flash == carried
        #expect(unchanged, "the chip still holds a: \(summary)")
        #expect(try ledger.verifiedStation(forChip: chip) == "a")
    }
}
