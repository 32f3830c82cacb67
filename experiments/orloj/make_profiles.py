#!/usr/bin/env python3
"""Writes the synthetic ORLOJ profile suites under experiments/orloj/profiles/.

Deterministic (no randomness): each app's execution time alone is a normal
distribution N(mean, std) discretised into 1 ms bins (exec_hist records); the batch
latency table is lat(k) = C0_MS + C1_MS * k for average-length requests, so the
simulator's fitted model is l_B = c0 + c1 k max_r l_r with c0 = 50 ms and
c1 = 20 ms / pooled mean (docs/orloj.md).

Units of the paper's Table 2 cases: mode means 4u and 10u, std 0.5u/1u/2u, u = 10 ms.
Usage: python3 experiments/orloj/make_profiles.py
"""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
C0_MS, C1_MS = 50.0, 20.0
SIZES = [1, 2, 4, 8, 16]
U = 10.0  # ms per paper unit


def norm_cdf(x, m, s):
    return 0.5 * (1 + math.erf((x - m) / (s * math.sqrt(2))))


def hist(mean_ms, std_ms, width_ms=1.0):
    lo = max(0.0, math.floor((mean_ms - 5 * std_ms) / width_ms) * width_ms)
    hi = math.ceil((mean_ms + 5 * std_ms) / width_ms) * width_ms
    n = int(round((hi - lo) / width_ms))
    w = []
    for i in range(n):
        a, b = lo + i * width_ms, lo + (i + 1) * width_ms
        w.append(norm_cdf(b, mean_ms, std_ms) - norm_cdf(a, mean_ms, std_ms))
    return int(lo * 1000), int(width_ms * 1000), w


def fmt(x):
    s = "%.6g" % x
    return s


def write(name, modes, provenance, static_ms=None):
    lines = ["sloserve-profile 1", "suite orloj-" + name, "provenance " + provenance,
             "task generate 1000000 input FP32 -1", "hardware v100 2.48 8 16"]
    lines.append("variant dyn generate 0 1000 0")
    for k in SIZES:
        lat = (C0_MS + C1_MS * k) * 1000 if static_ms is None else static_ms[k] * 1000
        lines.append("latency v100 dyn %d %d %d %d" % (k, lat, lat, lat))
    for i, (m, s) in enumerate(modes):
        start, width, w = hist(m, s)
        lines.append("exec_hist dyn app%d %d %d %s" % (i, start, width,
                                                      " ".join(fmt(x) for x in w)))
    path = os.path.join(HERE, "profiles", name + ".prof")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    os.makedirs(os.path.join(HERE, "profiles"), exist_ok=True)
    prov = ("synthetic (experiments/orloj/make_profiles.py): ORLOJ appendix A Table 2 case %s; "
            "modes N(40ms,%s) and N(100ms,%s); lat(k)=50ms+20ms*k")
    for case, (s1, s2) in {"std0.5": (0.5, 0.5), "std1": (1, 1), "std2": (2, 2),
                           "std2-0.5": (2, 0.5), "std0.5-2": (0.5, 2)}.items():
        write("bimodal-" + case, [(4 * U, s1 * U), (10 * U, s2 * U)],
              prov % (case, "%gms" % (s1 * U), "%gms" % (s2 * U)))
    # Figure 8: 1..4 modes between 40 and 100 ms, std 1u.
    for n in range(1, 5):
        means = [4 * U] if n == 1 else [4 * U + i * (6 * U) / (n - 1) for i in range(n)]
        write("modes%d" % n, [(m, U) for m in means],
              "synthetic (experiments/orloj/make_profiles.py): ORLOJ Figure 8, %d modes "
              "N(m,10ms), m in %s ms; lat(k)=50ms+20ms*k" % (n, ",".join("%g" % m for m in means)))
    # Figure 11: a static model (no exec_hist): lat(k) = 50 ms + 20 ms k exactly.
    lines = ["sloserve-profile 1", "suite orloj-static",
             "provenance synthetic (experiments/orloj/make_profiles.py): ORLOJ Figure 11, a static "
             "model with constant latency lat(k)=50ms+20ms*k",
             "task generate 1000000 input FP32 -1", "hardware v100 2.48 8 16",
             "variant static generate 0 1000 0"]
    for k in SIZES:
        lat = int((C0_MS + C1_MS * k) * 1000)
        lines.append("latency v100 static %d %d %d %d" % (k, lat, lat, lat))
    with open(os.path.join(HERE, "profiles", "static.prof"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
