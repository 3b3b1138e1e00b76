import Testing

@testable import BeaconScan

/// The calibration rule: at least 20 samples, the lowest and highest tenth dropped, the rest
/// averaged and rounded to the nearest dBm.
struct CalibrationTests {
    @Test(arguments: [
        // (samples, measured power, used, spread)
        ([Int](repeating: -59, count: 20), -59, 16, -59 ... -59),
        // Outliers on both sides are dropped: two of 20 each way.
        ([-30, -35] + [Int](repeating: -60, count: 16) + [-90, -95], -60, 16, -60 ... -60),
        // 25 samples: 2 dropped each way (a tenth, rounded down).
        (Array(-72 ... -48), -60, 21, -70 ... -50),
        // The mean -60.5 rounds away from zero, to -61.
        ([Int](repeating: -60, count: 10) + [Int](repeating: -61, count: 10), -61, 16, -61 ... -60),
    ])
    func samplesGiveTheirMeasuredPower(samples: [Int], power: Int, used: Int, spread: ClosedRange<Int>) throws {
        let calibration = try Calibration(samples: samples)
        #expect(calibration.measuredPower == power)
        #expect(calibration.usedCount == used && calibration.sampleCount == samples.count)
        #expect(calibration.spread == spread)
    }

    @Test(arguments: [0, 1, 19])
    func tooFewSamplesAreRefusedWithHowManyMore(count: Int) {
        #expect(throws: CalibrationError.tooFewSamples(given: count, needed: 20)) {
            try Calibration(samples: [Int](repeating: -59, count: count))
        }
        let error = CalibrationError.tooFewSamples(given: count, needed: 20)
        #expect(error.description.contains("(\(20 - count) more)"))
    }
}
