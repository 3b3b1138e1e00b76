#!/usr/bin/env python3
"""ccbeacon against cc-tool on the same emulated CC Debugger (cc-debugger-emulator, real libusb
through umockdev): erase + program + verify of the same images, one per chip family, wall time
(median of N runs), USB transfers and bytes (from the emulator's transfer log) and the modelled
device time (one run with --timing hardware), side by side. Benchmark-only code."""
import os
import statistics
import subprocess
import sys
import tempfile
import time
import bench_results

ROOT = bench_results.ROOT
CORPUS = os.path.join(ROOT, "..", "shared", "corpus")
RELEASE = os.path.join(ROOT, ".build", "release")
EMULATOR = os.path.join(RELEASE, "cc-debugger-emulator")
CCBEACON = os.path.join(RELEASE, "ccbeacon")
RUNS = int(os.environ.get("BENCH_USB_RUNS", "5"))


def run(command, chip, log=None, timed=False):
    options = chip + (["--log", log] if log else []) + (["--timing", "hardware"] if timed else [])
    start = time.perf_counter()
    done = subprocess.run([EMULATOR] + options + ["--"] + command, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit("%s failed: %s" % (command[:2], done.stderr.decode()[-400:]))
    return elapsed


def traffic(log):
    transfers = bytes_out = bytes_in = 0
    for line in open(log):
        parts = line.split()
        if not parts or parts[0] not in ("CTRL", "BULK"):
            continue
        transfers += 1
        if parts[0] == "BULK" and parts[1] == "OUT":
            bytes_out += int(parts[5])
        elif parts[0] == "BULK" and parts[1] == "IN":
            bytes_in += int(parts[-1])
    return transfers, bytes_out, bytes_in


def main():
    work = tempfile.mkdtemp(prefix="ccbeacon-usb-bench-")
    station = os.path.join(work, "station.hex")
    subprocess.run([CCBEACON, "generate", "--template", "cc2541-ibeacon", "--uuid",
                    "7634A485-1732-4B7D-AB44-D505D8A24C60", "--major", "1", "--minor", "2", "-o", station],
                   check=True, stdout=subprocess.DEVNULL)
    images = [("CC2541: our station image", station, [], [])]
    # The XDATA path (CC2543/44/45): no image of these chips is public; 24 KiB of a fixed pattern.
    pattern = os.path.join(work, "cc2543-pattern.bin")
    with open(pattern, "wb") as out:
        out.write(bytes((i * 7 + (i >> 8)) & 0xFF for i in range(24 * 1024)))
    images.append(("CC2543F32: 24 KiB pattern (XDATA path)", pattern, [], ["--chip", "CC2543F32"]))
    # The older register map (CC251x/111x), which reports no size: ccbeacon is told it.
    images.append(("CC2510F32: 24 KiB pattern (older map)", pattern, ["--flash-size", "32"], ["--chip", "CC2510F32"]))
    # The CC243x (banked older map): cc-tool's write buffer at XDATA 0x0000 is flash there, so with
    # -v it waits for a DMA that never ends; it runs without -v, and its write does not land.
    images.append(("CC2430F128: 24 KiB pattern (banked older map; cc-tool without -v)", pattern,
                   ["--flash-size", "128"], ["--chip", "CC2430F128"]))
    if os.path.isdir(CORPUS):
        images.append(("CC2541: corpus 16 SimpleBLEPeripheral",
                       os.path.join(CORPUS, "16_TI-BLE140-CC2541_SmartRF_SimpleBLEPeripheral.hex"), [], []))
        images.append(("CC2541, full 256 KiB: corpus 05 HMSoft dump",
                       os.path.join(CORPUS, "05_HMSoft-HM10-CC2541-V540-full.bin"), ["--allow-last-page"], []))
        images.append(("CC2540F256: corpus 02 GhostYu iBeacon",
                       os.path.join(CORPUS, "02_ghostyu-SimpleBLEPeripheral-ibeacon-CC2540-IAR.hex"), [], ["--chip", "CC2540F256"]))
        images.append(("CC2530F256: corpus 39 Z-Stack ZNP",
                       os.path.join(CORPUS, "39_koenkk-ZStack-CC2530ZNP-Prod.hex"), ["--allow-last-page"],
                       ["--chip", "CC2530F256"]))
        images.append(("CC2531F256: corpus 40 Z-Stack router",
                       os.path.join(CORPUS, "40_koenkk-ZStack-router-cc2531-std.hex"), [], ["--chip", "CC2531F256"]))
    only = os.environ.get("BENCH_USB_ONLY")  # a label's start: run those images alone
    if only:
        images = [entry for entry in images if entry[0].startswith(only)]
    rows = []
    for label, image, extra, chip in images:
        verify = [] if "without -v" in label else ["-v"]
        tools = {
            "ccbeacon": [CCBEACON, "flash", image] + extra,
            "ccbeacon --usb-framing packed": [CCBEACON, "flash", image, "--usb-framing", "packed"] + extra,
            "cc-tool": ["cc-tool", "-e", "-w", image] + verify,
        }
        if not verify:  # like for like with a cc-tool that does not verify
            tools["ccbeacon --verify none"] = [CCBEACON, "flash", image, "--verify", "none"] + extra
        result = {}
        for name, command in tools.items():
            log = os.path.join(work, name + ".log")
            run(command, chip, log)  # warm-up, and the transfer log
            times = [run(command, chip) for _ in range(RUNS)]
            result[name] = (statistics.median(times),) + traffic(log) + (run(command, chip, timed=True),)
        rows.append((label, result))
    out = ["erase + program + verify on the emulated debugger through real libusb; median of %d runs; "
           "ccbeacon's default framing sends each burst alone in its transfer (proven), packed is the option\n" % RUNS,
           "| image | tool | seconds | transfers | bytes out | bytes in | device seconds | against cc-tool |",
           "|---|---|---|---|---|---|---|---|"]
    for label, result in rows:
        theirs = result["cc-tool"]
        for name, values in result.items():
            verdict = "-" if name == "cc-tool" else (
                "**%.1fx faster, %.2fx its transfers, %.1fx faster on device time**" % (
                    theirs[0] / values[0], values[1] / theirs[1], theirs[4] / values[4]))
            out.append("| %s | %s | %.3f | %d | %d | %d | %.2f | %s |" % (
                label, name, values[0], values[1], values[2], values[3], values[4], verdict))
    text = "\n".join(out)
    print(text)
    bench_results.save("usb", text)


if __name__ == "__main__":
    main()
