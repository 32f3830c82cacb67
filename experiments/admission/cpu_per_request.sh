#!/usr/bin/env bash
# CPU per request of `sloserve serve` (default config, admission on) and of `sloserve
# loadgen` at one load (docs/admission.md "Early shedding"):
#   EARLY=on|off experiments/admission/cpu_per_request.sh [BIN] [QPS] [DURATION]
# Prints the load average, serve's shed counters from /metrics at the end, and one line:
# sent, 200s, 429s, CPU (user+sys) of each process in total and per sent request,
# loadgen's wall time (longer than DURATION when it could not keep up), the server's view.
set -euo pipefail
bin=${1:-build/apps/sloserve/sloserve}
qps=${2:-15200}
duration=${3:-6}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# $(date -u +%FT%TZ) early_shed=${EARLY:-on} loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f "%U %S" -o "$out/serve.time" "$bin" serve --port 0 \
  --set "server.early_shed=${EARLY:-on}" --json >"$out/serve.json" 2>"$out/serve.err" &
timer=$!
for _ in $(seq 100); do grep -q "listening on" "$out/serve.err" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on http:\/\/[^:]*:\([0-9]*\).*/\1/p' "$out/serve.err")
serve_pid=$(pgrep -P "$timer" -x sloserve)
/usr/bin/time -f "%U %S %e" -o "$out/load.time" "$bin" loadgen --port "$port" --qps "$qps" \
  --duration "$duration" --max-connections 4096 --timeout 20 --slo-ms 150 --json \
  >"$out/load.json" 2>/dev/null || true
python3 - "$port" <<'PY'
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics").read().decode()
print("#", " ".join(l for l in text.splitlines()
                    if l.startswith(("sloserve_queries_shed_total", "sloserve_queries_shed_early_total"))))
PY
kill -TERM "$serve_pid"
wait "$timer" || true
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
s = open(d + "/serve.time").read().split()
l = open(d + "/load.time").read().split()
scpu, lcpu = float(s[0]) + float(s[1]), float(l[0]) + float(l[1])
r = json.load(open(d + "/load.json"))
v = json.load(open(d + "/serve.json"))
n = max(r["sent"], 1)
print(f"sent {r['sent']} ok {r['ok']} 429 {r.get('errors_by_status', {}).get('429', 0)} | "
      f"serve cpu {scpu:.2f} s = {scpu / n * 1e6:.1f} us/req | loadgen cpu {lcpu:.2f} s = "
      f"{lcpu / n * 1e6:.1f} us/req, wall {l[2]} s | server: shed {v['shed']}, "
      f"admitted met {v['admitted_met_rate']:.3f}")
PY
