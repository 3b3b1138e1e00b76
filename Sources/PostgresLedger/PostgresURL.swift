/// What ccbeacon needs to know of a PostgreSQL connection string without parsing it for libpq:
/// whether a `--ledger` value names a server, and how to show it without its password.
public enum PostgresURL {
    /// Whether `text` is a PostgreSQL URL (`postgresql://` or `postgres://`).
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
    }

    /// The password a URL holds (`postgresql://user:PASSWORD@host/…`, or `password=` in its query),
    /// percent-decoded; `nil` when it holds none.
    static func password(_ url: String) -> String? {
        guard isURL(url), let rest = afterScheme(url) else { return nil }
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        var found: String?
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            found = String(authority[authority.index(after: colon)..<at])
        }
        if let query = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: query)...].split(separator: "&") where pair.hasPrefix("password=") {
                found = String(pair.dropFirst("password=".count))
            }
        }
        return found.map(percentDecoded)
    }

    /// The URL with its password replaced by `***` (in the user part and in the query), for
    /// messages; other connection strings are shown as `the PostgreSQL server`.
    public static func withoutPassword(_ url: String) -> String {
        guard isURL(url), let rest = afterScheme(url) else { return "the PostgreSQL server" }
        var result = String(url[..<rest.startIndex])
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
            result += authority[..<colon] + ":***" + authority[at...]
        } else {
            result += authority
        }
        var tail = String(rest.dropFirst(authority.count))
        if let query = tail.firstIndex(of: "?") {
            let pairs = tail[tail.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map {
                $0.hasPrefix("password=") ? "password=***" : String($0)
            }
            tail = String(tail[...query]) + pairs.joined(separator: "&")
        }
        return result + tail
    }

    /// What follows `://`.
    static func afterScheme(_ url: String) -> Substring? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        return url[url.index(colon, offsetBy: 3)...]
    }

    static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
