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
            EmulatedDebugger(chip: EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0x88, UInt8(index)]))
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
        let first = EmulatedDebugger(chip: EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0x89, 0x00]))
        // The second debugger's chip comes half a second later: the first one is waiting by then.
        let second = EmulatedDebugger(chip: nil)
        second.insertChip(EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0x89, 0x01]), after: .milliseconds(500))
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
        let first = EmulatedChip(ieee: erased)
        let chip = Self.template.chip
        first.flash.replaceSubrange(chip.secondaryAddress!, with: [0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
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
                Array(first.flash[chip.secondaryAddress!]) == [0x66, 0x55, 0x44, 0x33, 0x22, 0x11], "kept by the burn")
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
        let first = EmulatedChip(ieee: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        let name: [UInt8] = [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]
        first.flash.replaceSubrange(chip.secondaryAddress!, with: name)
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
        #expect(Array(first.flash[chip.secondaryAddress!]) == name, "the chip's name was written back")
        #expect(
            first.flash.enumerated().allSatisfy { chip.secondaryAddress!.contains($0.offset) || $0.element == 0xFF },
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
        let small = EmulatedChip(part: .named("CC2541F128")!)
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
