import CLibPQ

/// What ccbeacon needs to know of a PostgreSQL connection string without parsing it for libpq:
/// whether a `--ledger` value names a server, and how to show it without its password.
public enum PostgresURL {
    /// Whether `text` is a PostgreSQL URL (`postgresql://` or `postgres://`, any case).
    public static func isURL(_ text: String) -> Bool {
        let scheme = text.prefix(13).lowercased()
        return scheme.hasPrefix("postgresql://") || scheme.hasPrefix("postgres://")
    }

    /// The server and database a URL names, as messages show them: `postgresql://USER@HOST:PORT/DB`
    /// from libpq's own reading of the URL, never its password or options; for a URL libpq cannot
    /// read, `a PostgreSQL URL libpq cannot read` (libpq's own message would quote parts of it).
    public static func shown(_ url: String) -> String {
        guard let parts = parse(url) else { return "a PostgreSQL URL libpq cannot read" }
        let host = parts["host"].map { $0.hasPrefix("/") ? "[socket \($0)]" : $0 } ?? ""
        return
            "postgresql://\(parts["user"].map { $0 + "@" } ?? "")\(host)\(parts["port"].map { ":" + $0 } ?? "")/\(parts["dbname"] ?? "")"
    }

    /// libpq's reading of a connection string: its keywords with values; `nil` when it cannot read it.
    static func parse(_ url: String) -> [String: String]? {
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &message) else {
            if let message { PQfreemem(message) }
            return nil
        }
        defer { PQconninfoFree(options) }
        var parts: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { parts[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        return parts
    }
}
