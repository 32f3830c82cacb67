#!/usr/bin/env python3
"""Slow-loris against `sloserve serve` (issue 16): does a normal client keep being served?

Starts serve (default config, ephemeral port), opens SLOW connections that each send an
unfinished request header and then one more header byte per second (with --reconnect, a
connection the server closes is opened again at once, as a persistent attacker would),
and meanwhile a normal client makes RATE requests per second, each on a new connection.
Prints one JSON object: the normal client's answers by status and its p50/p99 latency,
how many slow connections the server closed, and serve's RSS and open descriptors.

  experiments/limits/slowloris.py SLOSERVE [--slow 2000] [--seconds 30] [--rate 20]
      [--reconnect] [--set KEY=VALUE]...
"""
import argparse
import collections
import http.client
import json
import os
import resource
import selectors
import socket
import threading
import time

from serve_process import start_serve

HEAD = b"POST /v2/models/image/infer HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def open_slow(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(HEAD)
    s.setblocking(False)
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sloserve")
    ap.add_argument("--slow", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--rate", type=float, default=20)
    ap.add_argument("--reconnect", action="store_true")
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.slow + 1024)), hard))

    proc, port = start_serve(args.sloserve, args.set)

    body = json.dumps({"inputs": [{"name": "input", "shape": [1, 16], "datatype": "FP32",
                                   "data": [0.5] * 16}]})
    stop = threading.Event()
    answers = collections.Counter()
    latencies = []

    def normal_client():
        next_t = time.time()
        while not stop.is_set():
            t0 = time.time()
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                c.request("POST", "/v2/models/image/infer", body,
                          {"Content-Type": "application/json"})
                status = c.getresponse().status
                c.close()
            except Exception as e:  # noqa: BLE001 - counted, reported
                status = type(e).__name__
            answers[str(status)] += 1
            latencies.append(time.time() - t0)
            next_t += 1.0 / args.rate
            time.sleep(max(0.0, next_t - time.time()))

    sel = selectors.DefaultSelector()
    opened = closed = failed_opens = 0
    for _ in range(args.slow):
        try:
            sel.register(open_slow(port), selectors.EVENT_READ)
            opened += 1
        except OSError:
            failed_opens += 1
    client = threading.Thread(target=normal_client)
    client.start()
    t_end = time.time() + args.seconds
    next_trickle = time.time()
    peak_rss = rss_mib(proc.pid)
    peak_fds = 0
    while time.time() < t_end:
        for key, _ in sel.select(timeout=0.05):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:  # closed by the server (or an answer, then closed)
                sel.unregister(s)
                s.close()
                closed += 1
                if args.reconnect:
                    try:
                        sel.register(open_slow(port), selectors.EVENT_READ)
                        opened += 1
                    except OSError:
                        failed_opens += 1
        if time.time() >= next_trickle:
            next_trickle += 1.0
            for key in list(sel.get_map().values()):
                try:
                    key.fileobj.send(b"x")
                except OSError:
                    pass
            peak_rss = max(peak_rss, rss_mib(proc.pid))
            peak_fds = max(peak_fds, len(os.listdir(f"/proc/{proc.pid}/fd")))
    stop.set()
    client.join()
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    proc.terminate()
    proc.wait(timeout=30)
    lat = sorted(latencies)

    def q(p):
        return round(1000 * lat[min(len(lat) - 1, int(p * len(lat)))], 1) if lat else None

    print(json.dumps({
        "slow": args.slow, "reconnect": args.reconnect, "seconds": args.seconds,
        "slow_opened": opened, "slow_closed_by_server": closed,
        "slow_open_failures": failed_opens,
        "normal": {"sent": len(lat), "answers": dict(answers), "p50_ms": q(0.5),
                   "p99_ms": q(0.99)},
        "serve": {"peak_rss_mib": round(peak_rss, 1), "peak_fds": peak_fds}}))


if __name__ == "__main__":
    main()
