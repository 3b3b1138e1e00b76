import Foundation
import Synchronization

/// A Unix-socket proxy in front of a test server's database: every byte
/// passes through unchanged until the test asks it to cut — every connection open now
/// (`cutAll`, a network that drops), or the next connections at the moment a client sends a
/// given text (`cut(next:when:)`: `client_encoding to` cuts a connection while libpq sets it up).
/// Threads of its own, ended when it is released.
public final class PostgresProxy: Sendable {
    /// The folder of its socket (`host=` of `url`).
    public let folder: String
    /// The database reached through the proxy.
    public let url: String
    /// The database's name.
    public let database: String
    let upstream: String
    let listener: Int32
    struct State {
        var cutsLeft = 0
        var pattern: [UInt8] = []
        var afterSending = false
        /// Each connection's two descriptors and how many of its two pumps still run: the last one
        /// closes both, under the lock, so a descriptor is closed once and never shut down after
        /// its number went to another file (it closed one twice, and SQLite's file with it).
        var pairs: [Int: (client: Int32, server: Int32, running: Int)] = [:]
        var nextPair = 0
        var closed = false
        var cuts = 0
    }
    let state = Mutex(State())

    /// A fresh database on the test server, reached through a new proxy.
    public convenience init() throws {
        try self.init(url: try PostgresTestServer.freshDatabase())
    }

    /// The database at `direct` (a URL with `host=` a socket folder), reached through a new proxy.
    public init(url direct: String) throws {
        guard let range = direct.range(of: "host=") else {
            throw PostgresTestError("the test server's URL has no host= socket folder: \(direct)")
        }
        let end = direct[range.upperBound...].firstIndex(of: "&") ?? direct.endIndex
        let serverFolder = String(direct[range.upperBound..<end])
        upstream = serverFolder + "/.s.PGSQL.5432"
        folder = NSTemporaryDirectory() + "pg-proxy-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        url = direct.replacingOccurrences(of: "host=" + serverFolder, with: "host=" + folder)
        database = String(direct.split(separator: "?")[0].split(separator: "/").last ?? "")
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0, Self.withAddress(folder + "/.s.PGSQL.5432", { bind(listener, $0, $1) }) == 0,
            listen(listener, 16) == 0
        else { throw PostgresTestError("the proxy cannot listen in \(folder): \(String(cString: strerror(errno)))") }
        let proxy = self
        Thread.detachNewThread { proxy.acceptLoop() }
    }

    deinit {
        state.withLock { state in
            state.closed = true
            Self.shutAll(state)
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Cuts the next `count` connections when their client sends `text`: before the server gets
    /// it, or — `afterSending` — once it has it and before its answer comes back (a COMMIT whose
    /// answer is lost: the client cannot know whether it was applied).
    public func cut(next count: Int, when text: String, afterSending: Bool = false) {
        state.withLock {
            $0.cutsLeft = count
            $0.pattern = Array(text.utf8)
            $0.afterSending = afterSending
        }
    }

    /// Cuts every connection open now.
    public func cutAll() { state.withLock { Self.shutAll($0) } }

    /// Shuts down both sides of every connection (the caller holds the lock: none is closed
    /// meanwhile).
    static func shutAll(_ state: State) {
        for pair in state.pairs.values {
            shutdown(pair.client, Int32(SHUT_RDWR))
            shutdown(pair.server, Int32(SHUT_RDWR))
        }
    }

    /// How many connections were cut by pattern so far.
    public var cuts: Int { state.withLock { $0.cuts } }

    func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let server = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard server >= 0, Self.withAddress(upstream, { connect(server, $0, $1) }) == 0 else {
                close(client)
                if server >= 0 { close(server) }
                continue
            }
            let pair = state.withLock { state -> Int? in
                if state.closed { return nil }
                state.nextPair += 1
                state.pairs[state.nextPair] = (client, server, 2)
                return state.nextPair
            }
            guard let pair else {
                close(client)
                close(server)
                return
            }
            let proxy = self
            Thread.detachNewThread { proxy.pump(pair, from: client, to: server, watching: true) }
            Thread.detachNewThread { proxy.pump(pair, from: server, to: client, watching: false) }
        }
    }

    /// Copies bytes one way until either side closes; the client's side is watched for the pattern.
    func pump(_ pair: Int, from source: Int32, to target: Int32, watching: Bool) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        var tail: [UInt8] = []
        defer {
            state.withLock { state in
                // Both sides end (still open: the other pump closes them only after this).
                shutdown(source, Int32(SHUT_RDWR))
                shutdown(target, Int32(SHUT_RDWR))
                guard let both = state.pairs[pair] else { return }
                if both.running > 1 {
                    state.pairs[pair]?.running = 1
                } else {
                    close(both.client)
                    close(both.server)
                    state.pairs[pair] = nil
                }
            }
        }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            var cutAfter = false
            if watching {
                let seen = tail + buffer[..<count]
                let cutNow = state.withLock { state -> (now: Bool, after: Bool) in
                    guard state.cutsLeft > 0, !state.pattern.isEmpty,
                        seen.count >= state.pattern.count,
                        (0...(seen.count - state.pattern.count)).contains(where: {
                            seen[$0..<($0 + state.pattern.count)].elementsEqual(state.pattern)
                        })
                    else { return (false, false) }
                    state.cutsLeft -= 1
                    state.cuts += 1
                    return (!state.afterSending, state.afterSending)
                }
                if cutNow.now { return }
                cutAfter = cutNow.after
                tail = Array(seen.suffix(64))
            }
            var sent = 0
            while sent < count {
                // Never SIGPIPE (which would end the test process) on a side already cut.
                let wrote = buffer.withUnsafeBytes {
                    send(target, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL))
                }
                if wrote < 0, errno == EINTR { continue }
                guard wrote > 0 else { return }
                sent += wrote
            }
            if cutAfter {
                // The server has it; its answer must not reach the client: the client's side is
                // shut at once, the server's once the server had time to act on it.
                shutdown(source, Int32(SHUT_RDWR))
                usleep(200_000)
                return
            }
        }
    }

    static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return -1 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
