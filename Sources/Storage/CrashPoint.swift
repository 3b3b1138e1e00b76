import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Fault injection for the crash-safety tests, one mechanism for every moment a kill from outside
/// only hits by luck: with `CCBEACON_TEST_KILL=POINT:N` in the environment, the process kills
/// itself (SIGKILL) the Nth time it passes `POINT`. Compiled into debug builds only: in a release
/// build `pass()` does nothing and the variable is never read.
public enum CrashPoint: String, CaseIterable, Sendable {
    /// Just before a hook runs, after its outcome was committed.
    case beforeHook = "before-hook"
    /// Just after a hook ran, before its try is recorded.
    case afterHook = "after-hook"
    /// Inside a ledger write transaction, after its writes and before COMMIT.
    case inLedgerWrite = "in-ledger-write"
    /// Between a new ledger file's link into place and the removal of its temporary name.
    case afterLedgerLink = "after-ledger-link"
    /// Each durable step of a batch (the marker written and the old record removed, each file
    /// renamed into place, the record written, the marker removed).
    case batchStep = "batch-step"

    /// The environment variable that arms one point.
    public static let variable = "CCBEACON_TEST_KILL"

    /// Passes this point: the process dies here if it is the armed point's Nth pass.
    public func pass() {
        #if DEBUG
            guard let armed = Self.armed, armed.point == self else { return }
            if Self.passes.add(1, ordering: .relaxed).newValue == armed.at { kill(getpid(), SIGKILL) }
        #endif
    }

    #if DEBUG
        static let armed = parse(Files.environment(variable))
        static let passes = Atomic<Int>(0)
    #endif

    /// `POINT:N` (N from 1) as the point and N; nil for anything else.
    public static func parse(_ text: String?) -> (point: CrashPoint, at: Int)? {
        guard let text, let colon = text.lastIndex(of: ":"),
            let point = CrashPoint(rawValue: String(text[..<colon])),
            case let digits = text[text.index(after: colon)...], !digits.isEmpty,
            digits.allSatisfy({ ("0"..."9").contains($0) }), digits.first != "0", let at = Int(digits)
        else { return nil }
        return (point, at)
    }

    /// The environment entry that arms `self` at its `at`th pass (for tests that start ccbeacon).
    public func armed(at: Int) -> [String: String] { [Self.variable: "\(rawValue):\(at)"] }
}
