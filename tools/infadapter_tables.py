#!/usr/bin/env python3
"""Markdown tables of docs/infadapter.md "Results (sim)" from the JSON that
experiments/infadapter/run.sh writes (`sloserve sim --json --series`).

    tools/infadapter_tables.py [RESULTS_DIR]   (default experiments/infadapter/results)

Every number comes from those files; this script only arranges them and computes the
paper's comparisons (reductions relative to VPA+) from them.
"""
import json
import os
import sys

TOP_ACCURACY = 78.312  # ResNet152, the most accurate variant: accuracy loss is against it
EXPERIMENTS = [("bursty.json", "Bursty window (Fig. 5), beta 0.05"),
               ("nonbursty.json", "Non-bursty window (Fig. 7), beta 0.05")]


def load(d, name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def with_window_cost(j):
    """Rows with `window_core_s`: the core-seconds over the trace window alone, summed from
    the series (`cores` per interval), so a run whose backlog drains long after the last
    arrival is not charged for that tail; `core_seconds` covers the whole run."""
    rows = j["rows"]
    width = {}
    for s in j.get("series", []):
        width.setdefault(s["run"], []).append(s["t_s"])
    for i, r in enumerate(rows):
        ts = sorted(width.get(i, []))
        step = ts[1] - ts[0] if len(ts) > 1 else r["elapsed_s"]
        r["window_core_s"] = sum(s["cores"] for s in j["series"] if s["run"] == i) * step
        r["window_s"] = step * len(ts)
    return rows


def method_table(rows):
    out = ["| method | accuracy % | accuracy loss (pp) | SLO violations % | p99 ms | "
           "core-s (window) | mean cores (window) | core-s (run) | run s | loads | loads/h |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        out.append("| %s | %.3f | %.3f | %.2f | %.1f | %.0f | %.1f | %.0f | %.0f | %d | %.0f |" % (
            r["policy"], r["accuracy"], TOP_ACCURACY - r["accuracy"],
            100 * r["violation_rate"], r["p99_ms"], r["window_core_s"],
            r["window_core_s"] / r["window_s"], r["core_seconds"], r["elapsed_s"],
            r["cold_starts"], 3600 * r["cold_starts"] / r["window_s"]))
    return "\n".join(out)


def change(ours, theirs):
    """InfAdapter's value relative to the baseline's, signed: "-65%" = 65% fewer/lower."""
    if theirs == 0:
        return "– (both 0)" if ours == 0 else "– (baseline 0)"
    return "%+.0f%%" % (100 * (ours / theirs - 1))


def claims_table(rows):
    """InfAdapter against each baseline, as the paper states its claims."""
    by = {r["policy"]: r for r in rows}
    ia = by["infadapter"]
    out = ["| baseline | InfAdapter's SLO violations vs it | InfAdapter's core-s (window) vs it | "
           "accuracy loss: it / InfAdapter (pp) |",
           "| --- | ---: | ---: | ---: |"]
    for name, r in by.items():
        if name == "infadapter":
            continue
        out.append("| %s | %s | %s | %.3f / %.3f |" % (
            name, change(ia["violation_rate"], r["violation_rate"]),
            change(ia["window_core_s"], r["window_core_s"]),
            TOP_ACCURACY - r["accuracy"], TOP_ACCURACY - ia["accuracy"]))
    return "\n".join(out)


def beta_table(rows):
    out = ["| beta | method | accuracy loss (pp) | SLO violations % | p99 ms | core-s (run) | "
           "mean cores (run) | loads |", "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in sorted(rows, key=lambda r: float(r["policy.beta"])):
        if r["policy"] not in ("infadapter", "ms_plus"):
            continue
        out.append("| %g | %s | %.3f | %.2f | %.1f | %.0f | %.1f | %d |" % (
            float(r["policy.beta"]), r["policy"], TOP_ACCURACY - r["accuracy"],
            100 * r["violation_rate"], r["p99_ms"], r["core_seconds"],
            r["core_seconds"] / r["elapsed_s"], r["cold_starts"]))
    return "\n".join(out)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "experiments/infadapter/results"
    for name, title in EXPERIMENTS:
        rows = with_window_cost(load(d, name))
        print("#### %s\n\n%s\n\nInfAdapter against the others:\n\n%s\n" %
              (title, method_table(rows), claims_table(rows)))
    rows = load(d, "beta.json")["rows"]
    print("#### Beta sweep on the bursty window (Fig. 6; VPA+ does not use beta)\n\n%s" %
          beta_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
