#!/usr/bin/env python3
"""Side-by-side benchmark: parse -> 21-byte patch -> write, ccbeacon against Python intelhex
and srec_cat, on real CC2541 images from ../shared/corpus and a synthetic dense 256 KiB image.

Benchmark-only code (Python is not part of the product). Run through scripts/bench, which builds
the release binaries (ccbeacon, ccbeacon-bench), creates the venv with intelhex and installs srecord.
"""
import importlib.metadata
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

from intelhex import IntelHex
import bench_results

ROOT = bench_results.ROOT
CORPUS = os.path.join(ROOT, "..", "shared", "corpus")
RUNS = int(os.environ.get("BENCH_RUNS", "21"))
CCBEACON = os.path.join(ROOT, ".build", "release", "ccbeacon")
CCBEACON_BENCH = os.path.join(ROOT, ".build", "release", "ccbeacon-bench")


def synthetic_dense_256k(path):
    """256 KiB of pseudo-random bytes, 16-byte aligned records, CRLF, 04 per page, 05 start."""
    rng = random.Random(2541)
    data = bytes(rng.randrange(256) for _ in range(256 * 1024))
    lines = []

    def record(rtype, address, payload):
        body = bytes([len(payload), address >> 8, address & 0xFF, rtype]) + payload
        return ":" + body.hex().upper() + "%02X" % ((-sum(body)) & 0xFF)

    for offset in range(0, len(data), 16):
        if offset % 0x10000 == 0:
            lines.append(record(4, 0, bytes([offset >> 24, (offset >> 16) & 0xFF])))
        lines.append(record(0, offset & 0xFFFF, data[offset:offset + 16]))
    lines.append(record(5, 0, bytes([0, 0, 1, 0x1D])))
    lines.append(":00000001FF")
    with open(path, "w", newline="") as handle:
        handle.write("\r\n".join(lines) + "\r\n")


def run_command(argv):
    """Wall time in ms and peak RSS in KiB of one process.

    The command runs under /usr/bin/time: a child forked from this Python process would report
    this process's resident set as its own peak, so the small `time` process forks it instead.
    """
    start = time.perf_counter()
    process = subprocess.run(["/usr/bin/time", "-f", "maxrss=%M"] + argv, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    stderr = process.stderr.decode()
    if process.returncode != 0:
        raise RuntimeError("%s failed: %s" % (argv[0], stderr))
    return elapsed, int(stderr.strip().rsplit("maxrss=", 1)[1])


def run_plain(argv):
    """Wall time in ms of one process started directly (no /usr/bin/time in between, whose own
    start would be added to every tool alike and shrink the ratios)."""
    start = time.perf_counter()
    process = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = (time.perf_counter() - start) * 1000
    if process.returncode != 0:
        again = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        raise RuntimeError("%s failed: %s" % (argv[0], again.stderr.decode()))
    return elapsed


def interleaved(commands):
    """Times in ms per command: one warm-up each, then RUNS rounds that run every command once in
    turn, so a slow moment of the shared machine falls on all tools alike."""
    for argv in commands.values():
        run_plain(argv)
    times = {name: [] for name in commands}
    for _ in range(RUNS):
        for name, argv in commands.items():
            times[name].append(run_plain(argv))
    return times


def changed_lines(before, after):
    """Lines removed plus lines added, ignoring order and line endings (as in hex-tools.md)."""
    a = [line.rstrip("\r") for line in open(before, newline="").read().split("\n") if line.strip()]
    b = [line.rstrip("\r") for line in open(after, newline="").read().split("\n") if line.strip()]
    removed = set(a) - set(b)
    added = set(b) - set(a)
    return len(removed) + len(added)


def intelhex_inprocess(path, address, payload, out):
    """Median ms of IntelHex load, puts, write_hex_file (after one warm-up run)."""
    phases = {"parse": [], "patch": [], "write": []}
    for run in range(RUNS + 1):
        t0 = time.perf_counter()
        image = IntelHex(path)
        t1 = time.perf_counter()
        image.puts(address, payload)
        t2 = time.perf_counter()
        image.write_hex_file(out)
        t3 = time.perf_counter()
        if run:
            phases["parse"].append((t1 - t0) * 1000)
            phases["patch"].append((t2 - t1) * 1000)
            phases["write"].append((t3 - t2) * 1000)
    result = {k + "_ms": statistics.median(v) for k, v in phases.items()}
    result["total_ms"] = result["parse_ms"] + result["patch_ms"] + result["write_ms"]
    return result


def pick_address(image, preferred):
    held = image.todict()
    for address in preferred:
        if all(a in held for a in range(address, address + 21)):
            return address
    raise SystemExit("no patch address with 21 data bytes among %s" % [hex(a) for a in preferred])


def bench_image(label, path, preferred, work):
    image = IntelHex(path)
    address = pick_address(image, preferred)
    original = bytes(image[a] for a in range(address, address + 21))
    payload = bytes(~b & 0xFF for b in original)  # every byte changes
    expected = IntelHex(path)
    expected.puts(address, payload)
    expected_dict = expected.todict()
    expected_dict.pop("start_addr", None)

    outputs = {name: os.path.join(work, "%s-%s.hex" % (label, name)) for name in ("ccbeacon", "srec_cat", "intelhex")}
    commands = {
        "ccbeacon": [CCBEACON, "patch", path, "--at", hex(address), "--bytes", payload.hex(), "-o", outputs["ccbeacon"]],
        "srec_cat": ["srec_cat", path, "-intel", "-exclude", hex(address), hex(address + 21),
                     "-generate", hex(address), hex(address + 21), "-repeat-data"]
                    + ["0x%02X" % b for b in payload] + ["-o", outputs["srec_cat"], "-intel", "-obs=16"],
        "intelhex": [sys.executable, "-c",
                     "import sys; from intelhex import IntelHex; ih = IntelHex(sys.argv[1]); "
                     "ih.puts(int(sys.argv[2], 16), bytes.fromhex(sys.argv[3])); ih.write_hex_file(sys.argv[4])",
                     path, hex(address), payload.hex(), outputs["intelhex"]],
    }
    command_results = {}
    command_times = interleaved(commands)
    for name, argv in commands.items():
        times = command_times[name]
        got = IntelHex(outputs[name]).todict()
        got.pop("start_addr", None)
        command_results[name] = {
            "median_ms": statistics.median(times), "min_ms": min(times),
            "maxrss_kb": max(run_command(argv)[1] for _ in range(3)), "correct": got == expected_dict,
            "changed_lines": changed_lines(path, outputs[name]),
        }

    # HEX read + write, whole process: `ccbeacon convert` against the same job in each peer.
    original = IntelHex(path).todict()
    original.pop("start_addr", None)
    convert_outputs = {name: os.path.join(work, "%s-convert-%s.hex" % (label, name))
                       for name in ("ccbeacon", "srec_cat", "intelhex")}
    convert_commands = {
        "ccbeacon": [CCBEACON, "convert", path, "-o", convert_outputs["ccbeacon"]],
        "srec_cat": ["srec_cat", path, "-intel", "-o", convert_outputs["srec_cat"], "-intel", "-obs=16"],
        "intelhex": [sys.executable, "-c",
                     "import sys; from intelhex import IntelHex; IntelHex(sys.argv[1]).write_hex_file(sys.argv[2])",
                     path, convert_outputs["intelhex"]],
    }
    convert_results = {}
    # ccbeacon's own start (no file touched) is timed in the same rounds: what is left of a
    # convert above it is the reading, writing and fsync.
    convert_times = interleaved({**convert_commands, "start": [CCBEACON, "--version"]})
    convert_start_ms = statistics.median(convert_times["start"])
    for name, argv in convert_commands.items():
        times = convert_times[name]
        got = IntelHex(convert_outputs[name]).todict()
        got.pop("start_addr", None)
        convert_results[name] = {"median_ms": statistics.median(times), "correct": got == original}

    inproc_ccbeacon = json.loads(subprocess.check_output(
        [CCBEACON_BENCH, path, hex(address), payload.hex(), str(RUNS), work]).decode())
    inproc_intelhex = intelhex_inprocess(path, address, payload, os.path.join(work, label + "-intelhex-inproc.hex"))
    return {
        "label": label, "file": os.path.basename(path), "size": os.path.getsize(path), "address": hex(address),
        "commands": command_results, "convert": convert_results, "start_ms": convert_start_ms,
        "inprocess": {"ccbeacon": inproc_ccbeacon, "intelhex": inproc_intelhex},
    }


def report(results):
    out = []
    out.append("parse -> 21-byte patch -> write; medians of %d runs (after a warm-up), times in ms\n" % RUNS)
    out.append("In process (ccbeacon release build vs Python intelhex %s):\n" % importlib.metadata.version("intelhex"))
    out.append("| image | tool | parse | patch | write | total | ratio |")
    out.append("|---|---|---|---|---|---|---|")
    for r in results:
        c, i = r["inprocess"]["ccbeacon"], r["inprocess"]["intelhex"]
        for name, m in (("ccbeacon", c), ("intelhex", i)):
            ratio = "1.0" if name == "ccbeacon" else "**%.1fx slower**" % (i["total_ms"] / c["total_ms"])
            out.append("| %s | %s | %.2f | %.3f | %.2f | %.2f | %s |" % (
                r["label"], name, m["parse_ms"], m["patch_ms"], m["write_ms"], m["total_ms"], ratio))
        out.append("| %s | ccbeacon full re-emit (HexWriter) | | | %.2f | | |" % (r["label"], c["rewrite_ms"]))
    out.append("\nWhole commands (fresh process each run, the tools in turn each round; peak RSS = max resident set"
               " of the process, from separate runs under /usr/bin/time):\n")
    out.append("| image | tool | median | min | vs ccbeacon | peak RSS (MiB) | output correct | lines changed |")
    out.append("|---|---|---|---|---|---|---|---|")
    for r in results:
        base = r["commands"]["ccbeacon"]["median_ms"]
        for name, m in r["commands"].items():
            out.append("| %s | %s | %.1f | %.1f | %s | %.1f | %s | %d |" % (
                r["label"], name, m["median_ms"], m["min_ms"],
                "1.0" if name == "ccbeacon" else "%.1fx slower" % (m["median_ms"] / base),
                m["maxrss_kb"] / 1024, "yes" if m["correct"] else "NO", m["changed_lines"]))
    out.append("\nHEX read + write (`ccbeacon convert IN.hex -o OUT.hex`, whole process, ccbeacon's write fsynced):\n")
    out.append("| image | ccbeacon | srec_cat | intelhex | ccbeacon in memory: parse, write | ccbeacon start alone |")
    out.append("|---|---|---|---|---|---|")
    for r in results:
        c = r["convert"]
        base = c["ccbeacon"]["median_ms"]
        m = r["inprocess"]["ccbeacon"]
        out.append("| %s | %.1f ms | %.1f ms (**%.1fx**) | %.1f ms (**%.1fx**) | %.0f MB/s, %.0f MB/s | %.1f ms |" % (
            r["label"], base, c["srec_cat"]["median_ms"], c["srec_cat"]["median_ms"] / base,
            c["intelhex"]["median_ms"], c["intelhex"]["median_ms"] / base, m["parse_mb_s"], m["write_mb_s"],
            r["start_ms"]))
    return "\n".join(out)


def main():
    if not os.path.isdir(CORPUS):
        raise SystemExit("../shared/corpus is not here; the benchmark needs its images")
    with tempfile.TemporaryDirectory(prefix="ccbeacon-bench-") as work:
        synthetic = os.path.join(work, "synthetic-dense-256k.hex")
        synthetic_dense_256k(synthetic)
        images = [
            # The largest CC2541 HEX in the corpus (441,593 bytes, 9,821 records); patch across 64 KiB.
            ("18-HostTestRelease", os.path.join(CORPUS, "18_TI-BLE140-CC2541_SmartRF_HostTestRelease_All.hex"),
             [0x1FFF6, 0xFFF6]),
            # The real iBeacon payload of the GhostYu image, spanning two records.
            ("01-ibeacon", os.path.join(CORPUS, "01_ghostyu-SimpleBLEPeripheral-ibeacon-CC2541-IAR.hex"), [0x333]),
            ("synthetic-256k", synthetic, [0x1FFF6]),
        ]
        results = [bench_image(label, path, preferred, work) for label, path, preferred in images]
    text = report(results)
    print(text)
    bench_results.save("hex", text, results)
    bad = [(r["label"], n) for r in results for n, m in list(r["commands"].items()) + list(r["convert"].items())
           if not m["correct"]]
    if bad:
        raise SystemExit("incorrect output: %s" % bad)


if __name__ == "__main__":
    main()
