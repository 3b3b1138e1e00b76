public import BeaconPayload

/// A station that should be on air: its name and identity, and the advertising data it was
/// burned with.
public struct ExpectedStation: Sendable, Equatable {
    /// The station's name.
    public var name: String
    /// Its identity (UUID, major, minor, measured power).
    public var identity: IBeacon
    /// The exact advertising data it sends.
    public var advertisingData: [UInt8]
    /// Whether `advertisingData` is the whole advertising data; otherwise (a template that
    /// holds the manufacturer data alone) the advertising data heard must contain it.
    public var isWhole: Bool
    /// The advertiser address it was burned with (`XX:XX:…`), when known.
    public var address: String?

    /// A station whose data is `advertisingData` as burned (whole, or only the part `isWhole`
    /// false says) or, when not known, the iBeacon advertising data of `identity` with the usual
    /// Flags structure (`02 01 06`, as the bundled template sends it), from `address` when given.
    public init(
        name: String, identity: IBeacon, address: String? = nil, advertisingData: [UInt8]? = nil, isWhole: Bool = true
    ) {
        self.name = name
        self.identity = identity
        self.advertisingData = advertisingData ?? identity.advertisingData(flags: IBeacon.defaultFlags)
        self.isWhole = advertisingData == nil || isWhole
        self.address = address?.uppercased()
    }

    /// Whether `data` is what the station was burned to send.
    public func sends(_ data: [UInt8]) -> Bool {
        isWhole
            ? data == advertisingData
            : data.count >= advertisingData.count
                && data.indices.contains { data[$0...].starts(with: advertisingData) }
    }
}

/// What was heard of one expected station.
public struct HeardStation: Sendable, Equatable {
    /// The station.
    public var station: ExpectedStation
    /// Addresses that advertised its identity (UUID, major, minor), in the order first heard.
    public var addresses: [String]
    /// Reports heard with its identity.
    public var reports: Int
    /// Whether every one of them carried exactly its advertising data (a report whose data came
    /// only in part counts for neither: see `partial`).
    public var exactBytes: Bool
    /// Reports whose advertising data came only in part (`AdvertisingReport.dataComplete`): its
    /// bytes are not confirmed by them, nor said to differ.
    public var partial = 0
    /// RSSI of those reports (127, "not available", left out), sorted.
    public var rssi: [Int]
    /// The PDU types it was heard with (`ADV_NONCONN_IND` for the reference firmware), in the
    /// order first heard. Reported, not judged: a template may send another type.
    public var eventTypes: [String] = []

    /// Heard with exactly its bytes, from one address — the one it was burned with, when known.
    public var isGood: Bool {
        reports > 0 && exactBytes && partial == 0 && addresses.count == 1
            && (station.address.map { addresses == [$0] } ?? true)
    }

    /// Heard from an address it was not burned with.
    public var strangeAddress: Bool {
        guard let address = station.address else { return false }
        return addresses.contains { $0 != address }
    }

    /// The median RSSI (the lower middle for an even count).
    public var medianRSSI: Int? { rssi.isEmpty ? nil : rssi[(rssi.count - 1) / 2] }
}

/// Matches what a scan heard against what should be on air.
public struct ScanMatch: Sendable, Equatable {
    /// Per expected station, in the given order.
    public var stations: [HeardStation]
    /// iBeacons with an expected station's UUID that no expected station is.
    public var strangers: [Stranger]

    /// Other beacons heard (any iBeacon of another UUID, AltBeacon, Eddystone-UID and -URL),
    /// decoded, one entry per address and advertisement, in the order first heard.
    public var others: [OtherBeacon]

    /// A beacon that is neither an expected station nor a stranger of their UUID.
    public struct OtherBeacon: Sendable, Equatable {
        /// Its address.
        public var address: String
        /// `iBeacon`, `AltBeacon`, `Eddystone-UID` or `Eddystone-URL`.
        public var format: String
        /// What it advertises, decoded.
        public var beacon: String
        /// Reports heard of it.
        public var reports: Int
    }

    /// The format and decoded content of advertising data that holds a beacon, by the payload
    /// decoders `encode` uses; `nil` for anything else.
    public static func decode(_ data: [UInt8]) -> (format: String, beacon: String)? {
        if let beacon = try? IBeacon(advertisingData: data) { return ("iBeacon", beacon.description) }
        if let beacon = try? AltBeacon(advertisingData: data) { return ("AltBeacon", beacon.description) }
        if let beacon = try? EddystoneUID(advertisingData: data) { return ("Eddystone-UID", beacon.description) }
        if let beacon = try? EddystoneURL(advertisingData: data) { return ("Eddystone-URL", beacon.description) }
        return nil
    }

    /// An iBeacon heard with one of the expected UUIDs but no expected identity.
    public struct Stranger: Sendable, Equatable {
        /// What it advertises.
        public var identity: IBeacon
        /// From where.
        public var address: String
    }

    /// Whether every expected station was heard with exactly its bytes, from one address.
    public var allGood: Bool { stations.allSatisfy(\.isGood) }

    /// Matches `reports` against `expected`. A station's identity is its UUID, major and minor; a
    /// report with that identity but other bytes (another power, other flags) counts as heard
    /// with different bytes.
    public init(reports: [AdvertisingReport], expected: [ExpectedStation]) {
        var heard = expected.map {
            HeardStation(station: $0, addresses: [], reports: 0, exactBytes: true, rssi: [])
        }
        let ourUUIDs = Set(expected.map(\.identity.uuid))
        // Lookups by identity, so a capture of many stations is matched in one pass.
        func key(_ beacon: IBeacon) -> String { "\(beacon.uuid.uuidString)/\(beacon.major)/\(beacon.minor)" }
        var indexByIdentity: [String: Int] = [:]
        for (index, station) in expected.enumerated() where indexByIdentity[key(station.identity)] == nil {
            indexByIdentity[key(station.identity)] = index
        }
        var strangers: [Stranger] = []
        var strangerKeys: Set<String> = []
        var others: [OtherBeacon] = []
        var otherIndex: [String: Int] = [:]
        func other(_ report: AdvertisingReport) {
            guard let (format, beacon) = Self.decode(report.data) else { return }
            let key = report.addressText + " " + beacon
            if let index = otherIndex[key] {
                others[index].reports += 1
            } else {
                otherIndex[key] = others.count
                others.append(OtherBeacon(address: report.addressText, format: format, beacon: beacon, reports: 1))
            }
        }
        for report in reports {
            guard let beacon = try? IBeacon(advertisingData: report.data) else {
                other(report)
                continue
            }
            if let index = indexByIdentity[key(beacon)] {
                heard[index].reports += 1
                if !heard[index].addresses.contains(report.addressText) {
                    heard[index].addresses.append(report.addressText)
                }
                // A part of the advertising data vouches for none of the rest.
                if !report.dataComplete {
                    heard[index].partial += 1
                } else if !expected[index].sends(report.data) {
                    heard[index].exactBytes = false
                }
                if report.rssi != 127 { heard[index].rssi.append(Int(report.rssi)) }
                if !heard[index].eventTypes.contains(report.eventName) {
                    heard[index].eventTypes.append(report.eventName)
                }
            } else if ourUUIDs.contains(beacon.uuid) {
                if strangerKeys.insert("\(key(beacon))/\(beacon.measuredPower)/\(report.addressText)").inserted {
                    strangers.append(Stranger(identity: beacon, address: report.addressText))
                }
            } else {
                other(report)
            }
        }
        for index in heard.indices { heard[index].rssi.sort() }
        stations = heard
        self.strangers = strangers
        self.others = others
    }
}
