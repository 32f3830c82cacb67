#!/usr/bin/env python3
"""Sim against live for experiments/multi-model/live.sh: per placement, the SLO attainment
(met / requests), the cold starts, and the mean and p99 latency of the most popular model
(rank 1 of the Zipf order, the first model row), from the sim's JSON rows and the
loadgens' reports (one per model, in the sim's model order).

usage: live_table.py OUT_DIR PLACEMENT...
"""
import json
import os
import sys

out, placements = sys.argv[1], sys.argv[2:]
print("| placement | attainment sim | attainment live | cold starts sim | cold starts live "
      "| top model mean ms sim | live | top model p99 ms sim | live | live unanswered |")
print("|" + "|".join(" --- " for _ in range(10)) + "|")
for p in placements:
    rows = json.load(open(os.path.join(out, f"sim_{p}.json")))["rows"]
    total = next(r for r in rows if r.get("model") == "all")
    models = [r for r in rows if r.get("model") not in (None, "all")]
    met = sent = lost = 0
    live = []
    for k in range(1, len(models) + 1):
        d = json.load(open(os.path.join(out, f"live_{p}_{k}.json")))
        live.append(d)
        sent += d["scheduled"]
        met += (d["slo_attainment_server"] or 0) * d["ok"]
        lost += d["scheduled"] - d["ok"]
    cold = open(os.path.join(out, f"live_{p}_cold_starts.txt")).read().strip()
    top_sim, top_live = models[0], live[0]["latency_ms"]
    print("| %s | %.3f | %.3f | %d | %s | %.0f | %.0f | %.0f | %.0f | %d |" % (
        p, total["finish_rate"], met / sent if sent else 0, total["cold_starts"], cold,
        top_sim["mean_ms"], top_live["mean"], top_sim["p99_ms"], top_live["p99"], lost))
print()
print("%d models; sim %d queries, live %d requests per placement." %
      (len(models), total["arrived"], sent))
