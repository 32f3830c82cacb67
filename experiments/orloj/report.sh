#!/bin/sh
# Prints the ORLOJ reproduction tables (finish rate, mean over seeds 1-5) as markdown.
# Usage: experiments/orloj/report.sh [path/to/sloserve]   (from any directory)
SLOSERVE=$(realpath "${1:-build/apps/sloserve/sloserve}")
cd "$(dirname "$0")/../.." || exit 1
table() {  # $1 = config; columns = policies, rows = SLO
  echo "### $1"
  echo
  "$SLOSERVE" sim "experiments/orloj/$1.yaml" --json --no-progress --set 'seed=[1,2,3,4,5]' |
    python3 -c '
import json, sys, collections
rows = json.load(sys.stdin)["rows"]
acc = collections.defaultdict(list)
for r in rows: acc[(r["slo_ms"], r["policy"])].append(r["finish_rate"])
slos = sorted({k[0] for k in acc}); pols = ["clipper", "nexus", "clockwork", "orloj"]
print("| SLO (x P99) | slo_ms | Clipper | Nexus | Clockwork | ORLOJ |")
print("| --- | --- | --- | --- | --- | --- |")
for m, s in zip(["1.5", "2", "3", "4", "5"], slos):
    print("| %s | %g | " % (m, s) + " | ".join("%.2f" % (sum(acc[(s, p)]) / len(acc[(s, p)])) for p in pols) + " |")
'
  echo
}
for cfg in table2_std0.5 table2_std1 table2_std2 table2_std2-0.5 table2_std0.5-2 \
           fig8_modes1 fig8_modes2 fig8_modes3 fig8_modes4 fig9_short_heavy fig9_long_heavy \
           static_fig11 \
           table1_rdinet-cifar table1_skipnet-imagenet table1_blenderbot-convai \
           table1_blenderbot-cornell table1_gpt-convai table1_gpt-cornell table1_bart-cnn \
           table1_t5-cnn table1_fsmt-wmt table1_mbart-wmt; do
  table "$cfg"
done
echo "### fig13_b_sweep (ORLOJ; rows: b per ms; columns: SLO = 1.5, 2, 3, 4, 5 x P99)"
echo
"$SLOSERVE" sim experiments/orloj/fig13_b_sweep.yaml --json --no-progress --set 'seed=[1,2,3,4,5]' |
  python3 -c '
import json, sys, collections
rows = json.load(sys.stdin)["rows"]
acc = collections.defaultdict(list)
for r in rows: acc[(float(r["policy.b"]), r["slo_ms"])].append(r["finish_rate"])
bs = sorted({k[0] for k in acc}); slos = sorted({k[1] for k in acc})
print("| b | " + " | ".join("%g ms" % s for s in slos) + " |")
print("| --- " * (len(slos) + 1) + "|")
for b in bs: print("| %g | " % b + " | ".join("%.2f" % (sum(acc[(b, s)]) / len(acc[(b, s)])) for s in slos) + " |")
'
