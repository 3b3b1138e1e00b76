import CommandLineKit
import HexText

/// Text from outside (URLs, names, notes) made safe for the C source ccbeacon writes. One encoder
/// per output kind, used everywhere that kind is written, so no call site can forget a case.
enum CSource {
    /// `text` as the inside of a `/* … */` comment that no input can end early or nest: a `/`
    /// right after `*` and a `*` right after `/` are written with a backslash (`*\/`, `/\*`), and
    /// anything but printable ASCII (control characters, line breaks — which a backslash before
    /// could splice — and non-ASCII) as `\u{…}`.
    static func comment(_ text: String) -> String {
        var result = ""
        var previous: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            switch scalar {
            case "/" where previous == "*": result += "\\/"
            case "*" where previous == "/": result += "\\*"
            case " "..."~": result.unicodeScalars.append(scalar)
            default: result += "\\u{\(HexText.digits(scalar.value))}"
            }
            previous = scalar
        }
        return result
    }
}
