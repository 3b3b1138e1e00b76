// libFuzzer target for identity parsing and advertising-data decoding, compiled together with
// Sources/BeaconPayload by scripts/fuzz. The input's first four lines are fed to the identity
// parser as UUID, major, minor and power; the whole input is also decoded as advertising data by
// every decoder. Accepted identities must encode and decode back to themselves.

/// libFuzzer entry point: one input, as identity text lines and as advertising data.
@_cdecl("LLVMFuzzerTestOneInput")
public func identityFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if fields.count >= 3 {
        if let identity = try? IBeacon(
            uuid: fields[0], major: fields[1], minor: fields[2], power: fields.count > 3 ? fields[3] : nil)
        {
            let encoded = identity.advertisingData()
            precondition(encoded.count == 30)
            precondition((try? IBeacon(advertisingData: encoded)) == identity, "iBeacon round trip failed")
            let alt = AltBeacon(identity: identity)
            precondition((try? AltBeacon(advertisingData: alt.advertisingData())) == alt, "AltBeacon round trip")
            if let uid = try? EddystoneUID(identity: identity) {
                precondition((try? EddystoneUID(advertisingData: uid.advertisingData())) == uid, "UID round trip")
            }
        }
        _ = try? IdentityParser.dBm(fields[0], range: Eddystone.txPowerRange)
        _ = try? IdentityParser.hexBytes(fields[1], field: .namespace, count: 10)
        // Advertising settings: accepted values print back to what parses to the same value, and
        // air packets of any address and data either build or are refused.
        if let address = try? RandomStaticAddress(parsing: fields[0]) {
            precondition((try? RandomStaticAddress(parsing: address.description)) == address, "address round trip")
            precondition(address.bytes[0] & 0xC0 == 0xC0, "accepted a non-random-static address")
        }
        if let interval = try? AdvertisingInterval(parsingMilliseconds: fields[1]) {
            precondition(
                (try? AdvertisingInterval(parsingMilliseconds: interval.description)) == interval, "interval round trip"
            )
            precondition(interval.microseconds % 625 == 0 && interval >= .minimum && interval <= .maximum)
        }
        if let packet = try? AdvertisingAirPacket(
            address: Array(bytes.prefix(6)), addressIsRandom: true, advertisingData: Array(bytes.dropFirst(6)))
        {
            precondition(
                AdvertisingAirPacket.whiten(try! packet.whitened(channel: 38), channel: 38) == packet.pdu + packet.crc)
        }
        if let url = try? EddystoneURL(url: fields[2], txPower: 0) {
            let decoded = try? EddystoneURL(advertisingData: url.advertisingData())
            precondition(decoded?.url == url.url, "Eddystone-URL round trip failed")
        }
    }
    _ = try? IBeacon(advertisingData: bytes)
    _ = try? AltBeacon(advertisingData: bytes)
    _ = try? EddystoneUID(advertisingData: bytes)
    _ = try? EddystoneURL(advertisingData: bytes)
    _ = try? ADStructure.parse(bytes)
    return 0
}
