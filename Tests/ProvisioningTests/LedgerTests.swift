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

func temporaryLedgerPath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).sqlite").path
}

/// Removes a temporary ledger and the files SQLite keeps beside it.
func removeLedgerFiles(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

func identity(_ minor: Int, major: Int = 1, power: Int8 = -59) -> IBeacon {
    IBeacon(
        uuid: UUID(uuidString: "7634A485-1732-4B7D-AB44-D505D8A24C60")!, major: UInt16(major), minor: UInt16(minor),
        measuredPower: power)
}

struct LedgerTests {
    /// A list's progress counts only its own stations, and releasing its held stations leaves
    /// another list's alone.
    @Test func aListSeesAndReleasesOnlyItsOwnStations() throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register((0..<4).map { Station(name: "s\($0)", identity: identity($0)) })
        for (index, chip) in ["00:12:4B:00:00:01", "00:12:4B:00:00:02", "00:12:4B:00:00:03"].enumerated() {
            let (_, attempt) = try #require(
                try ledger.claimNextStation(
                    chip: chip, debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc", skipping: [],
                    image: { _ in ("i", nil) }))
            if index == 0 { try ledger.finish(attempt.id, outcome: .verified, reason: nil) }
        }
        _ = try ledger.recoverInterrupted()  // s1 and s2 were left in progress: now held
        let mine: Set = ["s0", "s1", "s3"]
        let progress = try ledger.progress(of: mine)
        #expect(progress.states.map(\.station.name) == ["s0", "s1", "s3"])
        #expect(
            (progress.done, progress.pending, progress.held, progress.inProgress, progress.left) == (1, 1, ["s1"], 0, 2)
        )
        #expect(!progress.isComplete)
        let released = try ledger.releaseHeld(in: mine)
        #expect(released.map(\.station) == ["s1"] && released.map(\.chip) == ["00:12:4B:00:00:02"])
        #expect(released.map(\.result) == [.released], "a file ledger releases at once")
        #expect(try ledger.progress(of: ["s2"]).held == ["s2"], "another list's held station stays held")
    }

    /// A new station with an identity the ledger has names the station that has it; when the two
    /// names are one text in two Unicode forms (they print alike), the refusal says so.
    @Test(arguments: [
        ("Hall", "Lobby", "station 'Hall' of the ledger already has UUID", false),
        ("Caf\u{E9}", "Cafe\u{301}", "station 'Caf\u{E9}' of the ledger already has UUID", true),
    ])
    func anIdentityTakenNamesItsHolder(registered: String, listed: String, says: String, alike: Bool) throws {
        let path = temporaryLedgerPath()
        defer { removeLedgerFiles(path) }
        let ledger = try SQLiteLedger(path: path)
        try ledger.register([Station(name: registered, identity: identity(1))])
        #expect {
            try ledger.register([Station(name: listed, identity: identity(1))])
        } throws: { error in
            let message = (error as? LedgerError)?.description ?? ""
            return message.contains(says) && message.contains("other Unicode code points") == alike
                && message.contains("registering station '\(listed)'")
        }
        #expect(try ledger.states().map(\.station.name) == [registered], "nothing registered")
    }

    /// An attempt settled meanwhile (taken for a crash's by another run, and released) keeps its
    /// record: the burn that finishes late is reported, never written over it.
    @Test func anAttemptSettledMeanwhileIsNotOverwritten() throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([Station(name: "a", identity: identity(1))])
        let (_, attempt) = try #require(
            try ledger.claimNextStation(
                chip: "00:12:4B:00:00:01", debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc",
                skipping: [], image: { _ in ("i", nil) }))
        _ = try ledger.recoverInterrupted()
        try ledger.release(station: "a")
        #expect { try ledger.finish(attempt.id, outcome: .verified, reason: nil) } throws: { error in
            (error as? LedgerError)?.message.contains("the attempt was settled meanwhile as failed") == true
        }
        #expect(try ledger.attempts().map(\.outcome) == [.failed])
        #expect(try ledger.verifiedStation(forChip: "00:12:4B:00:00:01") == nil)
    }

    @Test func theSchemaRefusesWhatMustNeverHappen() throws {
        let path = temporaryLedgerPath()
        let ledger = try SQLiteLedger(path: path)
        try ledger.register([Station(name: "a", identity: identity(1)), Station(name: "b", identity: identity(2))])
        // Same list again: fine. Same name, other identity: refused. Other name, same identity: refused.
        try ledger.register([Station(name: "a", identity: identity(1))])
        #expect(throws: LedgerError.self) { try ledger.register([Station(name: "a", identity: identity(9))]) }
        #expect(throws: LedgerError.self) { try ledger.register([Station(name: "c", identity: identity(2))]) }

        let (a, first) = try #require(
            try ledger.claimNextStation(
                chip: "00:12:4B:00:00:01", debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc",
                skipping: [],
                image: { _ in ("i", nil) }))
        #expect(a.name == "a")
        try ledger.finish(first.id, outcome: .verified, reason: nil)
        #expect(try ledger.verifiedStation(forChip: "00:12:4B:00:00:01") == "a")
        // b on the same chip: the second verified attempt for that chip is refused by the database.
        let (b, second) = try #require(
            try ledger.claimNextStation(
                chip: "00:12:4B:00:00:01", debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc",
                skipping: [],
                image: { _ in ("i", nil) }))
        #expect(b.name == "b")
        #expect { try ledger.finish(second.id, outcome: .verified, reason: nil) } throws: { error in
            (error as? LedgerError)?.isConstraint == true
        }
        try ledger.finish(second.id, outcome: .failed, reason: "test")
        // Nothing pending twice, nothing claimed twice.
        #expect(try ledger.states().map(\.station.name) == ["a", "b"])
        let database = try SQLiteDatabase(path: path, mode: .readWrite)
        #expect(throws: LedgerError.self) {
            try database.execute(
                "INSERT INTO attempts(station, chip, debugger, template, template_sha256, image_sha256, started_at, finished_at, outcome, verify_method) VALUES ('b', '00:12:4B:00:00:02', 'd', 't', 'x', 'i', 'now', 'now', 'verified', 'none')",
                [], "a verified attempt without verification")
        }
    }

    @Test func crashRecoveryHoldsTheStationUntilReleased() throws {
        let path = temporaryLedgerPath()
        var ledger: SQLiteLedger? = try SQLiteLedger(path: path)
        try ledger!.register([Station(name: "a", identity: identity(1)), Station(name: "b", identity: identity(2))])
        _ = try ledger!.claimNextStation(
            chip: "00:12:4B:00:00:01", debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc",
            skipping: [],
            image: { _ in ("i", nil) })
        ledger = nil  // the process "dies" with the attempt in progress
        let reopened = try SQLiteLedger(path: path)
        let interrupted = try reopened.recoverInterrupted()
        #expect(interrupted.map(\.station) == ["a"])
        #expect(try reopened.states()[0].state == .held(chip: "00:12:4B:00:00:01"))
        // A held station is not given to another chip.
        let next = try reopened.claimNextStation(
            chip: "00:12:4B:00:00:02", debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc",
            skipping: [],
            image: { _ in ("i", nil) })
        #expect(next?.0.name == "b")
        try reopened.release(station: "a")
        #expect(try reopened.states()[0].state == .pending(lastFailure: "released after an interruption"))
    }
}

/// Emulated debuggers whose chips are swapped for fresh ones after each burn (a bench), with
/// random faults; every retired chip is kept so its flash can be checked against the ledger.
///
/// One seed replays one schedule: each debugger draws its faults from its own generator, derived
/// from the seed and its index, and gets its own share of the chips (with IEEE addresses of its
/// own), so what happens on one debugger never depends on how the threads of the others were
/// scheduled.
final class Bench: Sendable {
    let debuggers: [EmulatedDebugger]
    let retired = Mutex<[String: [UInt8]]>([:])
    /// Per debugger: its generator and how many chips it has handed out.
    private let dealt: Mutex<(generators: [SeededGenerator], chipsIssued: [Int])>
    let chipsPerDebugger: Int
    /// Whether chips may arrive bad or locked.
    let faultyChips: Bool
    private let arrangement = Mutex<(addressOverrides: [Int: [UInt8]], swapsByHand: Bool)>(([:], false))

    /// The IEEE address chip number N (1-based, per debugger) arrives with instead of its own.
    var addressOverrides: [Int: [UInt8]] {
        get { arrangement.withLock { $0.addressOverrides } }
        set { arrangement.withLock { $0.addressOverrides = newValue } }
    }
    /// Swap chips by hand: the socket is seen empty once between two chips.
    var swapsByHand: Bool {
        get { arrangement.withLock { $0.swapsByHand } }
        set { arrangement.withLock { $0.swapsByHand = newValue } }
    }

    init(debuggers count: Int, chips: Int, seed: UInt64, faultyChips: Bool = true) {
        self.faultyChips = faultyChips
        chipsPerDebugger = chips / count
        dealt = Mutex(
            (
                (0..<count).map { SeededGenerator(seed: seed, stream: UInt64($0)) },
                [Int](repeating: 0, count: count)
            ))
        debuggers = (0..<count).map { _ in EmulatedDebugger(chip: nil) }
        for (index, debugger) in debuggers.enumerated() {
            debugger.chip = makeChip(for: index)
            debugger.onResetToRun = { [self] debugger in
                if let chip = debugger.chip { retired.withLock { $0[Self.ieee(chip)] = chip.flash } }
                if swapsByHand {
                    debugger.chip = nil
                    debugger.chipArriving = makeChip(for: index)
                } else {
                    debugger.chip = makeChip(for: index)
                }
            }
        }
    }

    static func ieee(_ chip: EmulatedChip) -> String {
        chip.ieeeAddress.map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    /// A number below `bound` from debugger `index`'s generator.
    func random(_ bound: UInt64, debugger index: Int) -> UInt64 {
        dealt.withLock { $0.generators[index].next() % bound }
    }

    func makeChip(for index: Int) -> EmulatedChip? {
        let issued = dealt.withLock { dealt -> Int? in
            guard dealt.chipsIssued[index] < chipsPerDebugger else { return nil }
            dealt.chipsIssued[index] += 1
            return dealt.chipsIssued[index]
        }
        guard let number = issued else { return nil }
        let chip = EmulatedChip(
            ieee: addressOverrides[number] ?? [
                0x00, 0x12, 0x4B, UInt8(index + 1), UInt8(number >> 8), UInt8(number & 0xFF),
            ])
        switch faultyChips ? random(10, debugger: index) : 9 {
        case 0: chip.stuckAtZero[0x7F10] = 0x01  // a bad cell: verification fails
        case 1: chip.setDebugLockBit()  // arrives locked: erased first
        default: break
        }
        return chip
    }
}
extension StationState.State {
    var isDone: Bool { if case .done = self { true } else { false } }
}

/// A transport whose `occurrence`-th control transfer with `request` (and `index`, when given)
/// times out, once; everything else passes through to the emulated debugger.
final class RequestFault: DebuggerTransport, Sendable {
    let inner: EmulatedDebugger
    let request: UInt8
    let index: UInt16?
    let occurrence: Int
    /// Runs when the fault fires (a bench's reaction to it).
    let onFault: @Sendable () -> Void
    let seen = Atomic<Int>(0)

    init(
        _ inner: EmulatedDebugger, request: UInt8, index: UInt16? = nil, occurrence: Int,
        onFault: @escaping @Sendable () -> Void = {}
    ) {
        self.inner = inner
        self.request = request
        self.index = index
        self.occurrence = occurrence
        self.onFault = onFault
    }

    func fails(_ request: UInt8, _ index: UInt16) -> Bool {
        guard request == self.request, self.index == nil || self.index == index else { return false }
        let count = seen.add(1, ordering: .relaxed).newValue
        if count == occurrence { onFault() }
        return count == occurrence
    }

    func controlIn(request: UInt8, value: UInt16, index: UInt16, length: Int, timeoutMilliseconds: Int)
        throws(TransportError) -> [UInt8]
    {
        if fails(request, index) { throw .timeout }
        return try inner.controlIn(
            request: request, value: value, index: index, length: length, timeoutMilliseconds: timeoutMilliseconds)
    }

    func controlOut(request: UInt8, value: UInt16, index: UInt16, data: [UInt8], timeoutMilliseconds: Int)
        throws(TransportError)
    {
        if fails(request, index) { throw .timeout }
        try inner.controlOut(
            request: request, value: value, index: index, data: data, timeoutMilliseconds: timeoutMilliseconds)
    }

    func bulkOut(_ data: [UInt8], timeoutMilliseconds: Int) throws(TransportError) {
        try inner.bulkOut(data, timeoutMilliseconds: timeoutMilliseconds)
    }

    func bulkIn(length: Int, timeoutMilliseconds: Int) throws(TransportError) -> [UInt8] {
        try inner.bulkIn(length: length, timeoutMilliseconds: timeoutMilliseconds)
    }
}

/// Every event a run reported, in order (the run reports from its worker threads).
final class EventLog: Sendable {
    private let events = Mutex<[ProvisionEvent]>([])

    /// Records one event; pass as a run's `events`.
    @Sendable func record(_ event: ProvisionEvent) { events.withLock { $0.append(event) } }

    /// The events so far.
    var all: [ProvisionEvent] { events.withLock { $0 } }
}

/// A ledger that fails its first `finish` with a database error (a full disk, say), and
/// otherwise is the SQLite ledger underneath.
final class LedgerFailingOnFinish: ForwardingLedger, Sendable {
    let inner: SQLiteLedger
    let failed = Mutex(false)
    /// Fail the first `states()` instead of the first `finish`.
    let failingStates: Bool

    /// Its lease is lost when a chip's station is superseded or an outcome recorded: as if the
    /// run had been paused past its lease right then.
    let losingLease: Bool

    init(_ inner: SQLiteLedger, failingStates: Bool = false, losingLease: Bool = false) {
        self.inner = inner
        self.failingStates = failingStates
        self.losingLease = losingLease
    }

    var forwardee: any ProvisioningLedger { inner }

    /// True once: the one failure this ledger gives.
    func failsNow() -> Bool {
        failed.withLock { failed in
            defer { failed = true }
            return !failed
        }
    }

    func finish(
        _ attemptID: Int, outcome: AttemptOutcome, reason: String?, readBack: String?, onAir: OnAirCheck?,
        debugLocked: Bool
    ) throws(LedgerError) {
        if losingLease { throw LedgerError(operation: "finishing", message: "lease over", kind: .leaseLost) }
        if !failingStates, failsNow() {
            throw LedgerError(operation: "finishing attempt \(attemptID)", message: "disk I/O error", kind: .database)
        }
        try inner.finish(
            attemptID, outcome: outcome, reason: reason, readBack: readBack, onAir: onAir, debugLocked: debugLocked)
    }
    func supersede(chip: String, reason: String) throws(LedgerError) {
        if losingLease { throw LedgerError(operation: "superseding", message: "lease over", kind: .leaseLost) }
        try inner.supersede(chip: chip, reason: reason)
    }
    func states() throws(LedgerError) -> [StationState] {
        if failingStates, failsNow() {
            throw LedgerError(operation: "reading the stations", message: "disk I/O error", kind: .database)
        }
        return try inner.states()
    }
}
