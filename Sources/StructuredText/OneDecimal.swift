extension Double {
    /// The value with one decimal (`12.0`, `0.5`, `-1.5`), for figures people read; Swift's own
    /// form for what tenths in an `Int` cannot hold (and for infinities and NaN).
    public var oneDecimal: String {
        guard isFinite, magnitude < 1e15 else { return "\(self)" }
        let tenths = Int((self * 10).rounded())
        return "\(tenths < 0 ? "-" : "")\(tenths.magnitude / 10).\(tenths.magnitude % 10)"
    }
}
