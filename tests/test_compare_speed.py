"""compare + render on a 10,000-cell result set, timed with pytest-benchmark (goal < 1 s).

The figure is recorded in docs/BENCHMARKS.md; this test asserts correctness only.
"""

import numpy as np
from asv_fixtures import write_results

from ci.asv_results import load
from ci.comment import GITHUB_LIMIT, render
from ci.decision import compare


def test_compare_and_render_10000_cells(benchmark, tmp_path):
    rng = np.random.default_rng(0)
    shapes = [
        f"{m}x{n}x4096" for m in range(1, 101) for n in (1024, 2048, 4096, 8192, 16384, 32768, 65536, 3584, 6144, 10240)
    ]
    dtypes = ["fp16", "bf16", "fp8_e4m3", "fp32-tf32", "fp32-ieee"]

    def cells(factor):
        ratio = np.exp(rng.normal(0, 0.003, (len(shapes), len(dtypes), 30))) * factor
        return {
            ("Matmul", s, d): {"ratio": list(ratio[i, j]), "triton": list(1e-4 * ratio[i, j])}
            for i, s in enumerate(shapes)
            for j, d in enumerate(dtypes)
        }

    base = load(write_results(tmp_path / "b.json", "a" * 40, cells(1.0)))
    head = load(write_results(tmp_path / "h.json", "b" * 40, cells(1.0)))
    assert len(shapes) * len(dtypes) == 5000

    def compare_and_render():  # two targets' worth: 10,000 cells
        comparisons = [compare(base, head), compare(base, head)]
        return comparisons, render(comparisons)

    comparisons, body = benchmark.pedantic(compare_and_render, rounds=3, iterations=1)
    assert sum(len(c.cells) for c in comparisons) == 10000
    assert len(body) <= GITHUB_LIMIT
