import CCDebugger
import CommandLineKit
import FirmwareTemplate
import HexText
import IntelHex
import StructuredText
import TargetData

/// `ccbeacon flash`.
enum FlashCommand {
    static let spec = CommandSpec(
        name: "flash", summary: "erase, program, verify and start a chip", manual: manual,
        table: CommandTable(
            details: """
                Chip erase, then the image's blocks — 1 KiB bursts, or blocks through RAM on the
                CC2543/44/45, CC2510/11/CC1110/11 and CC2430/31, as boards/chips.json says (blocks that are all
                0xFF are skipped: erased flash already reads so) — then verification: by the chip's own CRC
                unit (default, fast; on the CC2430/31 it reads back instead), by reading every byte back
                (--verify read), or none. Finally the target is reset and runs.

                Where the last flash page holds the lock bits or the secondary address, an image with data
                there is refused unless --allow-last-page. --mac writes a secondary address (MSB first),
                --preserve-mac keeps the one the chip has, --lock-debug locks the debug interface at the end
                (only a chip erase undoes it) and reads the lock back after a reset: a lock that did not
                take fails the command (exit 1). A station (an image made from a template) runs only on its
                template's chip: on any other part it is refused before the chip is touched. The CC2510/11,
                CC1110/11 and CC2430/31 do not report their flash size: --flash-size gives it (8, 16 or 32;
                32, 64 or 128 on the CC2430/31, as the part's marking says); their lock is one byte in the
                information page.

                Example:
                  ccbeacon flash out/Hall_A.hex --device 1:7
                """,
            options: [
                Options.device.spec, Options.flashSize.spec, Options.base.spec, verify.spec, mac.spec, preserveMAC.spec,
                lockDebug.spec,
                allowLastPage.spec, Options.usbFraming.spec, Options.trace.spec,
            ],
            positionals: [PositionalSpec("IMAGE", usage: "IMAGE.hex|IMAGE.bin", completion: .files)],
            groups: [OptionGroup([mac.spec.name, preserveMAC.spec.name])]))
    static let command = Command(spec, Arguments.self) { arguments, console, hardware throws(CommandFailure) in
        try run(arguments, console: console, debuggers: hardware.debuggers)
    }

    static let verify = DefaultedOption<VerifyMode>(
        "--verify", choosing: VerifyMode.allCases, default: .crc, help: "how the burn is checked")
    static let mac = Option<[UInt8]>(
        "--mac", value: "XX:…",
        help: "write this secondary address (MSB first; 6 bytes on CC2540/41, 8 on CC253x and CC243x)"
    ) { text throws(CommandFailure) in
        guard let bytes = HexText.parseColonSeparated(text, count: 6) ?? HexText.parseColonSeparated(text, count: 8)
        else {
            throw .usage(
                "--mac '\(text)' must be 6 bytes (CC2540/41) or 8 (CC253x, CC243x) as XX:XX:…, most significant first")
        }
        // All FF is what an erased page reads (no address); all 00 names no chip either.
        guard bytes.contains(where: { $0 != 0 }), bytes.contains(where: { $0 != 0xFF }) else {
            throw .usage(
                "--mac '\(text)' cannot tell a chip apart: all 00 and all FF (an erased page) are refused")
        }
        return bytes
    }
    static let preserveMAC = Flag("--preserve-mac", help: "keep the chip's secondary address")
    static let lockDebug = Flag("--lock-debug", help: "lock the debug interface after programming")
    static let allowLastPage = Flag("--allow-last-page", help: "allow image data in the lock-bit page")

    /// What `flash` was asked.
    struct Arguments: CommandArguments {
        var image: ImageArgument
        var device: DeviceChoice
        var verify: VerifyMode
        var mac: [UInt8]?
        var preserveMAC: Bool
        var lockDebug: Bool
        var allowLastPage: Bool
        var framing: USBFraming
        var traced: Bool

        init(_ command: ParsedCommand) throws(CommandFailure) {
            image = try ImageArgument(command.positionals[0], command)
            device = try DeviceChoice(command)
            verify = try command.value(FlashCommand.verify)
            mac = try command.value(FlashCommand.mac)
            preserveMAC = command.isSet(FlashCommand.preserveMAC)
            lockDebug = command.isSet(FlashCommand.lockDebug)
            allowLastPage = command.isSet(FlashCommand.allowLastPage)
            framing = try command.value(Options.usbFraming)
            traced = command.isGiven(Options.trace)
        }
    }

    static func run(_ arguments: Arguments, console: Console, debuggers: (any DebuggerProvider)?)
        throws(CommandFailure)
    {
        let mac = arguments.mac
        let image = try arguments.image.load().memory
        guard !image.segments.isEmpty else {
            throw .data("\(arguments.image.path): the image holds no data", hint: "'ccbeacon erase' erases a chip")
        }
        let locations = try DataLocations.find(templatesOption: nil)
        let catalog = try locations.loadBoards()
        let connection = try DeviceSupport.connect(arguments.device, debuggers: debuggers, catalog: catalog)
        // A station is its template's, for the template's chip: where templates share an image,
        // one for the target's part (or family, while a lock hides the part) is taken first.
        let templates = locations.loadAllTemplates(catalog: catalog)
        let fitsTarget = { (template: StationTemplate) in
            connection.chip.map { template.chip == $0 }
                ?? (template.chip.debuggerTargetID == connection.state.targetID)
        }
        // Every template the image is a station of: its chip is one the image runs on, and its
        // fields are read back (a locked chip tells which part it is only once erased).
        let stationOf = (templates.filter(fitsTarget) + templates.filter { !fitsTarget($0) })
            .filter { $0.isStation(image) }
        let (located, identitySource) = IdentityBytes.locate(in: image, templates: stationOf)
        let identityRanges = stationOf.isEmpty ? located : stationOf.flatMap(\.identityRanges)
        connection.session.framing = arguments.framing
        let report = DeviceSupport.progress(console)
        var options = FlashOptions(
            verify: arguments.verify, readBack: identityRanges, allowLastPage: arguments.allowLastPage,
            lockDebug: arguments.lockDebug)
        if let mac { options.secondaryAddress = .write(mac) }
        if arguments.preserveMAC {
            // A family without a factory address has no secondary one to keep, locked or not.
            if let family = ChipFamily(targetID: connection.state.targetID, in: catalog.chips),
                !family.anyHas(\.secondaryAddress)
            {
                throw .usage("--preserve-mac: the \(family.name) has no IEEE address, and no secondary one to keep")
            }
            options.secondaryAddress = .preserve
        }
        // Its addresses, NV pages and radio settings are the template chip's.
        options.madeFor = stationOf.map(\.chip)
        var erased = false
        let result: FlashResult
        do {
            result = try FlashProgrammer(session: connection.session).flash(
                image, targetID: connection.state.targetID, identity: connection.identity, options: options
            ) { event in
                switch event {
                case .erasing(let progress), .programming(let progress), .verifying(let progress): report(progress)
                case .erased: erased = true
                case .started(_, _, let unlockedByErase) where unlockedByErase:
                    console.diagnostics(line: "the target was debug-locked; the chip erase unlocked it")
                default: break
                }
            }
        } catch {
            let family = ChipFamily(targetID: connection.state.targetID, in: catalog.chips)
            // Why the chip's size is --flash-size's, where the chip did not confirm it: the hints
            // that follow from the size point at the option.
            let assumedSize =
                connection.session.sizeIsAssumed(connection.identity, targetID: connection.state.targetID)
                ? family.flatMap { $0.reportsFlashSize ? nil : "the \($0.name) does not report its own" }
                    ?? "a debug-locked chip hides its own" : nil
            switch error {
            case .plan(let planError):
                let hint: String
                switch planError {
                case .lastPage:
                    hint = "use --allow-last-page only if you mean to write lock bits or the secondary address"
                case .tooLarge(let end, _):
                    let inspect = "or holds data at a wrong address; 'ccbeacon inspect' shows where"
                    if let family, let largest = family.flashSizes.max(), end > largest {
                        // No part of the family holds it, whatever its size.
                        hint =
                            "the image is for a larger chip than any \(family.name) (at most \(Chip.sizeText(largest))), \(inspect)"
                    } else {
                        let given = assumedSize.map { "the chip's size is --flash-size's (\($0)): check it; " }
                        hint = (given ?? "") + "the image is for a larger chip, \(inspect)"
                    }
                case .badAddressLength(_, let expected):
                    // About --mac, not the image.
                    throw CommandFailure(
                        .usage, "--mac: \(planError)", hint: "give this chip's secondary address as \(expected) bytes")
                case .noSecondaryAddress:
                    throw CommandFailure(.usage, "--mac: \(planError)", hint: "run without --mac")
                }
                guard !erased else {
                    // A debug-locked chip tells its part only once erased: the image fits none
                    // of that part's pages, and the chip is blank now.
                    throw .data(
                        "\(arguments.image.path): \(planError); the target was debug-locked, so it was erased to tell its part (\(connection.session.chip?.name ?? "unknown")): its flash is blank now",
                        hint: hint)
                }
                throw .data("\(arguments.image.path): \(planError)", hint: hint)
            case .debugger(let debuggerError): throw DeviceSupport.failure(debuggerError)
            case .flashChanged(let debuggerError, let locksAtReset):
                // The erase had begun: whatever failed, the chip may no longer hold what it held,
                // and may lock at its next reset.
                throw DeviceSupport.failure(
                    debuggerError, flashChanged: true, locksAtReset: locksAtReset,
                    transportAdvice: DeviceSupport.framingHint(
                        debuggerError, framing: connection.session.framing, traced: arguments.traced)
                        ?? DeviceSupport.reflashAdvice)
            case .notStarted(_, let result):
                // Written and (if asked) locked: only the start is missing. Verified, it needs no
                // flashing again; with --verify none it is as a run that started would leave it.
                let start = "(or press the debugger's reset button) and it runs the image"
                throw CommandFailure(
                    .failure, error.description,
                    hint: result.report.verify == .none
                        ? "power-cycle the chip \(start)" : "the chip needs no flashing again: power-cycle it \(start)")
            case .unknownChip, .unknownChipAfterErase:
                throw CommandFailure(
                    .failure, error.description,
                    hint: DeviceSupport.flashSizeHint(targetID: connection.state.targetID, chips: catalog.chips)
                        ?? DeviceSupport.unknownChipHint)
            case .notMadeFor(let chips, let target, let wasErased, let sizeGiven):
                let names = stationOf.map { "'\($0.manifest.name)'" }.joined(separator: " or ")
                throw .data(
                    "\(arguments.image.path): a station of template \(names), made for the \(chips.joined(separator: " or the ")); the target is a \(target)"
                        + (sizeGiven ? " (as --flash-size says)" : "")
                        + (wasErased
                            ? " (it was debug-locked, so it was erased to tell its part: its flash is blank now)" : ""),
                    hint: sizeGiven
                        ? "check --flash-size, the chip's size (\(assumedSize ?? "the chip did not confirm it")): the station runs on a \(chips.joined(separator: " or ")); a station for the \(target) needs a template made for that chip"
                        : "flash it to a \(chips.joined(separator: " or ")); a station for the \(target) needs a template made for that chip ('ccbeacon template import')"
                )
            case .cannotPreserveOnLockedChip:
                throw CommandFailure(
                    .failure, error.description,
                    hint: "run without --preserve-mac (the address is lost with the erase), or give --mac")
            }
        }
        let identityNote: String
        switch identitySource {
        case .template(let name, _):
            identityNote = "identity bytes \(result.report.readBackText) read back (template '\(name)')"
        case .scanned:
            identityNote = "identity bytes \(result.report.readBackText) read back (found by scanning the image)"
        case .none:
            identityNote = "no identity bytes found in the image to read back"
        }
        let replaced = result.imageBytesReplaced
        let verified =
            result.report.verify == .none
            ? "not verified beyond that"
            : replaced.isEmpty
                ? "the whole image verified (\(result.report.verify.rawValue))"
                : "the image verified (\(result.report.verify.rawValue)) but for its \(replaced.count == 1 && replaced[0].count == 1 ? "byte" : "bytes") at \(replaced.map(Self.addresses).joined(separator: ", ")), which the secondary address took the place of"
        var lines = [
            "flashed \(arguments.image.path) to the \(result.chip.name) on \(connection.device.selector): \(Chip.sizeText(result.report.bytesWritten)) written, "
                + "\(identityNote), \(verified); the target is running"
        ]
        if let secondary = result.secondaryAddress {
            lines.append("secondary address: \(HexText.colonSeparated(secondary))")
        } else if arguments.preserveMAC, let place = result.chip.secondaryAddress {
            lines.append(
                "secondary address: none to keep (\(HexText.address(place.lowerBound)) was erased, where a \(result.chip.name) keeps it)"
            )
        }
        if result.debugLocked {
            lines.append(
                "debug interface locked\(arguments.lockDebug ? "" : " by the image's own lock bits") (only a chip erase unlocks it)"
            )
        }
        console.output(lines: lines)
    }

    /// `0x3FFEA` for one byte, `0x3FFEA-0x3FFEF` for more (END inclusive).
    static func addresses(_ range: Range<Int>) -> String {
        range.count == 1
            ? HexText.address(range.lowerBound)
            : "\(HexText.address(range.lowerBound))-\(HexText.address(range.upperBound - 1))"
    }
}
