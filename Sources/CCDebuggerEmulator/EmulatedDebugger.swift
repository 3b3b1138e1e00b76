public import CCDebugger
import Synchronization

/// Faults the emulated debugger can be told to produce.
public struct EmulatorFaults: Sendable, Equatable {
    /// After this many transfers the device disappears (every later transfer: no device).
    public var unplugAfterTransfers: Int?
    /// This transfer (1-based count) times out; the ones after it work again.
    public var timeoutAtTransfer: Int?

    /// No faults.
    public init(unplugAfterTransfers: Int? = nil, timeoutAtTransfer: Int? = nil) {
        self.unplugAfterTransfers = unplugAfterTransfers
        self.timeoutAtTransfer = timeoutAtTransfer
    }
}

/// A CC Debugger (0451:16A2, firmware 0x05CC) with an optional chip (`EmulatedChip`) attached, behind
/// `DebuggerTransport`. Bulk OUT transfers are decoded frame by frame with the header rules of
/// cc-debugger-protocol.md §3.2; replies collect in an output queue and are sent when a frame
/// asks for a flush.
///
/// Like a real debugger it serves one client at a time (a provisioning worker, or umockdev's
/// worker thread through the USB bridge), while a test or a bench may look at or swap its chip
/// from another thread: the whole machine sits behind one lock, and every transfer runs under it.
///
/// With `timing` set, every transfer costs device time as `DeviceTiming` models it, kept on
/// `clock`: the transfer returns once that time has come (a real clock sleeps, outside the lock),
/// and the chip's erase and flash writes stay busy for their durations. Without it (the default)
/// everything answers at once and busy flags last a counted number of polls.
public final class EmulatedDebugger: DebuggerTransport, Sendable {
    /// USB bcdDevice (the "Debugger ID").
    public let debuggerID: UInt16 = 0x8662
    /// The time line device time is kept on (a sleeping monotonic clock unless given another).
    public let clock: any DeviceClock
    private let machine: Mutex<Machine>

    /// A debugger with `chip` attached; with `timing`, transfers take device time on `clock`.
    public init(
        chip: EmulatedChip? = EmulatedChip(), timing: DeviceTiming? = nil,
        clock: any DeviceClock = MonotonicDeviceClock()
    ) {
        self.clock = clock
        var machine = Machine(chip: chip)
        machine.timing = timing
        self.machine = Mutex(machine)
    }

    /// A field of the machine, read or written under its lock: what a test sets on the debugger
    /// while a client may be using it.
    private subscript<Value: Sendable>(locked field: WritableKeyPath<Machine, Value>) -> Value {
        get { machine.withLock { $0[keyPath: field] } }
        set { machine.withLock { $0[keyPath: field] = newValue } }
    }

    /// The attached chip, or `nil` for "no target".
    public var chip: EmulatedChip? {
        get { self[locked: \.chip] }
        set { self[locked: \.chip] = newValue }
    }
    /// Faults to inject.
    public var faults: EmulatorFaults {
        get { self[locked: \.faults] }
        set { self[locked: \.faults] = newValue }
    }
    /// Firmware ID and revision reported by GET_STATE.
    public var firmware: (id: UInt16, revision: UInt16) {
        get { self[locked: \.firmware] }
        set { self[locked: \.firmware] = newValue }
    }
    /// Models the first-contact trap: the debugger reports no target (GET_STATE) until its reset
    /// button is pressed (`pressResetButton()`), whatever is attached.
    public var seesTargetOnlyAfterResetButton: Bool {
        get { self[locked: \.waitingForResetButton] }
        set { self[locked: \.waitingForResetButton] = newValue }
    }

    /// The operator presses the debugger's reset button: it looks for its target again.
    public func pressResetButton() { machine.withLock { $0.waitingForResetButton = false } }

    /// The target ID GET_STATE reports while a chip is attached, when set (to model a chip the
    /// debugger names otherwise); `nil` (the default): the attached chip's own.
    public var targetID: UInt16? {
        get { self[locked: \.targetID] }
        set { self[locked: \.targetID] = newValue }
    }
    /// Every transfer, for protocol tests: direction tag and bytes.
    public var log: [(kind: String, bytes: [UInt8])] { machine.withLock { $0.log } }
    /// Keep `log` (off for big images).
    public var logging: Bool {
        get { self[locked: \.logging] }
        set { self[locked: \.logging] = newValue }
    }
    /// Called after the target is reset to run, once the transfer is done: lets a bench swap in
    /// the next chip.
    public var onResetToRun: (@Sendable (EmulatedDebugger) -> Void)? {
        get { self[locked: \.onResetToRun] }
        set { self[locked: \.onResetToRun] = newValue }
    }
    /// A chip being put in by hand: while `chip` is nil, the next GET_STATE still reports no
    /// target and attaches this one, so a bench can model a swap that takes a moment (a host
    /// sees the empty socket in between, as with a person swapping chips).
    public var chipArriving: EmulatedChip? {
        get { self[locked: \.chipArriving] }
        set { self[locked: \.chipArriving] = newValue }
    }

    /// The device-time model transfers are charged with; nil (the default) answers at once.
    public var timing: DeviceTiming? {
        get { self[locked: \.timing] }
        set { self[locked: \.timing] = newValue }
    }
    /// Whether a transfer returns only once the device is done with it (the default). A USB
    /// bridge, which serves every device from one thread, turns it off: it completes each URB at
    /// `busyUntil` instead of sleeping.
    public var waitsForDevice: Bool {
        get { self[locked: \.waitsForDevice] }
        set { self[locked: \.waitsForDevice] = newValue }
    }
    /// Models a debugger firmware that takes a BURST_WRITE only as the one frame of its bulk OUT
    /// (what every known client sends; first-contact.md): a transfer with any other frame before
    /// or after a burst stalls the endpoint, the burst not taken. Off by default (the firmware
    /// that takes frames packed around a burst, which no hardware has confirmed).
    public var takesBurstsOnlyAlone: Bool {
        get { self[locked: \.takesBurstsOnlyAlone] }
        set { self[locked: \.takesBurstsOnlyAlone] = newValue }
    }
    /// When the device is done with the last transfer, on `clock`'s time line (nil until a timed
    /// transfer has run).
    public var busyUntil: Duration? { machine.withLock { $0.busyUntil } }
    /// The device time the transfers have taken so far, as the model charged them (waits for the
    /// previous transfer not counted; zero while `timing` is nil).
    public var accountedTime: Duration { machine.withLock { $0.accounted } }

    /// The operator's hand: the socket is empty now, and `chip` is in it `delay` after the device
    /// is done with its last transfer (a host polling GET_STATE meanwhile sees no target).
    public func insertChip(_ chip: EmulatedChip?, after delay: Duration) {
        let now = clock.now
        machine.withLock { machine in
            machine.chip = nil
            machine.chipArriving = nil
            machine.scheduledChip = (chip, max(now, machine.busyUntil ?? now) + delay)
        }
    }

    /// Waits until `end` (from a timed transfer that is to be waited for).
    func wait(until end: Duration?) {
        if let end { clock.wait(until: end) }
    }

    /// Emulated: a vendor control transfer from the device.
    public func controlIn(request: UInt8, value: UInt16, index: UInt16, length: Int, timeoutMilliseconds: Int)
        throws(TransportError) -> [UInt8]
    {
        let now = clock.now
        let (reply, end) = try machine.withLock { machine throws(TransportError) in
            let reply = try machine.controlIn(request: request, length: length, now: now)
            return (reply, machine.endTransfer())
        }
        wait(until: end)
        return reply
    }

    /// Emulated: a vendor control transfer to the device.
    public func controlOut(request: UInt8, value: UInt16, index: UInt16, data: [UInt8], timeoutMilliseconds: Int)
        throws(TransportError)
    {
        let now = clock.now
        let (resetToRun, end) = try machine.withLock { machine throws(TransportError) in
            let resetToRun = try machine.controlOut(request: request, value: value, index: index, data: data, now: now)
            return (resetToRun, machine.endTransfer())
        }
        wait(until: end)
        // Outside the lock: the hook swaps the chip through `chip`, which takes it. After the
        // wait: the chip is released when the reset is done.
        if resetToRun, let hook = onResetToRun { hook(self) }
    }

    /// Emulated: a bulk OUT transfer.
    public func bulkOut(_ data: [UInt8], timeoutMilliseconds: Int) throws(TransportError) {
        let now = clock.now
        let end = try machine.withLock { machine throws(TransportError) in
            try machine.bulkOut(data, now: now)
            return machine.endTransfer()
        }
        wait(until: end)
    }

    /// For a USB bridge: up to `length` queued reply bytes (fewer is a short packet), or `nil` when
    /// nothing is queued yet. Counts as a transfer like `bulkIn`.
    public func takeReply(upTo length: Int) throws(TransportError) -> [UInt8]? {
        let now = clock.now
        let (reply, end) = try machine.withLock { machine throws(TransportError) in
            let reply = try machine.takeReply(upTo: length, now: now)
            return (reply, machine.endTransfer())
        }
        wait(until: end)
        return reply
    }

    /// Emulated: a bulk IN transfer of exactly `length` bytes.
    public func bulkIn(length: Int, timeoutMilliseconds: Int) throws(TransportError) -> [UInt8] {
        let now = clock.now
        let (reply, end) = try machine.withLock { machine throws(TransportError) in
            let reply = try machine.bulkIn(length: length, now: now)
            return (reply, machine.endTransfer())
        }
        wait(until: end)
        return reply
    }
}

/// The debugger's state and behaviour, always used under `EmulatedDebugger`'s lock (a chip's own
/// lock is taken inside it, never the other way round).
struct Machine: Sendable {
    var chip: EmulatedChip?
    var faults = EmulatorFaults()
    var firmware: (id: UInt16, revision: UInt16) = (0x05CC, 0x0044)
    var targetID: UInt16?
    var log: [(kind: String, bytes: [UInt8])] = []
    var logging = false
    var takesBurstsOnlyAlone = false
    var waitingForResetButton = false
    var onResetToRun: (@Sendable (EmulatedDebugger) -> Void)?
    var chipArriving: EmulatedChip?
    var slots = [UInt8](repeating: 0, count: 8)
    var queue: [UInt8] = []
    var sendable: [UInt8] = []
    var transfers = 0
    var unplugged = false
    /// A chip the operator puts in at a time on the debugger's clock (`insertChip`).
    var scheduledChip: (chip: EmulatedChip?, at: Duration)?

    // Device time (see `DeviceTiming`).
    var timing: DeviceTiming?
    var waitsForDevice = true
    var busyUntil: Duration?
    var accounted = Duration.zero
    /// The running transfer's start and its time so far; nil when untimed or between transfers.
    var transferStart: Duration?
    var cursor: Duration?

    init(chip: EmulatedChip?) { self.chip = chip }

    /// Counts the transfer and applies the faults; then starts its device time at `now` (or when
    /// the previous transfer is done), `usbBytes` of data crossing USB first.
    mutating func beginTransfer(now: Duration, usbBytes: Int) throws(TransportError) {
        transfers += 1
        if let limit = faults.unplugAfterTransfers, transfers > limit { unplugged = true }
        if unplugged { throw .noDevice }
        if faults.timeoutAtTransfer == transfers { throw .timeout }
        let start = max(now, busyUntil ?? now)
        if chip == nil, let scheduled = scheduledChip, start >= scheduled.at {
            chip = scheduled.chip
            scheduledChip = nil
        }
        // A transfer that failed half-way left its time unaccounted: it is dropped here.
        transferStart = timing.map { _ in start }
        cursor = timing.map { start + $0.usbTime(bytes: usbBytes) }
    }

    /// Ends the running transfer's device time; returns when the host may go on, if it waits.
    mutating func endTransfer() -> Duration? {
        guard let start = transferStart, let end = cursor else { return nil }
        transferStart = nil
        cursor = nil
        busyUntil = end
        accounted += end - start
        return waitsForDevice ? end : nil
    }

    /// A transfer that did not happen after all (a bulk IN the bridge holds back): no time.
    mutating func cancelTransferTime() {
        transferStart = nil
        cursor = nil
    }

    /// `bytes` bytes on the debug interface; returns the moment after them (nil when untimed).
    mutating func clockDebugBytes(_ bytes: Int) -> DeviceMoment? {
        guard let timing, let now = cursor else { return nil }
        let after = now + timing.debugTime(bytes: bytes)
        cursor = after
        return DeviceMoment(now: after, timing: timing)
    }

    mutating func controlIn(request: UInt8, length: Int, now: Duration) throws(TransportError) -> [UInt8] {
        try beginTransfer(now: now, usbBytes: length)
        if logging { log.append(("ctrl-in \(String(request, radix: 16))", [])) }
        switch request {
        case Frames.Request.getState:
            let target: UInt16 = waitingForResetButton ? 0 : chip.map { targetID ?? $0.part.targetID } ?? 0
            if chip == nil, let arriving = chipArriving {
                // The operator's hands: the socket was empty for this look; the next finds the chip.
                chip = arriving
                chipArriving = nil
            }
            let reply = [
                UInt8(target & 0xFF), UInt8(target >> 8), UInt8(firmware.id & 0xFF), UInt8(firmware.id >> 8),
                UInt8(firmware.revision & 0xFF), UInt8(firmware.revision >> 8), 0x01, 0x00,
            ]
            return Array(reply.prefix(length))
        case Frames.Request.prepareRead:
            return Array([UInt8(0)].prefix(length))
        default:
            throw .pipe
        }
    }

    /// Returns whether the target was reset to run (the bench's hook then runs).
    mutating func controlOut(request: UInt8, value: UInt16, index: UInt16, data: [UInt8], now: Duration)
        throws(TransportError) -> Bool
    {
        try beginTransfer(now: now, usbBytes: data.count)
        if logging { log.append(("ctrl-out \(String(request, radix: 16)) \(value) \(index)", data)) }
        switch request {
        case Frames.Request.setSpeed, Frames.Request.prepareDebugMode, Frames.Request.setChipInfo:
            return false
        case Frames.Request.reset:
            chip?.reset(halt: index == 1)
            queue = []
            sendable = []
            return index == 0
        default:
            throw .pipe
        }
    }

    mutating func bulkOut(_ data: [UInt8], now: Duration) throws(TransportError) {
        try beginTransfer(now: now, usbBytes: data.count)
        if logging { log.append(("out", data)) }
        var offset = 0
        while offset < data.count {
            guard let consumed = runFrame(data, at: offset) else { throw .pipe }
            offset += consumed
        }
    }

    mutating func takeReply(upTo length: Int, now: Duration) throws(TransportError) -> [UInt8]? {
        guard length > 0 else { throw .other("invalid length \(length)") }
        let count = min(length, sendable.count)
        try beginTransfer(now: now, usbBytes: count)
        guard !sendable.isEmpty else {
            transfers -= 1  // the URB waits; it is counted (and timed) when it completes
            cancelTransferTime()
            return nil
        }
        let reply = Array(sendable.prefix(count))
        sendable.removeFirst(count)
        if logging { log.append(("in", reply)) }
        return reply
    }

    mutating func bulkIn(length: Int, now: Duration) throws(TransportError) -> [UInt8] {
        guard length > 0 else { throw .other("invalid length \(length)") }
        try beginTransfer(now: now, usbBytes: min(length, sendable.count))
        // Without a target or with nothing flushed, the debugger has nothing to send.
        guard !sendable.isEmpty else { throw .timeout }
        let count = min(length, sendable.count)
        let reply = Array(sendable.prefix(count))
        sendable.removeFirst(count)
        if logging { log.append(("in", reply)) }
        if count < length { throw .shortTransfer(expected: length, actual: count) }
        return reply
    }

    /// Decodes and runs one frame starting at `offset`; returns its length, or `nil` when the
    /// bytes are not a frame this debugger knows (the endpoint stalls).
    mutating func runFrame(_ data: [UInt8], at offset: Int) -> Int? {
        let header = data[offset]
        let type = header >> 4
        let slot = Int((header >> 1) & 0x07)
        let flush = header & 1 == 1
        let (parameters, fromSlots, keep): (Int, Int, Bool)
        switch type {
        case 0x1: (parameters, fromSlots, keep) = (0, 0, true)
        case 0x4: (parameters, fromSlots, keep) = (1, 0, true)
        case 0x5: (parameters, fromSlots, keep) = (1, 0, false)
        case 0x7: (parameters, fromSlots, keep) = (2, 0, true)
        case 0x8: (parameters, fromSlots, keep) = (2, 0, false)
        case 0x9: (parameters, fromSlots, keep) = (1, 1, false)
        case 0xB: (parameters, fromSlots, keep) = (3, 0, false)
        case 0xC: (parameters, fromSlots, keep) = (2, 1, false)
        case 0xD: (parameters, fromSlots, keep) = (1, 2, false)
        case 0xE:
            guard offset + 3 <= data.count else { return nil }
            let countBits = Int(data[offset + 1] & 0x07) << 8 | Int(data[offset + 2])
            let count = countBits == 0 ? 2048 : countBits
            guard data[offset + 1] & 0xF8 == 0x80, offset + 3 + count <= data.count else { return nil }
            if takesBurstsOnlyAlone, offset != 0 || offset + 3 + count != data.count { return nil }
            // The command's two bytes and the data go to the chip; its status byte comes back.
            _ = clockDebugBytes(2 + count + 1)
            if let chip, chip.halted, !chip.debugLocked { chip.burstWrite(data[(offset + 3)..<(offset + 3 + count)]) }
            return 3 + count
        default:
            return nil
        }
        guard offset + 2 + parameters <= data.count else { return nil }
        var command = Array(data[(offset + 1)..<(offset + 2 + parameters)])
        for index in 0..<fromSlots { command.append(slots[(slot + index) & 7]) }
        // The command acts once its bytes are in; its reply bytes are clocked back after it (two
        // for GET_PC and GET_CHIP_ID, one for every other command: SWRU191 Table 3-1).
        let moment = clockDebugBytes(command.count)
        let replies = chip?.debugCommand(command, at: moment) ?? [0]
        _ = clockDebugBytes(replies.count)
        let reply = replies.first ?? 0
        if keep {
            if slot == 7 { queue.append(reply) } else { slots[slot] = reply }
        }
        if flush {
            sendable += queue
            queue = []
        }
        return 2 + parameters
    }
}
