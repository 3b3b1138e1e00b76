import CCDebugger
import CommandLineKit
import FirmwareTemplate
import HexText
import IntelHex
import StructuredText
import TargetData

/// The udev rule that lets ordinary users open the debuggers (shipped as scripts/udev/70-ccbeacon.rules).
let udevRule = DebuggerModel.udevRule
/// Its file name: before systemd's 73-seat-late.rules, which turns the `uaccess` tag into access.
let udevRuleFile = "70-ccbeacon.rules"

/// Shared steps of the commands that talk to a debugger.
enum DeviceSupport {
    /// provision's `--devices all|SEL,…`, named when several debuggers are attached and none chosen.
    static let devicesSelector = DeviceSelector(option: ProvisionCommand.devices.spec.name, takesSeveral: true)
    /// `--device`, named when several debuggers are attached and none chosen.
    static let deviceSelector = DeviceSelector(option: Options.device.spec.name, takesSeveral: false)

    /// An open, connected session on the selected debugger, with the chip's facts.
    struct Connection {
        var device: DebuggerDevice
        var session: CC254xSession
        var state: DebuggerState
        var identity: ChipIdentity
        var chip: Chip?
    }

    static func provider(_ debuggers: (any DebuggerProvider)?) throws(CommandFailure) -> any DebuggerProvider {
        guard let debuggers else {
            throw CommandFailure(
                .failure, "this ccbeacon was built without USB support", hint: "install libusb and rebuild")
        }
        return debuggers
    }

    /// Opens the debugger `choice` names and connects to its target, for the chips of `catalog`
    /// (read from boards/ when the caller has not read it already), with the flash size it gives
    /// for a chip that does not report its own (`CC254xSession.assumedFlashSize`).
    static func connect(_ choice: DeviceChoice, debuggers: (any DebuggerProvider)?, catalog: BoardCatalog? = nil)
        throws(CommandFailure) -> Connection
    {
        let provider = try provider(debuggers)
        let devices = try listDevices(provider)
        let device = try choose(devices, selector: choice.selector)
        // The chip facts come from boards/chips.json; a folder that cannot be read is reported,
        // never taken for a chip it does not describe.
        let chips: [Chip]
        if let catalog {
            chips = catalog.chips
        } else {
            chips = try DataLocations.find(templatesOption: nil).loadBoards().chips
        }
        let connection: Connection
        do {
            let session = CC254xSession(transport: try provider.open(device), chips: chips)
            session.assumedFlashSize = choice.flashSize
            let state = try session.open()
            let identity = try session.connect(targetID: state.targetID, debuggerID: device.debuggerID)
            connection = Connection(
                device: device, session: session, state: state, identity: identity,
                chip: identity.chip(targetID: state.targetID, in: chips))
        } catch {
            throw failure(error)
        }
        return connection
    }

    /// What to do about a chip that does not report its size when none was given, or `nil` when
    /// the target reports its size.
    static func flashSizeHint(targetID: UInt16, chips: [Chip]) -> String? {
        guard let family = ChipFamily(targetID: targetID, in: chips), !family.reportsFlashSize else { return nil }
        let first = family.members[0]
        return
            "the \(family.name) does not report its flash size: give it with --flash-size \(Chip.kibList(family.flashSizes)) (the part's marking says: \(first.name) has \(first.flashSize / 1024))"
    }

    /// One debugger of `devices` by `selector` (see `DeviceSelection.choose`); why none could be
    /// chosen as the command's failure, with its hint.
    static func choose(_ devices: [DebuggerDevice], selector: String?, option: DeviceSelector = deviceSelector)
        throws(CommandFailure) -> DebuggerDevice
    {
        do { return try DeviceSelection.choose(devices, selector: selector, option: option) } catch {
            throw CommandFailure(.failure, lines: error.lines, hint: error.hint)
        }
    }

    static func listDevices(_ provider: any DebuggerProvider) throws(CommandFailure) -> [DebuggerDevice] {
        do { return try provider.devices() } catch { throw failure(error) }
    }

    /// The chip facts, or a clear refusal for a chip the boards data does not describe.
    static func chip(_ connection: Connection) throws(CommandFailure) -> Chip {
        guard let chip = connection.chip else {
            let unknown = FlashError.unknownChip(
                targetID: connection.state.targetID, flashSizeCode: connection.identity.flashSizeCode)
            throw CommandFailure(
                .failure, unknown.description,
                hint: flashSizeHint(targetID: connection.state.targetID, chips: connection.session.chips)
                    ?? unknownChipHint)
        }
        return chip
    }

    /// What to do about a target boards/chips.json does not describe.
    static let unknownChipHint =
        "ccbeacon programs the parts of boards/chips.json (CC2530/31/33, CC2540/41, CC2543/44/45, CC2510/11, CC1110/11 and CC2430/31, each size listed); another part needs its facts added there"

    /// What `flash` advises after a lost transfer that may have left the flash changed.
    static let reflashAdvice =
        "replug the debugger, press its reset button and run 'ccbeacon flash' again (it starts with a chip erase)"

    /// A debugger error as a message, a hint and exit status 1 (64 for a `--flash-size` the chip
    /// refutes). `flashChanged`: it came after the chip erase had begun, so the hint opens with
    /// `changedOpening` (the flash may be erased, and with `locksAtReset` the chip may lock), never
    /// says that nothing was changed, and the status is 1; a lock that did not take came after the
    /// image was written, and its hint says so instead. `transportAdvice`: what the command advises
    /// after a lost transfer (`flash`: the framing hint, else `reflashAdvice`), in place of trying
    /// again.
    static func failure(
        _ error: DebuggerError, flashChanged: Bool = false, locksAtReset: Bool = false, transportAdvice: String? = nil
    ) -> CommandFailure {
        var message = error.description
        var hint: String
        var hintLines: [String] = []
        // A wrong --flash-size refused before the chip changed is a usage error, with the usage.
        var refusedSize = false
        // Said only where the refusal left the chip as it was.
        let unchanged = flashChanged ? "" : "; nothing was changed"
        switch error {
        case .transport(.accessDenied, _):
            hint =
                "you may not open the debugger; install the udev rule (scripts/udev/\(udevRuleFile), or the ccbeacon package, which installs it) as /etc/udev/rules.d/\(udevRuleFile), then run 'sudo udevadm control --reload-rules && sudo udevadm trigger' and replug it; over SSH (no seat) also join the plugdev group. The rule:"
            hintLines = DebuggerModel.udevRuleLines
        case .transport(.busy, _): hint = "another program (cc-tool, SmartRF) has the debugger open; close it"
        case .transport(.noDevice, let during), .transport(.timeout, let during),
            .transport(.shortTransfer, let during), .transport(.pipe, let during), .transport(.libusb, let during),
            .transport(.other, let during):
            // After the erase began the opening says the flash may be changed; a step that may
            // change it says so itself.
            let again = "replug the debugger, press its reset button and try again"
            if flashChanged {
                hint = transportAdvice ?? again
            } else if during.mayLeaveFlashChanged {
                hint = "\(leftPartly(during)); \(transportAdvice ?? reflashAdvice)"
            } else {
                hint = again
            }
        case .noTarget, .targetNotResponding:
            hint = DeviceSupport.noTargetHint
        case .targetLocked: hint = "the chip is debug-locked; 'ccbeacon erase' unlocks it (and clears the whole flash)"
        case .unknownPart: hint = DeviceSupport.unknownChipHint
        case .unsupportedTarget(_, let known):
            hint = "ccbeacon programs the " + known.joined(separator: " and ") + " (the chips of boards/chips.json)"
        case .eraseTimeout, .stillLockedAfterErase: hint = "power-cycle the target and try again"
        // Every family that reports no size has a part of 32 KiB.
        case .flashSizeNotGiven(let family):
            hint = "give it with --flash-size, as the part's marking says (a \(family)F32 has 32)"
        case .flashSizeNotMade(let given, let family, let sizes):
            message = "--flash-size \(Chip.sizeText(given)): the \(family) comes in \(Chip.kibList(sizes)) KiB"
            hint = wrongSizeHint
            refusedSize = true
        case .flashSizeContradicted(let given, let chip, let reported):
            message = "--flash-size \(Chip.sizeText(given)): the \(chip) reports \(Chip.sizeText(reported))"
            hint = wrongSizeHint
            refusedSize = true
        case .flashSizeRefuted(let chip, _):
            hint = "give --flash-size as the part's marking says (a \(chip.prefix(6))F32 has 32)" + unchanged
        case .secondaryAddressDoubtful:
            hint =
                "check --flash-size against the part's marking (the number after the F), or write the address anew with 'ccbeacon flash --mac'"
                + unchanged
        case .lockNotTaken:
            hint =
                (flashChanged ? "the image was written, but " : "")
                + "the chip ignores its lock bits (a failing part?); 'ccbeacon erase' clears it, then try another chip"
        case .flashBusy, .dmaTimeout: hint = "power-cycle the target and run the command again"
        case .writeAborted:
            hint =
                "a page is write-protected by lock bits, or lies beyond the chip's flash; 'ccbeacon flash' erases first, so run it again (with the --flash-size the part's marking says, on a chip that reports none)"
        case .verifyMismatch, .identityMismatch:
            hint =
                "the flash does not hold the image; run 'ccbeacon flash' again; if it repeats, the chip may be worn out"
        }
        if refusedSize, !flashChanged { return .usage(message) }
        if flashChanged, error != .lockNotTaken { hint = "\(changedOpening(locksAtReset: locksAtReset)); \(hint)" }
        var failure = CommandFailure(.failure, message, hint: hint)
        failure.hintLines = hintLines
        return failure
    }

    /// What a step that may change the flash left, when a transfer of it was lost: the chip
    /// erase's start leaves a partly erased chip, any later step a partly written one.
    static func leftPartly(_ during: DebuggerOperation) -> String {
        during == .startingErase || during == .waitingForErase
            ? "the chip may be left partly erased" : "the chip is left partly written"
    }

    /// The hint's opening after a failure once the chip erase had begun.
    static let flashMayHaveChanged = "the chip's flash may be erased or partly written"

    /// `flashMayHaveChanged`, and with `locksAtReset` (`FlashError.flashChanged`) that the chip may
    /// lock at its next reset.
    static func changedOpening(locksAtReset: Bool) -> String {
        flashMayHaveChanged + (locksAtReset ? "; " + FlashError.mayLockAtReset : "")
    }

    /// What to do about a `--flash-size` the chip or its family refutes.
    static let wrongSizeHint =
        "give --flash-size as the part's marking says, or leave it out on a chip that reports its size"

    /// What `info` says of an erased secondary address: where it looked, when the size that puts
    /// it there is the user's (a wrong size looks in the wrong place).
    static func noSecondaryAddress(_ chip: Chip) -> String {
        guard !chip.reportsFlashSize, let place = chip.secondaryAddress else { return "none (erased)" }
        return "none at \(HexText.address(place.lowerBound)) (erased there, where a \(chip.name) keeps it)"
    }

    /// What to do when a debugger sees no target. The reset button first: a CC Debugger often
    /// reports no target until it is pressed with the target powered (first-contact.md).
    static let noTargetHint =
        "press the debugger's reset button with the target powered (a CC Debugger often sees no target until it is pressed; its LED turns green); if it stays red, check the wiring (DD, DC, RESET_N, GND) and the target's power (VDD sense)"

    /// What to do about a stall while programming with the packed framing: this debugger's
    /// firmware may take a burst only alone in its transfer, as every known client sends it.
    /// `traced`: the command wrote a trace already (it is what to send).
    static func framingHint(_ error: DebuggerError, framing: USBFraming, traced: Bool) -> String? {
        guard framing == .packed, case .transport(.pipe, .programming) = error else { return nil }
        let report = traced ? "please report it with the trace you took" : "please report it with a --trace"
        return
            "the debugger stalled a packed burst: its firmware may take a burst only alone in its transfer; run again without --usb-framing packed (the default, proven, sends it alone), and \(report) (see First hardware in the README)"
    }

    static func progress(_ console: Console) -> (FlashProgress) -> Void {
        var reporters: [FlashProgress.Phase: ProgressReporter] = [:]
        return { event in
            let reporter = reporters[event.phase] ?? ProgressReporter(console: console, label: event.phase.rawValue)
            reporters[event.phase] = reporter
            reporter.update(done: event.done, total: event.total)
        }
    }
}

/// `ccbeacon devices`.
enum DevicesCommand {
    static let spec = CommandSpec(
        name: "devices", summary: "list the attached CC Debuggers and the chips they see", manual: manual,
        table: CommandTable(
            details: """
                Lists every \(DebuggerModel.listed)
                with its --device selector (BUS:ADDRESS), its port path (select it with port:BUS-PORT; it
                stays when the debugger is replugged into the same socket), serial number, firmware and
                the target it detects.

                Example:
                  ccbeacon devices
                """,
            options: [Options.json.spec, Options.trace.spec]))
    static let command = Command(spec, JSONArgument.self) { arguments, console, hardware throws(CommandFailure) in
        try run(arguments, console: console, debuggers: hardware.debuggers)
    }

    static func run(_ arguments: JSONArgument, console: Console, debuggers: (any DebuggerProvider)?)
        throws(CommandFailure)
    {
        let provider = try DeviceSupport.provider(debuggers)
        let devices = try DeviceSupport.listDevices(provider)
        var rows: [[String]] = []
        var json: [JSONValue] = []
        var notes: [String] = []
        for device in devices {
            var target = "?"
            var firmware = "?"
            do {
                // Only the debugger's state is asked for: no chip is connected to.
                let state = try CC254xSession(transport: try provider.open(device), chips: []).open()
                target = state.targetID == 0 ? "none" : "CC" + HexText.digits(state.targetID)
                firmware =
                    "\(HexText.address(state.firmwareID)) rev \(HexText.address(state.firmwareRevision))"
                if let note = DebuggerModel.firmwareNote(revision: state.firmwareRevision) { notes.append(note) }
            } catch {
                target = "error: \(error)"
            }
            rows.append([
                device.selector, device.portPath ?? "-", device.usbID, device.product, device.serial ?? "-", firmware,
                target,
            ])
            json.append(
                .object([
                    ("device", .string(device.selector)), ("port", device.portPath.map { .string($0) } ?? .null),
                    ("usb", .string(device.usbID)),
                    ("product", .string(device.product)),
                    ("serial", device.serial.map { .string($0) } ?? .null), ("firmware", .string(firmware)),
                    ("target", .string(target)),
                ]))
        }
        if rows.contains(where: { $0[6] == "none" }) {
            console.diagnostics(line: "hint: a debugger shows no target: \(DeviceSupport.noTargetHint)")
        }
        for note in Set(notes).sorted() { console.diagnostics(line: "note: \(note)") }
        if arguments.json {
            console.data(JSONValue.array(json).rendered() + "\n")
        } else if devices.isEmpty {
            console.output(line: "no debuggers attached")
        } else {
            console.output(
                composed: Table.render(
                    header: ["DEVICE", "PORT", "USB", "PRODUCT", "SERIAL", "FIRMWARE", "TARGET"], rows: rows))
        }
    }
}

/// `ccbeacon info`.
enum InfoCommand {
    static let spec = CommandSpec(
        name: "info", summary: "identify the target chip: ID, flash, lock state, IEEE addresses", manual: manual,
        table: CommandTable(
            details: """
                Resets the target into debug mode and reports the chip ID and revision, flash and RAM size,
                whether the debug interface is locked, the factory (primary) IEEE address from the info
                page and the secondary address from the last flash page (the CC2430/31 have no factory
                address: the one given them sits in the last 8 bytes of flash). The chip is left halted. A
                chip that does not report its flash size (CC2510/11, CC1110/11, CC2430/31) is named by its
                family until --flash-size gives it.

                Example:
                  ccbeacon info --device 1:7
                """,
            options: [Options.device.spec, Options.flashSize.spec, Options.json.spec, Options.trace.spec]))
    static let command = Command(spec, DeviceArguments.self) { arguments, console, hardware throws(CommandFailure) in
        try run(arguments, console: console, debuggers: hardware.debuggers)
    }

    static func run(_ arguments: DeviceArguments, console: Console, debuggers: (any DebuggerProvider)?)
        throws(CommandFailure)
    {
        let connection = try DeviceSupport.connect(arguments.device, debuggers: debuggers)
        let identity = connection.identity
        let sizeHint = DeviceSupport.flashSizeHint(
            targetID: connection.state.targetID, chips: connection.session.chips)
        var primary: [UInt8]?
        var secondary: [UInt8]?
        var secondaryDoubt: String?
        if !identity.locked, let chip = connection.chip {
            do {
                primary = try connection.session.primaryAddress(chip: chip)
                secondary = try connection.session.secondaryAddress(chip: chip)
            } catch .secondaryAddressDoubtful(let name) {
                secondaryDoubt = "the last page of a \(name) holds data beside it: is --flash-size right?"
            } catch { throw DeviceSupport.failure(error) }
        }
        let name = connection.chip?.name ?? "CC" + HexText.digits(connection.state.targetID)
        let family = ChipFamily(targetID: connection.state.targetID, in: connection.session.chips)
        /// Whether the chip (or, unknown, any of its family) has a place for that address.
        func has(_ place: KeyPath<Chip, Range<Int>?>) -> Bool {
            connection.chip.map { $0[keyPath: place] != nil } ?? family?.anyHas(place) ?? false
        }
        /// Why an address was not read, where the chip has a place for it.
        func notRead(_ place: KeyPath<Chip, Range<Int>?>) -> String? {
            guard has(place) else { return nil }
            if identity.locked { return "the debug interface is locked" }
            guard connection.chip == nil else { return nil }
            return sizeHint != nil
                ? "where it is depends on the flash size: give --flash-size"
                : "the chip's flash size is none of boards/chips.json's"
        }
        if arguments.json {
            console.data(
                JSONValue.object([
                    ("device", .string(connection.device.selector)), ("chip", .string(name)),
                    ("chipId", .integer(Int(identity.chipID))), ("revision", .integer(Int(identity.revision))),
                    ("flashSize", connection.chip == nil ? .null : .integer(identity.flashSize)),
                    ("flashSizeCode", .integer(Int(identity.flashSizeCode))),
                    ("flashSizeReported", .bool(sizeHint == nil)),
                    ("ramSize", connection.chip == nil && sizeHint != nil ? .null : .integer(identity.ramSize)),
                    ("locked", .bool(identity.locked)),
                    ("primaryAddress", primary.map { .string(HexText.colonSeparated($0)) } ?? .null),
                    // Why an address is unknown, where the chip has a place for one (null when it
                    // was read, or the secondary one is erased).
                    (
                        "primaryAddressDoubt",
                        notRead(\.primaryAddress).map { .string("not read: \($0)") } ?? .null
                    ),
                    ("secondaryAddress", secondary.map { .string(HexText.colonSeparated($0)) } ?? .null),
                    (
                        "secondaryAddressDoubt",
                        (secondaryDoubt ?? notRead(\.secondaryAddress).map { "not read: \($0)" }).map(JSONValue.string)
                            ?? .null
                    ),
                ]).rendered() + "\n")
            return
        }
        var lines = ["debugger \(connection.device.selector): \(connection.device.product)"]
        if identity.locked {
            lines.append("target: \(name), debug interface LOCKED (only 'ccbeacon erase' can unlock it)")
        } else {
            let flash: String
            switch (connection.chip, sizeHint) {
            case (let chip?, nil):
                flash = "flash: \(Chip.sizeText(chip.flashSize)), RAM: \(Chip.sizeText(identity.ramSize))"
            case (let chip?, _?):
                flash =
                    "flash: \(Chip.sizeText(chip.flashSize)) (as --flash-size says; the chip does not report it), RAM: \(Chip.sizeText(chip.ramSize))"
            case (nil, let hint?): flash = "flash: not reported (\(hint))"
            case (nil, nil):
                flash =
                    "flash: unknown (CHIPINFO0.FLASHSIZE \(identity.flashSizeCode) is none of the chips of boards/chips.json), RAM: \(Chip.sizeText(identity.ramSize))"
            }
            lines += [
                "target: \(name) (chip ID \(HexText.address(identity.chipID, width: 2)), revision \(HexText.address(identity.revision, width: 2)))",
                flash + ", debug lock: off",
            ]
            let familyName = connection.chip?.family ?? name
            let secondaryLine =
                "secondary address: "
                + (secondaryDoubt.map { "unknown (\($0))" } ?? notRead(\.secondaryAddress).map { "not read (\($0))" }
                    ?? secondary.map { HexText.colonSeparated($0) }
                    ?? connection.chip.map(DeviceSupport.noSecondaryAddress) ?? "none (erased)")
            switch (has(\.primaryAddress), has(\.secondaryAddress)) {
            case (false, false): lines.append("IEEE address: none (the \(familyName) has none)")
            case (false, true):
                // The CC243x: no factory address; the one kept in the last bytes of flash.
                let kept =
                    connection.chip?.secondaryAddress?.count
                    ?? family?.members.compactMap(\.secondaryAddress?.count).first ?? 8
                lines.append(
                    "IEEE address: none in the chip (the \(familyName) keeps it in the last \(kept) bytes of flash)")
                lines.append(secondaryLine)
            case (true, _):
                let primaryText =
                    primary.map(HexText.colonSeparated) ?? notRead(\.primaryAddress).map { "not read (\($0))" } ?? "?"
                lines += ["primary IEEE address: \(primaryText)", secondaryLine]
            }
        }
        console.output(lines: lines)
    }
}

/// `ccbeacon erase`.
enum EraseCommand {
    static let spec = CommandSpec(
        name: "erase", summary: "erase the whole chip (also clears the lock bits)", manual: manual,
        table: CommandTable(
            details: """
                Resets the target into debug mode, runs a chip erase, waits for it (at most 8 s) and checks
                that the chip is unlocked afterwards. Everything in flash is gone, including the secondary
                address and the lock bits.

                Example:
                  ccbeacon erase --device 1:7
                """,
            options: [Options.device.spec, Options.trace.spec]))
    static let command = Command(spec, DeviceArguments.self) { arguments, console, hardware throws(CommandFailure) in
        try run(arguments, console: console, debuggers: hardware.debuggers)
    }

    static func run(_ arguments: DeviceArguments, console: Console, debuggers: (any DebuggerProvider)?)
        throws(CommandFailure)
    {
        let connection = try DeviceSupport.connect(arguments.device, debuggers: debuggers)
        do {
            _ = try connection.session.chipErase(targetID: connection.state.targetID)
            try connection.session.resetAndRun()
        } catch { throw DeviceSupport.failure(error, transportAdvice: reeraseAdvice) }
        console.output(line: "erased the chip on \(connection.device.selector)")
    }

    /// What `erase` advises after a lost transfer that may have left the chip partly erased.
    static let reeraseAdvice = "replug the debugger, press its reset button and run 'ccbeacon erase' again"
}

/// `ccbeacon read`.
enum ReadCommand {
    static let spec = CommandSpec(
        name: "read", summary: "read the chip's flash to a HEX or .bin file", manual: manual,
        table: CommandTable(
            details: """
                Reads the whole flash (all banks; or --range, END exclusive) and writes it as Intel HEX
                (16-byte records, 04 records per 64 KiB) or as a flat binary.

                Example:
                  ccbeacon read -o dump.hex --device 1:7
                """,
            options: [output.spec, Options.device.spec, Options.flashSize.spec, range.spec, Options.trace.spec]))
    static let command = Command(spec, Arguments.self) { arguments, console, hardware throws(CommandFailure) in
        try run(arguments, console: console, debuggers: hardware.debuggers)
    }

    static let output = Options.output("DUMP.hex|DUMP.bin", help: "output file (.hex or .bin)").required
    static let range = Options.range(help: "only these addresses (END exclusive)")

    /// What `read` was asked.
    struct Arguments: CommandArguments {
        var output: String
        var format: ImageFormat
        /// `nil`: the whole flash.
        var range: Range<Int>?
        var device: DeviceChoice

        init(_ command: ParsedCommand) throws(CommandFailure) {
            output = try command.value(ReadCommand.output)
            format = try ImageFormat.of(output, role: "output")
            range = try command.value(ReadCommand.range)
            device = try DeviceChoice(command)
        }
    }

    static func run(_ arguments: Arguments, console: Console, debuggers: (any DebuggerProvider)?)
        throws(CommandFailure)
    {
        let (output, format) = (arguments.output, arguments.format)
        try CommandSupport.checkOutputs([output], against: [])
        let connection = try DeviceSupport.connect(arguments.device, debuggers: debuggers)
        guard !connection.identity.locked else { throw DeviceSupport.failure(.targetLocked) }
        let chip = try DeviceSupport.chip(connection)
        let range = arguments.range ?? 0..<chip.flashSize
        guard range.upperBound <= chip.flashSize else {
            throw .usage("--range ends beyond the chip's \(chip.flashSize / 1024) KiB of flash")
        }
        let bytes: [UInt8]
        do {
            bytes = try connection.session.readFlash(range, progress: DeviceSupport.progress(console))
            try connection.session.resetAndRun()
        } catch { throw DeviceSupport.failure(error) }
        switch format {
        case .bin:
            try FileAccess.writeAtomically(bytes, to: output)
        case .hex:
            let image = (try? MemoryImage(bytes: bytes, at: range.lowerBound)) ?? MemoryImage()
            try FileAccess.writeAtomically(HexWriter().text(for: image), to: output)
        }
        console.output(
            line:
                "read \(Chip.sizeText(bytes.count)) from the \(chip.name) on \(connection.device.selector) to \(output)"
        )
    }
}
