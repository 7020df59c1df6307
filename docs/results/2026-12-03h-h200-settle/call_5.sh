#!/usr/bin/env bash
# Call 5: the two split-K cells, 5 repetitions in one process each, with one graph per side (the
# protocol), 8 and 16 (GEMMWATCH_CAPTURES). The '+' in the last two files' names kept them from
# coming back; their rows are in reps-probe.txt, as the call printed them.
set -uo pipefail
out=${OUT:-/tmp/out}
source docs/results/2026-12-03g-h200-flush/box.sh >/dev/null
for m in suite suite+cg8 suite+cg16; do
  timeout 50 python3 -m ci.state_probe --out "$out/reps-$m.json" --reps 5 --rounds 30 --phases fixed --cold-l2 $m \
    --cells "bf16 128x3584x18944" "fp16 1x3584x18944" > "$out/reps-$m.txt" 2>>"$out/reps.err"
  echo "$m rc $?: $(grep -h '^   ' "$out/reps-$m.txt" | tr -s ' ' | tr '\n' ' ')"
done
