// In-process timing of ccbeacon's HEX engine for scripts/bench (release build).
//
// usage: ccbeacon-bench FILE.hex ADDRESS HEXBYTES RUNS OUTDIR
//        ccbeacon-bench transfers FILE.hex [proven|packed]   (USB transfers per KiB through the emulator, see Transfers.swift)
//        ccbeacon-bench ledger N [URL]       (ledger cost per station, SQLite or PostgreSQL: LedgerBench.swift)
//        ccbeacon-bench device-time NAME=IMAGE…  (the device-time model's figures for ccbeacon and
//                                            the reference client, see DeviceTime.swift)
//        ccbeacon-bench provision-timed DEBUGGERS STATIONS SWAP-SECONDS [BENCHES URL]
//                                            (provisioning on timed emulators, see TimedProvisioning.swift)
//        ccbeacon-bench pool-scaling LIST BURNED [URL]  (the host's cost per station as the pool
//                                            grows, see PoolScaling.swift)
// Prints one JSON object: medians in milliseconds of read+parse, patch, write (line-preserving
// text to a file), and of a full re-emit with HexWriter for comparison with rewrite-based tools.
import CCDebugger
import Foundation
import IntelHex

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

let arguments = CommandLine.arguments
if (3...4).contains(arguments.count), arguments[1] == "ledger", let count = Int(arguments[2]) {
    do {
        try ledgerBenchmark(count, url: arguments.count == 4 ? arguments[3] : nil)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("ccbeacon-bench: \(error)\n".utf8))
        exit(1)
    }
}
if arguments.count >= 3, arguments[1] == "device-time" {
    do {
        try deviceTimeBenchmark(Array(arguments.dropFirst(2)))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("ccbeacon-bench: \(error)\n".utf8))
        exit(1)
    }
}
if [5, 7].contains(arguments.count), arguments[1] == "provision-timed", let debuggers = Int(arguments[2]),
    let stations = Int(arguments[3]), let swap = Double(arguments[4]),
    let benches = arguments.count == 7 ? Int(arguments[5]) : 1
{
    do {
        try timedProvisioningBenchmark(
            debuggers: debuggers, stations: stations, swapSeconds: swap, benches: benches,
            url: arguments.count == 7 ? arguments[6] : nil)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("ccbeacon-bench: \(error)\n".utf8))
        exit(1)
    }
}
if (4...5).contains(arguments.count), arguments[1] == "pool-scaling", let count = Int(arguments[2]),
    let burned = Int(arguments[3])
{
    do {
        try poolScalingBenchmark(list: count, url: arguments.count == 5 ? arguments[4] : nil, burned: burned)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("ccbeacon-bench: \(error)\n".utf8))
        exit(1)
    }
}
if arguments.count == 3 || arguments.count == 4, arguments[1] == "transfers" {
    do {
        guard let framing = USBFraming(rawValue: arguments.count == 4 ? arguments[3] : "proven") else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "framing: proven or packed"])
        }
        try transferBenchmark(arguments[2], framing: framing)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("ccbeacon-bench: \(error)\n".utf8))
        exit(1)
    }
}
guard arguments.count == 6, let address = Int(arguments[2].dropFirst(2), radix: 16), let runs = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: ccbeacon-bench FILE.hex 0xADDRESS HEXBYTES RUNS OUTDIR\n".utf8))
    exit(64)
}
let input = URL(fileURLWithPath: arguments[1])
let hexBytes = Array(arguments[3].utf8)
let patchBytes = stride(from: 0, to: hexBytes.count, by: 2).map {
    UInt8(String(decoding: hexBytes[$0..<($0 + 2)], as: UTF8.self), radix: 16)!
}
let output = URL(fileURLWithPath: arguments[5]).appendingPathComponent("ccbeacon-inproc.hex")
let rewriteOutput = URL(fileURLWithPath: arguments[5]).appendingPathComponent("ccbeacon-rewrite.hex")

var parseTimes: [Double] = []
var patchTimes: [Double] = []
var writeTimes: [Double] = []
var rewriteTimes: [Double] = []
var rewrittenLines: [Int] = []
do {
    for run in 0...runs {  // run 0 warms caches and is not counted
        var file: IntelHexFile?
        let parse = try milliseconds {
            file = try IntelHexFile(text: [UInt8](try Data(contentsOf: input)), fileName: input.path)
        }
        var patched: PatchedHexFile?
        let patch = try milliseconds {
            patched = try file!.patchingRecords([MemoryPatch(address: address, bytes: patchBytes)])
        }
        let write = try milliseconds { try Data(patched!.file.text).write(to: output) }
        let rewrite = try milliseconds {
            try Data(HexWriter().text(for: patched!.file.memory, startAddress: file!.startAddress)).write(
                to: rewriteOutput)
        }
        rewrittenLines = patched!.rewrittenLines
        if run > 0 {
            parseTimes.append(parse)
            patchTimes.append(patch)
            writeTimes.append(write)
            rewriteTimes.append(rewrite)
        }
    }
} catch {
    FileHandle.standardError.write(Data("ccbeacon-bench: \(error)\n".utf8))
    exit(1)
}
// Throughput in memory, no file I/O: the memory-only reader (what convert uses) and the writer.
var memoryParseTimes: [Double] = []
var memoryWriteTimes: [Double] = []
var textBytes = 0
var writtenBytes = 0
do {
    let text = [UInt8](try Data(contentsOf: input))
    textBytes = text.count
    var image: HexImage?
    for run in 0...runs {
        let parse = try milliseconds { image = try HexImage(text: text, fileName: input.path) }
        var written: [UInt8] = []
        let write = milliseconds { written = HexWriter().text(for: image!.memory, startAddress: image!.startAddress) }
        writtenBytes = written.count
        if run > 0 {
            memoryParseTimes.append(parse)
            memoryWriteTimes.append(write)
        }
    }
} catch {
    FileHandle.standardError.write(Data("ccbeacon-bench: \(error)\n".utf8))
    exit(1)
}
let memoryParse = median(memoryParseTimes)
let memoryWrite = median(memoryWriteTimes)

var usage = rusage()
getrusage(RUSAGE_SELF.rawValue, &usage)
let parse = median(parseTimes)
let patch = median(patchTimes)
let write = median(writeTimes)
print(
    """
    {"parse_ms": \(parse), "patch_ms": \(patch), "write_ms": \(write), "total_ms": \(parse + patch + write), \
    "rewrite_ms": \(median(rewriteTimes)), "rewritten_lines": \(rewrittenLines), "maxrss_kb": \(usage.ru_maxrss), \
    "memory_parse_ms": \(memoryParse), "memory_write_ms": \(memoryWrite), \
    "parse_mb_s": \(Double(textBytes) / memoryParse / 1000), "write_mb_s": \(Double(writtenBytes) / memoryWrite / 1000)}
    """)
