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

/// `ccbeacon provision`.
enum ProvisionCommand {
    static let spec = CommandSpec(
        name: "provision", summary: "burn a station list into chips, one after another, with a ledger", manual: manual,
        table: CommandTable(
            details: """
                Checks the list and the template, records the stations in the ledger (an SQLite file,
                default provisioning.sqlite beside the list), then on every selected debugger in parallel:
                waits for a chip (a new chip is told by its IEEE address), takes the next pending station,
                records the attempt, erases, programs, verifies, records the outcome and resets the chip
                to run. Swap the chip when the debugger says it is waiting.

                Never twice: the ledger refuses one identity on two chips and two stations on one chip.
                A chip that already carries a verified station is refused (listed with its station)
                unless --reprovision. If a run is killed while burning, the next run shows what was
                interrupted and holds that station until its chip is attached again (its flash is then
                checked) or --release-interrupted lets it go to a new chip.

                A chip is known by its factory IEEE address. A chip whose address is erased
                (FF:FF:FF:FF:FF:FF) or all zero cannot be told apart from others: it is not burned, and
                the bench is told to set it aside. With --chip-id secondary such a chip is named by its
                secondary address (last flash page) when that one is usable; the burn keeps it, and every
                erase of the run writes it back.

                Ctrl-C finishes the chip in progress (and the hook in hand), records it and stops; a second
                Ctrl-C stops at once, killing the hook in hand (the next run recovers, and runs it again). A failed station is retried --retries times (default 1) on a
                fresh chip. Signals: SIGTERM and SIGHUP stop like Ctrl-C.

                Exit status: 0 when every station of the list is done (also at once when nothing is
                left to burn); 3 when the run stopped with stations left — pending (failed ones
                included) or held — and the summary says why it stopped (no new chip within --wait,
                a signal, every debugger failed); 1 when it could not start.

                --interval and --tx-power apply to every station as in batch (templates that expose them); every
                station gets its own advertiser address: the list's address column, or one derived from its
                identity, and its measured power: the list's power column, or the board's figure at 1 m shifted by
                the TX power (recorded in the ledger as burned). The ledger records each image's sha256, so a chip
                interrupted under other settings is burned again. A station calibrated in the ledger since it was
                burned (calibrate --write --ledger) is burned again on its own chip with --reprovision.

                A shared ledger on a PostgreSQL server (--ledger postgresql://USER@HOST/DB?…) serves
                several benches at once from one list: each bench runs under its own --bench NAME
                (default the host name; one process per name), a second bench must start with the same
                list, and a server that goes away is waited for up to --server-wait seconds (default
                60); beyond that the outcome of the chip in hand goes to the bench's journal
                (ccbeacon-journal-NAME.jsonl beside the list), the bench stops, and its next run
                records the journal first.

                Every run registers itself in the ledger with a lease (--lease, default 90 s), renewed
                by a heartbeat; each change of an attempt is recorded only while the lease holds. A
                run whose lease ran out (paused, or cut off from the server for longer) records and
                burns nothing more: it erases the chip in hand, says which station and chip, and stops
                (exit 1). Attempts left in progress are taken for interrupted only once their run is
                over — its lease ran out, or its process on this machine is gone — so another bench,
                or --release-interrupted, never takes a live burn for a crashed one. On a pool,
                --release-interrupted releases only its own bench's held stations, and only once the
                run that was burning them is settled: a run of the bench from that run's folder on its
                machine recorded the journal there (the outcome may wait in it; a token beside it,
                ccbeacon-journal-NAME.place, tells the folder). --journal-lost releases them whatever
                journal their run kept (its machine or folder lost for good).

                --scan-verify hci0: after each burn is read back, the chip is reset to run and the
                controller listens (up to --scan-seconds, default 5) for the station's address sending
                exactly its image's advertising data; heard or not and the RSSI go into the ledger and
                the export. A station not heard is failed and its chip erased; it waits for the next
                run unless --retry-unheard lets it go to the next chip. Needs CAP_NET_RAW (see scan);
                never run against a real controller yet.

                --on-verified CMD / --on-failed CMD run sh -c CMD after each outcome is recorded, the
                facts in CCBEACON_* variables (never in the command line); a hook that fails or passes
                --hook-timeout (default 30 s) stays pending in the ledger and the next run of the bench
                runs it first (the event id, CCBEACON_EVENT_ID, is the same on every try). --lock-debug
                locks each verified chip's debug interface (read back, recorded). --address-mode
                secondary writes each station's address as the chip's secondary address (templates
                without an address field: TI's stack).

                Example:
                  ccbeacon provision stations.csv --board hm10 --devices all --yes
                """,
            options: Options.templateOptions + Options.listSettingOptions + [
                ledger.spec, devices.spec, verify.spec, chipID.spec, retries.spec, reprovision.spec,
                releaseInterrupted.spec, journalLost.spec, scanVerify.spec, scanSeconds.spec, retryUnheard.spec,
                yes.spec, wait.spec,
                json.spec, bench.spec, serverWait.spec, lease.spec, events.spec, onVerified.spec, onFailed.spec,
                hookTimeout.spec,
                lockDebug.spec, addressMode.spec, Options.usbFraming.spec, Options.trace.spec,
            ],
            positionals: [Options.stationList], groups: [Options.requiredTemplate],
            refusedOptions: Options.listRefusedOptions))

    static let command = Command(spec, Arguments.self, run: run)

    static let ledger = Option<String>(
        "--ledger", value: "FILE|URL",
        help: "ledger file (default provisioning.sqlite beside the list) or postgresql://… server", completion: .files)
    static let scanVerify = Option<String>(
        "--scan-verify", value: "hciN", help: "listen on air for each station after its burn (needs CAP_NET_RAW)"
    ) { text throws(CommandFailure) in
        guard HCIController.index(text) != nil else {
            throw .usage("--scan-verify must name a controller as BlueZ does: hci0, hci1, …")
        }
        return text
    }
    static let scanSeconds = Option<Double>(
        "--scan-seconds", value: "N", help: "how long --scan-verify listens for each station"
    ) { text throws(CommandFailure) in try Values.seconds(text, option: "--scan-seconds", in: 0.5...120) }
    .defaulting(seconds: ProvisionOptions().scanSeconds)
    static let retryUnheard = Flag(
        "--retry-unheard", help: "a station --scan-verify did not hear goes to the next chip (default: next run)")
    static let devices = Option<DevicesSelection>(
        "--devices", value: "all|SEL,…", help: "debuggers to use (default: the only one attached)",
        completion: .words(["all"])
    ) { text throws(CommandFailure) in try DevicesSelection(text) }

    /// `--devices`: every attached debugger, or the ones named, each once (checked as written,
    /// before anything is opened; which debugger each name finds is known only once they are
    /// listed).
    enum DevicesSelection: Sendable {
        case all
        case named([String])

        init(_ text: String) throws(CommandFailure) {
            guard text != "all" else {
                self = .all
                return
            }
            let selectors = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard !selectors.allSatisfy(\.isEmpty) else {
                throw .usage("--devices '\(text)' names no debugger; give all, or SEL,SEL")
            }
            guard !selectors.contains("") else {
                throw .usage(
                    "--devices '\(text)' has an empty name between commas; name each debugger once, SEL,SEL")
            }
            guard !selectors.contains("all") else {
                throw .usage(
                    "--devices '\(text)': all stands alone (every attached debugger); or name each, SEL,SEL")
            }
            for (index, selector) in selectors.enumerated() where selectors[..<index].contains(selector) {
                throw .usage("--devices '\(text)' names '\(selector)' twice; name each debugger once")
            }
            for selector in selectors {
                if let problem = DeviceSelection.problem(with: selector) {
                    throw .usage("--devices '\(selector)' \(problem)")
                }
            }
            self = .named(selectors)
        }
    }
    static let verify = DefaultedOption<VerifyMode>(
        "--verify", choosing: [.crc, .read], default: ProvisionOptions().verify, help: "how each burn is checked")
    static let chipID = DefaultedOption<ChipIdentitySource>(
        "--chip-id", choosing: ChipIdentitySource.allCases, default: ProvisionOptions().chipIdentity,
        help: "the address that names a chip (secondary: for chips whose IEEE address is erased)")
    static let retries = Options.count(
        "--retries", help: "further attempts after a failure", in: 0...100
    ) { _ in "--retries must be 0…100" }.defaulting(to: ProvisionOptions().retries)
    static let reprovision = Flag("--reprovision", help: "burn chips that already carry a verified station")
    static let releaseInterrupted = Flag(
        "--release-interrupted", help: "let stations interrupted earlier go to new chips")
    static let journalLost = Flag(
        "--journal-lost",
        help: "with --release-interrupted on a pool: this bench's journal elsewhere is lost (its machine gone)")
    static let yes = Flag("--yes", help: "unattended: no questions")
    static let wait = Option<Double>(
        "--wait", value: "SECONDS", help: "how long a debugger waits for a new chip"
    ) { text throws(CommandFailure) in try Values.seconds(text, option: "--wait", in: 0...86_400) }
    .defaulting(seconds: ProvisionOptions().targetTimeoutSeconds)
    static let json = Flag("--json", help: "machine-readable summary")
    static let bench = Option<String>(
        "--bench", value: "NAME", help: "this bench's name, recorded on its attempts (default the host name)"
    ) { text throws(CommandFailure) in try Values.benchName(text, option: "--bench") }
    static let events = Option<String>(
        "--events", value: "FILE|-", help: "every event as a JSON line, appended to FILE (- standard output)",
        completion: .files)
    static let onVerified = Option<String>(
        "--on-verified", value: "CMD",
        help: "run CMD (sh -c) after each verified outcome is recorded; the facts in CCBEACON_* variables"
    ) { text throws(CommandFailure) in try hookCommand(text, option: "--on-verified") }
    static let onFailed = Option<String>(
        "--on-failed", value: "CMD", help: "run CMD (sh -c) after each failed outcome is recorded"
    ) { text throws(CommandFailure) in try hookCommand(text, option: "--on-failed") }
    static let hookTimeout = Option<Double>(
        "--hook-timeout", value: "SECONDS", help: "how long a hook may run before it is killed"
    ) { text throws(CommandFailure) in try Values.seconds(text, option: "--hook-timeout", in: 0.1...3600) }
    .defaulting(seconds: HookRunner.Hooks().timeout)
    static let lockDebug = Flag(
        "--lock-debug", help: "lock each chip's debug interface after its verified burn (recorded in the ledger)")
    static let addressMode = DefaultedOption<AddressMode>(
        "--address-mode", choosing: AddressMode.allCases, default: .template,
        help: "where a station's address goes (template: the template's field; secondary: the chip's secondary address)"
    )
    /// Where a station's advertiser address is written.
    enum AddressMode: String, CaseIterable, OptionChoice { case template, secondary }

    /// A hook's command: not empty, no NUL (it is run as `sh -c CMD`, the user's own shell text).
    static func hookCommand(_ text: String, option: String) throws(CommandFailure) -> String {
        guard !text.allSatisfy(\.isWhitespace) else { throw .usage("\(option) needs a command") }
        guard !text.contains("\0") else { throw .usage("\(option) cannot hold a NUL character") }
        return text
    }

    static let lease = Option<Double>(
        "--lease", value: "SECONDS",
        help: "how long this run's lease in the ledger lasts unless renewed"
    ) { text throws(CommandFailure) in try Values.seconds(text, option: "--lease", in: 1...3600) }
    .defaulting(seconds: RunLease.defaultSeconds)
    static let serverWait = Option<Double>(
        "--server-wait", value: "SECONDS",
        help: "how long a PostgreSQL ledger's server may be away before the bench stops (default 60)"
    ) { text throws(CommandFailure) in try Values.seconds(text, option: "--server-wait", in: 0...3600) }
}

/// Named on the command line by its raw value.
extension ChipIdentitySource: OptionChoice {}
