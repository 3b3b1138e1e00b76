public import BeaconPayload
public import FirmwareTemplate
public import StationLedger
import StructuredText

/// The advertiser addresses the stations of a list get from a template.
public enum AddressPlan {
    /// Checks a list against `template`: an address in the list needs a template with an
    /// advertiser-address field — or, with `secondary`, goes into the chip's secondary address —
    /// and no two stations may end up with one address, whether given in the list or derived from
    /// their identities. Returns the list's addresses by station name.
    public static func check(_ stations: [Station], template: StationTemplate, file: String, secondary: Bool = false)
        throws(StationListProblems) -> [String: RandomStaticAddress]
    {
        var problems: [DataFileError] = []
        var given: [String: RandomStaticAddress] = [:]
        guard template.manifest.field(.advertiserAddress) != nil || secondary else {
            for station in stations where station.address != nil {
                problems.append(
                    DataFileError(
                        file: file, line: station.line, column: 1,
                        message:
                            "station '\(station.name)' has an address, but template '\(template.manifest.name)' has no advertiser-address field to put it in"
                    ))
            }
            if !problems.isEmpty { throw StationListProblems(problems: problems) }
            return [:]
        }
        var owners = FirstClaims<RandomStaticAddress>()
        for station in stations {
            if let address = station.address { given[station.name] = address }
            let address = station.address ?? StationTemplate.derivedAddress(for: station.identity)
            if let earlier = owners.claim(address, by: station) {
                problems.append(
                    DataFileError(
                        file: file, line: station.line, column: 1,
                        message:
                            "stations '\(earlier.name)' (line \(earlier.line)) and '\(station.name)' would both advertise as \(address); give one of them another address"
                    ))
            }
        }
        if !problems.isEmpty { throw StationListProblems(problems: problems) }
        return given
    }
}
