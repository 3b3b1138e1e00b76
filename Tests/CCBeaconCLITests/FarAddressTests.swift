import Foundation
import TestSupport
import Testing

/// An image with a few bytes far apart (a HEX file of three lines can put data at 0xF0020000) is
/// compared with a template over the bytes either holds, not over every address between: `verify`
/// walked 4 GiB byte by byte (a minute of CPU for a 3-line file) and `inspect --battery` read both
/// images out whole (2 × 4 GiB). Each runs as its own process with 20 s of CPU and 1 GiB of
/// address space, and must give its verdict.
@Suite(.enabled(if: BuiltTools.ccbeaconAvailable, "needs the built ccbeacon"))
struct FarAddressTests {
    static let far = ":02000004F00208\n:10000000000102030405060708090A0B0C0D0E0F78\n:00000001FF\n"
    static let limits = "-t 20 -v 1048576"

    @Test func verifyComparesOnlyWhereEitherImageHoldsBytes() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write("far.hex", Self.far)
        let identity = ["--uuid", "7634A485-1732-4B7D-AB44-D505D8A24C60", "--major", "1", "--minor", "2"]
        let run = try BuiltTools.runLimited(
            Self.limits, ["verify", "far.hex"] + identity + ["--template", "cc2541-ibeacon"], in: scratch.url)
        #expect(run.status == 1, "\(run.errors)")
        #expect(
            run.output.contains("the image differs from template 'cc2541-ibeacon' outside the payload"), "\(run.output)"
        )
    }

    @Test func inspectWithABatteryComparesOnlyWhereEitherImageHoldsBytes() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write("far.hex", Self.far)
        let run = try BuiltTools.runLimited(
            Self.limits, ["inspect", "far.hex", "--battery", "cr2032"], in: scratch.url)
        #expect(run.status == 0, "\(run.errors)")
        #expect(
            run.output.contains("no battery estimate: the image holds the code of no template here"), "\(run.output)")
    }
}
