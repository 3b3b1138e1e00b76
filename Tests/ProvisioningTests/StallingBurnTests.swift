import CCDebuggerEmulator
import Foundation
import TestSupport
import Testing

@testable import CCDebugger
@testable import Provisioning
@testable import StationLedger

/// Found by the review of issue 27's framing (failed before its fix): a debugger that stalls
/// every burn (packed framing on a firmware that takes bursts only alone) made provision erase
/// and burn one chip again without end, --retries and --wait never taking effect: each cut-off
/// burn was recorded as interrupted, then found erased, and neither counted.
struct StallingBurnTests {
    @Test func aBurnThatIsCutOffEveryTimeIsGivenUpAfterItsRetries() throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        defer { removeLedgerFiles(ledger.database.path) }
        try ledger.register([Station(name: "a", identity: identity(1))])
        let debugger = EmulatedDebugger()
        debugger.takesBurstsOnlyAlone = true
        var options = ProvisioningRunTests.benchOptions(wait: 0.5)
        options.usbFraming = .packed
        options.retries = 1
        let started = Date()
        let run = ProvisioningRun(
            template: ProvisioningRunTests.template, ledger: ledger, options: options,
            stopRequested: { Date().timeIntervalSince(started) > 20 }
        ) { _ in }
        let summary = run.run([ProvisioningDebugger(name: "d") { () throws(DebuggerError) in debugger }])
        let attempts = try ledger.attempts()
        #expect(Date().timeIntervalSince(started) < 20, "the run ended only when asked to stop")
        #expect(attempts.count <= 2 * (options.retries + 1), "\(attempts.count) attempts on one chip")
        #expect(summary.verified.isEmpty)
        #expect(summary.stopped["d"]?.contains("given up") == true, "\(summary.stopped)")
    }
}
