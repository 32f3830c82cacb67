#!/bin/bash
# Placements for many models on one memory-limited pool (docs/multi-model.md): 115 T5
# models with Zipf popularity under the bursty Twitter window, one run per placement
# (zipf_twitter.yaml). Writes the JSON rows (a total row per placement, model "all",
# then one row per model) to $OUT and prints the markdown table of docs/multi-model.md.
#   experiments/multi-model/run.sh
# Env: SLOSERVE (binary, default build/apps/sloserve/sloserve), OUT (default
# experiments/multi-model/results), JOBS (runs in parallel, default 2).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
OUT=${OUT:-experiments/multi-model/results}
mkdir -p "$OUT"
# One row per line (1,044 rows: a total and 115 models per placement).
"$BIN" sim experiments/multi-model/zipf_twitter.yaml --json --jobs "${JOBS:-2}" --no-progress |
  python3 -c 'import json, sys
d = json.load(sys.stdin)
print("{\"experiment\": %s, \"rows\": [" % json.dumps(d["experiment"]))
print(",\n".join(json.dumps(r, separators=(",", ":")) for r in d["rows"]))
print("]}")' > "$OUT/zipf_twitter.json"
python3 experiments/multi-model/tables.py "$OUT/zipf_twitter.json"
