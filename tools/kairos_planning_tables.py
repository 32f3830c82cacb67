#!/usr/bin/env python3
"""Markdown tables of docs/kairos-planning.md from the JSON that
experiments/kairos/run_planning.sh writes (`sloserve plan kairos --json`).

    tools/kairos_planning_tables.py [RESULTS_DIR]   (default experiments/kairos/results)

Every number comes from those files; this script only arranges them.
"""
import json
import os
import statistics
import sys

MODELS = ["ncf", "rm2", "wnd", "mtwnd", "dien"]


def load(d, name):
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        try:
            return json.load(f)
        except json.JSONDecodeError:  # still being written
            return None


def policy(j, name):
    for p in j["policies"]:
        if p["policy"] == name:
            return p
    return None


def search(p, method):
    for s in p["searches"]:
        if s["method"] == method:
            return s
    return None


def fmt(x, digits=1):
    return "—" if x is None else f"{x:.{digits}f}"


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "experiments/kairos/results"
    rows8, rows10, rows11, rows13, rows15 = [], [], [], [], []
    for m in MODELS:
        ex = load(d, f"{m}_exhaustive.json")
        if ex is None:
            continue
        k = policy(ex, "kairos")
        n = ex["configurations"]
        opt = k["optimum"]
        homog = k["homogeneous"]
        kplus = search(k, "kairos+")
        top = load(d, f"{m}_top.json")
        # Fig. 8 / 9: Kairos' pick (no evaluation), Kairos+ (its best), the exhaustive
        # optimum, the budget-scaled homogeneous configuration, baselines on the
        # optimum's configuration and the Oracle bound of that configuration.
        base_on_opt = {}
        oracle_opt = None
        if top is not None:
            for r in top["top"]:
                if r["counts"] == opt["counts"]:
                    base_on_opt = r["allowable_qps"]
                    oracle_opt = r["oracle_qps"]
        rows8.append(
            f"| {m.upper()} ({fmt(ex['qos_ms'], 0)} ms) | {homog['hardware']}: {fmt(homog['allowable_qps'])}"
            f" ({fmt(homog['scaled_qps'])}) | {ex['pick']['hardware']} (rank {ex['pick']['rank']}) |"
            f" {fmt(k['pick_allowable_qps'])} | {fmt(k['pick_over_homogeneous'], 2)} |"
            f" {fmt(kplus['best_qps'][0])} | {opt['hardware']}: {fmt(opt['allowable_qps'])} |"
            f" {fmt(k['pick_allowable_qps'] / opt['allowable_qps'], 3)} |"
            f" {fmt(base_on_opt.get('ribbon'))} | {fmt(base_on_opt.get('drs'))} |"
            f" {fmt(base_on_opt.get('clkwrk'))} | {fmt(oracle_opt)} |"
            f" {fmt(k['pick_allowable_qps'] / oracle_opt, 2) if oracle_opt else '—'} |")
        # Fig. 10: Kairos+ search (upper-bound order, both prunings) driving each
        # dispatcher, evaluations until that dispatcher's own optimum.
        cells = []
        for pol in ["kairos", "ribbon", "drs", "clkwrk"]:
            j = ex if pol == "kairos" else load(d, f"{m}_exhaustive_{pol}.json")
            if j is None:
                cells.append("—")
                continue
            p = policy(j, pol)
            s = search(p, "kairos+")
            cells.append(f"{s['evaluations_to_reach'][0]} / {s['evaluations'][0]}"
                         f" ({fmt(100 * s['evaluations_to_reach'][0] / n, 1)}%)")
        rows10.append(f"| {m.upper()} | {n} | " + " | ".join(cells) + " |")
        # Fig. 11: search methods, median over seeds of evaluations to reach the optimum.
        cells = []
        for meth in ["kairos+", "random", "genetic", "annealing"]:
            s = search(k, meth)
            reached = [x for x in s["evaluations_to_reach"] if x > 0]
            med = statistics.median(reached) if reached else None
            never = len(s["evaluations_to_reach"]) - len(reached)
            cells.append(f"{fmt(med, 1)} ({fmt(100 * med / n, 1) if med else '—'}%)"
                         + (f", {never} never" if never else ""))
        rows11.append(f"| {m.upper()} | " + " | ".join(cells) + " |")
        # Fig. 13: where the optimum and the pick sit among the bounds.
        if top is not None:
            ranks = [r["counts"] for r in top["top"]]
            opt_rank = ranks.index(opt["counts"]) + 1 if opt["counts"] in ranks else ">20"
            sims = [r["allowable_qps"].get("kairos") for r in top["top"][:10]]
            ubs = [r["upper_bound_qps"] for r in top["top"][:10]]
            tight = statistics.mean(s / u for s, u in zip(sims, ubs) if s is not None)
            rows13.append(f"| {m.upper()} | {opt_rank} | {ex['pick']['rank']} |"
                          f" {fmt(ubs[0])} | {fmt(sims[0])} | {fmt(tight, 2)} |")
        # Figs. 15-16: pick over the budget-scaled homogeneous configuration.
        cells = [fmt(k["pick_over_homogeneous"], 2)]
        for variant in ["budget10", "qos120", "gaussian", "noise"]:
            j = load(d, f"{m}_{variant}.json")
            if j is None:
                cells.append("—")
                continue
            p = policy(j, "kairos")
            cells.append(f"{fmt(p['pick_over_homogeneous'], 2)} ({j['pick']['hardware']})")
        rows15.append(f"| {m.upper()} | " + " | ".join(cells) + " |")

    print("### Figs. 8-9: Kairos' pick, Kairos+, the exhaustive optimum and the baselines\n")
    print("| model (QoS) | homogeneous (scaled to budget) | Kairos pick (bound rank) | pick qps |"
          " pick / scaled homog. | Kairos+ qps | exhaustive optimum | pick / optimum |"
          " Ribbon on optimum | DRS on optimum | CLKWRK on optimum | Oracle of optimum |"
          " pick / Oracle |")
    print("|" + " --- |" * 13)
    print("\n".join(rows8))
    print("\n### Fig. 10: Kairos+ search per dispatcher (evaluations to reach / until the search"
          " ended, % of the space)\n")
    print("| model | configurations | Kairos | Ribbon | DRS | CLKWRK |")
    print("|" + " --- |" * 6)
    print("\n".join(rows10))
    print("\n### Fig. 11: evaluations to reach the optimum (median over seeds, % of the space)\n")
    print("| model | Kairos+ | random | genetic | annealing |")
    print("|" + " --- |" * 5)
    print("\n".join(rows11))
    print("\n### Fig. 13: the optimum among the upper bounds\n")
    print("| model | optimum's bound rank | pick's rank | top bound | its simulated qps |"
          " mean simulated / bound, top 10 |")
    print("|" + " --- |" * 6)
    print("\n".join(rows13))
    print("\n### Figs. 15-16: Kairos' pick over the budget-scaled homogeneous configuration\n")
    print("| model | default | budget 10 $/h | QoS +20% | Gaussian sizes | 5% latency noise |")
    print("|" + " --- |" * 6)
    print("\n".join(rows15))


if __name__ == "__main__":
    main()
