import CommandLineKit
import Synchronization

/// Draws progress on standard error: a bar redrawn in place on a terminal; piped, a plain line
/// each time another tenth of the work is done and at the end (so logs stay short), with the
/// true whole percentage (`1/7 (14%)`). Safe to call from several threads.
final class ProgressReporter: Sendable {
    private let console: Console
    private let label: String
    private let state = Mutex((lastPercent: -1, finished: false))

    init(console: Console, label: String) {
        self.console = console
        self.label = label
    }

    func update(done: Int, total: Int) {
        guard total > 0 else { return }
        let percent = done * 100 / total
        let line: String? = state.withLock { state in
            if console.diagnosticsIsTerminal {
                guard percent != state.lastPercent || done == total else { return nil }
                state.lastPercent = percent
                let width = 30
                let filled = done * width / total
                let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
                return "\r\(label) [\(bar)] \(done)/\(total)" + (done == total ? "\n" : "")
            }
            // The tenth only decides whether to print; the line shows the percentage itself.
            let tenth = percent / 10
            guard (tenth > 0 && tenth > state.lastPercent / 10) || (done == total && !state.finished) else {
                return nil
            }
            state.lastPercent = percent
            if done == total { state.finished = true }
            return "\(label): \(done)/\(total) (\(percent)%)"
        }
        // The bar's carriage return is drawing; the label is ours.
        // The bar, with its carriage returns, is drawing; piped, each report is a line.
        if let line { console.diagnosticsIsTerminal ? console.drawing(line) : console.diagnostics(line: line) }
    }
}
