import BeaconPayload
import BeaconScan
import CCDebugger
import CommandLineKit
import FirmwareTemplate
import PostgresLedger
import Provisioning
import StationLedger
import Storage
import StructuredText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension ProvisionCommand {
    /// The summary (text or `--json`), and exit 3 when stations of the list are left; `given`:
    /// why the run stopped, when not from the summary.
    ///
    /// `burningElsewhere`: of the list's attempts in progress, those other benches are burning
    /// now (on a shared ledger); the rest are this run's, whose outcome could not be recorded.
    static func report(
        _ summary: ProvisionSummary, progress: ListProgress, burnAgain: [String] = [], burningElsewhere: Int = 0,
        path: String, hooks: HookRunner.Counts? = nil, json: Bool, console: Console, why given: String? = nil
    ) throws(CommandFailure) {
        let unrecorded = progress.inProgress - burningElsewhere
        let why = given ?? Self.stopReason(summary, signal: stopSignals.signal)
        if json {
            console.data(
                JSONValue.object([
                    ("verified", .array(summary.verified.map { .string($0) })),
                    ("failed", .object(summary.failed.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
                    ("refusedChips", .array(summary.refused.map { .string($0) })),
                    ("listDone", .integer(progress.done)), ("listPending", .integer(progress.pending)),
                    ("listBurningElsewhere", .integer(burningElsewhere)), ("listUnrecorded", .integer(unrecorded)),
                    ("held", .array(progress.held.map { .string($0) })), ("ledger", .string(path)),
                    ("setAsideChips", .integer(summary.setAside)),
                    ("toBurnAgain", .array(burnAgain.map { .string($0) })), ("stoppedBecause", .string(why)),
                    (
                        "hooks",
                        hooks.map {
                            .object([
                                ("delivered", .integer($0.delivered)), ("failed", .integer($0.failed)),
                                ("notRun", .integer($0.notRun)),
                            ])
                        }
                            ?? .null
                    ),
                ]).rendered() + "\n")
        } else {
            var lines = [
                "provisioned \(summary.verified.count) station(s) in this run; \(progress.done) of \(progress.states.count) done, \(progress.pending) pending, \(progress.held.count) held"
                    + Self.unrecorded(unrecorded)
                    + (burningElsewhere > 0 ? ", \(burningElsewhere) burning on other benches" : "")
                    + "; ledger \(path)"
            ]
            for (station, reason) in summary.failed.sorted(by: { $0.key < $1.key }) {
                lines.append("  failed: \(station): \(reason)")
            }
            if !progress.held.isEmpty {
                lines.append(
                    "  held (interrupted; attach their chip, or --release-interrupted on the bench that burned them): \(progress.held.joined(separator: ", "))"
                )
            }
            if !burnAgain.isEmpty {
                lines.append(
                    "  calibrated, to burn again (attach their chips): \(burnAgain.joined(separator: ", "))")
            }
            if summary.setAside > 0 {
                lines.append("  \(summary.setAside) chip(s) set aside, not burned (each one's reason is above)")
            }
            if let hooks { lines.append("  " + Self.hookLine(hooks)) }
            lines.append("  stopped: \(why)")
            console.output(lines: lines)
        }
        if progress.left == 0, !burnAgain.isEmpty {
            throw CommandFailure(
                .stationsLeft,
                "stopped with \(burnAgain.count) calibrated station\(burnAgain.count == 1 ? "" : "s") not burned again: \(why)",
                hint: "run again with --reprovision and attach their chips")
        }
        if progress.left > 0 {
            throw CommandFailure(
                .stationsLeft,
                "stopped with \(progress.left) station\(progress.left == 1 ? "" : "s") of the list left (\(progress.pending) pending, \(progress.held.count) held"
                    + Self.unrecorded(unrecorded) + "): \(why)",
                hint: progress.held.isEmpty
                    ? "run again to go on with the pending stations"
                    : "run again; attach the held stations' chips, or release them with --release-interrupted in a run of the bench that was burning them, from its list's folder on its machine (each kept line above says where)"
            )
        }
    }

    /// The summary's line on hooks.
    static func hookLine(_ counts: HookRunner.Counts) -> String {
        "hooks: \(counts.delivered) delivered, \(counts.failed) failed"
            + (counts.notRun > 0 ? ", \(counts.notRun) not run (the run stopped first)" : "")
            + (counts.leftPending
                ? " (kept pending in the ledger; the next provision of this bench runs them first)" : "")
    }

    /// The run's failure when hook runs are left pending (the burns stand).
    static func hooksFailed(_ counts: HookRunner.Counts) -> CommandFailure {
        CommandFailure(
            .failure,
            "\(counts.failed + counts.notRun) hook run(s) failed, timed out or did not run; every burn stands, and the hook runs are kept pending in the ledger",
            hint:
                "fix the hook (its last output is in the log above), then run the same provision again: it runs them first"
        )
    }

    /// What the hook runner told, as a log line.
    static func describe(_ report: HookRunner.Report) -> String {
        switch report {
        case .unreadable(let why): "hooks: \(why); the hook runs stay pending in the ledger"
        case .tried(let tried): describe(tried)
        case .waitingOnStop(let run, let secondsLeft):
            "stopping once the hook in hand ends: on-\(run.hook.rawValue) for '\(run.attempt.station)' (event \(run.eventID)), at most \(ProvisioningRun.seconds(secondsLeft.rounded(.up))) s more; a second stop ends it and the run at once (the hook runs again next run)"
        }
    }

    /// A hook's try as a log line.
    static func describe(_ tried: HookRunner.Try) -> String {
        let run = tried.run
        let outcome = tried.outcome
        let what =
            "hook \(tried.hook) for '\(run.attempt.station)' (chip \(run.attempt.chip), event \(run.eventID), try \(tried.number))"
        var line =
            outcome.exitedZero
            ? "\(what): delivered"
            : "\(what) FAILED: \(outcome.status)\(outcome.lastLine.map { "; its last output: \($0)" } ?? ""); it stays pending"
        if let notRecorded = tried.notRecorded {
            line += "; the try could not be recorded in the ledger (\(notRecorded)), so it runs again next time"
        }
        return line
    }

    /// A hook's try as the `hook-finished` event's fields.
    static func fields(_ tried: HookRunner.Try) -> [(String, JSONValue)] {
        [
            ("hook", .string(tried.hook)), ("station", .string(tried.run.attempt.station)),
            ("chip", .string(tried.run.attempt.chip)), ("eventId", .string(tried.run.eventID)),
            ("try", .integer(tried.number)), ("status", .string(tried.outcome.status)),
            ("delivered", .bool(tried.outcome.exitedZero)),
            ("output", tried.outcome.lastLine.map { .string($0) } ?? .null),
            ("recorded", .bool(tried.notRecorded == nil)),
        ]
    }

    /// Attempts still in progress when this run ends are its own (one run per ledger): their
    /// outcome could not be recorded.
    static func unrecorded(_ count: Int) -> String {
        count > 0
            ? ", \(count) left in progress (the outcome could not be recorded; the next run checks \(count == 1 ? "that chip" : "those chips") again)"
            : ""
    }

    static func stopReason(_ summary: ProvisionSummary, signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGINT: "Ctrl-C (SIGINT)", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP (the terminal closed)",
        ]
        if signal != 0 { return "\(names[signal] ?? "signal \(signal)") after the chip in progress" }
        let reasons = Set(summary.stopped.values)
        // Every debugger out of stations for one reason: said once.
        if reasons.count == 1, let only = reasons.first, only.hasPrefix("no pending stations left") { return only }
        // A ledger that failed stops the whole run, whatever the debuggers were doing.
        if let ledger = summary.stopped.sorted(by: { $0.key < $1.key }).first(where: { $0.value.hasPrefix("ledger: ") })
        {
            return "the ledger failed (\(ledger.key)): \(ledger.value.dropFirst("ledger: ".count))"
        }
        let waiting = ["no pending stations left", "no new chip", "no target chip"]
        if !summary.stopped.isEmpty,
            summary.stopped.values.allSatisfy({ reason in !waiting.contains { reason.hasPrefix($0) } })
        {
            return "every debugger failed: "
                + summary.stopped.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        }
        return summary.stopped.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
    }

    /// An event as a line of the run's log; nil for progress, which the log does not show.
    static func describe(_ event: ProvisionEvent) -> String? {
        switch event {
        case .progress: return nil
        case .waitingForChip(let debugger): return "\(debugger): waiting for a chip — attach the next one"
        case .chipAttached(let debugger, let chip): return "\(debugger): chip \(chip) attached"
        case .started(let debugger, let station, let chip):
            return "\(debugger): burning '\(station)' into \(chip)"
        case .finished(let debugger, let station, let chip, let outcome, let reason):
            return "\(debugger): '\(station)' on \(chip): \(outcome.rawValue)"
                + (reason.map { " (\($0))" } ?? "")
        case .refused(let debugger, let chip, let carries):
            return
                "\(debugger): chip \(chip) already carries '\(carries)'; left alone (--reprovision to burn it again)"
        case .erasedOnArrival(let debugger, let chip, let station):
            return
                "\(debugger): chip \(chip) arrived debug-locked and carried '\(station)'; unlocking erased it, so '\(station)' is pending again"
        case .interruptedForAnotherList(let debugger, let chip, let station):
            return
                "\(debugger): chip \(chip) was interrupted with '\(station)', a station of another list; left alone (a run of that list checks it)"
        case .resumed(let debugger, let station, let chip, let verified):
            return "\(debugger): chip \(chip) from an interrupted run: '\(station)' "
                + (verified ? "confirmed" : "not on it (the chip was erased); the station is pending again")
        case .debuggerStopped(let debugger, let reason): return "\(debugger): stopped: \(reason)"
        case .setAside(let debugger, let address, let reason):
            let why: String
            switch reason {
            case .indistinguishable(let secondaryTried):
                why =
                    secondaryTried
                    ? "its IEEE address \(address) and its secondary address cannot tell it apart from other chips"
                    : "its IEEE address \(address) cannot tell it apart from other chips (\(chipID.spec.name) secondary uses a valid secondary address)"
            case .notTheTemplatesChip(let code, let templateChip, let erased):
                why =
                    "the chip \(address) reports CHIPINFO0.FLASHSIZE \(code), which is not the template's \(templateChip) (see boards/chips.json)"
                    + (erased ? "; it was debug-locked, which hides its size, so it was erased to be read" : "")
            case .debugLocked:
                why =
                    "it is debug-locked, which hides its address, and this ledger records chips it locked: it may carry a station (--reprovision erases a locked chip, which unlocks it, and burns it)"
            }
            return "\(debugger): SET THIS CHIP ASIDE, it was not burned: \(why); attach the next one"
        case .resetFailed(let debugger, let chip, let reason):
            return
                "\(debugger): chip \(chip) is recorded but could not be reset to run (\(reason)); opening the debugger again to retry"
        case .burningAgain(let debugger, let station, let chip, let burned, let calibrated):
            return
                "\(debugger): chip \(chip) carries '\(station)' burned with \(burned) dBm; its calibration says \(calibrated) dBm: burning it again"
        case .listening(let debugger, let station, let chip, let seconds):
            return
                "\(debugger): '\(station)' on \(chip) burned and read back; listening on air for it (up to \(ProvisioningRun.seconds(seconds)) s)"
        }
    }
}
