// libFuzzer target for the station-list reader (CSV and JSON), compiled with the station-list
// source and linked with the StructuredText and BeaconPayload modules by scripts/fuzz.
// Besides "never crash", every accepted list must have unique names, unique file names and
// unique identities, and every reported problem must carry a position inside the input.

import StructuredText

/// libFuzzer entry point: one input, read as a station list (JSON when it starts with '[').
@_cdecl("LLVMFuzzerTestOneInput")
public func stationListFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // Lines as the CSV reader counts them: LF, CRLF, and a lone CR (old Mac files) each end one.
    let lineCount =
        bytes.indices.filter {
            bytes[$0] == 0x0A || (bytes[$0] == 0x0D && ($0 + 1 == bytes.count || bytes[$0 + 1] != 0x0A))
        }
        .count + 1
    do {
        let stations = try StationListReader.read(bytes, file: "fuzz")
        precondition(!stations.isEmpty, "an accepted list is never empty")
        precondition(Set(stations.map(\.name)).count == stations.count, "duplicate names accepted")
        precondition(Set(stations.map { $0.fileStem.lowercased() }).count == stations.count, "file-name clash accepted")
        let identities = Set(stations.map { "\($0.identity.uuid)/\($0.identity.major)/\($0.identity.minor)" })
        precondition(identities.count == stations.count, "duplicate identity accepted")
        for station in stations {
            precondition(!station.fileStem.contains("/") && !station.fileStem.hasPrefix("."), "unsafe file name")
        }
    } catch {
        precondition(!error.problems.isEmpty, "a rejected list names its problems")
        for problem in error.problems {
            precondition(problem.line >= 0 && problem.line <= lineCount + 1, "problem outside the input")
        }
    }
    _ = try? CSVTable.parse(bytes, file: "fuzz")
    _ = try? JSONParser.parse(bytes, file: "fuzz")
    return 0
}
