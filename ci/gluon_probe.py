"""Do the Gluon Hopper kernels (kernels/gluon_hopper.py) finish, compute the product, and how fast?

Evidence tool for the warp-specialized GEMM written in Gluon. Each config runs in a process of its
own under a timeout (Triton 3.6's automatically partitioned kernels hung on the H200, so a hang
must cost its timeout, not the session); in it, every cell of the config is compiled, run, checked
against the float64 reference (benchmarks/cells.py's tolerance) and timed with the suites' timing
protocol, interleaved with the project's kernel as dispatched today (`kernels.matmul` /
`scaled_matmul`: the tuned library) and the native library, on the cell's own operands:

    python3 -m ci.gluon_probe --timeout 150 --json OUT.json      # on a GPU
    python3 -m ci.gluon_probe --offline 90                       # without one: compile for sm_90

A row per (config, cell): finished / hung (the last stage reached) / failed / wrong, relative error,
microseconds of the three sides and the speedups over native.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import sys
from dataclasses import asdict, dataclass, field

from ci.ws_probe import cut_outcome, last_error, run_child


@dataclass(frozen=True)
class Probe:
    config: dict  # a targets.GemmConfig's fields (variant "gluon_ws")
    cells: tuple[str, ...] = field(default_factory=tuple)

    @property
    def gemm_config(self):
        from targets import GemmConfig

        return GemmConfig(**self.config)


def _gluon(bm: int, bn: int, bk: int, warps: int, stages: int) -> dict:
    return dict(block_m=bm, block_n=bn, block_k=bk, num_warps=warps, num_stages=stages, variant="gluon_ws")


_FP8 = ("fp8_e4m3 4096x4096x4096", "fp8_e4m3 8192x8192x8192", "fp8_e4m3 4096x3584x3584", "fp8_e4m3 2048x2048x2048",
        "fp8_e4m3 4096x14336x4096")  # fmt: skip
_FP16 = ("fp16 4096x4096x4096", "fp16 8192x8192x8192", "fp16 4096x3584x3584", "bf16 4096x14336x4096",
         "fp16 2048x2048x2048")  # fmt: skip

# fp8 with precise accumulation keeps three accumulators (kernels/gluon_hopper.py): 128 x 128 on 8
# warps at most; fp16/bf16 take one, 128 x 256 fits. Stages: what the shared memory holds beside
# the output tile (227 KiB per block).
PLAN = [
    Probe(_gluon(128, 128, 128, 8, 5), _FP8),
    Probe(_gluon(128, 256, 64, 8, 3), _FP16),
    Probe(_gluon(128, 128, 64, 8, 5), _FP16),
]


def _parse(cell_name: str):
    from benchmarks.cells import Cell

    dtype, shape = cell_name.split()
    M, N, K = (int(x) for x in shape.split("x"))
    return Cell(dtype, M, N, K)


def _stage(name: str) -> None:
    print(f"stage: {name}", flush=True)


def run_one(probe: Probe, rounds: int) -> None:
    """Every cell of one config on this GPU, a JSON row printed per cell (in a process of its own)."""
    import torch

    from benchmarks.cells import TOLERANCE, Prepared, relative_error
    from benchmarks.timing import measure, tflops

    for name in probe.cells:
        cell = _parse(name)
        prep = Prepared(cell, "cuda")
        out = torch.empty_like(prep.out)
        launch = functools.partial(prep.triton, config=probe.gemm_config, operands=(prep.a, prep.b, out, None))

        launch()
        _stage("launched")
        torch.cuda.synchronize()
        _stage("finished")
        error = relative_error(out, prep.reference())
        row = {"cell": name, "rel_error": error}
        if not error <= TOLERANCE[cell.dtype]:
            print("row: " + json.dumps({**row, "outcome": f"wrong (tolerance {TOLERANCE[cell.dtype]:g})"}), flush=True)
            continue
        timing = measure(launch, prep.triton, prep.native, rounds=rounds, warmup=2)
        us = [timing.median(i) * 1e6 for i in range(3)]
        row.update(
            outcome="finished", gluon_us=us[0], project_us=us[1], native_us=us[2],
            gluon_tflops=tflops(cell.M, cell.N, cell.K, us[0] * 1e-6),
            gluon_speedup=us[2] / us[0], project_speedup=us[2] / us[1],
        )  # fmt: skip
        print("row: " + json.dumps(row), flush=True)


def compile_offline(probe: Probe, capability: int) -> list[dict]:
    """Compile the config for each of its cells' dtypes for sm_`capability`, without a GPU."""
    from triton.runtime import driver

    from benchmarks.cells import Prepared
    from ci.resources import _offline_driver, _usage

    matmul = importlib.import_module("kernels.matmul")  # (the package exports the function of that name)
    driver.set_active(_offline_driver(capability))
    rows = []
    for name in dict.fromkeys(f"{c.split()[0]} 512x512x512" for c in probe.cells):
        prep = Prepared(_parse(name), "cpu", values=False)
        try:
            with matmul.compile_only(132) as compiled:
                prep.triton(config=probe.gemm_config)
        except Exception as err:  # noqa: BLE001 - the compiler's refusal is the finding
            rows.append({"cell": name, "outcome": "compile error", "error": str(err).strip().splitlines()[-1][:200]})
            continue
        rows.append({"cell": name, "outcome": "compiled", **_usage(compiled[-1])})
    return rows


def _row(probe: Probe, row: dict) -> str:
    cells = [str(probe.gemm_config), row.get("cell", "-"), row["outcome"]]
    if "gluon_us" in row:
        cells.append(
            f"err {row['rel_error']:.1e} | gluon {row['gluon_us']:.1f} us ({row['gluon_tflops']:.0f} TFLOP/s) "
            f"{row['gluon_speedup']:.3f}x | project {row['project_us']:.1f} us {row['project_speedup']:.3f}x "
            f"| native {row['native_us']:.1f} us"
        )
    elif "registers" in row:
        cells.append(f"{row['registers']} registers, {row['spill_bytes']} B spilled, "
                     f"{row['shared_bytes'] / 1024:.0f} KiB shared, {row['warps']} warps, "
                     f"{row['mma_per_wait']} MMAs per wait")  # fmt: skip
    if "error" in row:
        cells.append(str(row["error"]))
    return " | ".join(cells)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m ci.gluon_probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=150.0, help="seconds per config on the GPU (default 150)")
    parser.add_argument("--rounds", type=int, default=10, help="interleaved timing rounds per cell (default 10)")
    parser.add_argument("--offline", type=int, metavar="CAPABILITY", help="compile for this capability (e.g. 90)")
    parser.add_argument("--only", type=int, nargs="*", metavar="I", help="run only these entries of the plan")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a Probe as JSON: run it here (the child process)
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    if args.one:
        spec = json.loads(args.one)
        run_one(Probe(spec["config"], tuple(spec["cells"])), args.rounds)
        return 0
    if not args.timeout > 0:
        parser.error(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    if args.rounds < 1:
        parser.error(f"--rounds must be >= 1, got {args.rounds}")
    plan = PLAN if args.only is None else [PLAN[i] for i in args.only if 0 <= i < len(PLAN)]
    if args.offline is None:
        import torch

        if not torch.cuda.is_available():
            print("gluon_probe: no GPU here; --offline CAPABILITY compiles the plan for a chip", file=sys.stderr)
            return 2
    rows = []
    for probe in plan:
        if args.offline is not None:
            results = compile_offline(probe, args.offline)
        else:
            results = _run_child(probe, args)
        for result in results:
            rows.append({"config": probe.config, "name": str(probe.gemm_config), **result})
            print(_row(probe, result), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


def _run_child(probe: Probe, args) -> list[dict]:
    """One config's cells in a child process; a cut child's finished rows are kept."""
    cmd = [sys.executable, "-m", "ci.gluon_probe", "--rounds", str(args.rounds), "--one", json.dumps(asdict(probe))]
    stdout, stderr, status = run_child(cmd, args.timeout)
    rows = [json.loads(line[5:]) for line in stdout.splitlines() if line.startswith("row: ")]
    done = {r["cell"] for r in rows}
    missing = [c for c in probe.cells if c not in done]
    if missing and status is None:
        after_last = stdout.rsplit("row: ", 1)[-1]
        rows.append({"cell": missing[0], **cut_outcome(after_last, args.timeout)})
    elif missing:
        rows.append({"cell": missing[0], "outcome": "failed", "error": last_error(stderr, 300)})
    return rows


if __name__ == "__main__":
    sys.exit(main())
