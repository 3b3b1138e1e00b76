public import BeaconPayload
import StructuredText

/// The refusals every ledger backend gives, worded once, so the SQLite file and the PostgreSQL
/// server say the same things about the same broken promises.
public enum LedgerRefusal {
    /// A known station listed with another identity.
    public static func otherIdentity(_ station: String) -> LedgerError {
        LedgerError(
            operation: "registering station '\(station)'",
            message:
                "the ledger already has this station with another identity; a station keeps its identity for life",
            kind: .constraint)
    }

    /// A new station whose identity another station of the ledger, `holder` when known, has. A
    /// holder whose name is this one's in another Unicode form (a precomposed é, or e and a
    /// combining accent) is said to be: the two print alike, and the ledger keeps names as written.
    public static func identityTaken(_ station: String, _ identity: IBeacon, holder: String? = nil) -> LedgerError {
        let who = holder.map { "station '\($0)' of the ledger" } ?? "another station in the ledger"
        let alike =
            holder == station
            ? "; the two names are the same text written with other Unicode code points (composed and decomposed characters), which the ledger keeps apart: write the name in the list as the ledger has it"
            : ""
        return LedgerError(
            operation: "registering station '\(station)'",
            message:
                "\(who) already has UUID \(identity.uuid.uuidString), major \(identity.major), minor \(identity.minor)\(alike)",
            kind: .constraint)
    }

    /// Known stations the list gives another measured power (each `name (ledger X dBm, list Y dBm)`).
    public static func otherPowers(_ mismatches: [String]) -> LedgerError {
        LedgerError(
            operation: "registering the station list",
            message:
                "\(mismatches.count) station\(mismatches.count == 1 ? " is" : "s are") in the ledger with another measured power: \(mismatches.joinedExcerpt()); a station keeps its identity for life, so give the list's power column the ledger's values to go on with this ledger, or use another ledger",
            kind: .constraint)
    }

    /// A station to burn again that is no longer verified on that chip.
    public static func notVerifiedThere(_ station: String, chip: String) -> LedgerError {
        LedgerError(
            operation: "burning \(station) again on chip \(chip)",
            message: "the ledger no longer records it as verified on that chip (another run changed it)",
            kind: .constraint)
    }

    /// An outcome for an attempt that is settled (`now`: as what) or not there.
    public static func settled(_ attemptID: Int, as now: String?, outcome: AttemptOutcome) -> LedgerError {
        LedgerError(
            operation: "recording the outcome of attempt \(attemptID)",
            message: now.map {
                "the attempt was settled meanwhile as \($0) (another run used this ledger); '\(outcome.rawValue)' was not recorded"
            } ?? "no such attempt", kind: .constraint)
    }

    /// A calibration of a station the ledger does not have.
    public static func unknownStation(calibrating station: String) -> LedgerError {
        LedgerError(
            operation: "recording a calibration of '\(station)'",
            message: "the ledger has no station of that name",
            kind: .constraint)
    }

    /// A station list that is not the one a shared pool was registered with: what differs, each
    /// kind with its count and up to five names.
    public static func otherList(
        onlyInList: [String], onlyInPool: [String], otherIdentity: [String], pool: String
    ) -> LedgerError {
        func some(_ names: [String]) -> String {
            names.prefix(5).joined(separator: ", ") + (names.count > 5 ? ", … (\(names.count) in all)" : "")
        }
        var differences: [String] = []
        if !onlyInList.isEmpty {
            differences.append("\(onlyInList.count) station(s) of the list are not in the pool: \(some(onlyInList))")
        }
        if !onlyInPool.isEmpty {
            differences.append("\(onlyInPool.count) station(s) of the pool are not in the list: \(some(onlyInPool))")
        }
        if !otherIdentity.isEmpty {
            differences.append(
                "\(otherIdentity.count) station(s) have another identity in the pool: \(some(otherIdentity))")
        }
        return LedgerError(
            operation: "attaching the station list to \(pool)",
            message:
                "the pool was registered with another list (every bench of a pool starts with the same list): "
                + differences.joined(separator: "; "),
            kind: .refused(.otherList))
    }
}
