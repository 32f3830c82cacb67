#!/usr/bin/env python3
"""Sim against live for experiments/composed/live.sh: per method and model, the requests,
the SLO attainment (met / requests: the server's verdict on the answered ones, an
unanswered one a miss), p50 and p99 latency, from the sim's JSON rows and the loadgens'
reports (live_<method>_<model>.json).

usage: live_table.py OUT_DIR METHOD...
Python 3 standard library only.
"""
import json
import os
import sys


def ms(v):
    """Whole milliseconds, one decimal below 10 (the digits model's are below 1)."""
    return "%.1f" % v if v < 10 else "%.0f" % v


def main():
    out, methods = sys.argv[1], sys.argv[2:]
    print("| method | model | queries sim | live | attainment sim | live | p50 ms sim | live "
          "| p99 ms sim | live | live unanswered |")
    print("|" + "|".join(" --- " for _ in range(11)) + "|")
    for method in methods:
        rows = json.load(open(os.path.join(out, "sim_%s.json" % method)))["rows"]
        for r in rows:
            model = r.get("model")
            if model in (None, "all"):
                continue
            path = os.path.join(out, "live_%s_%s.json" % (method, model))
            d = json.load(open(path))
            sent = d["scheduled"]
            met = (d["slo_attainment_server"] or 0) * d["ok"]
            lat = d["latency_ms"]
            print("| %s | %s | %d | %d | %.4f | %.4f | %s | %s | %s | %s | %d |" % (
                method, model, r["arrived"], sent, r["met"] / r["arrived"] if r["arrived"] else 0,
                met / sent if sent else 0, ms(r["p50_ms"]), ms(lat.get("p50", 0)),
                ms(r["p99_ms"]), ms(lat.get("p99", 0)), sent - d["ok"]))
    # Models sent real labelled inputs (loadgen --dataset): the accuracy of their answers.
    # By the sim's model names: a file-name prefix would also match another method's
    # files ("composed" in "composed_plan_only").
    for method in methods:
        rows = json.load(open(os.path.join(out, "sim_%s.json" % method)))["rows"]
        for model in [r.get("model") for r in rows if r.get("model") not in (None, "all")]:
            d = json.load(open(os.path.join(out, "live_%s_%s.json" % (method, model))))
            if d.get("labelled"):
                print("\n%s %s: accuracy measured from %d labelled answers: %.2f%%" % (
                    method, model, d["labelled"], d["accuracy_measured"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
