import HexText
import StructuredText

/// What one advertising event of a template's firmware costs, as `template.json` states it in
/// `advertisingEvent`. Only ccbeacon's reference firmware states it (its figures are measured in the
/// s51 simulation of that firmware, and a test measures them again); an imported image's
/// advertising is unknown, so it gets no battery estimate.
public struct AdvertisingEventProfile: Sendable, Equatable {
    /// CPU clock cycles of one event's own work (radio set-up, FIFO loads, scheduling), hardware
    /// waits not counted.
    public var cpuCycles: Int
    /// Packets sent per event (one per advertising channel).
    public var packets: Int
    /// Time on air of one packet (preamble, access address, PDU and CRC at 1 Mbps).
    public var airMicroseconds: Int
    /// The firmware's mean random delay added to each interval (advDelay).
    public var meanDelayMicroseconds: Int
    /// The interval field's values the firmware runs as they are; it runs any other as the nearer
    /// end of this range.
    public var intervalTicks: ClosedRange<Int>

    /// Creates a profile.
    public init(
        cpuCycles: Int, packets: Int, airMicroseconds: Int, meanDelayMicroseconds: Int, intervalTicks: ClosedRange<Int>
    ) {
        self.cpuCycles = cpuCycles
        self.packets = packets
        self.airMicroseconds = airMicroseconds
        self.meanDelayMicroseconds = meanDelayMicroseconds
        self.intervalTicks = intervalTicks
    }

    /// Reads `advertisingEvent` from `template.json`.
    static func read(_ object: inout JSONObjectReader) throws(DataFileError) -> AdvertisingEventProfile {
        let cpuCycles = try object.integer("cpuCycles", in: 1...100_000_000)
        let packets = try object.integer("packets", in: 1...3)
        let airMicroseconds = try object.integer("airMicroseconds", in: 1...10_000)
        let meanDelayMicroseconds = try object.integer("meanDelayMicroseconds", in: 0...10_000)
        let least = try object.integer("minIntervalTicks", in: 1...0xFFFF_FFFF)
        let most = try object.integer("maxIntervalTicks", in: 1...0xFFFF_FFFF)
        guard least <= most else { throw object.error("maxIntervalTicks", "must not be below minIntervalTicks") }
        try object.finish()
        return AdvertisingEventProfile(
            cpuCycles: cpuCycles, packets: packets, airMicroseconds: airMicroseconds,
            meanDelayMicroseconds: meanDelayMicroseconds, intervalTicks: least...most)
    }

    /// The profile as `template.json` holds it.
    var json: JSONValue {
        .object([
            ("cpuCycles", .integer(cpuCycles)), ("packets", .integer(packets)),
            ("airMicroseconds", .integer(airMicroseconds)), ("meanDelayMicroseconds", .integer(meanDelayMicroseconds)),
            ("minIntervalTicks", .integer(intervalTicks.lowerBound)),
            ("maxIntervalTicks", .integer(intervalTicks.upperBound)),
        ])
    }
}

/// A battery the estimate runs against: what it holds and how much of it a beacon gets.
public struct Battery: Sendable, Equatable {
    /// How people name it (`CR2032`, `2×AA`, `1000 mAh`).
    public var name: String
    /// Rated capacity.
    public var milliampHours: Double
    /// The share of the rated capacity a CC2541 beacon draws before the voltage falls below what it
    /// needs (2 V) under its pulses.
    public var usableFraction: Double
    /// Capacity lost per year on the shelf, as a share of the rated capacity.
    public var selfDischargePerYear: Double

    /// Creates a battery.
    public init(name: String, milliampHours: Double, usableFraction: Double, selfDischargePerYear: Double) {
        self.name = name
        self.milliampHours = milliampHours
        self.usableFraction = usableFraction
        self.selfDischargePerYear = selfDischargePerYear
    }

    /// The batteries known by name (their figures and sources: docs/battery-life.md).
    public static let known: [(key: String, battery: Battery)] = [
        ("cr2032", Battery(name: "CR2032", milliampHours: 225, usableFraction: 0.9, selfDischargePerYear: 0.015)),
        ("cr2450", Battery(name: "CR2450", milliampHours: 550, usableFraction: 0.9, selfDischargePerYear: 0.015)),
        ("2xaa", Battery(name: "2×AA", milliampHours: 2500, usableFraction: 0.9, selfDischargePerYear: 0.04)),
    ]

    /// `cr2032`, `cr2450`, `2xaa` (any case), or a capacity in mAh (`1000` or `1000mah`; all of it
    /// usable, no self-discharge). A bare number that names a cell (`2032`) is refused as
    /// ambiguous.
    public init(parsing text: String) throws(BatteryError) {
        let lowered = text.lowercased()
        if let entry = Self.known.first(where: { $0.key == lowered }) {
            self = entry.battery
            return
        }
        var digits = Substring(lowered)
        let unit = digits.hasSuffix("mah")
        if unit {
            digits = digits.dropLast(3)
            if digits.hasSuffix(" ") { digits = digits.dropLast() }
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let capacity = Double(digits), capacity.isFinite, (1...1_000_000).contains(capacity)
        else { throw .unknown(text) }
        // `2032`, `02032` and `2032.0` alike: the number, not its spelling, names the cell.
        if !unit, let cell = Self.known.first(where: { Double($0.key.dropFirst(2)) == capacity }) {
            throw .ambiguous(text, cell: cell.battery.name)
        }
        self.init(
            name: "\(capacity == capacity.rounded() ? String(Int(capacity)) : String(capacity)) mAh",
            milliampHours: capacity, usableFraction: 1, selfDischargePerYear: 0)
    }
}

/// Why a battery was refused.
public enum BatteryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Neither a known battery nor a capacity of 1 to 1000000 mAh.
    case unknown(String)
    /// A bare number that is also a cell's name (`2032`).
    case ambiguous(String, cell: String)

    /// What is wrong, in words for the command line.
    public var description: String {
        switch self {
        case .unknown(let text):
            "'\(text.excerpt())' is no battery: give cr2032, cr2450, 2xaa or a capacity of 1 to 1000000 mAh (1000 or 1000mah)"
        case .ambiguous(let text, let cell):
            "'\(text.excerpt())' could be a \(cell) or \(cell.dropFirst(2)) mAh: write \(cell.lowercased()) for the cell or \(cell.dropFirst(2))mah for a capacity"
        }
    }
}

/// The radio's current at one output power.
public struct TransmitCurrent: Sendable, Equatable {
    /// The output power.
    public var dBm: Int
    /// The supply current while transmitting at it.
    public var milliamps: Double
}

/// The CC2541 currents the model multiplies its times by, each from TI's data sheets unless
/// docs/battery-life.md marks it assumed.
public struct ChipCurrents: Sendable, Equatable {
    /// CPU running from the 32 MHz crystal, radio off.
    public var cpuMilliamps: Double
    /// Radio transmitting, by output power (dBm), from the highest power down.
    public var transmitMilliamps: [TransmitCurrent]
    /// Power mode 2: sleep timer running, RAM kept.
    public var sleepMicroamps: Double
    /// The crystal's start-up after each wake-up, spent at the CPU's current.
    public var crystalStartMicroseconds: Double
    /// The radio's start-up and synthesizer calibration before each packet, at the TX current.
    public var radioStartMicroseconds: Double
    /// The CPU clock the cycle counts run at.
    public var cpuHz: Double

    /// The CC2541's.
    public static let cc2541 = ChipCurrents(
        cpuMilliamps: 6.7, transmitMilliamps: [TransmitCurrent(dBm: 0, milliamps: 18.2)], sleepMicroamps: 1,
        crystalStartMicroseconds: 250,
        radioStartMicroseconds: 200, cpuHz: 32_000_000)

    /// The TX current at `dBm`: linear between the data sheet's powers, and the nearest one's
    /// outside them (an upper bound below the lowest, since less power never costs more).
    public func transmit(dBm: Int) -> Double {
        let points = transmitMilliamps.sorted { $0.dBm > $1.dBm }
        guard let first = points.first else { return 0 }
        if dBm >= first.dBm { return first.milliamps }
        for (upper, lower) in zip(points, points.dropFirst()) where dBm >= lower.dBm {
            let share = Double(upper.dBm - dBm) / Double(upper.dBm - lower.dBm)
            return upper.milliamps + (lower.milliamps - upper.milliamps) * share
        }
        return points[points.count - 1].milliamps
    }
}

/// How long a battery lasts a station, by the model in docs/battery-life.md.
public struct BatteryEstimate: Sendable, Equatable {
    /// The battery.
    public var battery: Battery
    /// The station's average current.
    public var averageMicroamps: Double
    /// Days until the battery's usable capacity is spent.
    public var days: Double
    /// The time from one event to the next, random delay included, on average.
    public var periodMilliseconds: Double
    /// The TX power the radio time was costed at.
    public var txPowerDbm: Int

    /// One line for people: days (and years past one), the average current, what it assumes.
    public var summary: String {
        let whole = Int(days.rounded())
        let span =
            days < 0.5
            ? "under a day"
            : whole == 1
                ? "about 1 day"
                : "about \(whole) days"
                    + (days >= 365 ? " (\((days / 365.25).oneDecimal) years)" : "")
        return
            "battery: \(span) on \(battery.name), average \(averageMicroamps.oneDecimal) µA "
            + "(an event every \(periodMilliseconds.oneDecimal) ms at \(txPowerDbm) dBm; a model, never measured on a board)"
    }
}

/// Why an image gets no battery estimate.
public enum NoBatteryEstimate: Error, Sendable, Equatable, CustomStringConvertible {
    /// The template does not state what its advertising costs (only the reference firmware does).
    case unknownFirmware(template: String)
    /// The model has no currents for the template's chip.
    case unknownChip(String)
    /// The template has no interval or TX power field to read the settings from.
    case noSettingsField(template: String)
    /// The image lacks the bytes of the template's interval or TX power field.
    case settingsMissing(template: String)
    /// The template says an event takes longer than the time from one event to the next.
    case eventLongerThanPeriod(template: String, eventMilliseconds: Double, periodMilliseconds: Double)
    /// The TX power register holds no step of the chip.
    case unknownTXPower(UInt8, chip: String)
    /// The image's code differs from the template's, so the template's profile does not describe it.
    case codeDiffers(template: String)
    /// No template was given, and the image holds the code of none of those there are.
    case noTemplateFound

    /// Why, in words for the command line.
    public var description: String {
        switch self {
        case .unknownFirmware(let template):
            "no battery estimate: template '\(template)' does not say what its advertising costs (only ccbeacon's reference firmware does)"
        case .unknownChip(let chip):
            "no battery estimate: the model knows the CC2541's currents, not the \(chip)'s"
        case .noSettingsField(let template):
            "no battery estimate: template '\(template)' has no interval or TX power field"
        case .settingsMissing(let template):
            "no battery estimate: the image holds no interval or TX power where template '\(template)' keeps them"
        case .eventLongerThanPeriod(let template, let event, let period):
            "no battery estimate: template '\(template)' says an event takes \(event.oneDecimal) ms, longer than the \(period.oneDecimal) ms from one event to the next"
        case .unknownTXPower(let register, let chip):
            "no battery estimate: TX power register 0x\(HexText.byte(register)) is not a power step of the \(chip)"
        case .codeDiffers(let template):
            "no battery estimate: the image's code differs from template '\(template)', so its advertising is unknown"
        case .noTemplateFound:
            "no battery estimate: the image holds the code of no template here (see 'ccbeacon templates'), so its advertising is unknown"
        }
    }
}

extension StationTemplate {
    /// How long `battery` lasts a station of this template with `settings` (read from its image):
    /// per event the CPU's cycles, the crystal's start-up and each packet's radio start-up and
    /// time on air, times the chip's currents, spread over the interval plus the mean random
    /// delay, on top of the sleep current; against the battery's usable capacity less its
    /// self-discharge. `codeMatchesTemplate` false (an image whose code is not the template's)
    /// gives no estimate, as the template's profile does not describe it.
    public func batteryEstimate(
        settings: FoundSettings, battery: Battery, codeMatchesTemplate: Bool = true
    ) -> Result<BatteryEstimate, NoBatteryEstimate> {
        guard let profile = manifest.advertisingEvent else {
            return .failure(.unknownFirmware(template: manifest.name))
        }
        guard chip.family == "CC2541" else { return .failure(.unknownChip(chip.family)) }
        guard manifest.field(.advertisingInterval) != nil, manifest.field(.txPowerRegister) != nil else {
            return .failure(.noSettingsField(template: manifest.name))
        }
        guard let interval = settings.intervalTicks, let register = settings.txPowerRegister else {
            return .failure(.settingsMissing(template: manifest.name))
        }
        guard codeMatchesTemplate else { return .failure(.codeDiffers(template: manifest.name)) }
        guard let dBm = chip.txPower(register: register) else {
            return .failure(.unknownTXPower(register, chip: chip.family))
        }
        let currents = ChipCurrents.cc2541
        let cpuSeconds = Double(profile.cpuCycles) / currents.cpuHz + currents.crystalStartMicroseconds / 1e6
        let radioSeconds =
            Double(profile.packets) * (currents.radioStartMicroseconds + Double(profile.airMicroseconds)) / 1e6
        let eventMillicoulombs = cpuSeconds * currents.cpuMilliamps + radioSeconds * currents.transmit(dBm: dBm)
        // The firmware runs a field outside its range as the range's nearer end.
        let ticks = min(max(Int(interval.ticks), profile.intervalTicks.lowerBound), profile.intervalTicks.upperBound)
        let periodSeconds = Double(ticks) / Double(interval.tickHz) + Double(profile.meanDelayMicroseconds) / 1e6
        guard cpuSeconds + radioSeconds < periodSeconds else {
            return .failure(
                .eventLongerThanPeriod(
                    template: manifest.name, eventMilliseconds: (cpuSeconds + radioSeconds) * 1000,
                    periodMilliseconds: periodSeconds * 1000))
        }
        let averageMilliamps = eventMillicoulombs / periodSeconds + currents.sleepMicroamps / 1000
        let usable = battery.milliampHours * battery.usableFraction
        let lostPerHour = battery.milliampHours * battery.selfDischargePerYear / (365.25 * 24)
        let days = usable / (averageMilliamps + lostPerHour) / 24
        return .success(
            BatteryEstimate(
                battery: battery, averageMicroamps: averageMilliamps * 1000, days: days,
                periodMilliseconds: periodSeconds * 1000, txPowerDbm: dBm))
    }
}
