import Synchronization
import Testing

@testable import StationLedger

/// The moments a run's lease may run out inside one of its own changes (fourth review of the
/// shared pool): a claim whose COMMIT lands after the lease ran out by the run's own clock must
/// not lead to a burn; and who may release a held station.
struct LeaseWindowTests {
    /// Runs another driver's statements; once armed, `beforeCommit` runs after a transaction's
    /// work and before its COMMIT — where a process paused by the system (SIGSTOP, a swapped-out
    /// page) would sit while its lease runs out.
    final class PausingDriver: LedgerDriver {
        let base: any LedgerDriver
        let beforeCommit = Mutex<(@Sendable () -> Void)?>(nil)

        init(_ base: any LedgerDriver) { self.base = base }

        var dialect: SQLDialect { base.dialect }
        var isRepeating: Bool { base.isRepeating }

        func rows(_ sql: String, _ values: [SQLValue], _ operation: String) throws(LedgerError) -> [[SQLValue]] {
            try base.rows(sql, values, operation)
        }

        func reading<T>(_ operation: String, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
            try base.reading(operation, body)
        }

        func inTransaction<T>(_ operation: String, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
            try base.inTransaction(operation) { () throws(LedgerError) -> T in
                let result = try body()
                beforeCommit.withLock { $0 }?()
                return result
            }
        }
    }

    /// The lease runs out (by the run's own clock) after the claim's fence passed and before its
    /// COMMIT: the claim is committed — the attempt stays in progress, for recovery to find
    /// interrupted — but the caller is told the lease is lost, so no chip is burned for it. It
    /// used to be returned as claimed, and the bench burned the chip after its lease had ended.
    @Test(arguments: [false, true])
    func aClaimCommittedAfterTheLeaseRanOutIsNotBurned(again: Bool) throws {
        let path = temporaryLedgerPath()
        let file = try SQLiteLedger(path: path)
        try file.register(FencedRunTests.stations)
        if again {
            // `claimAgain` supersedes a verified attempt of the chip in the same transaction.
            let (_, first) = try #require(try FencedRunTests.claim(file, chip: FencedRunTests.chips[0]))
            try file.finish(first.id, outcome: .verified, reason: nil)
        }
        let driver = PausingDriver(file.database)
        let core = LedgerCore(
            driver: driver, name: path, bench: nil, present: Set(LedgerCore.attemptColumns), tables: file.core.tables,
            hookOutcomes: [], leaseSeconds: 90, soleRunner: true)
        try core.beginRun(exclusive: false)
        driver.beforeCommit.withLock { $0 = { core.lease.lose("paused past its lease (by the test)") } }
        let kind = FencedRunTests.kind {
            if again {
                _ = try core.claimAgain(
                    station: "s1", chip: FencedRunTests.chips[0], debugger: "d", template: "t", templateSHA256: "x",
                    verifyMethod: "crc", reason: "again", image: { _ in ("sha", nil) })
            } else {
                _ = try FencedRunTests.claim(core, chip: FencedRunTests.chips[0])
            }
        }
        #expect(kind == .leaseLost)
        // Committed: the claim is on the ledger, in progress, under the run whose lease is over.
        let claimed = try file.attempts().last
        #expect(claimed?.outcome == .inProgress && claimed?.run == core.lease.runID, "\(String(describing: claimed))")
        #expect(claimed?.chip == FencedRunTests.chips[0] && claimed?.station == "s1")
    }

    /// A file ledger's run holds the file's one-run lock: no other run can have journaled, so a
    /// held station is released at once, whatever bench or run was burning it.
    @Test func aFileLedgerReleasesAtOnce() throws {
        let path = temporaryLedgerPath()
        let crashed = try SQLiteLedger(path: path, bench: "bench-s", leaseSeconds: 3600, identity: .goneProcess)
        try crashed.register(FencedRunTests.stations)
        _ = try #require(try FencedRunTests.claim(crashed, chip: FencedRunTests.chips[0]))
        let next = try SQLiteLedger(path: path, bench: "bench-t")
        #expect(try next.recoverInterrupted().count == 1)
        #expect(try next.release(station: "s1") == .released)
        #expect(try next.states().first?.state == .pending(lastFailure: "released after an interruption"))
    }
}
