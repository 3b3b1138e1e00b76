#!/usr/bin/env python3
"""The ledger's hot paths as the pool grows (issue 25): the provisioning host's CPU time per station
burned, with a list of 200 and of 20,000 stations (half of each verified already), on SQLite and on
PostgreSQL (a fresh database of the server in CCBEACON_TEST_POSTGRES each run). Target: 20,000 costs
at most 1.25x what 200 costs. Medians of BENCH_POOL_RUNS runs (3) of BENCH_POOL_BURNED stations (120).
Benchmark-only code."""
import json
import os
import statistics
import subprocess
import uuid
import bench_results

ROOT = bench_results.ROOT
BENCH = os.path.join(ROOT, ".build", "release", "ccbeacon-bench")
RUNS = int(os.environ.get("BENCH_POOL_RUNS", "3"))
BURNED = int(os.environ.get("BENCH_POOL_BURNED", "120"))
SERVER = os.environ.get("CCBEACON_TEST_POSTGRES")


def fresh_database():
    name = "pool_" + uuid.uuid4().hex
    subprocess.run(["psql", SERVER, "-X", "-q", "-c", "CREATE DATABASE " + name], check=True)
    return SERVER.replace("/postgres?", "/%s?" % name)


def measure(ledger, size):
    results = []
    for _ in range(RUNS):
        arguments = [BENCH, "pool-scaling", str(size), str(BURNED)] + ([fresh_database()] if ledger == "postgresql" else [])
        results.append(json.loads(subprocess.check_output(arguments, cwd=ROOT).decode()))
    return {"cpuMsPerStation": statistics.median(r["cpuMsPerStation"] for r in results),
            "wallMsPerStation": statistics.median(r["wallMsPerStation"] for r in results),
            "verified": min(r["verified"] for r in results)}


def main():
    data = {}
    out = ["ledger hot paths as the pool grows: host CPU ms per station burned (median of %d runs of %d stations;"
           " half the list verified before)\n" % (RUNS, BURNED),
           "| ledger | list 200 | list 20,000 | ratio (target <= 1.25) | wall ms/station 200 / 20,000 |",
           "|---|---|---|---|---|"]
    for ledger in ["sqlite"] + (["postgresql"] if SERVER else []):
        small, large = measure(ledger, 200), measure(ledger, 20000)
        ratio = large["cpuMsPerStation"] / small["cpuMsPerStation"]
        data[ledger] = {"200": small, "20000": large, "ratio": ratio}
        out.append("| %s | %.2f | %.2f | %.2fx | %.0f / %.0f |" % (
            ledger, small["cpuMsPerStation"], large["cpuMsPerStation"], ratio, small["wallMsPerStation"],
            large["wallMsPerStation"]))
    text = "\n".join(out)
    print(text)
    bench_results.save("pool", text, data)


if __name__ == "__main__":
    main()
