#!/usr/bin/env python3
"""The table of docs/multi-model.md from `sloserve sim --json` rows of a multi-model
experiment: per placement (the run's total row, model "all") the SLO attainment (met /
arrived), cold starts, p50 and p99 latency, and the attainment of each model family (the
models named FAMILY#k, summed over their rows).

usage: tables.py RESULTS.json
"""
import collections
import json
import sys

rows = json.load(open(sys.argv[1]))["rows"]
totals = [r for r in rows if r.get("model") == "all"]
families = []
by_run = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0, 0]))
for r in rows:
    if r.get("model") in (None, "all"):
        continue
    family = r["model"].split("#")[0]
    if family not in families:
        families.append(family)
    acc = by_run[r["run"]][family]
    acc[0] += r["met"]
    acc[1] += r["arrived"]
    acc[2] += r["cold_starts"]

head = ["placement", "SLO attainment", "cold starts", "p50 ms", "p99 ms", "dropped"]
head += [f"{f} attainment" for f in families]
print("| " + " | ".join(head) + " |")
print("|" + "|".join(" --- " for _ in head) + "|")
for t in totals:
    cells = [t["policy"], "%.3f" % t["finish_rate"], "%d" % t["cold_starts"],
             "%.0f" % t["p50_ms"], "%.0f" % t["p99_ms"], "%d" % t["dropped"]]
    for f in families:
        met, arrived, _ = by_run[t["run"]][f]
        cells.append("%.3f" % (met / arrived) if arrived else "-")
    print("| " + " | ".join(cells) + " |")
if totals:
    t = totals[0]
    print()
    models = sum(1 for r in rows if r.get("run") == t["run"] and r.get("model") != "all")
    print("%d models, %d workers; %d queries per run (%.1f queries/s offered)." %
          (models, t["workers"], t["arrived"], t["load_qps"]))
