/// Where a station's measured power comes from.
public enum MeasuredPowerOrigin: Sendable, Equatable {
    /// Given for this station on the command line.
    case explicit
    /// The station list's `power` value.
    case list
    /// A board's figure at 0 dBm, shifted by the TX power (`txPower` nil: the template has no
    /// TX-power field, so the figure is used as it is).
    case board(name: String, txPower: Int?)
    /// No board: the generic −59 dBm at 0 dBm, shifted by the TX power as for a board.
    case generic(txPower: Int?)
    /// The station's calibration from RSSI samples at 1 m (`ccbeacon calibrate --write`).
    case calibration

    /// The short label `stations.json` and the JSON outputs carry: `explicit`, `list`,
    /// `board default`, `board default + TX shift`, `generic default`, `generic default + TX shift`.
    public var label: String {
        switch self {
        case .explicit: return "explicit"
        case .list: return "list"
        case .board(_, let txPower): return "board default" + (txPower == nil ? "" : " + TX shift")
        case .generic(let txPower): return "generic default" + (txPower == nil ? "" : " + TX shift")
        case .calibration: return "calibration"
        }
    }
}
