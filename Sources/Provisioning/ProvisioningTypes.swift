public import BeaconPayload
public import CCDebugger
import Checksums
import Dispatch
public import FirmwareTemplate
import HexText
import IntelHex
public import StationLedger
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Why a provisioning step failed, in the terms of the layer that failed. A worker acts on the
/// layer: a failed USB transfer opens the debugger again; a ledger failure stops the run (nothing
/// more may be burned that cannot be recorded); an image that cannot be flashed stops the worker.
public enum ProvisioningError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The debugger or the chip failed.
    case debugger(DebuggerError)
    /// The ledger could not read or record.
    case ledger(LedgerError)
    /// A station's image cannot be flashed into the template's chip (nothing was written).
    case image(station: String, FlashError)
    /// The run's lease was lost (`LedgerError.Kind.leaseLost`) with `station` burned, or being
    /// burned, into `chip`: its outcome was not recorded, so the chip was erased (`erased`) or,
    /// when that failed, is to be set aside.
    case leaseLost(LedgerError, station: String?, chip: String?, erased: Bool)

    /// The error as the layer that raised it.
    init(_ error: DebuggerError) { self = .debugger(error) }

    /// Plain-words reason.
    public var description: String {
        switch self {
        case .debugger(let error): return error.description
        case .ledger(let error): return error.description
        case .image(let station, let error): return "the image of '\(station)' cannot be flashed: \(error)"
        case .leaseLost(let error, let station, let chip, let erased):
            let inHand: String
            if let station, let chip {
                inHand =
                    erased
                    ? "; '\(station)' was not recorded on chip \(chip), so the chip was erased (the station stays where the ledger has it)"
                    : "; chip \(chip) may carry '\(station)' unrecorded and could not be erased: set it aside and erase it (ccbeacon erase) before it is used"
            } else {
                inHand = ""
            }
            return "lease lost: \(error.operation): \(error.message)\(inHand)"
        }
    }
}

/// Settings of a provisioning run.
public struct ProvisionOptions: Sendable {
    /// Verification after each burn.
    /// How each chip's whole image is checked after its identity bytes are read back: `.crc` or
    /// `.read`. A provisioned station is always verified: `.none` is taken as `.crc`.
    public var verify: VerifyMode = .crc
    /// The verification a burn runs: `verify`, with `.none` taken as `.crc`.
    var burnVerification: VerifyMode { verify == .none ? .crc : verify }
    /// Further attempts for a station after a failure (each on a fresh chip after a chip fault).
    public var retries = 1
    /// Burn chips that already carry a verified identity (their old station becomes pending).
    public var reprovision = false
    /// Seconds a debugger waits for a (new) chip before it stops.
    public var targetTimeoutSeconds = 600.0
    /// Seconds between looks for a new chip.
    public var pollIntervalSeconds = 0.25
    /// Advertising settings (interval, TX power) for every station, checked for the run's template;
    /// `nil` keeps the template's. Each station keeps its own derived advertiser address.
    public var settings: CheckedSettings?
    /// Stations' own advertiser addresses from the list, by station name (checked with
    /// `AddressPlan` against the template); the others get the address derived from their identity.
    public var addresses: [String: RandomStaticAddress] = [:]
    /// How a chip is told apart from the others.
    public var chipIdentity: ChipIdentitySource = .primary
    /// The stations of the run's list, by name; `nil` for every station of the ledger. A ledger may
    /// hold several lists (the default ledger sits beside the list): a run claims only its own
    /// list's stations, burned with its own settings, and leaves chips that carry — or were
    /// interrupted with — another list's station alone.
    public var stations: Set<String>?
    /// Listens on air for each station after its burn (`--scan-verify`); `nil`: nobody listens.
    /// The chip is reset to run, and a station not heard sending exactly its image's advertising
    /// data (from its address) within `scanSeconds` is failed and its chip erased.
    public var onAir: (any OnAirListener)?
    /// How long the listener listens for each station.
    public var scanSeconds = 5.0
    /// Whether a station not heard goes to another chip in this run (counting against
    /// `retries`); without it, it waits for the next run (an antenna or a board fault would make
    /// every chip fail alike).
    public var retryUnheard = false
    /// Locks each chip's debug interface once its burn is verified (and heard, with `onAir`):
    /// the lock bits are written, read back, and the lock seen taking effect after a reset; the
    /// ledger records it on the attempt (`Attempt.debugLocked`). A chip whose lock does not take
    /// is erased and its attempt failed.
    public var lockDebug = false
    /// How each burn lays out its frames in USB transfers (`USBFraming`).
    public var usbFraming = USBFraming.proven
    /// Writes each station's address (`addresses`, or the one derived from its identity) as the
    /// chip's secondary address in the last flash page, reads it back and records it as the
    /// attempt's advertiser address: for templates (TI's BLE stack) that advertise with the
    /// chip's address rather than one of their own.
    public var secondaryAddresses = false

    /// Default settings.
    public init() {}
}

/// What a station just burned should be heard sending.
public struct OnAirExpectation: Sendable, Equatable {
    /// Its advertiser address, most significant byte first; `nil` for a template without an
    /// address field (any address).
    public var address: [UInt8]?
    /// Its advertising data as the image carries it.
    public var advertisingData: [UInt8]
    /// Whether `advertisingData` is the whole advertising data; otherwise (a template whose field
    /// is the manufacturer data alone) the advertising data must contain it.
    public var isWhole: Bool

    /// Whether an advertisement from `address` with `data` is the station's.
    public func matches(address heard: [UInt8], data: [UInt8]) -> Bool {
        guard address.map({ $0 == heard }) ?? true else { return false }
        return isWhole
            ? data == advertisingData
            : data.count >= advertisingData.count
                && data.indices.contains {
                    data[$0...].starts(with: advertisingData)
                }
    }
}

/// Listens on air for a station just burned (`provision --scan-verify`).
public protocol OnAirListener: Sendable {
    /// Listens up to `seconds` for `expected` and says what was heard; throws when it cannot
    /// listen at all (no radio, no permission).
    func listen(for expected: OnAirExpectation, seconds: Double) throws(OnAirError) -> OnAirCheck
}

/// Why a listener cannot listen.
public struct OnAirError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What happened.
    public var message: String

    /// An error.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// Which address names a chip in the ledger.
public enum ChipIdentitySource: String, Sendable, CaseIterable {
    /// The factory IEEE address in the info page; a chip whose address is erased (all FF) or all
    /// zero cannot be told apart from others and is set aside.
    case primary
    /// As `primary`, but a chip with an unusable primary address is named by its secondary
    /// address (last flash page) when that one is usable; the burn keeps it.
    case secondary
}

/// What a provisioning run reports as it goes.
public enum ProvisionEvent: Sendable, Equatable {
    /// A debugger waits for a chip to be attached (or swapped).
    case waitingForChip(debugger: String)
    /// A chip was found.
    case chipAttached(debugger: String, chip: String)
    /// A station is being burned.
    case started(debugger: String, station: String, chip: String)
    /// A station's attempt ended.
    case finished(debugger: String, station: String, chip: String, outcome: AttemptOutcome, reason: String?)
    /// A chip already carries a verified identity and was left alone.
    case refused(debugger: String, chip: String, carries: String)
    /// A chip arrived debug-locked, so it was erased to read its address, and the ledger says it
    /// carried `station`: that station is pending again.
    case erasedOnArrival(debugger: String, chip: String, station: String)
    /// A chip interrupted in an earlier run with a station of another list came back: only a run
    /// of that list can check it, so it was left alone.
    case interruptedForAnotherList(debugger: String, chip: String, station: String)
    /// A chip interrupted in an earlier run came back and was checked.
    case resumed(debugger: String, station: String, chip: String, verified: Bool)
    /// A debugger stopped working.
    case debuggerStopped(debugger: String, reason: String)
    /// A chip was not burned and the bench must set it aside, for `reason`; `address` is its
    /// factory address as read.
    case setAside(debugger: String, address: String, reason: SetAsideReason)
    /// A chip the run is done with could not be reset to run (its outcome is already recorded);
    /// the debugger is opened again and the reset retried before anything else.
    case resetFailed(debugger: String, chip: String, reason: String)
    /// A station just burned and verified runs, and the run listens for it on air.
    case listening(debugger: String, station: String, chip: String, seconds: Double)
    /// A chip carries a station burned with `burned` dBm whose calibration says `calibrated`:
    /// with reprovisioning, it is burned again with the calibrated value.
    case burningAgain(debugger: String, station: String, chip: String, burned: Int, calibrated: Int)
    /// A burn's progress: `done` of `total` bytes of its erase, programming or verification.
    case progress(debugger: String, station: String, chip: String, progress: FlashProgress)
}

/// Why a chip was set aside unburned.
public enum SetAsideReason: Sendable, Equatable {
    /// Its factory address (erased or all zero) cannot tell it apart from other chips;
    /// `secondaryTried`: the run names chips by a valid secondary address too, and it has none.
    case indistinguishable(secondaryTried: Bool)
    /// Its CHIPINFO0.FLASHSIZE code is not that of the template's chip `templateChip`: another
    /// part, whose flash layout the template does not fit. `erased`: it arrived debug-locked, and
    /// only an erase shows the size.
    case notTheTemplatesChip(flashSizeCode: UInt8, templateChip: String, erased: Bool)
    /// It arrived debug-locked, which hides its address, and the ledger records chips this pool
    /// locked: it may be one of them, carrying its station. Only `reprovision` erases it.
    case debugLocked
}

/// What a worker does with a chip after dealing with it.
enum ChipDisposition {
    /// Reset it to run, so the bench can take it off (it is done, refused or bad).
    case release
    /// Nothing is left to burn: the worker stops.
    case nothingLeft
}

/// The outcome of a run.
public struct ProvisionSummary: Sendable, Equatable {
    /// Stations verified in this run.
    public var verified: [String] = []
    /// Stations whose attempts failed in this run, with the last reason.
    public var failed: [String: String] = [:]
    /// Chips refused because they already carried a station.
    public var refused: [String] = []
    /// Debuggers that stopped, with why.
    public var stopped: [String: String] = [:]
    /// Chips set aside because their address cannot tell them apart.
    public var setAside = 0
    /// Why the run stopped when its lease was lost (`ProvisioningError.leaseLost`): it recorded
    /// nothing more and burned nothing more.
    public var leaseLost: String?

    /// An empty summary.
    public init() {}
}

/// A debugger a run may use: its name for the ledger and how to open it.
public struct ProvisioningDebugger: Sendable {
    /// `bus:address` or serial.
    public var name: String
    /// Opens a fresh transport.
    public var open: @Sendable () throws(DebuggerError) -> any DebuggerTransport

    /// Creates an entry.
    public init(name: String, open: @escaping @Sendable () throws(DebuggerError) -> any DebuggerTransport) {
        self.name = name
        self.open = open
    }
}

/// What one debugger's worker counts of the stations that failed on its chips — how often each
/// failed, and which it gave up on — so that every failure, a fresh burn's or a resumed chip's,
/// counts toward `--retries` alike.
struct RetryTally {
    /// Failures per station on this debugger.
    private(set) var failures: [String: Int] = [:]
    /// The stations this debugger no longer takes.
    private(set) var givenUp: Set<String> = []

    /// Counts a failure of `station`: it is given up once it failed more than `retries` times,
    /// or at once when it may not be retried (a station not heard, without `--retry-unheard`).
    /// Whether it is given up now.
    @discardableResult
    mutating func failed(_ station: String, retries: Int, mayRetry: Bool = true) -> Bool {
        failures[station, default: 0] += 1
        if !mayRetry || failures[station, default: 0] > retries { givenUp.insert(station) }
        return givenUp.contains(station)
    }
}
