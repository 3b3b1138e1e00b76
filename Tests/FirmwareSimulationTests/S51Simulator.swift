import Foundation
import TestSupport

/// One write the firmware made to a watched register, in program order — or, in traces of
/// production images, one read of a register in `S51.watchedReads` (`isRead`; its value is
/// whatever the simulated radio holds there, so it is not recorded).
struct RegisterWrite: Equatable, CustomStringConvertible {
    /// Register name (`RFD`, `PRF_CHAN`, …).
    var register: String
    /// The value written.
    var value: UInt8
    /// Where the CPU went on after the write (the next instruction's address).
    var resumeAddress: Int?
    /// A read, not a write.
    var isRead = false

    var description: String { isRead ? "read \(register)" : "\(register) \(String(format: "%02X", value))" }
}

/// What one run of a `-DSIM` firmware in s51 showed.
struct SimulationTrace {
    /// Every watched write, in order.
    var writes: [RegisterWrite]
    /// XDATA after the run: radio RAM page 0 (0x6000–0x607F), the radio XREGs (0x6180–0x61FF),
    /// OBSSEL0–5 (0x6240–0x6247) and IVCTRL.
    var finalXDATA: [Int: UInt8]
    /// Final values of `S51.finalSFRs`.
    var finalSFR: [Int: UInt8] = [:]
    /// Whether the firmware ended the run itself (through s51's simulator interface).
    var stoppedItself: Bool
    /// s51's whole console output, for failure messages.
    var log: String
}

/// Runs firmware in the s51 simulator (ucsim, Debian `sdcc-ucsim`) as a generic 8052, as
/// stackfree-ble.md §6 describes: CC2541 registers are plain memory there, so every write to a
/// watched register is logged by an event breakpoint whose command dumps the new value and runs on.
/// s51 cannot model status registers (§6.2), which is why the `-DSIM` build skips hardware waits.
enum S51 {
    /// The SFRs watched (direct addresses).
    static let watchedSFRs: [(address: Int, name: String)] = [
        (0xC6, "CLKCONCMD"), (0xD9, "RFD"), (0xE1, "RFST"), (0x97, "ST2"), (0x96, "ST1"), (0x95, "ST0"),
        (0xBE, "SLEEPCMD"), (0x87, "PCON"),
    ]
    /// SFRs read at the end: bit writes (SETB/CLR, as for EA, STIE and STIF) raise no event in
    /// s51, so their result is checked instead.
    static let finalSFRs = [0xA8, 0xC0]
    /// The radio registers watched (XDATA addresses).
    static let watchedXDATA: [(address: Int, name: String)] = [
        (0x6000, "PRF_CHAN"), (0x600C, "PRF_W_INIT"), (0x61B1, "LLECTRL"), (0x6186, "TXPOWER"),
        (0x6243, "OBSSEL0"), (0x6244, "OBSSEL1"),
    ]
    /// What unwritten radio memory holds in the simulation, so that writes (and missed writes) show.
    static let unwrittenFill: UInt8 = 0xA5
    /// The sleep timer's value when the firmware starts: close to the 24-bit wrap, so that the
    /// compare arithmetic has to wrap.
    static let initialSleepTimer = 0xFF_FF00

    /// Radio registers whose reads a production-image trace logs (XDATA addresses). A read
    /// breakpoint cannot dump the cell it watches (§6.2: that re-triggers it), so its command
    /// prints the address as a marker instead (`expression`, in decimal).
    static let watchedReads: [(address: Int, name: String)] = [(0x61D0, "RFTXFLEN")]

    /// Runs a `-DSIM` image (Intel HEX) until it stops itself and returns the trace; `setup`
    /// (s51 commands) runs after loading, before the breakpoints are set.
    static func trace(image: URL, setup: [String] = []) throws -> SimulationTrace {
        try parse(run(traceScript(image: image, setup: setup, breakpoints: [], run: ["run"])))
    }

    /// Runs a production image (no `-DSIM`: its waits really poll the radio) with `radio`
    /// answering, until the CPU has reached the power-mode entry `sleeps` times, and returns the
    /// trace with the reads of `watchedReads` in it.
    static func trace(productionImage image: URL, radio: SimulatedRadio, sleeps: Int) throws -> SimulationTrace {
        var setup = ["fill xram 0x0000 0x1fff 0"]
        setup += radio.xdata.sorted { $0.key < $1.key }.map { "set memory xram \(hex($0.key)) \(hex($0.value))" }
        var breakpoints = watchedReads.map { ("break xram r \(hex($0.address))", ["expression \(hex($0.address))"]) }
        breakpoints += radio.actions.sorted { $0.key < $1.key }.map { ("break \(hex($0.key))", $0.value) }
        breakpoints.append(("break \(hex(RadioExpectation.powerModeEntry))", []))
        let log = try run(
            traceScript(
                image: image, setup: setup, breakpoints: breakpoints, run: Array(repeating: "run", count: sleeps)))
        var trace = try parse(log)
        // The radio model's own `set` of RFST to 0 shows in the log like a write; the firmware
        // never writes 0 there (it is no command), so those are the model's.
        trace.writes.removeAll { $0.register == "RFST" && $0.value == 0 && !$0.isRead }
        return trace
    }

    /// The s51 script of a trace: load, fill radio memory, `setup`, log every write to a watched
    /// register, add `breakpoints` (each with the commands it runs before going on; none: it
    /// stops the run), `run`, then dump the final radio memory and SFRs.
    static func traceScript(
        image: URL, setup: [String], breakpoints: [(String, [String])], run: [String]
    ) -> [String] {
        var script = [
            "file \"\(image.path)\"",
            "fill xram 0x6000 0x62ff \(hex(unwrittenFill))",
            "set memory sfr 0x95 \(hex(UInt8(initialSleepTimer & 0xFF)))",
            "set memory sfr 0x96 \(hex(UInt8((initialSleepTimer >> 8) & 0xFF)))",
            "set memory sfr 0x97 \(hex(UInt8(initialSleepTimer >> 16)))",
        ]
        script += setup
        var all = watchedSFRs.map {
            ("break sfr w \(hex($0.address))", ["dump sfr \(hex($0.address)) \(hex($0.address))"])
        }
        all += watchedXDATA.map {
            ("break xram w \(hex($0.address))", ["dump xram \(hex($0.address)) \(hex($0.address))"])
        }
        all += breakpoints
        for (number, (breakpoint, commands)) in all.enumerated() {
            script.append(breakpoint)
            if !commands.isEmpty {
                script.append("commands \(number + 1) \((commands + ["run"]).joined(separator: ";"))")
            }
        }
        script +=
            run + [
                "dump xram 0x6000 0x607f", "dump xram 0x6180 0x61ff", "dump xram 0x6240 0x6247",
                "dump xram 0x6265 0x6265",
            ]
        script += finalSFRs.map { "dump sfr \(hex($0)) \(hex($0))" } + ["kill"]
        return script
    }

    /// An s51 number: `0x` and lower-case hex digits.
    static func hex(_ value: Int) -> String { "0x" + String(value, radix: 16) }
    static func hex(_ value: UInt8) -> String { hex(Int(value)) }

    /// Runs an image (a production build too) until the CPU has reached `address` `times` times
    /// (a fetch breakpoint) and returns XDATA `dump` afterwards, with the number of stops reached.
    static func runUntil(image: URL, address: Int, times: Int, dump: Range<Int>) throws -> (
        stops: Int, memory: [UInt8], log: String
    ) {
        var script = [
            "file \"\(image.path)\"", "fill xram 0x0000 0x1fff 0",
            "fill xram 0x6000 0x62ff 0x\(String(unwrittenFill, radix: 16))",
            "break 0x\(String(address, radix: 16))",
        ]
        script += Array(repeating: "run", count: times)
        script += [
            "dump xram 0x\(String(dump.lowerBound, radix: 16)) 0x\(String(dump.upperBound - 1, radix: 16))", "kill",
        ]
        let log = try run(script)
        let stops = log.components(separatedBy: "(104) Breakpoint").count - 1
        let dumpStart = try require(log.range(of: "dump xram 0x\(String(dump.lowerBound, radix: 16))"), log)
        let values = dumpValues(String(log[dumpStart.upperBound...]), range: dump)
        return (stops, dump.map { values[$0] ?? 0 }, log)
    }

    /// The CPU cycles of each whole advertising event of a `-DSIM` image (whose hardware waits
    /// end at once): s51's clock count between consecutive entries into the power mode, divided by
    /// the 12 clocks of a classic 8051 machine cycle (counted as one CC2541 clock: an approximation,
    /// docs/battery-life.md). The image must reach the power mode at least three times.
    static func eventCycles(image: URL) throws -> [Int] {
        var script = traceScript(
            image: image, setup: [], breakpoints: [("break \(hex(RadioExpectation.powerModeEntry))", [])],
            run: Array(repeating: ["run", "state"], count: 8).flatMap { $0 })
        // The trace's register breakpoints run on by themselves; only the power-mode entry stops.
        script.removeAll { $0.hasPrefix("dump xram") || $0.hasPrefix("dump sfr") }
        let log = try run(script)
        var clocks: [Int] = []
        var stoppedAtEntry = false
        for line in log.split(separator: "\n") {
            if line.hasPrefix("Stop at 0x\(String(format: "%06x", RadioExpectation.powerModeEntry))") {
                stoppedAtEntry = true
            } else if line.hasPrefix("Stop at") {
                stoppedAtEntry = false
            }
            // "Total time since last reset= 0.012356770833335 sec (136656 clks)"
            if line.hasPrefix("Total time since last reset="), stoppedAtEntry,
                let open = line.lastIndex(of: "("),
                let count = Int(line[line.index(after: open)...].prefix { $0.isNumber })
            {
                clocks.append(count)
                stoppedAtEntry = false
            }
        }
        guard clocks.count >= 3 else { throw SimulationError(message: "fewer than three power-mode entries:\n\(log)") }
        return zip(clocks, clocks.dropFirst()).map { ($1 - $0) / 12 }
    }

    /// Runs s51 with `script` (one command per line) and returns its console output.
    static func run(_ script: [String]) throws -> String {
        guard let s51 = FirmwareBuild.s51 else { throw SimulationError(message: "s51 is not installed") }
        let folder = try TemporaryFolder(prefix: "s51")
        defer { folder.remove() }
        let scriptPath = try folder.write("run.cmd", script.joined(separator: "\n") + "\n")
        // s51 keeps running a -C script only while its console input stays open (§6.2), hence
        // /dev/zero; the simulator interface at XDATA 0xFFFF lets the firmware stop the run.
        let result = try ChildProcess.run(
            s51, ["-b", "-t", "8052", "-I", "if=xram[0xffff]", "-C", scriptPath], in: folder.url,
            standardInput: "/dev/zero", timeout: 60)
        guard result.status == 0 else {
            throw SimulationError(message: "s51 exited with \(result.status):\n\(result.output)\n\(result.errors)")
        }
        return result.output
    }

    /// Reads the console output of `trace`'s script.
    static func parse(_ log: String) throws -> SimulationTrace {
        let names = Dictionary(uniqueKeysWithValues: watchedSFRs.map { ($0.address, $0.name) })
        let xdataNames = Dictionary(uniqueKeysWithValues: watchedXDATA.map { ($0.address, $0.name) })
        let lines = log.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = lines.firstIndex(where: { $0.hasPrefix("Simulation started") }),
            let end = lines.firstIndex(where: { $0.hasPrefix("dump xram 0x6000 0x607f") })
        else { throw SimulationError(message: "the s51 log has no run:\n\(log)") }
        let readMarkers = Dictionary(uniqueKeysWithValues: watchedReads.map { (String($0.address), $0.name) })
        var writes: [RegisterWrite] = []
        for line in lines[first..<end] {
            if let name = readMarkers[line.trimmingCharacters(in: .whitespaces)] {
                writes.append(RegisterWrite(register: name, value: 0, isRead: true))
                continue
            }
            if line.hasPrefix("Simulation started, PC=0x"), !writes.isEmpty,
                writes[writes.count - 1].resumeAddress == nil
            {
                writes[writes.count - 1].resumeAddress = Int(
                    line.dropFirst("Simulation started, PC=0x".count), radix: 16)
                continue
            }
            guard let (address, value, isSFR) = singleValue(line) else { continue }
            let name = isSFR ? names[address] : xdataNames[address]
            guard let name else { continue }
            writes.append(RegisterWrite(register: name, value: value))
        }
        var finalSFR: [Int: UInt8] = [:]
        for line in lines[end...] {
            if let (address, value, isSFR) = singleValue(line), isSFR, finalSFRs.contains(address) {
                finalSFR[address] = value
            }
        }
        let finalText = lines[end...].joined(separator: "\n")
        var final = dumpValues(finalText, range: 0x6000..<0x6080)
        final.merge(dumpValues(finalText, range: 0x6180..<0x6200)) { $1 }
        final.merge(dumpValues(finalText, range: 0x6240..<0x6248)) { $1 }
        final.merge(dumpValues(finalText, range: 0x6265..<0x6266)) { $1 }
        return SimulationTrace(
            writes: writes, finalXDATA: final, finalSFR: finalSFR,
            stoppedItself: log.contains("Program stopped itself"),
            log: log)
    }

    /// A one-value dump line: address, value, and whether it is an SFR (two hex digits). Named
    /// SFRs print as "0x87 PCON:   0b00000001 0x01 '.'   1", others as "0xd9   04 .".
    static func singleValue(_ line: String) -> (address: Int, value: UInt8, isSFR: Bool)? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, fields[0].hasPrefix("0x"), let address = Int(fields[0].dropFirst(2), radix: 16)
        else { return nil }
        let valueText = fields[1].hasSuffix(":") && fields.count >= 4 ? fields[3].dropFirst(2) : fields[1]
        guard let value = UInt8(valueText, radix: 16) else { return nil }
        return (address, value, fields[0].count <= 4)
    }

    /// The bytes of `dump xram` lines (8 per line) for the addresses in `range`.
    static func dumpValues(_ text: String, range: Range<Int>) -> [Int: UInt8] {
        var values: [Int: UInt8] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[0].hasPrefix("0x"), let start = Int(fields[0].dropFirst(2), radix: 16),
                range.contains(start)
            else { continue }
            let count = min(8, range.upperBound - start)
            for (offset, field) in fields.dropFirst().prefix(count).enumerated() {
                if let value = UInt8(field, radix: 16), field.count == 2 { values[start + offset] = value }
            }
        }
        return values
    }

    static func require<T>(_ value: T?, _ log: String) throws -> T {
        guard let value else { throw SimulationError(message: "unexpected s51 output:\n\(log)") }
        return value
    }
}

/// How the radio answers a production image in s51, which has no radio: s51 runs `actions` when
/// the CPU reaches their addresses (fetch breakpoints), and the `xdata` cells hold fixed values.
struct SimulatedRadio {
    /// s51 commands per code address.
    var actions: [Int: [String]] = [:]
    /// Radio registers with the value they read as throughout.
    var xdata: [Int: UInt8] = [:]

    /// No radio at all: RFST keeps the last command written and TASKDONE never comes.
    static let dead = SimulatedRadio()

    /// A radio that takes every command at once — RFST reads 0 from the instruction after the
    /// write on — and ends each `CMD_TX` task at once (RFIRQF1.TASKDONE), with its TX FIFO length
    /// register (RFTXFLEN) reading `txFIFOLength`. The writes to RFST are found in the image's
    /// linker listing (`beacon.rst`): each is a `mov _RFST,#command`, and the model acts at the
    /// address after its bytes.
    static func answering(listing: String, txFIFOLength: UInt8) throws -> SimulatedRadio {
        var radio = SimulatedRadio(xdata: [0x61D0: txFIFOLength])
        // "      000412 75 E1 91         [24]  953 	mov	_RFST,#0x91"
        for line in listing.split(separator: "\n") where line.contains("\tmov\t_RFST,#0x") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            let bytes = fields.dropFirst().prefix { $0.count == 2 && UInt8($0, radix: 16) != nil }.count
            guard let address = fields.first.flatMap({ Int($0, radix: 16) }), bytes > 0,
                let command = line.split(separator: "#0x").last.flatMap({ UInt8($0.prefix(2), radix: 16) })
            else { throw SimulationError(message: "unexpected listing line: \(line)") }
            var commands = ["set memory sfr 0xe1 0"]
            if command == 0x09 { commands.append("set memory sfr 0x91 0x40") }  // CMD_TX: TASKDONE
            radio.actions[address + bytes] = commands
        }
        guard !radio.actions.isEmpty else { throw SimulationError(message: "no write to RFST in the listing") }
        return radio
    }
}

/// s51 could not run or its output was not understood.
struct SimulationError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
