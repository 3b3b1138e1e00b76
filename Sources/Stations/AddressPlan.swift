public import BeaconPayload
public import FirmwareTemplate
public import StationLedger

/// The advertiser addresses the stations of a list get from a template.
public enum AddressPlan {
    /// Checks a list against `template`: an address in the list needs a template with an
    /// advertiser-address field — or, with `secondary`, goes into the chip's secondary address —
    /// and no two stations may end up with one address, whether given in the list or derived from
    /// their identities. Returns the list's addresses by station name.
    public static func check(_ stations: [Station], template: StationTemplate, file: String, secondary: Bool = false)
        throws(StationListProblems) -> [String: RandomStaticAddress]
    {
        var problems = ListProblems(file: file)
        var given: [String: RandomStaticAddress] = [:]
        guard template.manifest.field(.advertiserAddress) != nil || secondary else {
            for station in stations where station.address != nil {
                problems.add(
                    "station '\(station.name)' has an address, but template '\(template.manifest.name)' has no advertiser-address field to put it in",
                    at: station)
            }
            try problems.check()
            return [:]
        }
        var owners = FirstClaims<RandomStaticAddress, Station>()
        for station in stations {
            if let address = station.address { given[station.name] = address }
            let address = address(of: station)
            if let earlier = owners.claim(address, by: station) {
                problems.add(
                    "stations '\(earlier.name)' (\(earlier.place)) and '\(station.name)' would both advertise as \(address); give one of them another address",
                    at: station)
            }
        }
        try problems.check()
        return given
    }

    /// The advertiser address `station` is burned with by a template with an advertiser-address
    /// field: the list's, or else the one derived from its identity.
    public static func address(of station: Station) -> RandomStaticAddress {
        StationTemplate.advertiserAddress(given: station.address, identity: station.identity)
    }
}
