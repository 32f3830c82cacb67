#!/usr/bin/env python3
"""RSS of `sloserve serve` before and after a burst of large request bodies (issue 16).

Starts serve (default config, ephemeral port), waits until ready, reads VmRSS, sends
BURST requests of about BODY_MB MiB each from CONCURRENCY client threads (JSON `data`
of many rows), waits SETTLE seconds, reads VmRSS again, then sends small requests and
reads it once more. Prints one JSON object (RSS in MiB, answers by status).

  experiments/limits/burst_rss.py SLOSERVE [--burst 32] [--body-mb 15] [--concurrency 4]
"""
import argparse
import collections
import http.client
import json
import threading
import time

from serve_process import start_serve


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def post(port, body, statuses, lock):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", "/v2/models/image/infer", body,
                     {"Content-Type": "application/json"})
        status = conn.getresponse().status
    except Exception as e:  # noqa: BLE001 - counted, reported
        status = type(e).__name__
    finally:
        conn.close()
    with lock:
        statuses[status] += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sloserve")
    ap.add_argument("--burst", type=int, default=32)
    ap.add_argument("--body-mb", type=float, default=15)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--settle", type=float, default=2.0)
    ap.add_argument("--set", action="append", default=[], help="serve --set KEY=VALUE")
    args = ap.parse_args()

    proc, port = start_serve(args.sloserve, args.set)

    small = json.dumps({"inputs": [{"name": "input", "shape": [1, 16], "datatype": "FP32",
                                    "data": [0.5] * 16}]})
    lock = threading.Lock()
    warm = collections.Counter()
    for _ in range(200):
        post(port, small, warm, lock)
    before = rss_mib(proc.pid)

    # One row is 16 values of "0.25," (5 bytes): rows for about body_mb MiB.
    rows = int(args.body_mb * (1 << 20) / (16 * 5))
    row = ",".join(["0.25"] * 16)
    big = ('{"inputs":[{"name":"input","shape":[%d,16],"datatype":"FP32","data":[' % rows +
           ",".join([row] * rows) + "]}]}")
    statuses = collections.Counter()
    peak = before
    pending = list(range(args.burst))
    threads = []
    t0 = time.time()
    while pending or threads:
        threads = [t for t in threads if t.is_alive()]
        while pending and len(threads) < args.concurrency:
            pending.pop()
            t = threading.Thread(target=post, args=(port, big, statuses, lock))
            t.start()
            threads.append(t)
        peak = max(peak, rss_mib(proc.pid))
        time.sleep(0.02)
    burst_s = time.time() - t0
    time.sleep(args.settle)
    after = rss_mib(proc.pid)
    later = collections.Counter()
    for _ in range(200):
        post(port, small, later, lock)
    after_small = rss_mib(proc.pid)
    proc.terminate()
    proc.wait(timeout=30)
    print(json.dumps({
        "body_mib": round(len(big) / (1 << 20), 1), "burst": args.burst,
        "concurrency": args.concurrency, "burst_s": round(burst_s, 1),
        "answers": {str(k): v for k, v in statuses.items()},
        "rss_mib": {"before": round(before, 1), "peak": round(peak, 1),
                    "after_burst": round(after, 1), "after_200_small": round(after_small, 1)},
        "retained_mib": round(after - before, 1)}))


if __name__ == "__main__":
    main()
