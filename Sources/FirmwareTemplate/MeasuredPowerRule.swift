public import BeaconPayload
public import TargetData

/// A station's measured power and why it is that.
public struct MeasuredPowerChoice: Sendable, Equatable {
    /// The value burned (dBm at 1 m).
    public var dBm: Int8
    /// Where it comes from.
    public var origin: MeasuredPowerOrigin
    /// What the board (or the generic default) expects at the station's TX power.
    public var expected: Int8
    /// The figure at 0 dBm the expectation starts from, and its source.
    public var reference: MeasuredPower

    /// How far a given value may lie from the expectation before it is worth a warning: a user
    /// may have measured it, so it is never an error.
    public static let warningDistance = 10

    /// Whether the value lies more than `warningDistance` dB from the expectation.
    public var isFarFromExpected: Bool { abs(Int(dBm) - Int(expected)) > Self.warningDistance }

    /// One line for people: `-65 dBm (board hm10: -59 dBm at 0 dBm, shifted by the -6 dBm TX power)`.
    public var explanation: String {
        func shifted(_ txPower: Int?) -> String {
            txPower.map { ", shifted by the \($0) dBm TX power" } ?? "; the template's TX power is not known"
        }
        switch origin {
        case .explicit: return "\(dBm) dBm (given)"
        case .list: return "\(dBm) dBm (from the list)"
        case .calibration: return "\(dBm) dBm (calibrated from samples at 1 m)"
        case .board(let name, let txPower):
            return "\(dBm) dBm (board \(name): \(reference.dBm) dBm at 0 dBm\(shifted(txPower)))"
        case .generic(let txPower):
            return "\(dBm) dBm (generic default: \(reference.dBm) dBm at 0 dBm\(shifted(txPower)))"
        }
    }
}

/// The measured power a station gets: what was given (on the command line or in its list), else
/// the board's figure at 0 dBm shifted 1:1 by the station's TX power and clamped to a signed byte.
public enum MeasuredPowerRule {
    /// The TX power a station of `template` sends with under `settings`: the one given, else the
    /// template's own (its TX-power field's bytes); `nil` when that is not known: the template has
    /// no TX-power field (TI-stack images), or its field holds no step of the chip.
    public static func txPower(of template: StationTemplate, settings: StationSettings) -> Int? {
        guard let field = template.manifest.field(.txPowerRegister) else { return nil }
        if let given = settings.txPower { return given }
        return template.image.memory.contiguousBytes(in: field.range)?.first.flatMap {
            template.chip.txPower(register: $0)
        }
    }

    /// The choice for a station: `given` (with where it was given), else the default of `board`
    /// (`nil`: the generic default) at `txPower`.
    public static func choose(
        given: (dBm: Int8, origin: MeasuredPowerOrigin)?, board: Board?, txPower: Int?
    ) -> MeasuredPowerChoice {
        let reference = board?.measuredPower ?? .genericDefault
        let expected = reference.expected(atTXPower: txPower)
        if let given {
            return MeasuredPowerChoice(dBm: given.dBm, origin: given.origin, expected: expected, reference: reference)
        }
        let origin: MeasuredPowerOrigin =
            board.map { .board(name: $0.name, txPower: txPower) } ?? .generic(txPower: txPower)
        return MeasuredPowerChoice(dBm: expected, origin: origin, expected: expected, reference: reference)
    }
}
