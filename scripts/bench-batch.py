#!/usr/bin/env python3
"""Batch benchmark: N station images from one template, ccbeacon `batch` (one process) against
the same job scripted with Python intelhex and with srec_cat (one process per station, as users
script it), against `cp` of the template per station, and against the floor: the template copied N
times in one process with ccbeacon's durability (each file fsynced, renamed, the folder fsynced).
Also checks that
ccbeacon's peak memory stays flat as N grows, and that every tool's outputs are correct.

Benchmark-only code (Python is not part of the product). Run through scripts/bench.
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from intelhex import IntelHex
import bench_results

ROOT = bench_results.ROOT
CORPUS = os.path.join(ROOT, "..", "shared", "corpus")
CCBEACON = os.path.join(ROOT, ".build", "release", "ccbeacon")
STATIONS = int(os.environ.get("BENCH_STATIONS", "1000"))
UUID = "7634A485-1732-4B7D-AB44-D505D8A24C60"


def timed(argv, **kwargs):
    """Wall seconds and peak RSS (KiB) of one command, measured through /usr/bin/time."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "maxrss=%M"] + argv, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, **kwargs)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError("%s failed: %s" % (argv[:3], done.stderr.decode()[-500:]))
    return elapsed, int(done.stderr.decode().strip().rsplit("maxrss=", 1)[1])


def payload(index):
    """The 21 identity bytes of station `index` (major 1..N / 65536, minor index)."""
    major, minor = 1 + index // 65536, index % 65536
    return bytes.fromhex(UUID.replace("-", "")) + bytes([major >> 8, major & 0xFF, minor >> 8, minor & 0xFF, 0xC5])


def bench_template(label, image, work):
    template_dir = os.path.join(work, "template-" + label)
    subprocess.run([CCBEACON, "template", "import", image, "--name", "bench-" + label, "-o", template_dir],
                   check=True, stdout=subprocess.DEVNULL)
    manifest = json.load(open(os.path.join(template_dir, "template.json")))
    field = manifest["fields"][0]
    identity_address = int(field["address"], 16) + (9 if field["kind"] == "ibeacon-advertising-data" else 6)
    template_hex = os.path.join(template_dir, "image.hex")
    size = os.path.getsize(template_hex)

    def station_list(count):
        path = os.path.join(work, "%s-%d.csv" % (label, count))
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["name", "uuid", "major", "minor", "power"])
            for index in range(count):
                writer.writerow(["station-%05d" % index, UUID, 1 + index // 65536, index % 65536, "0xC5"])
        return path

    results = {"label": label, "template": os.path.basename(image), "template_bytes": size}
    stations = station_list(STATIONS)

    # ccbeacon: one process for the whole list, default jobs (one per core) and --jobs 1.
    for jobs in (None, 1):
        out = os.path.join(work, "%s-ccbeacon-%s" % (label, jobs or "auto"))
        argv = [CCBEACON, "batch", stations, "--template", template_dir, "-o", out]
        if jobs:
            argv += ["--jobs", str(jobs)]
        seconds, rss = timed(argv)
        results["ccbeacon_jobs_%s" % (jobs or "auto")] = {"seconds": seconds, "maxrss_kb": rss}
    out_ccbeacon = os.path.join(work, "%s-ccbeacon-auto" % label)

    # Memory must stay flat in the number of stations: peak RSS at N/10 and N.
    small = station_list(max(1, STATIONS // 10))
    _, rss_small = timed([CCBEACON, "batch", small, "--template", template_dir, "-o",
                          os.path.join(work, label + "-small")])
    results["maxrss_small_kb"] = rss_small

    # Peers, one process per station.
    peers = {
        "intelhex": lambda i, out: [sys.executable, "-c",
                                    "import sys; from intelhex import IntelHex; ih = IntelHex(sys.argv[1]); "
                                    "ih.puts(int(sys.argv[2], 16), bytes.fromhex(sys.argv[3])); "
                                    "ih.write_hex_file(sys.argv[4])",
                                    template_hex, hex(identity_address), payload(i).hex(), out],
        "srec_cat": lambda i, out: ["srec_cat", template_hex, "-intel", "-exclude", hex(identity_address),
                                    hex(identity_address + 21), "-generate", hex(identity_address),
                                    hex(identity_address + 21), "-repeat-data"]
                                   + ["0x%02X" % b for b in payload(i)] + ["-o", out, "-intel", "-obs=16"],
        "cp": lambda i, out: ["cp", template_hex, out],
    }
    for name, command in peers.items():
        out_dir = os.path.join(work, "%s-%s" % (label, name))
        os.makedirs(out_dir)
        start = time.perf_counter()
        for index in range(STATIONS):
            subprocess.run(command(index, os.path.join(out_dir, "station-%05d.hex" % index)), check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        results[name] = {"seconds": time.perf_counter() - start}

    # The floor ccbeacon is held to: the same bytes copied N times in one process with the same
    # durability (each file written under a temporary name, fsynced, renamed, the folder fsynced).
    floor_dir = os.path.join(work, "%s-copy-fsync" % label)
    os.makedirs(floor_dir)
    template_bytes = open(template_hex, "rb").read()
    start = time.perf_counter()
    folder = os.open(floor_dir, os.O_RDONLY | os.O_DIRECTORY)
    for index in range(STATIONS):
        final = os.path.join(floor_dir, "station-%05d.hex" % index)
        temporary = os.path.join(floor_dir, ".station-%05d.hex.tmp" % index)
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(descriptor, template_bytes)
        os.fsync(descriptor)
        os.close(descriptor)
        os.rename(temporary, final)
        os.fsync(folder)
    os.close(folder)
    results["copy_fsync"] = {"seconds": time.perf_counter() - start}

    # Correctness: sampled stations of every tool carry their identity; ccbeacon's differ from the
    # template in at most 4 lines.
    template_lines = open(template_hex, newline="").read().split("\n")
    for name in ("ccbeacon-auto", "intelhex", "srec_cat"):
        for index in (0, STATIONS // 2, STATIONS - 1):
            path = os.path.join(work, "%s-%s" % (label, name), "station-%05d.hex" % index)
            image = IntelHex(path)
            got = bytes(image[a] for a in range(identity_address, identity_address + 21))
            if got != payload(index):
                raise SystemExit("%s station %d carries the wrong identity" % (name, index))
    lines = open(os.path.join(out_ccbeacon, "station-00000.hex"), newline="").read().split("\n")
    results["ccbeacon_changed_lines"] = sum(1 for a, b in zip(template_lines, lines) if a != b)
    return results


def report(all_results):
    out = ["batch: %d station images from one template; wall seconds for the whole job (one run)\n" % STATIONS]
    out.append("| template | tool | seconds | per station (ms) | ccbeacon is |")
    out.append("|---|---|---|---|---|")
    for r in all_results:
        base = r["ccbeacon_jobs_auto"]["seconds"]
        rows = [("ccbeacon batch (jobs = cores)", base), ("ccbeacon batch --jobs 1", r["ccbeacon_jobs_1"]["seconds"]),
                ("intelhex, a process per station", r["intelhex"]["seconds"]),
                ("srec_cat, a process per station", r["srec_cat"]["seconds"]),
                ("cp of the template, a process per station", r["cp"]["seconds"]),
                ("copy in one process, every file fsynced (the floor)", r["copy_fsync"]["seconds"])]
        for name, seconds in rows:
            if name.startswith("ccbeacon batch (jobs"):
                verdict = "-"
            elif name.startswith("cp"):
                verdict = "%.2fx of cp" % (base / seconds)
            elif name.startswith("copy"):
                verdict = "**%.2fx the floor**" % (base / seconds)
            elif name.startswith("ccbeacon"):
                verdict = "%.1fx faster with all cores" % (seconds / base)
            else:
                verdict = "**%.1fx faster**" % (seconds / base)
            out.append("| %s (%d B) | %s | %.2f | %.2f | %s |" % (
                r["label"], r["template_bytes"], name, seconds, seconds * 1000 / STATIONS, verdict))
        out.append("| %s | ccbeacon peak RSS: %d stations %.1f MiB, %d stations %.1f MiB | | | changed lines vs template: %d |" % (
            r["label"], max(1, STATIONS // 10), r["maxrss_small_kb"] / 1024, STATIONS,
            r["ccbeacon_jobs_auto"]["maxrss_kb"] / 1024, r["ccbeacon_changed_lines"]))
    return "\n".join(out)


def main():
    if not os.path.isdir(CORPUS):
        raise SystemExit("../shared/corpus is not here; the benchmark needs its images")
    images = [
        # The largest CC2541 template the corpus gives (HMSoft V709 full dump: 495,692-byte HEX).
        ("13-HMSoft-V709", os.path.join(CORPUS, "13_HMSoft-HM10-CC2541-V709-full.bin")),
        # The real IAR-built iBeacon image (297 KB HEX, payload across two records).
        ("01-GhostYu-IAR", os.path.join(CORPUS, "01_ghostyu-SimpleBLEPeripheral-ibeacon-CC2541-IAR.hex")),
    ]
    work = tempfile.mkdtemp(prefix="ccbeacon-batch-bench-")
    try:
        results = [bench_template(label, image, work) for label, image in images]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = report(results)
    print(text)
    bench_results.save("batch", text, results)


if __name__ == "__main__":
    main()
