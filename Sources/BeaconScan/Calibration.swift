/// Measured power from RSSI samples taken 1 m from a station (Radius Networks' rule: at least 20
/// samples; the lowest and highest tenth are dropped as reflections and bodies passing, the rest
/// averaged and rounded to the nearest dBm).
public struct Calibration: Sendable, Equatable {
    /// The fewest samples a calibration takes.
    public static let minimumSamples = 20
    /// The RSSI a receiver reports, in dBm (HCI: −127…20; 127 means "not available"): the one
    /// bound every source of samples is held to.
    public static let rssiRange = -127...20
    /// How far (dB) a measured power may lie from the one predicted (the station's registered
    /// power: its board's figure at its TX power) before it is taken for a mistake — samples of
    /// another station, a phone on the antenna, the wrong distance — unless forced.
    public static let plausibleDistance = 25
    /// What a beacon gives 1 m away at 0 dBm TX power: the prediction for a station the
    /// calibration cannot look up.
    public static let genericMeasuredPower = -59

    /// The measured power (dBm at 1 m).
    public var measuredPower: Int
    /// Samples given.
    public var sampleCount: Int
    /// Samples averaged (the lowest and highest tenth left out).
    public var usedCount: Int
    /// The lowest and highest of the samples averaged.
    public var spread: ClosedRange<Int>
    /// Their mean, unrounded.
    public var mean: Double

    /// The calibration of `samples` (dBm); fewer than `minimumSamples`, or one outside
    /// `rssiRange`, are refused.
    public init(samples: [Int]) throws(CalibrationError) {
        if let impossible = samples.first(where: { !Self.rssiRange.contains($0) }) {
            throw .impossibleRSSI(impossible)
        }
        guard samples.count >= Self.minimumSamples else {
            throw .tooFewSamples(given: samples.count, needed: Self.minimumSamples)
        }
        let sorted = samples.sorted()
        let dropped = samples.count / 10
        let used = sorted[dropped..<(sorted.count - dropped)]
        let mean = Double(used.reduce(0, +)) / Double(used.count)
        self.measuredPower = Int(mean.rounded(.toNearestOrAwayFromZero))
        self.sampleCount = samples.count
        self.usedCount = used.count
        self.spread = used.first!...used.last!
        self.mean = mean
    }

    /// How far the measured power lies from `predicted`, when farther than `plausibleDistance`.
    public func distance(from predicted: Int) -> Int? {
        let distance = abs(measuredPower - predicted)
        return distance > Self.plausibleDistance ? distance : nil
    }
}

/// Why samples give no calibration.
public enum CalibrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Fewer samples than the rule needs.
    case tooFewSamples(given: Int, needed: Int)
    /// A sample no receiver reports (outside `Calibration.rssiRange`).
    case impossibleRSSI(Int)

    /// In words, with how many more are needed.
    public var description: String {
        switch self {
        case .tooFewSamples(let given, let needed):
            return
                "\(given) sample\(given == 1 ? "" : "s"); a calibration needs at least \(needed) (\(needed - given) more), taken 1 m from the station"
        case .impossibleRSSI(let value):
            return
                "RSSI \(value) dBm is not a reading a receiver gives (\(Calibration.rssiRange.lowerBound)…\(Calibration.rssiRange.upperBound) dBm)"
        }
    }
}
