"""The library's order fed with every coarse ranking the library's git history holds (the newest of
each config's timings on a cell) instead of the current rankings alone, judged on the current
rankings as `evaluate.py` judges (no GPU; under Triton 3.6.0, from the repository root):

    python3 docs/results/2026-12-05a-tune-order/history.py
"""

import functools
import json
import subprocess

import targets.prior as P
from ci.tune import space_of
from targets import get

PATH = "targets/tuned/h200-triton3.6.0.json"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def main() -> None:
    merged: dict[str, dict[str, float]] = {}
    revisions = git("log", "--format=%h", "--", PATH).split()
    for rev in reversed(revisions):  # the oldest first: a later timing of a config replaces it
        entries = json.loads(git("show", f"{rev}:{PATH}")).get("entries", {})
        for cell, times in P.cell_timings(entries).items():
            merged.setdefault(cell, {}).update(times)
    current = json.load(open(PATH))
    spec = get(current["target"])

    space = functools.partial(space_of, spec)

    now = sum(map(len, P.cell_timings(current["entries"]).values()))
    print(f"{len(revisions)} versions: {sum(map(len, merged.values()))} timings over {len(merged)} cells "
          f"(the current rankings: {now})")  # fmt: skip
    own = P.predicted

    def from_history(timings, cell, *, leave_out=()):
        return own(merged, cell, leave_out=leave_out)

    for label, predict in (("current rankings", own), ("every ranking of the history", from_history)):
        P.predicted = predict
        row = [P.evaluate(current["entries"], space, by_shape=b)["library"] for b in (False, True)]
        print(f"{label}: first k -> cells: {row[0]}; the shape's other dtype left out too: {row[1]}")
    P.predicted = own


if __name__ == "__main__":
    main()
