"""The tune's candidate order against the target's, on the H200 library's own rankings (no GPU).

    python3 docs/results/2026-12-05a-tune-order/evaluate.py targets/tuned/h200-triton3.6.0.json

(under the library's Triton version: the space it offers depends on it).
"""

import functools
import json
import sys

from ci.tune import space_of
from targets import get
from targets.prior import evaluate


def main(path: str) -> None:
    data = json.load(open(path))
    spec = get(data["target"])

    space = functools.partial(space_of, spec)

    print(f"{path}: Triton {data['triton']}, {len(data['entries'])} entries")
    for by_shape, what in ((False, "its own ranking"), (True, "the rankings of every dtype of its shape")):
        result = evaluate(data["entries"], space, by_shape=by_shape)
        print(f"\neach cell with {what} left out: {result['cells']} cells")
        print("| first k | the target's order | the library's order |\n|---|---|---|")
        for k in result["space"]:
            print(f"| {k} | {result['space'][k]} | {result['library'][k]} |")


if __name__ == "__main__":
    main(sys.argv[1])
