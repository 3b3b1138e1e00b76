import StructuredText
import Testing

/// The one-decimal form shared by the live status, the burn test's costs and the battery
/// estimate: rounded to tenths, the sign kept, non-finite values as Swift writes them.
struct OneDecimalTests {
    @Test(arguments: [
        (0.0, "0.0"), (12.5, "12.5"), (12.549, "12.5"), (12.55, "12.6"), (0.04, "0.0"), (-0.04, "0.0"),
        (-1.5, "-1.5"), (-12.25, "-12.3"), (319.6217, "319.6"), (1005.0, "1005.0"),
        (.infinity, "inf"), (-.infinity, "-inf"), (1e300, "1e+300"),
    ])
    func roundsToTenthsKeepingTheSign(value: Double, text: String) {
        #expect(value.oneDecimal == text)
    }

    @Test func notANumberIsWrittenAsSwiftWritesIt() {
        #expect(Double.nan.oneDecimal == "nan")
    }
}
