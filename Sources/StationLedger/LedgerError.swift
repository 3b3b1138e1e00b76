/// A ledger operation that failed, on either database: what was being done, the database's (or
/// our) words, and what kind of failure it is, so that callers can tell a refusal by the schema
/// from a broken file or a lost connection.
public struct LedgerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure a caller acts on differently.
    public enum Kind: Sendable, Equatable {
        /// The database could not do it (I/O, locks, permissions, a file it cannot open, a server
        /// that refused).
        case database
        /// A rule of the schema refused the change (uniqueness, a check, an identity kept for life).
        case constraint
        /// The chip id cannot identify a chip (see `ChipID`); the database refuses to record it, so
        /// the chip is to be set aside.
        case invalidChipID
        /// SQLite found the file damaged (corrupt, or not a database after all).
        case damaged
        /// The file at the path is not a ledger this ccbeacon may use; nothing was written to it.
        case refused(LedgerFileProblem)
        /// This run's lease ran out, or another run took over its attempt (`RunRecord`): the change
        /// was not made, and the run must stop without recording or burning anything more.
        case leaseLost
    }

    /// What was being done.
    public var operation: String
    /// The database's message, or ours.
    public var message: String
    /// What kind of failure it is.
    public var kind: Kind
    /// The database's own code for the failure, when it gives one (PostgreSQL's SQLSTATE), for
    /// retrying what the server asks to be retried.
    public var code: String? = nil

    /// True when the database refused the change by one of its rules (uniqueness, checks, the
    /// chip-id rule).
    public var isConstraint: Bool { kind == .constraint || kind == .invalidChipID }

    /// True when the connection to a database server was lost (SQLSTATE class 08, or the server
    /// shutting down, crashing or starting: 57P01–57P03): the work may be run again once the
    /// server is back.
    public var isConnectionLost: Bool {
        guard let code else { return false }
        return code.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(code)
    }

    /// Plain-words reason.
    public var description: String { "ledger: \(operation): \(message)" }

    /// An error of `kind`.
    public init(operation: String, message: String, kind: Kind) {
        self.operation = operation
        self.message = message
        self.kind = kind
    }

    /// A constraint refusal (`isConstraint`) or a database failure.
    public init(operation: String, message: String, isConstraint: Bool) {
        self.init(operation: operation, message: message, kind: isConstraint ? .constraint : .database)
    }
}
