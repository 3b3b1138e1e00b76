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
        #expect(try ledger.progress(of: ["s2"]).held == ["s2"], "another list's held station stays held")
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

    static func ieee(_ chip: EmulatedCC2541) -> String {
        chip.ieeeAddress.map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    /// A number below `bound` from debugger `index`'s generator.
    func random(_ bound: UInt64, debugger index: Int) -> UInt64 {
        dealt.withLock { $0.generators[index].next() % bound }
    }

    func makeChip(for index: Int) -> EmulatedCC2541? {
        let issued = dealt.withLock { dealt -> Int? in
            guard dealt.chipsIssued[index] < chipsPerDebugger else { return nil }
            dealt.chipsIssued[index] += 1
            return dealt.chipsIssued[index]
        }
        guard let number = issued else { return nil }
        let chip = EmulatedCC2541(
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

struct ProvisioningRunTests {
    static let template = try! BundledData.template()

    /// Options for a test bench: a debugger gives up after `wait` seconds without a new chip and
    /// looks for one every 10 ms.
    static func benchOptions(wait: Double) -> ProvisionOptions {
        var options = ProvisionOptions()
        options.targetTimeoutSeconds = wait
        options.pollIntervalSeconds = 0.01
        return options
    }

    @Test(arguments: [UInt64(2541), 7, 99])
    func fiftyStationsOverThreeDebuggersWithRandomFaults(seed: UInt64) throws {
        let stations = (0..<50).map { Station(name: "station-\($0)", identity: identity($0)) }
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register(stations)
        let bench = Bench(debuggers: 3, chips: 80, seed: seed)
        // One debugger is unplugged part-way, another has one timeout.
        bench.debuggers[1].faults.unplugAfterTransfers = 400 + Int(bench.random(400, debugger: 1))
        bench.debuggers[2].faults.timeoutAtTransfer = 100 + Int(bench.random(300, debugger: 2))
        var options = Self.benchOptions(wait: 0.2)
        options.retries = 2
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: options) { _ in }
        let summary = run.run(
            bench.debuggers.enumerated().map { index, debugger in
                ProvisioningDebugger(name: "emu-\(index)") { () throws(DebuggerError) in debugger }
            })
        let attempts = try ledger.attempts()
        let states = try ledger.states()
        // Every station verified exactly once, or recorded as failed (and still pending), or held
        // on the chip left in the unplugged debugger (its burn stopped half-way: that chip may carry
        // the identity, so no other chip may get it).
        let unpluggedChip = bench.debuggers[1].chip.map(Bench.ieee)
        for state in states {
            let verified = attempts.filter { $0.station == state.station.name && $0.outcome == .verified }
            #expect(verified.count <= 1)
            switch state.state {
            case .done: #expect(verified.count == 1)
            case .pending: #expect(verified.isEmpty)
            case .held(let chip):
                #expect(chip == unpluggedChip && verified.isEmpty, "\(state.station.name) held on \(chip)")
                continue
            case .inProgress: Issue.record("\(state.station.name) left \(state.state)")
            }
            if verified.isEmpty {
                #expect(
                    attempts.contains { $0.station == state.station.name && $0.outcome == .failed }
                        || summary.stopped.count == 3)
            }
        }
        // No chip with two verified stations; no in-progress attempt left behind.
        let verifiedChips = attempts.filter { $0.outcome == .verified }.map(\.chip)
        #expect(Set(verifiedChips).count == verifiedChips.count)
        #expect(!attempts.contains { $0.outcome == .inProgress })
        // The flash of every verified chip decodes to its station's identity.
        let retired = bench.retired.withLock { $0 }
        let field = Self.template.beaconField
        for attempt in attempts where attempt.outcome == .verified {
            let flash = try #require(retired[attempt.chip], "chip \(attempt.chip) was not retired")
            let decoded = IBeacon(payload: flash[field.identityAddress..<(field.identityAddress + 21)])
            let station = try #require(states.first { $0.station.name == attempt.station }?.station)
            #expect(decoded == station.identity, "chip \(attempt.chip)")
        }
        #expect(summary.verified.count >= 30, "most stations make it despite the faults (\(summary.verified.count))")
    }

    /// Every debugger works at once, however few cores the machine has: eight debuggers with a
    /// chip each and eight stations — each debugger burns its chip at once, and none waits out
    /// its --wait for a chip while another debugger has not started (with the workers limited to
    /// the cores, debuggers 3–8 began only after 1 and 2 gave up waiting).
    @Test func everyDebuggerWorksAtOnce() throws {
        let stations = (0..<8).map { Station(name: "station-\($0)", identity: identity($0)) }
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register(stations)
        let debuggers = (0..<8).map { index in
            EmulatedDebugger(chip: EmulatedCC2541(ieee: [0x00, 0x12, 0x4B, 0x00, 0x88, UInt8(index)]))
        }
        for debugger in debuggers { debugger.onResetToRun = { $0.chip = nil } }  // one chip each
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: Self.benchOptions(wait: 60)) {
            _ in
        }
        let summary = run.run(
            debuggers.enumerated().map { index, debugger in
                ProvisioningDebugger(name: "emu-\(index)") { () throws(DebuggerError) in debugger }
            })
        #expect(summary.verified.count == 8)
        #expect(Set(summary.stopped.values) == ["no pending stations left"], "\(summary.stopped)")
    }

    /// A debugger waiting for a chip stops once the other debuggers have taken the last stations,
    /// instead of waiting out --wait for a chip nothing is left for (the run would not end).
    @Test func anIdleDebuggerStopsOnceTheOthersTookTheLastStation() throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register((0..<2).map { Station(name: "station-\($0)", identity: identity($0)) })
        let first = EmulatedDebugger(chip: EmulatedCC2541(ieee: [0x00, 0x12, 0x4B, 0x00, 0x89, 0x00]))
        // The second debugger's chip comes half a second later: the first one is waiting by then.
        let second = EmulatedDebugger(chip: nil)
        second.insertChip(EmulatedCC2541(ieee: [0x00, 0x12, 0x4B, 0x00, 0x89, 0x01]), after: .milliseconds(500))
        for debugger in [first, second] { debugger.onResetToRun = { $0.chip = nil } }
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: Self.benchOptions(wait: 30)) { _ in
        }
        let summary = run.run(
            [first, second].enumerated().map { index, debugger in
                ProvisioningDebugger(name: "emu-\(index)") { () throws(DebuggerError) in debugger }
            })
        #expect(summary.verified.count == 2)
        #expect(Set(summary.stopped.values) == ["no pending stations left"], "\(summary.stopped)")
    }

    /// A chip whose payload bytes carry stuck bits that leave the CRC unchanged is not verified:
    /// the identity bytes are read back byte for byte; the station goes to the next chip, and the
    /// ledger records what was read back.
    @Test func aCRCPreservingCorruptionOfTheIdentityFailsTheChip() throws {
        let station = Station(name: "s0", identity: identity(0))
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([station])
        let bench = Bench(debuggers: 1, chips: 3, seed: 1, faultyChips: false)
        let options = Self.benchOptions(wait: 0.2)
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: options) { _ in }
        let memory = run.image(for: station).file.memory
        let field = Self.template.beaconField
        let chunk = try #require(CC254xSession.verifyChunks(memory).first { $0.contains(field.identityAddress) })
        let collision = try #require(
            CRCCollisions.stuckAtZero(in: memory, chunk: chunk, window: field.range, count: 1).first)
        bench.debuggers[0].chip?.stuckAtZero = CRCCollisions.masks(collision)
        let summary = run.run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in bench.debuggers[0] }])
        #expect(summary.verified == ["s0"])
        let attempts = try ledger.attempts()
        #expect(attempts.map(\.outcome) == [.failed, .verified])
        #expect(attempts.first?.reason?.contains("the identity bytes did not read back") == true, "\(attempts)")
        #expect(attempts.first?.chip != attempts.last?.chip)
        #expect(attempts.last?.readBack == "0x7F02-0x7F25,0x7F28-0x7F2C", "the ledger says which bytes were read back")
        #expect(attempts.first?.readBack == nil)
    }

    /// Chips whose IEEE address is erased (all FF) or all zero cannot be told apart: three in a
    /// row once ended with one identity on two chips. They are set aside, never burned; with
    /// `--chip-id secondary` a chip with a usable secondary address is named by it and keeps it.
    @Test(arguments: [ChipIdentitySource.primary, .secondary])
    func chipsThatCannotBeToldApartAreSetAside(source: ChipIdentitySource) throws {
        let stations = (0..<3).map { Station(name: "s\($0)", identity: identity($0)) }
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register(stations)
        let erased: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        let bench = Bench(debuggers: 1, chips: 8, seed: 1, faultyChips: false)
        bench.addressOverrides = [2: erased, 3: [0, 0, 0, 0, 0, 0], 4: erased]
        bench.swapsByHand = true  // chips with one address are told apart by the empty socket between them
        // The first chip came with the bench: give it an erased address too, and a secondary one.
        let first = EmulatedCC2541(ieee: erased)
        let chip = Self.template.chip
        first.flash.replaceSubrange(chip.secondaryAddress, with: [0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
        bench.debuggers[0].chip = first
        var options = Self.benchOptions(wait: 0.2)
        options.chipIdentity = source
        let events = EventLog()
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: options, events: events.record)
        let summary = run.run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in bench.debuggers[0] }])
        #expect(Set(summary.verified) == ["s0", "s1", "s2"])
        #expect(summary.setAside == (source == .primary ? 4 : 3), "\(events.all)")
        let chips = try ledger.attempts().map(\.chip)
        #expect(!chips.contains("FF:FF:FF:FF:FF:FF") && !chips.contains("00:00:00:00:00:00"), "\(chips)")
        #expect(Set(chips).count == chips.count)
        if source == .secondary {
            #expect(chips.first == "11:22:33:44:55:66", "named by its secondary address (MSB first)")
            #expect(
                Array(first.flash[chip.secondaryAddress]) == [0x66, 0x55, 0x44, 0x33, 0x22, 0x11], "kept by the burn")
        }
    }

    /// A chip named by its secondary address (`--chip-id secondary`: its IEEE address is erased)
    /// keeps that name through the run's erases: a failed burn erases the chip, and the address is
    /// written back, so the chip is not set aside for good the next time it is attached.
    @Test func aChipNamedByItsSecondaryAddressKeepsItThroughAnErase() throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([Station(name: "s0", identity: identity(0))])
        let bench = Bench(debuggers: 1, chips: 2, seed: 1, faultyChips: false)
        bench.swapsByHand = true
        let chip = Self.template.chip
        let first = EmulatedCC2541(ieee: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        let name: [UInt8] = [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]
        first.flash.replaceSubrange(chip.secondaryAddress, with: name)
        first.stuckAtZero[0x7F28] = 0xFF  // verification fails: the burn fails and the chip is erased
        bench.debuggers[0].chip = first
        var options = Self.benchOptions(wait: 0.2)
        options.chipIdentity = .secondary
        options.retries = 0
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: options) { _ in }
        _ = run.run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in bench.debuggers[0] }])
        let attempts = try ledger.attempts()
        #expect(attempts.first?.chip == "11:22:33:44:55:66" && attempts.first?.outcome == .failed, "\(attempts)")
        #expect(attempts.first?.reason?.contains("the chip was erased") == true, "\(attempts)")
        #expect(Array(first.flash[chip.secondaryAddress]) == name, "the chip's name was written back")
        #expect(
            first.flash.enumerated().allSatisfy { chip.secondaryAddress.contains($0.offset) || $0.element == 0xFF },
            "nothing else was written back: the identity is gone")
    }

    /// A burn that fails after the chip was programmed must not leave the identity on that chip
    /// while the station goes to another. A chip that fails verification is erased before it is
    /// released. A transfer failing mid-burn leaves the outcome unknown: the station is held —
    /// even when the operator swaps the chip — until that chip is back and checked. Every chip
    /// that ever sat on the bench is read afterwards: the identity is on exactly one.
    @Test(arguments: [false, true])
    func aFailedBurnNeverLeavesTheIdentityOnASecondChip(transferFails: Bool) throws {
        let station = Station(name: "s0", identity: identity(0))
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([station])
        let bench = Bench(debuggers: 1, chips: 4, seed: 1, faultyChips: false)
        let debugger = bench.debuggers[0]
        let first = try #require(debugger.chip)
        // The first flash read of a burn is the identity read-back, right after programming; the
        // operator, seeing the debugger fail, swaps the chip.
        let transport = RequestFault(
            debugger, request: Frames.Request.prepareRead, occurrence: transferFails ? 1 : 0,
            onFault: { debugger.chip = bench.makeChip(for: 0) })
        if !transferFails { first.stuckAtZero[0x7F28] = 0xFF }  // the interval: outside the payload
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: Self.benchOptions(wait: 0.2)) { _ in
        }
        let summary = run.run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in transport }])
        if transferFails {
            #expect(summary.verified.isEmpty)
            #expect(try ledger.states().first?.state == .held(chip: Bench.ieee(first)))
            // The first chip comes back: its flash is checked and settles the station.
            debugger.chip = first
            let again = ProvisioningRun(
                template: Self.template, ledger: ledger, options: Self.benchOptions(wait: 0.2)
            ) { _ in }
            #expect(
                again.run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in transport }]).verified == [
                    "s0"
                ])
        } else {
            #expect(summary.verified == ["s0"])
        }
        let attempts = try ledger.attempts()
        #expect(attempts.filter { $0.outcome == .verified }.count == 1, "\(attempts)")
        // Every chip by its address: those taken off, the one on now, and the first as it is now.
        let field = Self.template.beaconField
        var chips = bench.retired.withLock { $0 }
        if let current = debugger.chip { chips[Bench.ieee(current)] = current.flash }
        chips[Bench.ieee(first)] = first.flash
        let carrying = chips.filter { _, flash in
            IBeacon(payload: flash[field.identityAddress..<(field.identityAddress + 21)]) == station.identity
        }
        #expect(carrying.count == 1, "chips carrying s0's identity: \(carrying.keys.sorted()); \(attempts)")
    }

    /// `--reprovision` changes a chip's record only when the chip gets another station: with
    /// nothing else to burn, the chip keeps its station in the ledger as on the chip. (Its station
    /// was marked superseded while the chip still carried it, and then burned on a second chip.)
    @Test func reprovisioningWithNothingToGiveLeavesTheChipsRecord() throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([Station(name: "a", identity: identity(1)), Station(name: "b", identity: identity(2))])
        let debugger = EmulatedDebugger()  // chip 00:12:4B:00:25:41, which stays attached
        let chip = Bench.ieee(try #require(debugger.chip))
        let (_, a) = try #require(
            try ledger.claimNextStation(
                chip: chip, debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc", skipping: [],
                image: { _ in ("i", nil) }))
        try ledger.finish(a.id, outcome: .verified, reason: nil)
        // b is held: interrupted on a chip that is not here.
        _ = try ledger.claimNextStation(
            chip: "00:12:4B:00:99:99", debugger: "d", template: "t", templateSHA256: "x", verifyMethod: "crc",
            skipping: [], image: { _ in ("i", nil) })
        _ = try ledger.recoverInterrupted()
        var options = Self.benchOptions(wait: 0.1)
        options.reprovision = true
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: options) { _ in }
        let summary = run.run([ProvisioningDebugger(name: "d") { () throws(DebuggerError) in debugger }])
        #expect(summary.verified.isEmpty)
        #expect(try ledger.verifiedStation(forChip: chip) == "a")
        #expect(try ledger.attempts().map(\.outcome) == [.verified, .interrupted])
    }

    /// A debug-locked chip must be erased before its address can be read; if the ledger says it
    /// carried a station, that station is gone from it: recorded as superseded and burned again —
    /// here onto the same chip. (The run said "left alone" after erasing it: the identity was lost.)
    @Test func aLockedChipThatCarriedAStationGetsItBack() throws {
        let station = Station(name: "a", identity: identity(1))
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([station])
        let debugger = EmulatedDebugger()
        let chip = try #require(debugger.chip)
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: Self.benchOptions(wait: 0.1)) { _ in
        }
        #expect(run.run([ProvisioningDebugger(name: "d") { () throws(DebuggerError) in debugger }]).verified == ["a"])
        chip.setDebugLockBit()  // someone locked it since
        let events = EventLog()
        let again = ProvisioningRun(
            template: Self.template, ledger: ledger, options: Self.benchOptions(wait: 0.1), events: events.record)
        let summary = again.run([ProvisioningDebugger(name: "d") { () throws(DebuggerError) in debugger }])
        #expect(summary.verified == ["a"], "\(events.all)")
        #expect(events.all.contains(.erasedOnArrival(debugger: "d", chip: Bench.ieee(chip), station: "a")))
        #expect(try ledger.attempts().map(\.outcome) == [.superseded, .verified])
        let field = Self.template.beaconField
        #expect(IBeacon(payload: chip.flash[field.identityAddress..<(field.identityAddress + 21)]) == station.identity)
    }

    /// A chip of another size than the template's (its CHIPINFO0.FLASHSIZE says so) is set aside
    /// unburned, locked or not: the template's pages, NV area and lock bits are not its own. (It
    /// used to be burned and recorded as done; found by a review.)
    @Test(arguments: [false, true])
    func aChipOfAnotherSizeIsSetAsideUnburned(locked: Bool) throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([Station(name: "a", identity: identity(1))])
        let small = EmulatedCC2541(flashSize: 128 * 1024)
        if locked { small.setDebugLockBit() }
        let debugger = EmulatedDebugger(chip: small)
        let events = EventLog()
        let run = ProvisioningRun(
            template: Self.template, ledger: ledger, options: Self.benchOptions(wait: 0.1), events: events.record)
        let summary = run.run([ProvisioningDebugger(name: "d") { () throws(DebuggerError) in debugger }])
        #expect(summary.verified.isEmpty && summary.setAside == 1, "\(events.all)")
        #expect(
            events.all.contains(
                .setAside(
                    debugger: "d", address: Bench.ieee(small),
                    reason: .notTheTemplatesChip(flashSizeCode: 3, templateChip: "CC2541F256", erased: locked))),
            "\(events.all)")
        #expect(try ledger.attempts().isEmpty, "no attempt was recorded")
        #expect(small.flash.allSatisfy { $0 == 0xFF }, "nothing was written (a locked one is erased to be read)")
        #expect(try ledger.states().first?.state == .pending(lastFailure: nil))
    }

    /// One seed, one schedule: each debugger's chips (addresses and faults) are the same whatever
    /// order the debuggers ask in, so a failing seed replays.
    @Test func aSeedReplaysTheSameChipsWhateverTheThreadOrder() {
        func chips(_ bench: Bench, order: [Int]) -> [[String]] {
            var drawn = [[String]](repeating: [], count: 3)
            for index in order {
                guard let chip = bench.makeChip(for: index) else { continue }
                drawn[index].append("\(Bench.ieee(chip)) \(chip.stuckAtZero) \(chip.debugLocked)")
            }
            return drawn
        }
        let inTurn = chips(Bench(debuggers: 3, chips: 60, seed: 2541), order: (0..<60).map { $0 % 3 })
        let oneAfterAnother = chips(Bench(debuggers: 3, chips: 60, seed: 2541), order: (0..<60).map { $0 / 20 })
        #expect(inTurn == oneAfterAnother)
        #expect(inTurn != chips(Bench(debuggers: 3, chips: 60, seed: 7), order: (0..<60).map { $0 % 3 }))
    }

    /// A reset to run that fails after a recorded burn is reported, not swallowed, and retried on
    /// the reopened debugger; the run goes on with the next chips. (It was `try?`: the chip was
    /// never released, the bench never swapped it and the worker starved.)
    @Test(arguments: [1, 2, 3])
    func aFailedResetAfterAVerifiedBurnIsReportedAndRetried(failingReset: Int) throws {
        let stations = (0..<4).map { Station(name: "s\($0)", identity: identity($0)) }
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register(stations)
        let bench = Bench(debuggers: 1, chips: 8, seed: 1, faultyChips: false)
        let transport = RequestFault(
            bench.debuggers[0], request: Frames.Request.reset, index: 0, occurrence: failingReset)
        let options = Self.benchOptions(wait: 0.2)
        let events = EventLog()
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: options, events: events.record)
        let summary = run.run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in transport }])
        let seen = events.all
        let failures = seen.filter { if case .resetFailed = $0 { true } else { false } }
        #expect(failures.count == 1, "\(seen)")
        #expect(Set(summary.verified) == Set(stations.map(\.name)), "\(summary)")
        #expect(summary.stopped["emu"] == "no pending stations left")
        // Every verified chip was released (reset to run) and retired by the bench.
        let retired = bench.retired.withLock { $0 }
        for attempt in try ledger.attempts() where attempt.outcome == .verified {
            #expect(retired[attempt.chip] != nil, "chip \(attempt.chip) was never reset to run")
        }
    }

    /// A run with --interval/--tx-power: every burned chip carries them, and its own address (the
    /// list's where it gives one).
    @Test func settingsReachEveryChip() throws {
        let stations = (0..<6).map { Station(name: "s\($0)", identity: identity($0)) }
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register(stations)
        let bench = Bench(debuggers: 1, chips: 20, seed: 5)
        var options = Self.benchOptions(wait: 0.2)
        options.retries = 5
        options.settings = try Self.template.check(
            StationSettings(interval: try AdvertisingInterval(parsingMilliseconds: "500"), txPower: -10))
        options.addresses = ["s3": try RandomStaticAddress(parsing: "C0:FF:EE:00:00:03")]
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: options) { _ in }
        let summary = run.run([ProvisioningDebugger(name: "emu") { () throws(DebuggerError) in bench.debuggers[0] }])
        #expect(summary.verified.count == 6)
        let retired = bench.retired.withLock { $0 }
        for attempt in try ledger.attempts() where attempt.outcome == .verified {
            let flash = try #require(retired[attempt.chip])
            #expect(
                Array(flash[0x7F28..<0x7F2D]) == [0xF9, 0x3F, 0x00, 0x00, 0x91],
                "16377 ticks (500 ms × 32.753 kHz = 16376.5, rounded up), -10 dBm")
            let station = try #require(stations.first { $0.name == attempt.station })
            let address = options.addresses[station.name] ?? StationTemplate.derivedAddress(for: station.identity)
            #expect(Array(flash[0x7F02..<0x7F08]) == address.airOrder)
            #expect(attempt.advertiserAddress == address.description, "the ledger records the address")
        }
    }

    /// A ledger written before advertiser addresses were recorded opens, keeps its records, and
    /// records addresses from then on.
    @Test func anOlderLedgerGainsTheAddressColumn() throws {
        let path = temporaryLedgerPath()
        try makeLegacyLedger(at: path, addressColumn: false, indexes: false)
        let ledger = try SQLiteLedger(path: path)
        let before = try ledger.attempts()
        #expect(before.count == 1 && before[0].outcome == .verified && before[0].advertiserAddress == nil)
        let claimed = try #require(
            try ledger.claimNextStation(
                chip: "00:12:4B:00:00:02", debugger: "d", template: "t", templateSHA256: "s", verifyMethod: "crc",
                skipping: [], image: { _ in ("i2", "C0:FF:EE:00:00:02") }))
        #expect(claimed.0.name == "b")
        #expect(claimed.1.advertiserAddress == "C0:FF:EE:00:00:02")
        #expect(try SQLiteLedger(path: path).attempts().count == 2, "reopening does not add the column twice")
    }

    @Test func aChipThatCarriesAStationIsRefusedUnlessReprovisioning() throws {
        let ledger = try SQLiteLedger(path: temporaryLedgerPath())
        try ledger.register([Station(name: "a", identity: identity(1)), Station(name: "b", identity: identity(2))])
        let debugger = EmulatedDebugger()  // the same chip stays attached
        var options = Self.benchOptions(wait: 0.1)
        let events = EventLog()
        let first = ProvisioningRun(template: Self.template, ledger: ledger, options: options, events: events.record)
        _ = first.run([ProvisioningDebugger(name: "d") { () throws(DebuggerError) in debugger }])
        #expect(try ledger.states().map(\.state.isDone) == [true, false])
        // A second run sees the same chip again: refused.
        let second = ProvisioningRun(template: Self.template, ledger: ledger, options: options, events: events.record)
        let refused = second.run([ProvisioningDebugger(name: "d") { () throws(DebuggerError) in debugger }])
        #expect(refused.refused == ["00:12:4B:00:25:41"])
        #expect(try ledger.states().map(\.state.isDone) == [true, false])
        // With reprovision, the chip gets the next pending station and 'a' becomes pending.
        options.reprovision = true
        let third = ProvisioningRun(template: Self.template, ledger: ledger, options: options) { _ in }
        let again = third.run([ProvisioningDebugger(name: "d") { () throws(DebuggerError) in debugger }])
        #expect(again.verified == ["b"])
        #expect(try ledger.states().map(\.state.isDone) == [false, true])
    }

    /// A chip whose burn was interrupted (the process died) comes back: its flash decides. If it
    /// holds the station's image, the interrupted attempt is settled as verified without a second
    /// burn; if not, that attempt is recorded as failed and the station is burned again.
    @Test(arguments: [true, false])
    func anInterruptedChipThatComesBackIsSettledByItsFlash(holdsTheImage: Bool) throws {
        try settleInterruptedChip(holdsTheImage: holdsTheImage, failingFirstRead: false)
    }

    /// A transfer that fails while the returning chip is checked says nothing about the chip: the
    /// attempt stays interrupted, the debugger is opened again and the chip checked once more. (It
    /// was counted as "not on the chip": the station went pending while the chip still carried it.)
    @Test func aTransportErrorWhileCheckingAnInterruptedChipSettlesNothing() throws {
        try settleInterruptedChip(holdsTheImage: true, failingFirstRead: true)
    }

    func settleInterruptedChip(holdsTheImage: Bool, failingFirstRead: Bool) throws {
        let path = temporaryLedgerPath()
        let stations = [Station(name: "a", identity: identity(1)), Station(name: "b", identity: identity(2))]
        let image = Self.template.stationImage(for: stations[0].identity)
        var dying: SQLiteLedger? = try SQLiteLedger(path: path)
        try dying!.register(stations)
        _ = try dying!.claimNextStation(
            chip: "00:12:4B:00:25:41", debugger: "d", template: Self.template.manifest.name,
            templateSHA256: Self.template.manifest.imageSHA256, verifyMethod: "crc", skipping: [],
            image: { _ in (SHA256.hexDigest(image.file.text), nil) })
        dying = nil
        let ledger = try SQLiteLedger(path: path)
        #expect(try ledger.recoverInterrupted().map(\.station) == ["a"])

        let debugger = EmulatedDebugger()  // the same chip, back on the bench
        let chip = try #require(debugger.chip)
        if holdsTheImage {
            for segment in image.file.memory.segments {
                chip.flash.replaceSubrange(segment.range, with: segment.bytes)
            }
        }
        let options = Self.benchOptions(wait: 0.1)
        let events = EventLog()
        let run = ProvisioningRun(template: Self.template, ledger: ledger, options: options, events: events.record)
        // The first flash read is the check of the returning chip.
        let transport = RequestFault(
            debugger, request: Frames.Request.prepareRead, occurrence: failingFirstRead ? 1 : 0)
        let summary = run.run([ProvisioningDebugger(name: "d") { () throws(DebuggerError) in transport }])

        let resumed = events.all.compactMap { event -> Bool? in
            if case .resumed(_, "a", "00:12:4B:00:25:41", let verified) = event { verified } else { nil }
        }
        #expect(resumed == [holdsTheImage])
        let attempts = try ledger.attempts().filter { $0.station == "a" }
        #expect(attempts.map(\.outcome) == (holdsTheImage ? [.verified] : [.failed, .verified]))
        #expect(summary.verified == ["a"])
        #expect(try ledger.states().map(\.state.isDone) == [true, false])
        #expect(chip.flash[image.file.memory.segments[0].range] == ArraySlice(image.file.memory.segments[0].bytes))
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
final class LedgerFailingOnFinish: ProvisioningLedger, Sendable {
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

    /// True once: the one failure this ledger gives.
    func failsNow() -> Bool {
        failed.withLock { failed in
            defer { failed = true }
            return !failed
        }
    }

    func register(_ stations: [Station]) throws(LedgerError) { try inner.register(stations) }
    func recoverInterrupted() throws(LedgerError) -> [Attempt] { try inner.recoverInterrupted() }
    func verifiedStation(forChip chip: String) throws(LedgerError) -> String? {
        try inner.verifiedStation(forChip: chip)
    }
    func interruptedAttempt(forChip chip: String) throws(LedgerError) -> Attempt? {
        try inner.interruptedAttempt(forChip: chip)
    }
    func claimNextStation(
        chip: String, debugger: String, template: String, templateSHA256: String, verifyMethod: String,
        skipping: Set<String>, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt)? {
        try inner.claimNextStation(
            chip: chip, debugger: debugger, template: template, templateSHA256: templateSHA256,
            verifyMethod: verifyMethod, skipping: skipping, image: image)
    }
    func claimAgain(
        station: String, chip: String, debugger: String, template: String, templateSHA256: String,
        verifyMethod: String, reason: String, image: (Station) -> (sha256: String, advertiserAddress: String?)
    ) throws(LedgerError) -> (Station, Attempt) {
        try inner.claimAgain(
            station: station, chip: chip, debugger: debugger, template: template, templateSHA256: templateSHA256,
            verifyMethod: verifyMethod, reason: reason, image: image)
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
    var hookOutcomes: Set<AttemptOutcome> { inner.hookOutcomes }
    var lease: RunLease { inner.lease }
    func beginRun() throws(LedgerError) { try inner.beginRun() }
    func renewLease() throws(LedgerError) { try inner.renewLease() }
    func endRun() { inner.endRun() }
    func runs() throws(LedgerError) -> [RunRecord] { try inner.runs() }
    func recordJournaled(
        _ attemptID: Int, run: String?, outcome: AttemptOutcome, reason: String?, readBack: String?,
        onAir: OnAirCheck?, debugLocked: Bool
    ) throws(LedgerError) {
        try inner.recordJournaled(
            attemptID, run: run, outcome: outcome, reason: reason, readBack: readBack, onAir: onAir,
            debugLocked: debugLocked)
    }
    func ensureHookRun(attempt: Int, hook: AttemptOutcome) throws(LedgerError) {
        try inner.ensureHookRun(attempt: attempt, hook: hook)
    }
    func hookRuns(pendingOnly: Bool) throws(LedgerError) -> [HookRun] {
        try inner.hookRuns(pendingOnly: pendingOnly)
    }
    func recordHookTry(eventID: String, status: String, delivered: Bool) throws(LedgerError) {
        try inner.recordHookTry(eventID: eventID, status: status, delivered: delivered)
    }
    func supersede(chip: String, reason: String) throws(LedgerError) {
        if losingLease { throw LedgerError(operation: "superseding", message: "lease over", kind: .leaseLost) }
        try inner.supersede(chip: chip, reason: reason)
    }
    func release(station: String) throws(LedgerError) { try inner.release(station: station) }
    func states() throws(LedgerError) -> [StationState] {
        if failingStates, failsNow() {
            throw LedgerError(operation: "reading the stations", message: "disk I/O error", kind: .database)
        }
        return try inner.states()
    }
    func hasWork(excluding: Set<String>) throws(LedgerError) -> Bool { try inner.hasWork(excluding: excluding) }
    func station(named name: String) throws(LedgerError) -> Station? { try inner.station(named: name) }
    func hasLockedChips() throws(LedgerError) -> Bool { try inner.hasLockedChips() }
    func attempts() throws(LedgerError) -> [Attempt] { try inner.attempts() }
    func recordCalibration(_ calibration: CalibrationRecord) throws(LedgerError) {
        try inner.recordCalibration(calibration)
    }
    func calibrations() throws(LedgerError) -> [CalibrationRecord] { try inner.calibrations() }
}

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
