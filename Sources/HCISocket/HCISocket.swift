public import BeaconScan

#if canImport(Glibc)
    import Glibc
#endif

/// Controllers through BlueZ's raw HCI socket (Linux): `socket(AF_BLUETOOTH, SOCK_RAW,
/// BTPROTO_HCI)` bound to the controller's index on the raw channel, filtered to events. The
/// kernel lets a process without CAP_NET_RAW open it, but not send LE commands (`EPERM`).
///
/// Never run against a real controller here: the tests drive `HCISocketTransport` through a
/// socket pair.
public struct HCISocketProvider: HCIControllerProvider {
    /// Creates a provider.
    public init() {}

    /// Opens `name` (`hci0`).
    public func open(_ name: String) throws(HCIError) -> any HCITransport {
        guard let index = HCIController.index(name) else {
            throw HCIError(controller: name, kind: .noController, message: "is no controller name; give hci0, hci1, …")
        }
        #if os(Linux)
            // AF_BLUETOOTH, BTPROTO_HCI: linux/bluetooth.h, hci.h (not in Glibc's headers).
            let addressFamily: Int32 = 31
            let descriptor = socket(addressFamily, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 1)
            guard descriptor >= 0 else { throw HCISocketTransport.failure(errno, opening: name) }
            // struct hci_filter: packet types (bit 4: events), event mask (all), opcode (any).
            var filter: (UInt32, UInt32, UInt32, UInt16) = (1 << 4, 0xFFFF_FFFF, 0xFFFF_FFFF, 0)
            // SOL_HCI 0, HCI_FILTER 2.
            guard setsockopt(descriptor, 0, 2, &filter, socklen_t(MemoryLayout.size(ofValue: filter))) == 0 else {
                let error = HCISocketTransport.failure(errno, opening: name)
                Glibc.close(descriptor)
                throw error
            }
            // struct sockaddr_hci: family, device index, channel (0: raw).
            var address: (UInt16, UInt16, UInt16) = (UInt16(addressFamily), index, 0)
            let size = socklen_t(MemoryLayout.size(ofValue: address))
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) }
            }
            guard bound == 0 else {
                let error = HCISocketTransport.failure(errno, opening: name)
                Glibc.close(descriptor)
                throw error
            }
            return HCISocketTransport(descriptor: descriptor, controller: name)
        #else
            throw HCIError(controller: name, kind: .noBluetooth, message: "live scanning needs Linux (BlueZ)")
        #endif
    }
}

/// HCI packets over a file descriptor that keeps packet boundaries (the raw HCI socket, or a
/// `SOCK_SEQPACKET` pair in tests). It owns the descriptor and closes it.
public final class HCISocketTransport: HCITransport {
    let descriptor: Int32
    let controller: String

    /// Takes over `descriptor`.
    public init(descriptor: Int32, controller: String) {
        self.descriptor = descriptor
        self.controller = controller
    }

    deinit { close(descriptor) }

    /// Writes one packet.
    public func send(_ packet: [UInt8]) throws(HCIError) {
        while true {
            let written = packet.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written == packet.count { return }
            if written < 0, errno == EINTR { continue }
            throw written < 0
                ? Self.failure(errno, opening: nil, controller: controller)
                : HCIError(
                    controller: controller, kind: .io,
                    message: "sending a command wrote \(written) of \(packet.count) bytes")
        }
    }

    /// Reads one packet, waiting at most `timeout`.
    public func receive(timeout: Duration) throws(HCIError) -> [UInt8]? {
        let (seconds, attoseconds) = timeout.components
        let milliseconds = max(0, min(Int64(Int32.max), seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(milliseconds))
        if ready < 0 {
            if errno == EINTR { return nil }
            throw Self.failure(errno, opening: nil, controller: controller)
        }
        guard ready > 0 else { return nil }
        // An HCI event is at most 2 + 255 bytes after its type byte; ACL data is filtered out.
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return nil }
            throw Self.failure(errno, opening: nil, controller: controller)
        }
        guard count > 0 else {
            throw HCIError(controller: controller, kind: .io, message: "the controller's socket was closed")
        }
        return Array(buffer[..<count])
    }

    /// The error for a failed system call: `opening` names the controller while it is opened.
    static func failure(_ code: Int32, opening name: String?, controller: String? = nil) -> HCIError {
        let who = name ?? controller ?? "?"
        let reason = String(cString: strerror(code))
        switch code {
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            return HCIError(
                controller: who, kind: .noBluetooth,
                message:
                    "this system has no Bluetooth sockets (\(reason)): no Bluetooth in the kernel, or a container without it"
            )
        case ENODEV:
            return HCIError(controller: who, kind: .noController, message: "no such controller (\(reason))")
        case EPERM, EACCES:
            return HCIError(
                controller: who, kind: .permission,
                message: "not allowed to send HCI commands (\(reason)): scanning needs CAP_NET_RAW")
        case ENETDOWN:
            return HCIError(controller: who, kind: .down, message: "the controller is down (\(reason))")
        default:
            return HCIError(
                controller: who, kind: .io,
                message: "\(name == nil ? "talking to the controller" : "opening the controller") failed: \(reason)")
        }
    }
}
