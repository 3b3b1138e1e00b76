#!/usr/bin/env python3
"""Formats `ccbeacon-bench transfers` results (JSON lines on stdin) against the reference client's
per-KiB figures from cc-debugger-protocol.md §8 (6 transfers per written KiB, 9 per CRC-verified
KiB). Benchmark-only code."""
import json
import os
import sys
import bench_results

rows = [json.loads(line) for line in sys.stdin if line.strip()]
out = ["USB transfers for program + CRC verify (in-process emulated debugger; reference = cc-tool's counts)\n",
       "| image | framing | data KiB | ccbeacon program | ccbeacon verify | reference program | reference verify | ccbeacon uses |",
       "|---|---|---|---|---|---|---|---|"]
for r in rows:
    ours = r["programTransfers"] + r["verifyTransfers"]
    reference = r["referenceProgramTransfers"] + r["referenceVerifyTransfers"]
    out.append("| %s | %s | %.0f | %d | %d | %d | %d | **%.1fx fewer** |" % (
        os.path.basename(r["image"])[:40], r.get("framing", "packed"), r["dataKiB"], r["programTransfers"], r["verifyTransfers"],
        r["referenceProgramTransfers"], r["referenceVerifyTransfers"], reference / ours))
text = "\n".join(out)
print(text)
bench_results.save("transfers", text)
