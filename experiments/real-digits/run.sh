#!/usr/bin/env bash
# Issue 11 item 6: sim (on the measured profile) against serve (real LibTorch execution)
# with the same config, load and SLO: RAMSIS on the committed digits family, one 1-core
# worker, Poisson 300 qps for 20 s, SLO 50 ms. Prints both results and serve's latency
# phases; docs/torch.md has runs.
#   experiments/real-digits/run.sh [SLOSERVE_BINARY] [PORT]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/apps/sloserve/sloserve}
port=${2:-18411}
config=experiments/real-digits/ramsis_poisson.yaml
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$bin" sim "$config" --json >"$out/sim.json"
"$bin" serve "$config" --model-repository models --port "$port" --duration 45 --json \
  >"$out/serve.json" 2>"$out/serve.err" &
serve_pid=$!
# Until it listens (loadgen then waits for ready itself).
for _ in $(seq 100); do
  grep -q "listening on" "$out/serve.err" 2>/dev/null && break
  sleep 0.1
done
"$bin" loadgen --port "$port" --model digits --dataset models/digits/heldout.json \
  --qps 300 --duration 20 --seed 1 --json >"$out/loadgen.json" 2>"$out/loadgen.err"
kill -TERM "$serve_pid" 2>/dev/null || true
wait "$serve_pid" || true
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
sim = json.load(open(f"{out}/sim.json"))
sim = sim["rows"][0]
serve = json.load(open(f"{out}/serve.json"))
lg = json.load(open(f"{out}/loadgen.json"))
print(f"{'':28}{'sim':>10}{'serve':>10}")
print(f"{'accuracy (profile) %':28}{sim['accuracy']:10.2f}{serve['accuracy']:10.2f}")
print(f"{'accuracy (responses) %':28}{'-':>10}{lg['accuracy_measured']:10.2f}")
print(f"{'SLO violation %':28}{100*sim['violation_rate']:10.2f}{100*serve['violation_rate']:10.2f}")
print(f"{'p50 / p99 ms (engine)':28}{sim['p50_ms']:5.1f}/{sim['p99_ms']:<5.1f}{serve['p50_ms']:5.1f}/{serve['p99_ms']:.1f}")
print(f"{'mean batch':28}{sim['mean_batch_size']:10.2f}{serve['mean_batch_size']:10.2f}")
# serve's latency in phases (docs/metrics.md): in sim the queue is the same kind of wait,
# exec the profile's draw and the handoff 0.
for name in ("queue", "exec", "handoff"):
    p = serve.get("phases", {}).get(name)
    if p:
        print(f"{'  serve ' + name + ' p50 / p99 ms':28}{'':10}{p['p50_ms']:5.2f}/{p['p99_ms']:.2f}")
PY
