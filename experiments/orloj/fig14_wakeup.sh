#!/usr/bin/env bash
# Per-batch lateness of `sloserve serve`'s emulated executor, for docs/orloj.md
# "Figure 14": one app0 request at a time (2 ms apart, so no queueing and every batch
# has one request), `clockwork` on the Figure 8c profile scaled by each time scale. The
# response's compute_us is launch -> completion as the engine thread saw it; the
# profile says a lone app0 request takes c0 + c1 * l_r = (50 + 20/70 * 40) ms * scale
# on average, so compute_us minus that is the engine thread's timer wake-up lateness.
#   experiments/orloj/fig14_wakeup.sh [N=500]        (SLOSERVE, SCALES as fig14_time_scale.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$(realpath "${SLOSERVE:-$root/build/apps/sloserve/sloserve}")
n=${1:-500}
scales=${SCALES:-"0.1 0.01 0.001"}
tmp=$(mktemp -d)
srv=
cleanup() {
  [ -n "$srv" ] && kill "$srv" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
echo "2 ms apart, $n requests per scale; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for s in $scales; do
  python3 "$here/scale_profile.py" "$here/profiles/modes3.prof" "$s" "$tmp/p.prof"
  : >"$tmp/log"
  "$bin" serve "$here/fig14_serve.yaml" --port 0 --set "suite=$tmp/p.prof" \
    --set "slo_ms=$(python3 -c "print(594 * $s)")" --set policy.name=clockwork \
    --set policy.batching=clockwork >/dev/null 2>"$tmp/log" &
  srv=$!
  for _ in $(seq 200); do grep -q "listening on" "$tmp/log" && break; sleep 0.05; done
  port=$(grep -o 'http://127.0.0.1:[0-9]*' "$tmp/log" | head -1 | sed 's/.*://')
  python3 - "$port" "$n" "$s" <<'PY'
import http.client, json, statistics, sys, time
port, n, s = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
c = http.client.HTTPConnection("127.0.0.1", port)
body = json.dumps({"inputs": [{"name": "input", "shape": [1], "datatype": "FP32", "data": [0]}],
                   "parameters": {"app": "app0"}})
comp, rtt = [], []
for _ in range(n):
    t = time.perf_counter()
    c.request("POST", "/v2/models/generate/infer", body, {"Content-Type": "application/json"})
    r = json.loads(c.getresponse().read())
    rtt.append((time.perf_counter() - t) * 1e6)
    comp.append(r["parameters"]["compute_us"])
    time.sleep(0.002)
exp = (50 + 20 / 70 * 40) * 1000 * s
comp.sort(); rtt.sort()
q = lambda v, p: v[min(len(v) - 1, int(p * len(v)))]
print("scale %-6g profiled %6.0f us  compute_us mean %6.0f  lateness mean %4.0f p50 %4.0f p99 %4.0f us"
      "  client round trip p50 %5.0f p99 %5.0f us" % (s, exp, statistics.mean(comp),
      statistics.mean(comp) - exp, q(comp, .5) - exp, q(comp, .99) - exp, q(rtt, .5), q(rtt, .99)))
PY
  kill -INT "$srv"
  wait "$srv" || true
  srv=
done
