import Testing

@testable import BeaconPayload

struct RandomStaticAddressTests {
    @Test(
        arguments: [
            ("C0:FF:EE:12:34:56", [0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56]),
            ("ff:00:00:00:00:01", [0xFF, 0x00, 0x00, 0x00, 0x00, 0x01]),
            ("C0:00:00:00:00:01", [0xC0, 0x00, 0x00, 0x00, 0x00, 0x01]),
            ("FF:FF:FF:FF:FF:FE", [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE]),
        ] as [(String, [UInt8])])
    func acceptsRandomStaticAddresses(text: String, bytes: [UInt8]) throws {
        let address = try RandomStaticAddress(parsing: text)
        #expect(address.bytes == bytes)
        #expect(address.airOrder == bytes.reversed())
        #expect(address.description == text.uppercased())
    }

    @Test(arguments: [
        ("C0:FF:EE:12:34", AdvertisingSettingError.addressSyntax("C0:FF:EE:12:34")),
        ("C0:FF:EE:12:34:5", .addressSyntax("C0:FF:EE:12:34:5")),
        ("C0-FF-EE-12-34-56", .addressSyntax("C0-FF-EE-12-34-56")),
        ("C0:FF:EE:12:34:5G", .addressSyntax("C0:FF:EE:12:34:5G")),
        ("C0:FF:EE:12:34:56:78", .addressSyntax("C0:FF:EE:12:34:56:78")),
        ("+C:FF:EE:12:34:56", .addressSyntax("+C:FF:EE:12:34:56")),
        ("00:12:4B:00:25:41", .notRandomStatic("00:12:4B:00:25:41")),  // a public (TI) address
        ("40:FF:EE:12:34:56", .notRandomStatic("40:FF:EE:12:34:56")),  // resolvable private
        ("80:FF:EE:12:34:56", .notRandomStatic("80:FF:EE:12:34:56")),  // reserved
        ("C0:00:00:00:00:00", .reservedAddress("C0:00:00:00:00:00")),  // random part all 0
        ("FF:FF:FF:FF:FF:FF", .reservedAddress("FF:FF:FF:FF:FF:FF")),  // random part all 1
    ])
    func refusesEverythingElse(text: String, error: AdvertisingSettingError) {
        #expect(throws: error) { try RandomStaticAddress(parsing: text) }
    }

    @Test func derivedAddressesAreAlwaysValid() throws {
        for source: [UInt8] in [
            [0, 0, 0, 0, 0, 0], [0x3F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], [1, 2, 3],
            [0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE],
        ] {
            let address = RandomStaticAddress(deriving: source)
            #expect((try? RandomStaticAddress(address.bytes)) != nil, "\(address)")
        }
        #expect(
            RandomStaticAddress(deriving: [0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC]).bytes == [
                0xD2, 0x34, 0x56, 0x78, 0x9A, 0xBC,
            ])
    }
}

struct AdvertisingIntervalTests {
    @Test(arguments: [
        ("100", 100_000, "100"), ("20", 20_000, "20"), ("10240", 10_240_000, "10240"), ("152.5", 152_500, "152.5"),
        ("1022.500", 1_022_500, "1022.5"), ("20.625", 20_625, "20.625"), ("0100", 100_000, "100"),
    ])
    func acceptsSpecIntervals(text: String, microseconds: Int, shown: String) throws {
        let interval = try AdvertisingInterval(parsingMilliseconds: text)
        #expect(interval.microseconds == microseconds)
        #expect(interval.description == shown)
    }

    @Test(arguments: [
        ("19.375", AdvertisingSettingError.intervalOutOfRange("19.375")),
        ("10240.625", .intervalOutOfRange("10240.625")),
        ("0", .intervalOutOfRange("0")),
        ("101", .intervalNotAStep("101", below: "100.625", above: "101.25")),
        ("100.1", .intervalNotAStep("100.1", below: "100", above: "100.625")),
        ("", .intervalSyntax("")), ("-100", .intervalSyntax("-100")), ("1e2", .intervalSyntax("1e2")),
        ("100.", .intervalSyntax("100.")), (".5", .intervalSyntax(".5")),
        ("100.0625", .intervalNotAStep("100.0625", below: "100", above: "100.625")),
        ("100 ms", .intervalSyntax("100 ms")), ("9999999", .intervalOutOfRange("9999999")),
        ("١٠٠", .intervalSyntax("١٠٠")),
    ])
    func refusesOthers(text: String, error: AdvertisingSettingError) {
        #expect(throws: error) { try AdvertisingInterval(parsingMilliseconds: text) }
    }

    /// Every decimal spelling of an allowed value is that value: trailing zeros after the point,
    /// leading zeros before it, any number of digits.
    @Test(arguments: [
        ("100.6250", 100_625), ("0100.625", 100_625), ("152.50", 152_500), ("100.000", 100_000),
        ("20.6250000", 20_625), ("00020", 20_000), ("10240.000000", 10_240_000), ("1022.5000", 1_022_500),
        ("000000000000000000000000100.62500000000000000000000", 100_625),
    ])
    func acceptsEveryDecimalSpelling(text: String, microseconds: Int) throws {
        #expect(try AdvertisingInterval(parsingMilliseconds: text).microseconds == microseconds)
    }

    /// A value that is not a multiple of 0.625 ms is refused with the two multiples around it,
    /// however many digits it has; one outside 20…10240 ms is out of range however it is written.
    @Test(arguments: [
        ("100.6251", AdvertisingSettingError.intervalNotAStep("100.6251", below: "100.625", above: "101.25")),
        ("100.62500001", .intervalNotAStep("100.62500001", below: "100.625", above: "101.25")),
        ("100.0001", .intervalNotAStep("100.0001", below: "100", above: "100.625")),
        ("152.4999", .intervalNotAStep("152.4999", below: "151.875", above: "152.5")),
        ("10239.9", .intervalNotAStep("10239.9", below: "10239.375", above: "10240")),
        ("10240.0001", .intervalOutOfRange("10240.0001")), ("19.9999", .intervalOutOfRange("19.9999")),
        ("99999999999999999999999", .intervalOutOfRange("99999999999999999999999")),
        ("0.000", .intervalOutOfRange("0.000")), ("+100", .intervalSyntax("+100")), ("1,5", .intervalSyntax("1,5")),
        ("100.6.25", .intervalSyntax("100.6.25")), (" 100", .intervalSyntax(" 100")),
    ])
    func refusesOtherValuesNamingTheNearest(text: String, error: AdvertisingSettingError) {
        #expect(throws: error) { try AdvertisingInterval(parsingMilliseconds: text) }
    }

    @Test func messagesSayWhatToDo() {
        #expect(
            AdvertisingSettingError.intervalNotAStep("101", below: "100.625", above: "101.25").description
                == "advertising interval 101 ms is not a multiple of 0.625 ms; the nearest are 100.625 and 101.25")
        #expect(
            AdvertisingSettingError.notRandomStatic("00:12:4B:00:25:41").description
                == "'00:12:4B:00:25:41' is not a random static address: its two top bits must be 1 (first byte C0…FF)")
    }
}
