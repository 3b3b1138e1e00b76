public import BeaconPayload
import Checksums
public import IntelHex

/// Advertising settings a station image carries besides its identity, for templates that expose
/// them (the reference firmware does). `nil` keeps the template's value, except the address: a
/// template with an address field gives every station its own, derived from its identity.
public struct StationSettings: Sendable, Equatable {
    /// The advertiser address (random static).
    public var address: RandomStaticAddress?
    /// The advertising interval.
    public var interval: AdvertisingInterval?
    /// The radio's output power in dBm (one of the chip's steps).
    public var txPower: Int?

    /// Creates settings; `nil` values keep the template's (see the type's note on addresses).
    public init(address: RandomStaticAddress? = nil, interval: AdvertisingInterval? = nil, txPower: Int? = nil) {
        self.address = address
        self.interval = interval
        self.txPower = txPower
    }

    /// Whether any value is set.
    public var isEmpty: Bool { address == nil && interval == nil && txPower == nil }
}

/// Settings `StationTemplate.check` accepted for one template, so patching them cannot fail.
public struct CheckedSettings: Sendable, Equatable {
    /// The settings.
    public let settings: StationSettings
    /// The template they were checked against.
    public let templateName: String
    /// Whether that template has an advertiser-address field.
    public let acceptsAddress: Bool

    /// These settings with one station's own advertiser address (`nil`: the one derived from its
    /// identity). Only for templates with an address field: check that first (`acceptsAddress`).
    public func with(address: RandomStaticAddress?) -> CheckedSettings {
        precondition(
            address == nil || acceptsAddress, "template '\(templateName)' has no advertiser-address field")
        var settings = settings
        settings.address = address
        return CheckedSettings(settings: settings, templateName: templateName, acceptsAddress: acceptsAddress)
    }
}

/// An advertising-interval field's value: ticks of a clock.
public struct IntervalTicks: Sendable, Equatable {
    /// The ticks.
    public var ticks: UInt32
    /// The clock's frequency.
    public var tickHz: Int

    /// The interval in milliseconds.
    public var milliseconds: Double { Double(ticks) * 1000 / Double(tickHz) }
}

/// What a station image's settings fields hold.
public struct FoundSettings: Sendable, Equatable {
    /// The advertiser address, when the template has the field (and the bytes form an address).
    public var address: [UInt8]?
    /// The interval field's ticks and the clock they count.
    public var intervalTicks: IntervalTicks?
    /// The TXPOWER register value.
    public var txPowerRegister: UInt8?

    /// No values (a template without settings fields).
    public init() {}
}

extension StationTemplate {
    /// The address a station gets when none is given: a random static address made from the
    /// SHA-256 of its identity, so that every station differs and a re-run gives the same one.
    public static func derivedAddress(for identity: IBeacon) -> RandomStaticAddress {
        let seed = Array("ccbeacon advertiser address".utf8) + identity.payload.prefix(20)
        return RandomStaticAddress(deriving: SHA256.hash(seed))
    }

    /// The address a station advertises with where it gets one (a template's advertiser-address
    /// field, or the chip's secondary address): the one `given` it, else the one derived from its
    /// identity. The rule every command and the run share.
    public static func advertiserAddress(given: RandomStaticAddress?, identity: IBeacon) -> RandomStaticAddress {
        given ?? derivedAddress(for: identity)
    }

    /// The interval as ticks of the template's clock, rounded up: the fewest ticks that last at
    /// least the interval, so the interval on air is never shorter than the one asked for (to
    /// nearest, 100 ms would become 99.99 ms at 32.753 kHz — under the Bluetooth 4.x minimum for
    /// ADV_NONCONN_IND). `verify` compares with the same function.
    public static func ticks(for interval: AdvertisingInterval, tickHz: Int) -> UInt32 {
        UInt32((interval.microseconds * tickHz + 999_999) / 1_000_000)
    }

    /// Checks that this template can carry `settings`: it has a field for every value given and
    /// the TX power is one of the chip's steps.
    public func check(_ settings: StationSettings) throws(TemplateError) -> CheckedSettings {
        if settings.address != nil, manifest.field(.advertiserAddress) == nil {
            throw .settingNotSupported(setting: .address, template: manifest.name)
        }
        if settings.interval != nil, manifest.field(.advertisingInterval) == nil {
            throw .settingNotSupported(setting: .interval, template: manifest.name)
        }
        if let dBm = settings.txPower {
            guard manifest.field(.txPowerRegister) != nil else {
                throw .settingNotSupported(setting: .txPower, template: manifest.name)
            }
            guard chip.txPowerRegister(dBm: dBm) != nil else {
                throw .txPowerNotAStep(dBm: dBm, chip: chip.name, steps: chip.txPowerSteps.map(\.dBm))
            }
        }
        return CheckedSettings(
            settings: settings, templateName: manifest.name,
            acceptsAddress: manifest.field(.advertiserAddress) != nil)
    }

    /// The template's own settings (and derived addresses), which every template can carry.
    public var defaultSettings: CheckedSettings {
        CheckedSettings(
            settings: StationSettings(), templateName: manifest.name,
            acceptsAddress: manifest.field(.advertiserAddress) != nil)
    }

    /// The patches that put `settings` (checked with `check`) into the settings fields, for the
    /// station with `identity`. Fields the settings leave open keep the template's bytes.
    func settingsPatches(for identity: IBeacon, settings: StationSettings) -> [MemoryPatch] {
        var patches: [MemoryPatch] = []
        if let field = manifest.field(.advertiserAddress) {
            let address = Self.advertiserAddress(given: settings.address, identity: identity)
            patches.append(MemoryPatch(address: field.address, bytes: address.airOrder))
        }
        if let field = manifest.field(.advertisingInterval), let interval = settings.interval,
            let tickHz = field.tickHz
        {
            let ticks = Self.ticks(for: interval, tickHz: tickHz)
            patches.append(
                MemoryPatch(address: field.address, bytes: (0..<4).map { UInt8(truncatingIfNeeded: ticks >> ($0 * 8)) })
            )
        }
        if let field = manifest.field(.txPowerRegister), let dBm = settings.txPower,
            let register = chip.txPowerRegister(dBm: dBm)
        {
            patches.append(MemoryPatch(address: field.address, bytes: [register]))
        }
        return patches
    }

    /// What the settings fields of `memory` hold.
    public func foundSettings(in memory: MemoryImage) -> FoundSettings {
        var found = FoundSettings()
        if let field = manifest.field(.advertiserAddress), let bytes = memory.contiguousBytes(in: field.range) {
            found.address = bytes.reversed()
        }
        if let field = manifest.field(.advertisingInterval), let tickHz = field.tickHz,
            let bytes = memory.contiguousBytes(in: field.range)
        {
            let ticks = bytes.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << ($1.offset * 8) }
            found.intervalTicks = IntervalTicks(ticks: ticks, tickHz: tickHz)
        }
        if let field = manifest.field(.txPowerRegister), let bytes = memory.contiguousBytes(in: field.range) {
            found.txPowerRegister = bytes.first
        }
        return found
    }

    /// One line per settings value of `memory`, for people (`inspect`, `verify`).
    public func describe(_ found: FoundSettings) -> [String] {
        var lines: [String] = []
        if let address = found.address {
            let valid = (try? RandomStaticAddress(address)) != nil
            lines.append(
                "advertiser address \(RandomStaticAddress.format(address))\(valid ? " (random static)" : " (NOT a valid random static address)")"
            )
        }
        if let ticks = found.intervalTicks {
            let rounded = (ticks.milliseconds * 10).rounded() / 10
            lines.append("advertising interval \(ticks.ticks) ticks at \(ticks.tickHz) Hz ≈ \(rounded) ms")
        }
        if let register = found.txPowerRegister {
            if let dBm = chip.txPower(register: register) {
                lines.append("TX power \(dBm) dBm (TXPOWER \(hex(Int(register))))")
            } else {
                lines.append("TX power register \(hex(Int(register))) (not one of the \(chip.name)'s steps)")
            }
        }
        return lines
    }

    /// Problems of `found` against `expected` (values `expected` leaves open are only checked to
    /// be valid).
    func settingsProblems(_ found: FoundSettings, expected: StationSettings) -> [String] {
        var problems: [String] = []
        if let address = found.address {
            if let wanted = expected.address, wanted.bytes != address {
                problems.append("advertiser address: expected \(wanted), found \(RandomStaticAddress.format(address))")
            } else if (try? RandomStaticAddress(address)) == nil {
                problems.append(
                    "advertiser address \(RandomStaticAddress.format(address)) is not a valid random static address")
            }
        }
        if let interval = expected.interval, let found = found.intervalTicks {
            let wanted = Self.ticks(for: interval, tickHz: found.tickHz)
            if wanted != found.ticks {
                problems.append(
                    "advertising interval: expected \(interval) ms (\(wanted) ticks), found \(found.ticks) ticks")
            }
        }
        if let register = found.txPowerRegister {
            if let dBm = expected.txPower, chip.txPowerRegister(dBm: dBm) != register {
                problems.append(
                    "TX power: expected \(dBm) dBm, found register \(hex(Int(register)))\(chip.txPower(register: register).map { " (\($0) dBm)" } ?? "")"
                )
            } else if !chip.txPowerSteps.isEmpty, chip.txPower(register: register) == nil {
                problems.append("TX power register \(hex(Int(register))) is not one of the \(chip.name)'s steps")
            }
        }
        return problems
    }
}
