import BeaconPayload
import TargetData
import TestSupport
import Testing

@testable import FirmwareTemplate

/// The measured power a station gets: given, or the board's figure at 0 dBm shifted 1:1 by the TX
/// power and clamped to a signed byte (beacon-formats.md §1.2: 0 dBm → −59, −4 → −63, +4 → −55).
struct MeasuredPowerTests {
    static let hm10 = try! BundledData.boards().board(named: "hm10")!

    static func board(_ dBm: Int) -> Board {
        var board = hm10
        board.measuredPower = MeasuredPower(dBm: dBm, source: "test figure")
        return board
    }

    @Test(arguments: [
        // (board figure at 0 dBm, TX power, expected value)
        (-59, Optional(0), Int8(-59)), (-59, -6, -65), (-59, -23, -82), (-59, 4, -55), (-59, nil, -59),
        (-50, -20, -70), (-120, -20, -128), (10, 20, 30),
    ])
    func theBoardFigureFollowsTheTXPower(figure: Int, txPower: Int?, expected: Int8) {
        let choice = MeasuredPowerRule.choose(given: nil, board: Self.board(figure), txPower: txPower)
        #expect(choice.dBm == expected && choice.expected == expected)
        #expect(choice.origin == .board(name: "hm10", txPower: txPower))
        #expect(choice.origin.label == (txPower == nil ? "board default" : "board default + TX shift"))
        #expect(!choice.isFarFromExpected)
    }

    @Test func withoutABoardTheGenericDefaultIsUsed() {
        let choice = MeasuredPowerRule.choose(given: nil, board: nil, txPower: -6)
        #expect(choice.dBm == -65 && choice.origin == .generic(txPower: -6))
        #expect(choice.origin.label == "generic default + TX shift")
        #expect(choice.explanation == "-65 dBm (generic default: -59 dBm at 0 dBm, shifted by the -6 dBm TX power)")
        #expect(
            MeasuredPowerRule.choose(given: nil, board: nil, txPower: nil).explanation.hasSuffix(
                "at 0 dBm; the template's TX power is not known)"))
    }

    /// What was given is kept, however far from the expectation; more than 10 dB away is worth a
    /// warning (a user may have measured it), 10 dB is not.
    @Test(arguments: [
        (Int8(-59), MeasuredPowerOrigin.explicit, false), (-69, .explicit, false), (-70, .list, true),
        (-48, .list, true), (-49, .explicit, false),
    ])
    func aGivenValueIsKeptAndJudged(dBm: Int8, origin: MeasuredPowerOrigin, far: Bool) {
        let choice = MeasuredPowerRule.choose(given: (dBm, origin), board: Self.hm10, txPower: 0)
        #expect(choice.dBm == dBm && choice.origin == origin && choice.expected == -59)
        #expect(choice.isFarFromExpected == far)
    }

    /// The TX power a station sends with: the one given, else the template's own (its field's
    /// bytes), and none for a template without a TX-power field.
    @Test func theTXPowerIsTheGivenOneOrTheTemplates() throws {
        let template = try BundledData.template()
        #expect(MeasuredPowerRule.txPower(of: template, settings: StationSettings(txPower: -6)) == -6)
        #expect(MeasuredPowerRule.txPower(of: template, settings: StationSettings()) == 0)
        var bare = template.manifest
        bare.fields = bare.fields.filter(\.kind.isBeaconField)
        let withoutField = try StationTemplate(
            manifest: bare, imageBytes: template.image.text, imagePath: "image.hex", directory: ".",
            catalog: try BundledData.boards())
        #expect(MeasuredPowerRule.txPower(of: withoutField, settings: StationSettings()) == nil)
    }

    /// Every bundled board names its figure and where it comes from.
    @Test func everyBundledBoardSaysWhereItsFigureComesFrom() throws {
        for board in try BundledData.boards().boards {
            #expect(board.measuredPower.dBm == -59, "\(board.name)")
            #expect(board.measuredPower.source.count > 20, "\(board.name): \(board.measuredPower.source)")
        }
    }
}
