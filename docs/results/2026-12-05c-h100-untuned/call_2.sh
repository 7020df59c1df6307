#!/usr/bin/env bash
# Call 2 on the H100 SXM (the box's Triton 3.6, carry .whl): the default protocol's cold and warm
# runs with the H200's tuned library served as the H100's (the same GH100 die and SM count; its
# memory is slower), so the gate dispatches from a library instead of autotuning each cell, which
# took ~8-10 s a cell in call 1 and was cut after 55 of 122 cells. Measures how the H200's configs
# fare against cuBLAS on the H100 and the A/A noise of the protocol on a second chip.
set -uo pipefail
mkdir -p /tmp/tuned-h100
python3 - <<'PY'
import json
d = json.load(open("targets/tuned/h200-triton3.6.0.json"))
d["target"] = "h100-sxm"
d.setdefault("meta", {})["borrowed_from"] = "h200"
json.dump(d, open("/tmp/tuned-h100/h100-sxm-triton3.6.0.json", "w"))
PY
# (box.sh, which call_5.sh sources, keeps a GEMMWATCH_TUNED_DIR already set)
GEMMWATCH_TUNED_DIR=/tmp/tuned-h100 exec bash docs/results/2026-12-03i-h200-arena/call_5.sh
