#!/usr/bin/env python3
"""Prints the live InfAdapter run (experiments/infadapter/live.sh) beside the simulation
of the same window: one row each, then cores and arrivals over time (30 s buckets; the live
cores are sampled from /metrics every 5 s, the simulated ones are the series' 10 s means).

usage: tools/infadapter_live_table.py DIR   (DIR holds serve.json, loadgen.json,
live_cores.txt and sim.json as live.sh writes them)
"""
import json
import sys
from pathlib import Path


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def main():
    out = Path(sys.argv[1])
    serve = json.loads((out / "serve.json").read_text())
    loadgen = json.loads((out / "loadgen.json").read_text())
    sim = json.loads((out / "sim.json").read_text())
    row = sim["rows"][0]
    series = [s for s in sim["series"] if s.get("run", 0) == 0]
    live = [tuple(map(float, line.split())) for line in (out / "live_cores.txt").read_text().split("\n")
            if line.strip()]
    lat = loadgen.get("latency_ms", {})
    print("| run | queries | SLO violations % | p99 ms | accuracy % | core-s | mean cores | loads |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| live (server) | {serve['completed']} | {100 * serve['violation_rate']:.2f} | "
          f"{serve['p99_ms']:.1f} | {serve['accuracy']:.3f} | {serve['core_seconds']:.0f} | "
          f"{serve['core_seconds'] / max(serve['elapsed_s'], 1e-9):.1f} | {serve['cold_starts']} |")
    client_viol = 100 * (1 - loadgen.get("slo_attainment_client", 0))
    print(f"| live (loadgen) | {loadgen['sent']} ok {loadgen['ok']} | {client_viol:.2f} | "
          f"{lat.get('p99', 0):.1f} | – | – | – | – |")
    print(f"| sim | {row['completed']} | {100 * row['violation_rate']:.2f} | {row['p99_ms']:.1f} | "
          f"{row['accuracy']:.3f} | {row['core_seconds']:.0f} | "
          f"{row['core_seconds'] / max(row['elapsed_s'], 1e-9):.1f} | {row['cold_starts']} |")
    print()
    print("| t (s) | live mean cores | sim mean cores | sim arrivals/s | sim p99 ms |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    end = max([t for t, _ in live] + [s["t_s"] + 10 for s in series] + [0])
    for start in range(0, int(end), 30):
        lc = [c for t, c in live if start <= t < start + 30]
        ss = [s for s in series if start <= s["t_s"] < start + 30]
        arrivals = sum(s["arrived"] for s in ss) / 30
        p99 = max([s["p99_ms"] for s in ss] + [0])
        print(f"| {start} | {mean(lc):.1f} | {mean([s['cores'] for s in ss]):.1f} | "
              f"{arrivals:.0f} | {p99:.0f} |")


if __name__ == "__main__":
    main()
