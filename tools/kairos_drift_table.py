#!/usr/bin/env python3
"""Markdown table of docs/kairos-planning.md's "Inside a running deployment" from
`sloserve sim experiments/kairos/drift_wnd.yaml --json --series` on standard input: per
policy, the violation rate before the sizes change, in the first 10 s after it and over
the rest, the whole run's cost, and the cores (instances' vCPUs) active at the end.

    sloserve sim experiments/kairos/drift_wnd.yaml --json --series | tools/kairos_drift_table.py [SWITCH_S]

SWITCH_S (default 60) is the `switch:` time of the config. Every number comes from the
simulator's output; this script only sums its 10 s intervals.
"""
import json
import sys


def violations(points):
    arrived = sum(p["met"] + p["late"] + p["dropped"] + p["shed"] for p in points)
    bad = sum(p["late"] + p["dropped"] + p["shed"] for p in points)
    return bad / arrived if arrived else 0.0


def main():
    switch = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    j = json.load(sys.stdin)
    print("| policy | violations before | first 10 s after | after that | $/h (mean) | cold starts | vCPUs at the end |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for run, row in enumerate(j["rows"]):
        series = sorted((p for p in j["series"] if p["run"] == run), key=lambda p: p["t_s"])
        before = [p for p in series if p["t_s"] < switch]
        first = [p for p in series if switch <= p["t_s"] < switch + 10]
        rest = [p for p in series if p["t_s"] >= switch + 10]
        print("| %s | %.4f | %.4f | %.4f | %.3f | %d | %.0f |" % (
            row["policy"], violations(before), violations(first), violations(rest),
            row["cost_per_hour"], row["cold_starts"], series[-1]["cores"]))


if __name__ == "__main__":
    main()
