import BeaconLabels
import CCDebugger
import CommandLineKit
import Provisioning
import StructuredText
import Synchronization

/// `provision` on a terminal: one line per debugger (its port, what it does — waiting, erasing,
/// programming n %, verifying, listening, done, failed or held with the reason — and the station
/// in hand) and a totals line (done, pending, held, failed, rate per minute, time left), redrawn in
/// place at the bottom of the terminal; what the log would say of a chip (set aside, refused, a
/// failure) is printed above it and scrolls away. Piped, `provision` prints its log lines instead.
final class LiveStatus: Sendable {
    /// What one debugger is doing.
    struct Row: Sendable, Equatable {
        var debugger: String
        var port: String
        var state = "starting"
        var station: String?
        var chip: String?
    }

    struct State: Sendable {
        var rows: [Row]
        var done: Int
        var pending: Int
        var held: Int
        var failed = 0
        var verifiedNow = 0
        var drawnLines = 0
        var lastDraw = -1.0
        /// The width the status was last drawn at.
        var width = 0
        /// The terminal became too small for the status: log lines from then on.
        var fallback = false
    }

    private let state: Mutex<State>
    private let size: @Sendable () -> (columns: Int, rows: Int)
    private let start: Double
    private let clock: @Sendable () -> Double
    private let write: @Sendable (String) -> Void

    /// A status for `debuggers` (name and port), the list's counts when the run starts, drawn
    /// through `write` as wide as the terminal `size` says at each drawing (`width` columns when
    /// none is given); `clock` gives seconds (monotonic).
    init(
        debuggers: [(name: String, port: String?)], done: Int, pending: Int, held: Int, width: Int = 80,
        size: (@Sendable () -> (columns: Int, rows: Int))? = nil,
        clock: @escaping @Sendable () -> Double = { MonotonicClock.now }, write: @escaping @Sendable (String) -> Void
    ) {
        state = Mutex(
            State(
                rows: debuggers.map { Row(debugger: $0.name, port: $0.port ?? "-") }, done: done, pending: pending,
                held: held))
        self.size = size ?? { (max(20, width), 1000) }
        self.clock = clock
        self.start = clock()
        self.write = write
    }

    /// Takes an event: the debugger's line changes, the totals count it, a line worth keeping is
    /// printed above the status, and the status is drawn again (progress at most ten times a second).
    func handle(_ event: ProvisionEvent, log: String?) {
        state.withLock { state in
            var isProgress = false
            switch event {
            case .waitingForChip(let debugger):
                update(&state, debugger) {
                    $0.state = "waiting for a chip"; $0.station = nil; $0.chip = nil
                }
            case .chipAttached(let debugger, let chip):
                update(&state, debugger) {
                    $0.state = "chip attached"; $0.chip = chip; $0.station = nil
                }
            case .started(let debugger, let station, let chip):
                update(&state, debugger) {
                    $0.state = "burning"; $0.station = station; $0.chip = chip
                }
            case .progress(let debugger, _, _, let progress):
                isProgress = true
                let percent = progress.total > 0 ? progress.done * 100 / progress.total : 100
                let phase =
                    switch progress.phase {
                    case .erase: "erasing"
                    case .program: "programming"
                    case .verify, .read: "verifying"
                    }
                update(&state, debugger) { $0.state = "\(phase) \(percent)%" }
            case .listening(let debugger, _, _, _):
                update(&state, debugger) { $0.state = "listening on air" }
            case .finished(let debugger, _, _, let outcome, let reason):
                switch outcome {
                case .verified:
                    state.done += 1
                    state.pending -= 1
                    state.verifiedNow += 1
                    update(&state, debugger) { $0.state = "done" }
                case .interrupted:
                    state.held += 1
                    state.pending -= 1
                    update(&state, debugger) { $0.state = "HELD: \(reason ?? "interrupted")" }
                default:
                    state.failed += 1
                    update(&state, debugger) { $0.state = "FAILED: \(reason ?? "failed")" }
                }
            case .resumed(let debugger, _, _, let verified):
                if verified {
                    state.done += 1
                    state.held -= 1
                    state.verifiedNow += 1
                } else {
                    state.held -= 1
                    state.pending += 1
                }
                update(&state, debugger) { $0.state = verified ? "done (resumed)" : "checked: not on the chip" }
            case .debuggerStopped(let debugger, let reason):
                update(&state, debugger) {
                    $0.state = "stopped: \(reason)"
                    $0.station = nil
                    $0.chip = nil
                }
            case .refused(let debugger, _, _), .setAside(let debugger, _, _), .erasedOnArrival(let debugger, _, _),
                .interruptedForAnotherList(let debugger, _, _), .resetFailed(let debugger, _, _),
                .burningAgain(let debugger, _, _, _, _):
                update(&state, debugger) { $0.state = "see above" }
            }
            draw(&state, log: log, keep: !isProgress && Self.keeps(event), isProgress: isProgress)
        }
    }

    /// Prints `line` above the status (a hook's outcome, say) and draws the status again.
    func note(_ line: String) {
        state.withLock { state in draw(&state, log: line, keep: true, isProgress: false) }
    }

    /// Draws the status, with `log` above it when `keep` (on log lines, every `log` but progress).
    func draw(_ state: inout State, log given: String?, keep: Bool, isProgress: Bool) {
        // A log line names stations and reasons from lists and ledgers: drawn as it is, whatever
        // would not show in it is made visible first.
        let log = given.map(VisibleText.escaped)
        let now = clock()
        if isProgress, now - state.lastDraw < 0.1 { return }
        state.lastDraw = now
        // The terminal may have been resized: too small for the status, it gets log lines from
        // now on; another width, the status is drawn anew below (the old one, reflowed by the
        // terminal, cannot be found again).
        let terminal = size()
        if !state.fallback, terminal.columns < 40 || terminal.rows < state.rows.count + 3 {
            state.fallback = true
            if state.drawnLines > 0 { write("\n") }
        }
        if state.fallback {
            if let log, !isProgress { write(log + "\n") }
            return
        }
        if terminal.columns != state.width {
            state.width = terminal.columns
            state.drawnLines = 0
        }
        var text = state.drawnLines > 0 ? "\u{1B}[\(state.drawnLines)A\r" : ""
        // Erased before and after: a log line longer than the terminal wraps onto the row below,
        // whose old status text must go too.
        if let log, keep { text += "\u{1B}[K" + log + "\u{1B}[K\n" }
        let lines = frame(state, now: now)
        text += lines.map { "\u{1B}[K" + $0 + "\n" }.joined()
        state.drawnLines = lines.count
        write(text)
    }

    /// Events whose log line stays above the status (the rest the status shows).
    static func keeps(_ event: ProvisionEvent) -> Bool {
        switch event {
        case .finished, .refused, .setAside, .erasedOnArrival, .interruptedForAnotherList, .resetFailed,
            .burningAgain, .resumed, .debuggerStopped:
            true
        default: false
        }
    }

    func update(_ state: inout State, _ debugger: String, _ change: (inout Row) -> Void) {
        if let index = state.rows.firstIndex(where: { $0.debugger == debugger }) { change(&state.rows[index]) }
    }

    /// The status as lines, each at most `width - 1` columns (a full line would wrap on some terminals).
    func frame(_ state: State, now: Double) -> [String] {
        let nameWidth = state.rows.map(\.debugger.count).max() ?? 0
        let portWidth = state.rows.map(\.port.count).max() ?? 0
        var lines = state.rows.map { row in
            var line =
                row.debugger.padding(toLength: nameWidth) + "  " + row.port.padding(toLength: portWidth) + "  "
                + row.state
            if let station = row.station { line += "  '\(station)'" }
            if let chip = row.chip { line += " \(chip)" }
            return line
        }
        let minutes = (now - start) / 60
        let rate = minutes > 0 ? Double(state.verifiedNow) / minutes : 0
        var totals =
            "done \(state.done) · pending \(max(0, state.pending)) · held \(state.held) · failed \(state.failed)"
        if state.verifiedNow > 0 {
            totals += " · \(rate.oneDecimal)/min"
            if state.pending > 0 { totals += " · ~\(Self.duration(Double(state.pending) / rate * 60)) left" }
        }
        lines.append(totals)
        // One line each: a reason's line break or control character would break the layout, and
        // a line is cut by the columns it takes (wide characters two, combining marks none).
        return lines.map { line in
            var used = 0
            var kept = String.UnicodeScalarView()
            for scalar in line.unicodeScalars {
                // Blanked rather than escaped: the row keeps its width.
                let shown: Unicode.Scalar = HiddenCharacters.isHidden(scalar) ? " " : scalar
                let columns = TextWidth.columns(shown)
                guard used + columns <= state.width - 1 else { break }
                used += columns
                kept.append(shown)
            }
            return String(kept)
        }
    }

    /// `45 s`, `3 min`, `2 h 5 min`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole) s" }
        if whole < 3600 { return "\(whole / 60) min" }
        return "\(whole / 3600) h \(whole % 3600 / 60) min"
    }
}

extension String {
    fileprivate func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
