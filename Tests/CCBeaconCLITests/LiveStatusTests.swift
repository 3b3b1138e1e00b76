import BeaconLabels
import CCDebugger
import Provisioning
import Synchronization
import Testing

@testable import CCBeaconCLI
@testable import CommandLineKit

/// A terminal of fixed width that understands what the live status writes: printable text, CR,
/// LF, cursor up (ESC [ n A) and erase to the end of the line (ESC [ K).
final class FakeTerminal: Sendable {
    let width: Int
    private let screen = Mutex<(lines: [[Character]], row: Int, column: Int)>(([[]], 0, 0))
    /// Lines that were too long and wrapped.
    let wrapped = Mutex(0)

    init(width: Int) { self.width = width }

    func feed(_ text: String) {
        screen.withLock { screen in
            var characters = Array(text)[...]
            while let character = characters.popFirst() {
                switch character {
                case "\r": screen.column = 0
                case "\n":
                    screen.row += 1
                    screen.column = 0
                    if screen.row == screen.lines.count { screen.lines.append([]) }
                case "\u{1B}":
                    guard characters.popFirst() == "[" else { continue }
                    var number = ""
                    while let next = characters.first, next.isNumber { number.append(characters.removeFirst()) }
                    switch characters.popFirst() {
                    case "A": screen.row = max(0, screen.row - (Int(number) ?? 1))
                    case "K":
                        let line = screen.lines[screen.row]
                        screen.lines[screen.row] = Array(line.prefix(screen.column))
                    default: break
                    }
                default:
                    if screen.column == width {  // wraps, as a terminal does
                        screen.row += 1
                        screen.column = 0
                        if screen.row == screen.lines.count { screen.lines.append([]) }
                        wrapped.withLock { $0 += 1 }
                    }
                    var line = screen.lines[screen.row]
                    while line.count < screen.column { line.append(" ") }
                    if screen.column < line.count { line[screen.column] = character } else { line.append(character) }
                    screen.lines[screen.row] = line
                    screen.column += 1
                }
            }
        }
    }

    /// What the terminal shows, line by line (the empty line the cursor rests on left out).
    var lines: [String] {
        screen.withLock { screen in
            var lines = screen.lines.map { String($0) }
            if lines.last == "" { lines.removeLast() }
            return lines
        }
    }
}

struct LiveStatusTests {
    /// A scripted run on two debuggers: each frame as a terminal 72 columns wide shows it.
    @Test func aScriptedRunDrawsTheseFrames() {
        let terminal = FakeTerminal(width: 72)
        let now = Mutex(0.0)
        let writes = Mutex(0)
        let status = LiveStatus(
            debuggers: [("EMU001", "1-1"), ("EMU002", "1-2")], done: 1, pending: 3, held: 0, width: 72,
            clock: { now.withLock { $0 } },
            write: { text in
                writes.withLock { $0 += 1 }
                terminal.feed(text)
            })
        let chipA = "00:12:4B:00:25:41"
        let chipB = "00:12:4B:00:25:42"
        func at(_ seconds: Double, _ event: ProvisionEvent) {
            now.withLock { $0 = seconds }
            status.handle(event, log: ProvisionCommand.describe(event))
        }
        at(0, .waitingForChip(debugger: "EMU001"))
        #expect(
            terminal.lines == [
                "EMU001  1-1  waiting for a chip",
                "EMU002  1-2  starting",
                "done 1 · pending 3 · held 0 · failed 0",
            ])
        at(1, .chipAttached(debugger: "EMU001", chip: chipA))
        at(1, .started(debugger: "EMU001", station: "Hall A", chip: chipA))
        at(
            2,
            .progress(
                debugger: "EMU001", station: "Hall A", chip: chipA,
                progress: .init(phase: .program, done: 1024, total: 3072)))
        // Progress again within a tenth of a second is not drawn.
        let before = writes.withLock { $0 }
        at(
            2.05,
            .progress(
                debugger: "EMU001", station: "Hall A", chip: chipA,
                progress: .init(phase: .program, done: 2048, total: 3072)))
        #expect(writes.withLock { $0 } == before)
        at(2, .chipAttached(debugger: "EMU002", chip: chipB))
        #expect(
            terminal.lines == [
                "EMU001  1-1  programming 66%  'Hall A' 00:12:4B:00:25:41",
                "EMU002  1-2  chip attached 00:12:4B:00:25:42",
                "done 1 · pending 3 · held 0 · failed 0",
            ])
        at(30, .finished(debugger: "EMU001", station: "Hall A", chip: chipA, outcome: .verified, reason: nil))
        at(31, .started(debugger: "EMU002", station: "Hall B", chip: chipB))
        at(
            32,
            .finished(
                debugger: "EMU002", station: "Hall B", chip: chipB, outcome: .interrupted,
                reason: "the debugger is gone (unplugged?)"))
        // The outcomes' log lines scroll above the status (a long one wraps, as on a terminal);
        // the status stays at the bottom, each of its lines within the width.
        let lines = terminal.lines
        #expect(
            Array(lines.suffix(3)) == [
                "EMU001  1-1  done  'Hall A' 00:12:4B:00:25:41",
                "EMU002  1-2  HELD: the debugger is gone (unplugged?)  'Hall B' 00:12:4B",
                "done 2 · pending 1 · held 1 · failed 0 · 1.9/min · ~32 s left",
            ], "\(lines)")
        #expect(
            lines.dropLast(3).joined()
                == "EMU001: 'Hall A' on 00:12:4B:00:25:41: verified"
                + "EMU002: 'Hall B' on 00:12:4B:00:25:42: interrupted (the debugger is gone (unplugged?))")
    }

    /// However narrow the terminal, no line wraps (the fake terminal traps a wrap).
    @Test(arguments: [40, 72, 200])
    func linesFitTheWidth(width: Int) {
        let terminal = FakeTerminal(width: width)
        let status = LiveStatus(
            debuggers: [("a-debugger-with-a-long-name", "1-2.3.4"), ("EMU002", nil)], done: 0, pending: 600, held: 0,
            width: width, clock: { 0 }, write: terminal.feed)
        status.handle(
            .finished(
                debugger: "EMU002", station: String(repeating: "x", count: 300), chip: "00:12:4B:00:25:42",
                outcome: .failed, reason: "a reason\nover two lines"), log: nil)
        #expect(terminal.lines.allSatisfy { $0.count < max(20, width) })
        #expect(terminal.lines.count == 3 && terminal.wrapped.withLock { $0 } == 0)
        // Wide characters take two columns, combining marks none: the line is cut by columns.
        let station = String(repeating: "測", count: 100) + "e\u{301}"
        let lines = Mutex<[String]>([])
        let capture = LiveStatus(
            debuggers: [("EMU001", "1-1")], done: 0, pending: 1, held: 0, width: width, clock: { 0 },
            write: { text in lines.withLock { $0.append(text) } })
        capture.handle(.started(debugger: "EMU001", station: station, chip: "00:12:4B:00:25:41"), log: nil)
        let drawn = lines.withLock { $0 }.joined().replacingOccurrences(of: "\u{1B}[K", with: "").split(separator: "\n")
        for line in drawn {
            #expect(line.unicodeScalars.reduce(0) { $0 + TextWidth.columns($1) } < max(20, width), "\(line)")
        }
    }

    /// A terminal resized during the run: a new width gets a status drawn anew below, cut to it;
    /// too narrow (or too short) for the status, the run goes on with log lines.
    @Test func aResizedTerminalGetsWhatFitsIt() {
        let terminal = FakeTerminal(width: 200)
        let size = Mutex((columns: 72, rows: 24))
        let status = LiveStatus(
            debuggers: [("EMU001", "1-1")], done: 0, pending: 2, held: 0, size: { size.withLock { $0 } },
            clock: { 0 }, write: terminal.feed)
        let chip = "00:12:4B:00:25:41"
        status.handle(.started(debugger: "EMU001", station: String(repeating: "s", count: 100), chip: chip), log: nil)
        #expect(terminal.lines.count == 2 && terminal.lines[0].count == 71)
        size.withLock { $0.columns = 50 }
        status.handle(.waitingForChip(debugger: "EMU001"), log: nil)
        #expect(terminal.lines.count == 4, "drawn anew below: \(terminal.lines)")
        #expect(terminal.lines.suffix(2).allSatisfy { $0.count <= 49 })
        size.withLock { $0.columns = 30 }
        let finished = ProvisionEvent.finished(
            debugger: "EMU001", station: "s1", chip: chip, outcome: .verified, reason: nil)
        status.handle(finished, log: ProvisionCommand.describe(finished))
        status.handle(
            .progress(
                debugger: "EMU001", station: "s2", chip: chip, progress: .init(phase: .program, done: 1, total: 2)),
            log: nil)
        #expect(terminal.lines.last == "EMU001: 's1' on \(chip): verified", "\(terminal.lines)")
        #expect(!terminal.lines.contains { $0.hasPrefix("done 1") }, "no status once too narrow")
    }
}
