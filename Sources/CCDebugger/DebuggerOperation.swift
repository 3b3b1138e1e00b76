/// What ccbeacon was asking of the debugger when a transfer failed. Its description is the
/// message's "while …" part; `mayLeaveFlashChanged` tells whether the chip may be left partly
/// erased or written, which decides what the user is told to do.
public enum DebuggerOperation: Sendable, Equatable, CustomStringConvertible {
    /// `libusb_init`.
    case startingLibUSB
    /// Enumerating the USB bus.
    case listingDevices
    /// Opening a debugger, at `selector` when the device is known but was not found again.
    case opening(selector: String?)
    /// Setting configuration 1.
    case configuring
    /// Claiming interface 0.
    case claimingInterface
    /// GET_STATE.
    case askingState
    /// SET_SPEED.
    case settingSpeed
    /// PREPARE_DEBUG_MODE.
    case preparingDebugMode
    /// SET_CHIP_INFO.
    case sendingChipInfo
    /// The reset into debug mode of `connect`.
    case resettingIntoDebugMode
    /// READ_STATUS.
    case readingStatus
    /// Reading CHIPINFO, CHVER and CHIPID.
    case identifying
    /// The reset before CHIP_ERASE.
    case resettingBeforeErase
    /// CHIP_ERASE.
    case startingErase
    /// Polling READ_STATUS until the chip erase is done.
    case waitingForErase
    /// Writing the DMA descriptors for programming.
    case settingUpDMA
    /// Programming, at the 1 KiB block at `address` when known.
    case programming(address: Int?)
    /// Polling FCTL.
    case waitingForFlash
    /// CRC-verifying the chunk at `address`.
    case verifying(address: Int)
    /// Polling DMAIRQ for the CRC DMA.
    case waitingForCRC
    /// PREPARE_READ.
    case preparingRead
    /// Reading flash at `address`.
    case readingFlash(address: Int)
    /// Reading XDATA, at `address` when known.
    case readingXdata(address: Int?)
    /// The reset that lets the target run.
    case resettingToRun

    /// The words for "while …".
    public var description: String {
        switch self {
        case .startingLibUSB: return "starting libusb"
        case .listingDevices: return "listing USB devices"
        case .opening(let selector): return selector.map { "opening the debugger at \($0)" } ?? "opening the debugger"
        case .configuring: return "configuring the debugger"
        case .claimingInterface: return "claiming the debugger's interface"
        case .askingState: return "asking the debugger for its state"
        case .settingSpeed: return "setting the debug speed"
        case .preparingDebugMode: return "preparing debug mode"
        case .sendingChipInfo: return "sending the chip info"
        case .resettingIntoDebugMode: return "resetting the target into debug mode"
        case .readingStatus: return "reading the debug status"
        case .identifying: return "identifying the target"
        case .resettingBeforeErase: return "resetting the target before the erase"
        case .startingErase: return "starting the chip erase"
        case .waitingForErase: return "waiting for the chip erase"
        case .settingUpDMA: return "setting up the DMA for programming"
        case .programming(let address): return address.map { "programming the 1 KiB at \(hex($0))" } ?? "programming"
        case .waitingForFlash: return "waiting for the flash controller"
        case .verifying(let address): return "verifying at \(hex(address))"
        case .waitingForCRC: return "waiting for the CRC DMA"
        case .preparingRead: return "preparing to read flash"
        case .readingFlash(let address): return "reading flash at \(hex(address))"
        case .readingXdata(let address): return address.map { "reading XDATA at \(hex($0))" } ?? "reading XDATA"
        case .resettingToRun: return "resetting the target to run"
        }
    }

    /// True when a failure here may leave the flash partly erased or written: from the chip
    /// erase to the end of verification.
    public var mayLeaveFlashChanged: Bool {
        switch self {
        case .startingErase, .waitingForErase, .settingUpDMA, .programming, .waitingForFlash, .verifying,
            .waitingForCRC:
            return true
        default: return false
        }
    }
}

/// A libusb error code (`LIBUSB_ERROR_*`) kept as libusb gave it — as swift-system's `Errno` keeps
/// errno — with libusb's name for it.
public struct LibUSBErrorCode: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The negative code libusb returned.
    public var rawValue: Int32
    /// libusb's name (`LIBUSB_ERROR_IO`).
    public var name: String

    /// A code and its name.
    public init(rawValue: Int32, name: String) {
        self.rawValue = rawValue
        self.name = name
    }

    /// `LIBUSB_ERROR_IO (-1)`.
    public var description: String { "\(name) (\(rawValue))" }
}
