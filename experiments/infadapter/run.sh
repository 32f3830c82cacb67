#!/bin/bash
# Reproduces the InfAdapter comparison (EuroMLSys'23, section 5, Figs. 5-7) in the
# simulator: the bursty and non-bursty 20-minute Twitter windows and a beta sweep, each
# with InfAdapter, MS+ and VPA+ (ResNet18/50/152). Writes the JSON results (with the
# per-interval series), per-method tables and SVG plots over time of cores and p99 to
# $OUT; the tables in docs/infadapter.md come from tools/infadapter_tables.py on them.
#   experiments/infadapter/run.sh
# Env: SLOSERVE (binary, default build/apps/sloserve/sloserve), OUT (default
# experiments/infadapter/results).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${SLOSERVE:-build/apps/sloserve/sloserve}
OUT=${OUT:-experiments/infadapter/results}
mkdir -p "$OUT/plots"
for exp in bursty:bursty_window nonbursty:nonbursty_window; do
  name=${exp%%:*}
  echo "== $name" >&2
  "$BIN" sim "experiments/infadapter/${exp#*:}.yaml" --json --series --no-progress > "$OUT/$name.json"
done
echo "== beta" >&2  # rows only: the tables use no series of the sweep
"$BIN" sim experiments/infadapter/beta_sweep.yaml --json --no-progress > "$OUT/beta.json"
# Plots over time: `sloserve report` pivots a JSON's `rows`, so the series entries (one
# per run and 10 s interval, with t_s, cores and p99_ms) become the rows. The series carry
# no slo_ms, so the SLO line is given (--hline).
for name in bursty nonbursty; do
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
json.dump({"experiment": d["experiment"], "rows": d["series"]}, sys.stdout)' \
    "$OUT/$name.json" > "$OUT/${name}_series.json"
  "$BIN" report "$OUT/${name}_series.json" --x t_s --y cores --out "$OUT/plots/$name" \
    --ylabel "cores provisioned" --title "$name window" > /dev/null
  # p99 on a log axis with the 750 ms SLO: the runs whose backlog never drains (VPA+
  # ResNet50 and 152, up to minutes) and the others' tens of ms fit in one plot.
  "$BIN" report "$OUT/${name}_series.json" --x t_s --y p99_ms --logy --hline "750:SLO 750 ms" \
    --out "$OUT/plots/$name" --title "$name window" > /dev/null
  rm "$OUT/${name}_series.json"
done
python3 tools/infadapter_tables.py "$OUT"
