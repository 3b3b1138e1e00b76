import BeaconScan
import CCDebuggerEmulator
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Provisioning
@testable import StationLedger

/// `provision --scan-verify` against emulated debuggers and a scripted controller that hears what
/// the emulated chips hold: a chip that runs (not halted) and carries the reference firmware's
/// PDU advertises its address and advertising data from flash — so what is heard is what was
/// burned, not what the test expects.
struct ScanVerifyTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    /// What the bench's running chips send, as the reference firmware lays it out (0x7F00 PDU
    /// header 42 24, 0x7F02 address LSB first, 0x7F08 30 bytes of advertising data).
    static func onAir(_ provider: EmulatorProvider, rssi: Int8 = -57, corrupt: Bool = false)
        -> @Sendable (Duration) -> [FakeHCIController.Advertiser]
    {
        { _ in
            provider.debuggers.compactMap { debugger in
                guard let chip = debugger.chip, !chip.halted else { return nil }
                let flash = chip.flash
                guard flash[0x7F00] == 0x42, flash[0x7F01] == 0x24 else { return nil }
                var data = Array(flash[0x7F08..<0x7F26])
                if corrupt { data[29] ^= 0x01 }
                return .init(address: Array(flash[0x7F02..<0x7F08].reversed()), data: data, rssi: rssi)
            }
        }
    }

    static func radio(_ onAir: @escaping @Sendable (Duration) -> [FakeHCIController.Advertiser]) -> FakeHCIProvider {
        FakeHCIProvider(["hci0": FakeHCIController(onAir: onAir)])
    }

    static func provision(_ list: String, _ extra: [String], provider: EmulatorProvider, radios: FakeHCIProvider)
        -> ToolRun
    {
        ToolRun(
            ["provision", list, "--board", "hm10", "--yes", "--wait", "0.3", "--scan-verify", "hci0"] + extra,
            debuggers: provider, radios: radios)
    }

    @Test func aStationHeardSendingItsBytesIsVerifiedWithItsRSSI() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\na,\(Self.uuid),1,1\n")
        let provider = EmulatorProvider()
        let run = Self.provision(list, [], provider: provider, radios: Self.radio(Self.onAir(provider)))
        #expect(run.status == 0, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("burned and read back; listening on air for it (up to 5 s)"))
        let ledger = try SQLiteLedger(path: scratch.path("provisioning.sqlite"), access: .readOnly)
        let attempt = try #require(try ledger.attempts().last)
        #expect(attempt.outcome == .verified)
        #expect(attempt.onAir == OnAirCheck(heard: true, rssiCount: 5, rssiMedian: -57))
        let export = ToolRun(["ledger", "export", "--ledger", scratch.path("provisioning.sqlite")])
        #expect(
            export.output.split(separator: "\n").last?.hasSuffix(
                ",yes,5,-57,registered,no,\(attempt.bench ?? ""),\(attempt.run ?? "")") == true, "\(export.output)")
    }

    /// --scan-verify with --lock-debug: the chip is heard running first, then halted, checked to be
    /// the same chip, and locked; heard and locked are both recorded. A chip that was not heard
    /// is erased and never locked.
    @Test func aChipIsHeardFirstAndLockedAfter() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\na,\(Self.uuid),1,1\n")
        let provider = EmulatorProvider()
        let chip = try #require(provider.debuggers[0].chip)
        let run = Self.provision(list, ["--lock-debug"], provider: provider, radios: Self.radio(Self.onAir(provider)))
        #expect(run.status == 0, "\(run.diagnostics)")
        let attempt = try #require(
            try SQLiteLedger(path: scratch.path("provisioning.sqlite"), access: .readOnly).attempts().last)
        #expect(attempt.outcome == .verified && attempt.onAir?.heard == true && attempt.debugLocked)
        #expect(chip.debugLocked && chip.flash[0x3FFFF] == 0x7F)
        // Not heard (other bytes on air): erased, failed, not locked.
        let silent = EmulatorProvider()
        let other = try #require(silent.debuggers[0].chip)
        let list2 = try scratch.write("t.csv", "name,uuid,major,minor\nb,\(Self.uuid),1,2\n")
        let unheard = Self.provision(
            list2, ["--lock-debug", "--ledger", scratch.path("t.sqlite")], provider: silent,
            radios: Self.radio(Self.onAir(silent, corrupt: true)))
        #expect(unheard.status == 3)
        #expect(!other.debugLocked && other.flash.allSatisfy { $0 == 0xFF })
    }

    struct Silence: Sendable, CustomTestStringConvertible {
        let name: String
        let corrupt: Bool
        let retry: Bool
        var testDescription: String { name }
    }

    /// Not heard — nothing on air, or other bytes from its address: failed, the chip erased (no
    /// unverified chip carries the identity), and the station waits for the next run unless
    /// --retry-unheard.
    @Test(arguments: [
        Silence(name: "nothing on air", corrupt: false, retry: false),
        Silence(name: "other bytes from its address", corrupt: true, retry: false),
        Silence(name: "nothing on air, retried", corrupt: false, retry: true),
    ])
    func aStationNotHeardIsFailedAndItsChipErased(_ silence: Silence) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\na,\(Self.uuid),1,1\n")
        let provider = EmulatorProvider()
        // The bench swaps a chip once it is let go erased (a failed one), never one still to be heard.
        let next = Atomic<UInt8>(0x50)
        provider.debuggers[0].onResetToRun = { debugger in
            guard debugger.chip?.flash.allSatisfy({ $0 == 0xFF }) == true else { return }
            debugger.chip = EmulatedChip(ieee: [
                0x00, 0x12, 0x4B, 0x00, 0x77, next.add(1, ordering: .relaxed).newValue,
            ])
        }
        let silent: @Sendable (Duration) -> [FakeHCIController.Advertiser] = { _ in [] }
        let onAir = silence.corrupt ? Self.onAir(provider, corrupt: true) : silent
        let retrying: [String] = silence.retry ? ["--retry-unheard", "--retries", "2"] : []
        let run = Self.provision(
            list, ["--scan-seconds", "1"] + retrying, provider: provider, radios: Self.radio(onAir))
        #expect(run.status == 3, "\(run.diagnostics)")
        #expect(run.diagnostics.contains("not heard on air within 1 s"), "\(run.diagnostics)")
        // The station is pending, given up by this run: the summary never says none is left.
        #expect(
            run.output.contains("stopped: no pending stations left but 1 given up after failing (a; see --retries"),
            "\(run.output)")
        if silence.corrupt {
            #expect(run.diagnostics.contains("advertisement(s) from its address with other bytes"))
        }
        let ledger = try SQLiteLedger(path: scratch.path("provisioning.sqlite"), access: .readOnly)
        let attempts = try ledger.attempts()
        // Retried on the next chips only when allowed: 1 + 2 retries, each chip erased.
        #expect(attempts.count == (silence.retry ? 3 : 1), "\(attempts.map(\.outcome))")
        #expect(Set(attempts.map(\.chip)).count == attempts.count, "each attempt on its own chip")
        #expect(attempts.allSatisfy { $0.outcome == .failed && $0.onAir?.heard == false })
        #expect(attempts[0].reason?.hasSuffix("; the chip was erased") == true)
        guard case .pending = try ledger.states()[0].state else {
            Issue.record("the station is pending again")
            return
        }
    }

    /// The chip is swapped while the run listens: the one attached then is another chip and is
    /// not erased; the burned one is gone with the identity, so the station is held for it.
    @Test func aChipSwappedWhileTheRunListensIsNotErasedAndTheStationIsHeld() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\na,\(Self.uuid),1,1\n")
        let provider = EmulatorProvider()
        let burned = Mutex<EmulatedChip?>(nil)
        provider.debuggers[0].onResetToRun = { debugger in
            // At the reset before listening (the burned chip holds the firmware): swapped at once.
            guard let chip = debugger.chip, chip.flash[0x7F00] == 0x42 else { return }
            burned.withLock { $0 = chip }
            debugger.chip = EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0x77, 0x01])
        }
        let run = Self.provision(
            list, ["--scan-seconds", "1"], provider: provider, radios: Self.radio(Self.onAir(provider)))
        #expect(run.status == 3, "\(run.diagnostics)")
        #expect(
            run.diagnostics.contains(
                "the chip was taken off before it could be erased (00:12:4B:00:77:01 is attached now)"))
        let taken = try #require(burned.withLock { $0 })
        #expect(taken.flash[0x7F08 + 29] == UInt8(bitPattern: -59), "the burned chip keeps what it was given")
        let ledger = try SQLiteLedger(path: scratch.path("provisioning.sqlite"), access: .readOnly)
        #expect(try ledger.attempts().map(\.outcome) == [.interrupted])
        guard case .held(let chip) = try ledger.states()[0].state, chip == "00:12:4B:00:25:41" else {
            Issue.record("held for the burned chip: \(try ledger.states()[0].state)")
            return
        }
    }

    /// As a kill -9 just before the outcome's commit leaves it: the station's attempt in progress.
    static func interruptBeforeCommit(_ path: String, station: String) throws {
        let raw = try SQLiteDatabase(path: path, mode: .readWrite)
        try raw.execute(
            "UPDATE attempts SET outcome = 'in-progress', finished_at = NULL WHERE station = ?", [.text(station)],
            "interrupting")
    }

    /// A chip from an interrupted run comes back and is swapped while the run listens for it: the
    /// chip attached then is not burned with the next station under the old chip's name (the
    /// station stays held for its chip; nothing goes into a chip the run did not identify).
    @Test func aChipSwappedWhileAResumedStationIsListenedForGetsNoStation() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\na,\(Self.uuid),1,1\nb,\(Self.uuid),1,2\n")
        let path = scratch.path("provisioning.sqlite")
        let provider = EmulatorProvider()
        let radios = Self.radio(Self.onAir(provider))
        // One chip: a is burned and heard; b waits for another chip.
        #expect(Self.provision(list, [], provider: provider, radios: radios).status == 3)
        try Self.interruptBeforeCommit(path, station: "a")
        let burned = try #require(provider.debuggers[0].chip)
        let swapped = Atomic<Bool>(false)
        provider.debuggers[0].onResetToRun = { debugger in
            guard debugger.chip?.flash[0x7F00] == 0x42, !swapped.exchange(true, ordering: .relaxed) else { return }
            debugger.chip = EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0x77, 0x01])
        }
        let run = Self.provision(list, ["--scan-seconds", "1"], provider: provider, radios: radios)
        #expect(run.status == 3, "\(run.diagnostics)")
        #expect(!run.diagnostics.contains("burning 'b' into 00:12:4B:00:25:41"), "\(run.diagnostics)")
        let ledger = try SQLiteLedger(path: path, access: .readOnly)
        let attempts = try ledger.attempts()
        #expect(!attempts.contains { $0.station == "b" && $0.chip == "00:12:4B:00:25:41" }, "\(attempts)")
        guard case .held(let chip) = try ledger.states()[0].state, chip == "00:12:4B:00:25:41" else {
            Issue.record("a is held for its chip: \(try ledger.states()[0].state)")
            return
        }
        #expect(burned.flash[0x7F08 + 28] == 1, "the burned chip still carries a")
        #expect(ledger.check() == [])
    }

    /// A resumed station that is not heard follows the same rule as a fresh one: it waits for the
    /// next run (no second attempt at once on the chip just erased).
    @Test func aResumedStationNotHeardWaitsForTheNextRun() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\na,\(Self.uuid),1,1\n")
        let path = scratch.path("provisioning.sqlite")
        let provider = EmulatorProvider()
        #expect(Self.provision(list, [], provider: provider, radios: Self.radio(Self.onAir(provider))).status == 0)
        try Self.interruptBeforeCommit(path, station: "a")
        let silent: @Sendable (Duration) -> [FakeHCIController.Advertiser] = { _ in [] }
        let run = Self.provision(list, ["--scan-seconds", "1"], provider: provider, radios: Self.radio(silent))
        #expect(run.status == 3, "\(run.diagnostics)")
        let attempts = try SQLiteLedger(path: path, access: .readOnly).attempts()
        #expect(attempts.map(\.outcome) == [.failed], "\(attempts.map(\.reason))")
        #expect(provider.debuggers[0].chip!.flash.allSatisfy { $0 == 0xFF }, "erased")
    }

    /// A radio that cannot scan is found before anything is burned.
    @Test func aRadioThatCannotScanStopsTheRunBeforeAnyBurn() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\na,\(Self.uuid),1,1\n")
        let provider = EmulatorProvider()
        let refusing = FakeHCIProvider(["hci0": FakeHCIController(refusing: [0x200B: 0x12]) { _ in [] }])
        let run = Self.provision(list, [], provider: provider, radios: refusing)
        #expect(run.status == 1)
        #expect(run.diagnostics.contains("--scan-verify: hci0: the controller refused LE Set Scan Parameters"))
        #expect(run.diagnostics.contains("nothing was burned"))
        #expect(provider.debuggers[0].chip!.flash.allSatisfy { $0 == 0xFF })
        let missing = Self.provision(list, [], provider: provider, radios: FakeHCIProvider([:]))
        #expect(missing.status == 1 && missing.diagnostics.contains("hint: 'bluetoothctl list'"))
        #expect(
            ToolRun(["provision", list, "--board", "hm10", "--scan-seconds", "2"], debuggers: provider).status == 64)
    }

    /// `calibrate --write --ledger`, then `provision --reprovision`: the station is burned again on
    /// its own chip with the calibrated power, in one ledger step, and heard with it.
    @Test func aCalibratedStationIsBurnedAgainOnItsChip() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\na,\(Self.uuid),1,1\n")
        let path = scratch.path("provisioning.sqlite")
        let provider = EmulatorProvider()
        let radios = Self.radio(Self.onAir(provider))
        #expect(Self.provision(list, [], provider: provider, radios: radios).status == 0)
        #expect(provider.debuggers[0].chip!.flash[0x7F08 + 29] == UInt8(bitPattern: -59))
        let samples = try scratch.write(
            "r.txt", ([Int](repeating: -63, count: 20)).map(String.init).joined(separator: "\n"))
        #expect(ToolRun(["calibrate", "--rssi", samples, "--station", "a", "--ledger", path, "--write"]).status == 0)
        let again = Self.provision(list, ["--reprovision"], provider: provider, radios: radios)
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(
            again.diagnostics.contains(
                "carries 'a' burned with -59 dBm; its calibration says -63 dBm: burning it again"),
            "\(again.diagnostics)")
        #expect(provider.debuggers[0].chip!.flash[0x7F08 + 29] == UInt8(bitPattern: -63))
        let ledger = try SQLiteLedger(path: path, access: .readOnly)
        let attempts = try ledger.attempts()
        #expect(attempts.map(\.outcome) == [.superseded, .verified])
        #expect(attempts.map(\.power) == [-59, -63])
        #expect(attempts.map(\.powerSource) == ["registered", "calibration"])
        #expect(attempts[0].reason == "burned again with its calibrated measured power")
        #expect(attempts[1].onAir?.heard == true)
        // Burned as calibrated: a third run has nothing to do.
        let third = Self.provision(list, ["--reprovision"], provider: provider, radios: radios)
        #expect(third.status == 0 && third.output.contains("nothing to burn"), "\(third.output)")
        // Calibrated again (-65 dBm), but its chip never comes: the run does not call the list done.
        let other = try scratch.bytes("r.txt").map { $0 == UInt8(ascii: "3") ? UInt8(ascii: "5") : $0 }
        try Data(other).write(to: URL(fileURLWithPath: samples))
        #expect(ToolRun(["calibrate", "--rssi", samples, "--station", "a", "--ledger", path, "--write"]).status == 0)
        let plain = Self.provision(list, [], provider: provider, radios: radios)
        #expect(
            plain.diagnostics.contains("note: calibrated since burned (run with --reprovision"), "\(plain.diagnostics)")
        provider.debuggers[0].chip = EmulatedChip(ieee: [0x00, 0x12, 0x4B, 0x00, 0x77, 0x02])
        let waiting = Self.provision(list, ["--reprovision"], provider: provider, radios: radios)
        #expect(waiting.status == 3, "\(waiting.diagnostics)")
        #expect(waiting.output.contains("calibrated, to burn again (attach their chips): a"), "\(waiting.output)")
        let shown = ToolRun(["ledger", "show", "--ledger", path])
        #expect(shown.output.contains("calibrated since: burn again (provision --reprovision)"), "\(shown.output)")
        #expect(provider.debuggers[0].chip!.flash.allSatisfy { $0 == 0xFF }, "the other chip got nothing")
    }
}

/// A burn that fails on the chip, then an erase that fails too: the chip's content is unknown,
/// so the station is held for it — never recorded as failed "and erased" (then it would be pending
/// and could go to another chip while this one may carry it).
struct FailedEraseTests {
    @Test func aChipWhoseEraseFailedHoldsItsStation() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try scratch.write("s.csv", "name,uuid,major,minor\na,\(ScanVerifyTests.uuid),1,1\n")
        let provider = EmulatorProvider()
        // A failing part: every erase ends with the chip locked — the burn's erase fails, and so
        // does the erase after it.
        provider.debuggers[0].chip!.eraseLeavesLocked = true
        let run = ToolRun(
            ["provision", list, "--board", "hm10", "--yes", "--wait", "0.2"], debuggers: provider)
        #expect(run.status == 3, "\(run.diagnostics)")
        let ledger = try SQLiteLedger(path: scratch.path("provisioning.sqlite"), access: .readOnly)
        let attempt = try #require(try ledger.attempts().first)
        #expect(attempt.outcome == .interrupted, "\(attempt.reason ?? "")")
        #expect(attempt.reason?.contains("erasing it then failed") == true)
        #expect(attempt.reason?.contains("the chip was erased") == false)
        guard case .held = try ledger.states()[0].state else {
            Issue.record("held: \(try ledger.states()[0].state)")
            return
        }
    }
}
