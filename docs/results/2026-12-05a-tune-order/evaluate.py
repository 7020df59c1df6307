"""The tune's candidate order against the target's, on the H200 library's own rankings (no GPU).

    python3 docs/results/2026-12-05a-tune-order/evaluate.py targets/tuned/h200-triton3.6.0.json

(under the library's Triton version: the space it offers depends on it).
"""

import json
import sys

from targets import candidate_configs, get
from targets.prior import evaluate

SPACE_DTYPE = {"fp8_e4m3-fastacc": "fp8_e4m3", "fp32-ieee": "fp32", "fp32-tf32": "fp32"}


def main(path: str) -> None:
    data = json.load(open(path))
    spec = get(data["target"])

    def space_of(cell):
        return candidate_configs(spec, SPACE_DTYPE.get(cell.dtype, cell.dtype), cell.M, cell.N, cell.K, limit=None)

    print(f"{path}: Triton {data['triton']}, {len(data['entries'])} entries")
    for by_shape, what in ((False, "its own ranking"), (True, "the rankings of every dtype of its shape")):
        result = evaluate(data["entries"], space_of, by_shape=by_shape)
        print(f"\neach cell with {what} left out: {result['cells']} cells")
        print("| first k | the target's order | the library's order |\n|---|---|---|")
        for k in result["space"]:
            print(f"| {k} | {result['space'][k]} | {result['library'][k]} |")


if __name__ == "__main__":
    main(sys.argv[1])
