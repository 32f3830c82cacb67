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
    table1()


TABLE1 = [  # (case, mean ms, P99 ms) from ORLOJ Table 1
    ("rdinet-cifar", 683.15, 2667.54), ("skipnet-imagenet", 3.24, 5.56),
    ("blenderbot-convai", 200.39, 242.27), ("blenderbot-cornell", 203.22, 247.04),
    ("gpt-convai", 79.47, 143.40), ("gpt-cornell", 94.84, 161.69),
    ("bart-cnn", 774.66, 1101.99), ("t5-cnn", 552.91, 797.28),
    ("fsmt-wmt", 189.30, 319.31), ("mbart-wmt", 432.38, 729.87)]


def lognormal_params(mean, p99):
    """sigma, mu of the lognormal with this mean and P99 (z_0.99 = 2.3263)."""
    z = 2.326348
    r = math.log(p99 / mean)  # = z sigma - sigma^2 / 2
    sigma = (2 * z - math.sqrt(4 * z * z - 8 * r)) / 2
    return sigma, math.log(mean) - sigma * sigma / 2


def table1():
    """One suite + config per Table 1 workload: execution time alone ~ lognormal with the
    table's mean and P99 (one app); lat(k) scaled from the bimodal suites
    (c0 = 50/70 mean, 20/70 mean per request); load 25 qps x 70 ms / mean (the same
    utilisation as the Table 2 runs), 3000 queries expected per run."""
    for case, mean, p99 in TABLE1:
        sigma, mu = lognormal_params(mean, p99)
        hi = math.exp(mu + 3.09 * sigma)  # 99.9th percentile
        width = hi / 200.0
        w = []
        for i in range(200):
            a, b = i * width, (i + 1) * width
            fa = 0 if a <= 0 else norm_cdf(math.log(a), mu, sigma)
            w.append(norm_cdf(math.log(b), mu, sigma) - fa)
        lines = ["sloserve-profile 1", "suite orloj-table1-" + case,
                 "provenance synthetic (experiments/orloj/make_profiles.py): ORLOJ Table 1 %s, "
                 "lognormal mean %g ms P99 %g ms (sigma %.4f); lat(k)=mean*(50+20k)/70" %
                 (case, mean, p99, sigma),
                 "task generate 1000000000 input FP32 -1", "hardware v100 2.48 8 16",
                 "variant dyn generate 0 1000 0"]
        for k in SIZES:
            lat = int(round(mean * (C0_MS + C1_MS * k) / 70.0 * 1000))
            lines.append("latency v100 dyn %d %d %d %d" % (k, lat, lat, lat))
        lines.append("exec_hist dyn %s 0 %d %s" % (case, max(1, int(round(width * 1000))),
                                                  " ".join(fmt(x) for x in w)))
        with open(os.path.join(HERE, "profiles", "table1-%s.prof" % case), "w") as f:
            f.write("\n".join(lines) + "\n")
        load = 25.0 * 70.0 / mean
        slos = [round(m * p99, 3) for m in (1.5, 2, 3, 4, 5)]
        with open(os.path.join(HERE, "table1_%s.yaml" % case), "w") as f:
            f.write("""# ORLOJ Table 1 / Table 5 workload %s: execution time ~ lognormal, mean %g ms,
# P99 %g ms (synthesised; generated by make_profiles.py). SLO = 1.5..5 x P99.
name: orloj-table1-%s
suite: profiles/table1-%s.prof
workers: 1
seed: 1
duration_s: %g
workload:
  arrival: gamma
  load_qps: %.6g
  cv: 3
executor:
  latency: p50
policies:
  - {name: clipper, batching: clipper}
  - {name: nexus, batching: nexus}
  - {name: clockwork, batching: clockwork}
  - {name: orloj, batching: orloj}
sweep:
  slo_ms: %s
""" % (case, mean, p99, case, case, round(3000 / load, 3), load, slos))


if __name__ == "__main__":
    main()
