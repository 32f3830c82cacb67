#!/usr/bin/env python3
"""Writes a copy of a sloserve profile (.prof) with every time multiplied by SCALE.

ORLOJ Figure 14 scales "the whole execution time distribution" down. `executor.time_scale`
scales only what the emulated executor runs; the policies (ORLOJ's score tables,
Clockwork's and Nexus's latency estimates) read the profile, so for them to see the
scaled model the profile itself is scaled: task default SLO, variant load time, latency
and load samples, exec_hist first bin start and bin width. Times stay integer
microseconds; a time that does not scale to an integer is rounded, and the script fails
if any rounding error exceeds 1 % (use a coarser scale then). capacity records (rates
measured at an unscaled SLO) are dropped.

usage: scale_profile.py IN.prof SCALE OUT.prof
"""
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, scale, dst = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    if not scale > 0:
        sys.exit("scale must be > 0")
    worst = [0.0]

    def s(tok):
        v = float(tok) * scale
        r = round(v)
        if v != 0:
            worst[0] = max(worst[0], abs(r - v) / abs(v))
        if r == 0 and float(tok) != 0:
            sys.exit("%s: %s us scales to 0" % (src, tok))
        return str(int(r))

    out = []
    with open(src) as f:
        for line in f:
            t = line.split()
            if not t or t[0].startswith("#"):
                out.append(line.rstrip("\n"))
                continue
            k = t[0]
            if k == "suite":
                t[1] = "%s-x%g" % (t[1], scale)
            elif k == "provenance":
                out.append(line.rstrip("\n") + " ; every time x%g (scale_profile.py)" % scale)
                continue
            elif k == "task":
                t[2] = s(t[2])
            elif k == "variant":
                t[5] = s(t[5])
            elif k in ("latency", "load"):
                t[4:] = [s(x) for x in t[4:]]
            elif k == "exec_hist":
                t[3], t[4] = s(t[3]), s(t[4])
            elif k == "capacity":
                continue
            out.append(" ".join(t))
    if worst[0] > 0.01:
        sys.exit("%s x%g: rounding to integer us changes a time by %.1f %%" %
                 (src, scale, 100 * worst[0]))
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
