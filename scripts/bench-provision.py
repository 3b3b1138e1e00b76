#!/usr/bin/env python3
"""Provisioning throughput: stations per minute with 1, 2 and 4 emulated debuggers in bench mode
(cc-debugger-emulator --bench, real libusb through umockdev), and the ledger's cost per station.
Benchmark-only code."""
import json
import os
import subprocess
import tempfile
import time
import bench_results

ROOT = bench_results.ROOT
RELEASE = os.path.join(ROOT, ".build", "release")
STATIONS = int(os.environ.get("BENCH_PROVISION_STATIONS", "60"))


def main():
    rows = []
    for debuggers in (1, 2, 4):
        work = tempfile.mkdtemp(prefix="ccbeacon-provision-bench-")
        stations = os.path.join(work, "list.csv")
        with open(stations, "w") as handle:
            handle.write("name,uuid,major,minor\n")
            for index in range(STATIONS):
                handle.write("s%d,7634A485-1732-4B7D-AB44-D505D8A24C60,1,%d\n" % (index, index))
        start = time.perf_counter()
        done = subprocess.run([os.path.join(RELEASE, "cc-debugger-emulator"), "--devices", str(debuggers), "--bench",
                               "--chips", str(STATIONS + 4 * debuggers), "--",
                               os.path.join(RELEASE, "ccbeacon"), "provision", stations, "--template", "cc2541-ibeacon",
                               "--devices", "all", "--yes", "--wait", "0.3", "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=work)
        elapsed = time.perf_counter() - start - 0.3  # each worker's last wait for a chip that never comes
        summary = json.loads(done.stdout.decode())
        rows.append((debuggers, len(summary["verified"]), elapsed))
    ledger = json.loads(subprocess.check_output([os.path.join(RELEASE, "ccbeacon-bench"), "ledger", "1000"]).decode())
    base = rows[0][1] / rows[0][2]
    out = ["provisioning %d stations (erase, program, CRC verify, ledger) on emulated debuggers through real libusb\n" % STATIONS,
           "| debuggers | stations verified | seconds | stations per minute | scaling vs 1 |", "|---|---|---|---|---|"]
    for debuggers, verified, seconds in rows:
        rate = verified / seconds
        out.append("| %d | %d | %.2f | %.0f | %.2fx |" % (debuggers, verified, seconds, rate * 60, rate / base))
    out.append("\nledger (SQLite, WAL, synchronous=FULL): register 1,000 stations %.1f ms; claim + record verified "
               "%.2f ms per station" % (ledger["registerMs"], ledger["claimAndFinishMsPerStation"]))
    text = "\n".join(out)
    print(text)
    bench_results.save("provision", text)


if __name__ == "__main__":
    main()
