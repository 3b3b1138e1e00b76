extension String {
    /// At most `limit` characters of the text (and at most `limit` code points: one character may
    /// carry any number of marks), and `… (N characters)` when it was longer: for a message that
    /// quotes a value which may be of any length. The text stays as it is otherwise; the way out
    /// (`VisibleText` on a terminal, the JSON writer) encodes it.
    public func excerpt(limit: Int = 40) -> String {
        let scalars = unicodeScalars
        guard count > limit || scalars.count > limit else { return self }
        // `limit` code points are at most `limit` characters.
        let kept = String(String.UnicodeScalarView(scalars.prefix(limit)))
        let size = count > limit ? "\(count) characters" : "\(scalars.count) code points"
        return kept + "… (\(size))"
    }
}

extension Array where Element == String {
    /// The first `limit` items, comma-separated, and `, …` when there are more: for a message that
    /// names what it counts (the count is the message's to say).
    public func joinedExcerpt(limit: Int = 5) -> String {
        prefix(limit).joined(separator: ", ") + (count > limit ? ", …" : "")
    }
}
