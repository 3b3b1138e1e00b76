import CCDebugger
import CommandLineKit
import FirmwareTemplate
import TargetData

// What the user can do about each library error. The libraries say what went wrong; only the
// command line knows its own commands and options, so every hint that names one lives here.

extension TemplateError {
    /// What the user can do.
    var hint: String {
        switch self {
        case .notFound: return "run 'ccbeacon templates' to list them, or give the template's folder"
        case .manifest: return "fix template.json at that spot"
        case .file: return "check that the template folder is complete and readable"
        case .image: return "the template image is damaged; re-import it"
        case .imageIsManifest: return "put the firmware image there, or re-import it with 'ccbeacon template import'"
        case .imageChanged: return "the image was edited or replaced; re-import it with 'ccbeacon template import'"
        case .unknownChip: return "add the chip to boards/chips.json or fix the manifest's chip"
        case .fieldNotInImage, .placeholderMismatch, .oadHeaderInvalid:
            return "template.json and the image disagree; re-import the template"
        case .reservedArea: return "rebuild the firmware with the advertising data in ordinary code flash"
        case .beyondFlash: return "check the manifest's chip: the image is for a larger part"
        case .settingNotSupported(let setting, _):
            let option: OptionSpec
            switch setting {
            case .address: option = Options.address.spec
            case .interval: option = Options.interval.spec
            case .txPower: option = Options.txPower.spec
            }
            return
                "leave \(option.name) out, or use a template that exposes it (the bundled cc2541-ibeacon does)"
        case .txPowerNotAStep: return "pick one of the listed steps"
        }
    }
}

extension ImportError {
    /// What the user can do.
    var hint: String {
        switch self {
        case .noBlock:
            return
                "firmware that assembles its advertising data at run time (BGScript, code) has nothing to patch; rebuild it with a constant 30-byte iBeacon placeholder"
        case .onlyRefused: return "rebuild the firmware with the advertising data in ordinary code flash"
        case .ambiguous, .noBlockAtAddress: return "give --address with one of the addresses above"
        case .refusedAtAddress: return "choose another block"
        case .beyondFlash: return "give --chip with the right part"
        }
    }
}

extension DeviceSelectionError {
    /// What the user can do.
    var hint: String {
        switch self {
        case .noDebugger:
            return
                "is it plugged in? 'lsusb' should list \(DebuggerModel.ccDebugger.usbID.lowercased()); if it does, check the udev rule (ccbeacon doctor says which)"
        case .notFound: return "run 'ccbeacon devices' to list them (with their ports)"
        case .sharedSerial: return "run 'ccbeacon devices' to see which port is which"
        case .ambiguous(_, let selector):
            return selector.takesSeveral
                ? "give \(selector.option) all, or \(selector.option) SEL,SEL"
                : "give \(selector.option) BUS:ADDRESS, \(selector.option) port:BUS-PORT or \(selector.option) SERIAL"
        }
    }
}
