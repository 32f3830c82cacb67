#!/usr/bin/env python3
"""Markdown tables for docs/model-aware.md from experiments/model-aware/run.sh's JSON
results, with the thesis' numbers (K. Liu, MIT 2025, chapter 6) beside ours.
    python3 tools/model_aware_tables.py experiments/model-aware/results
Python 3 standard library only."""
import json
import os
import sys

# The thesis' numbers, as its text states them (section, table).
THESIS_62 = {  # model: (default cold starts, colocation cold starts, default s, colocation s)
    "t5-small": (5, 1, 29.43, 16.64),
    "t5-base": (5, 1, None, None),
    "t5-large": (7, 1, None, None),
}
THESIS_63 = {"t5-small": 2100, "t5-base": 4200, "t5-large": 11900}  # 6.3, break-even requests
THESIS_64 = {  # Tables 6.1-6.3: colocation, with queue, registry (s)
    "sec641_colocation_win": ("6.4.1 / Table 6.1", 12.38, 18.80, 14.41),
    "sec642_queue_win": ("6.4.2 / Table 6.2", 11.18, 9.65, 15.19),
    "sec643_registry_win": ("6.4.3 / Table 6.3", 23.09, 25.27, 20.34),
}


def load(out, name):
    with open(os.path.join(out, name + ".json")) as f:
        return json.load(f)["rows"]


def fmt(x, digits=2):
    return "—" if x is None else ("%.*f" % (digits, x))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "experiments/model-aware/results"
    rows = load(out, "sec62_sequential")
    print("### Section 6.2: 10 sequential requests, 8 machines\n")
    print("| model | policy | cold starts (mean, min-max over %d seeds) | thesis cold starts |"
          " end-to-end s (mean) | thesis s |" % rows[0]["runs"])
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        t = THESIS_62[r["workload.model"]]
        default = r["policy"] == "random"
        print("| %s | %s | %.2f (%d-%d) | %s | %.2f | %s |" % (
            r["workload.model"], "default (random)" if default else r["policy"],
            r["cold_starts"], r["cold_starts_min"], r["cold_starts_max"],
            t[0] if default else t[1], r["makespan_s"], fmt(t[2] if default else t[3])))

    rows = load(out, "sec63_amortisation")
    print("\n### Section 6.3: amortisation point (mean latency gap < 0.01 s)\n")
    print("| model | requests | cold starts default / colocation | break-even (ours) | thesis |")
    print("| --- | --- | --- | --- | --- |")
    by = {}
    for r in rows:
        by.setdefault(r["workload.model"], {})[r["policy"]] = r
    for model, p in by.items():
        print("| %s | %d | %d / %d | %s | about %d |" % (
            model, p["random"]["requests"], p["random"]["cold_starts"],
            p["colocation"]["cold_starts"], p["random"].get("break_even_requests", "never"),
            THESIS_63[model]))

    print("\n### Section 6.4: each policy's winning workload (end-to-end s)\n")
    print("| workload | colocation | with queue | registry | adaptive | adaptive's choices"
          " (coloc/queue/registry) | winner (ours / thesis) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    names = {"colocation": "colocation", "colocation_queue": "with queue", "registry": "registry"}
    for name, (label, *thesis) in THESIS_64.items():
        p = {r["policy"]: r for r in load(out, name)}
        ours = [p[k]["makespan_s"] for k in ("colocation", "colocation_queue", "registry")]
        win_ours = names[min(("colocation", "colocation_queue", "registry"),
                             key=lambda k: p[k]["makespan_s"])]
        win_thesis = ["colocation", "with queue", "registry"][thesis.index(min(thesis))]
        a = p["adaptive"]
        print("| %s | %s | %s | %s | %.2f | %d/%d/%d | %s / %s |" % (
            label, *("%.2f (%.2f)" % (o, t) for o, t in zip(ours, thesis)), a["makespan_s"],
            a["chose_colocation"], a["chose_queue"], a["chose_registry"], win_ours, win_thesis))

    rows = load(out, "sec642_registry_spawn")
    print("\n### Section 6.4.2: the registry's spawning, warm machine or random (end-to-end s,"
          " mean over %d seeds)\n" % rows[0]["runs"])
    print("| registry_spawn | registry | adaptive | cold starts (registry) | thesis registry |")
    print("| --- | --- | --- | --- | --- |")
    spawn = {}
    for r in rows:
        spawn.setdefault(r["cluster.registry_spawn"], {})[r["policy"]] = r
    for how, p in spawn.items():
        print("| %s | %.2f | %.2f | %.2f | %.2f |" % (
            how, p["registry"]["makespan_s"], p["adaptive"]["makespan_s"],
            p["registry"]["cold_starts"], THESIS_64["sec642_queue_win"][3]))

    rows = load(out, "zipf_cache_sweep")
    print("\n### Multi-model Zipf workload: mean latency s (cold starts) per cache size\n")
    sizes = sorted({r["cluster.cache_mb"] for r in rows})
    policies = []
    for r in rows:
        if r["policy"] not in policies:
            policies.append(r["policy"])
    print("| policy | " + " | ".join("%d MB" % s for s in sizes) + " |")
    print("| --- |" + " --- |" * len(sizes))
    cell = {(r["policy"], r["cluster.cache_mb"]): r for r in rows}
    for pol in policies:
        print("| %s | " % pol + " | ".join(
            "%.2f (%.0f)" % (cell[(pol, s)]["mean_latency_s"], cell[(pol, s)]["cold_starts"])
            for s in sizes) + " |")
    fixed = ["random", "colocation", "colocation_queue", "registry", "multiplexed"]
    print("\n| cache | best fixed policy (mean s) | adaptive | prefetch |")
    print("| --- | --- | --- | --- |")
    for s in sizes:
        best = min((p for p in fixed if (p, s) in cell), key=lambda p: cell[(p, s)]["mean_latency_s"])
        print("| %d MB | %s (%.2f) | %.2f | %.2f |" % (
            s, best, cell[(best, s)]["mean_latency_s"], cell[("adaptive", s)]["mean_latency_s"],
            cell[("prefetch", s)]["mean_latency_s"]))


if __name__ == "__main__":
    main()
