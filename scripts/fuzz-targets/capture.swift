// libFuzzer target for the btsnoop capture reader behind `scan --from` and `calibrate --from`,
// compiled together with Sources/BeaconScan by scripts/fuzz. The input is read as a capture, and
// again behind a valid header of each datalink (so that mutations reach the records at once).
// Besides "never crash": every event read is the bytes at the offset it names (code and length
// just before its parameters), every refusal names a byte of the input, every report has a 6-byte
// address (a legacy one at most 31 data bytes), and matching the reports against stations they
// name counts each report of such a station exactly once.

import BeaconPayload

/// libFuzzer entry point: one input, as a capture and as records behind each datalink's header.
@_cdecl("LLVMFuzzerTestOneInput")
public func captureFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    checkCapture(bytes)
    for datalink in [BTSnoopCapture.Datalink.hciUART, .monitor] {
        checkCapture(Array("btsnoop".utf8) + [0, 0, 0, 0, 1] + bigEndian(datalink.rawValue) + bytes)
    }
    return 0
}

func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

func checkCapture(_ bytes: [UInt8]) {
    do {
        let capture = try BTSnoopCapture(bytes: bytes, file: "fuzz")
        var lastRecord = 0
        for event in capture.events {
            precondition(event.record > lastRecord, "events out of record order")
            lastRecord = event.record
            let start = event.parametersOffset
            let end = start + event.parameters.count
            precondition(start >= 16 + 24 + 2 && end <= bytes.count, "an event's offset outside its input")
            precondition(Array(bytes[start..<end]) == event.parameters, "an event's parameters are not its bytes")
            precondition(bytes[start - 2] == event.code && Int(bytes[start - 1]) == event.parameters.count)
        }
        if let cut = capture.cutShort {
            // Only the last record is cut: nothing read lies at or after it.
            precondition(cut.offset >= 16 && cut.offset <= bytes.count, "a cut outside the input: \(cut)")
            precondition(capture.events.allSatisfy { $0.parametersOffset < cut.offset }, "an event past the cut")
        }
        let reports = try AdvertisingReport.reports(in: capture, file: "fuzz")
        for report in reports {
            precondition(report.address.count == 6, "an address of \(report.address.count) bytes")
            precondition(report.extended || report.data.count <= 31, "a legacy report of more than 31 bytes")
            precondition(report.record >= 1 && report.record <= lastRecord, "a report of no record read")
        }
        checkMatching(reports)
    } catch {
        precondition(error.offset >= 0 && error.offset <= bytes.count, "an error outside the input: \(error)")
        precondition(!error.problem.isEmpty)
    }
}

/// The first stations the reports name are expected: each report of one of them is counted for
/// it once, its RSSI values (all but 127, "not available") sorted, and a station heard well was
/// heard at all.
func checkMatching(_ reports: [AdvertisingReport]) {
    func key(_ beacon: IBeacon) -> String { "\(beacon.uuid)/\(beacon.major)/\(beacon.minor)" }
    var expected: [ExpectedStation] = []
    var keys: Set<String> = []
    for report in reports {
        guard expected.count < 4, let beacon = try? IBeacon(advertisingData: report.data) else { continue }
        if keys.insert(key(beacon)).inserted { expected.append(ExpectedStation(name: "s", identity: beacon)) }
    }
    let match = ScanMatch(reports: reports, expected: expected)
    let named = reports.filter { report in
        (try? IBeacon(advertisingData: report.data)).map { keys.contains(key($0)) } ?? false
    }
    precondition(match.stations.map(\.reports).reduce(0, +) == named.count, "a report counted twice or lost")
    for heard in match.stations {
        precondition(
            heard.rssi == heard.rssi.sorted() && heard.rssi.count <= heard.reports && !heard.rssi.contains(127))
        precondition(!heard.isGood || heard.reports > 0)
        precondition(Set(heard.addresses).count == heard.addresses.count, "an address listed twice")
    }
}
