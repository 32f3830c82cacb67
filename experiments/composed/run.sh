#!/bin/bash
# The five methods composed on one multi-model, heterogeneous pool (issue 32;
# docs/composed.md): hour.yaml (five models from five suites, an hour of trace each,
# seven hardware types with prices), every method at three $/h budgets. Writes the JSON
# rows to $OUT/hour.json, the per-method points to $OUT/points.json, the accuracy-cost
# plot to $OUT/plots/ (points at SLO attainment >= 99%), and prints the markdown tables of
# docs/composed.md. About 3 minutes on 2 cores.
#   experiments/composed/run.sh
# Env: SLOSERVE (binary, default build/apps/sloserve/sloserve), OUT (default
# experiments/composed/results), JOBS (runs in parallel, default 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
OUT=${OUT:-experiments/composed/results}
mkdir -p "$OUT/plots"
"$BIN" sim experiments/composed/hour.yaml --json --jobs "${JOBS:-2}" --no-progress |
  python3 -c 'import json, sys
d = json.load(sys.stdin)
print("{\"experiment\": %s, \"rows\": [" % json.dumps(d["experiment"]))
print(",\n".join(json.dumps(r, separators=(",", ":")) for r in d["rows"]))
print("]}")' > "$OUT/hour.json"
python3 experiments/composed/tables.py "$OUT/hour.json" --derived "$OUT/points.json"
# Cores as a decision: InfAdapter's own setting planned by InfAdapter and by the composed
# planner over core-count hardware types (cores.yaml).
"$BIN" sim experiments/composed/cores.yaml --json --jobs "${JOBS:-2}" --no-progress \
  > "$OUT/cores.json"
printf '\n### Cores (cores.yaml)\n\n'
python3 experiments/composed/tables.py "$OUT/cores.json" --methods-only
"$BIN" report "$OUT/points.json" --x cost_per_hour --y accuracy --series policy \
  --where 'worst_attainment>=0.99' --xlabel 'mean cost ($/h)' \
  --ylabel 'accuracy of image and text (%)' \
  --title 'composed pool, SLO attainment >= 99%' --out "$OUT/plots" > /dev/null
