"""`gemmwatch resources`: registers, spills and shared memory of the tuned kernels, without a GPU.

For each entry of a tuned-config library, the kernel(s) its config launches are
compiled for the target chip (Triton's own compiler and ptxas, as a launch on
that chip would: same specialization of dtypes, strides, alignment and sizes),
and the compiled binary's resource use is read back (cuobjdump). Registers per
thread, spilled bytes and shared memory bound how many programs an SM holds at
once: the first thing to look at for a cell below the native library.

The library must be for the Triton version installed (the compiler decides the
resources): run it in an environment with that Triton (ci/make_triton_env.sh).
NVIDIA targets only. A config the launcher refuses on its cell, or that fails to compile, is a row
with its reason, the others still compiled; the exit status is then 1 (bad input: 2).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


class ResourcesError(ValueError):
    """Bad input (unknown target, missing library, unknown cell); the message says which."""


def _offline_driver(capability: int):
    """A stand-in for Triton's CUDA driver that only names the target: compiling needs nothing else."""
    import torch
    from triton.backends.compiler import GPUTarget

    class Offline:
        def __init__(self):
            self.target = GPUTarget("cuda", capability, 32)

        def get_current_target(self):
            return self.target

        def get_current_device(self):
            return 0

        def get_current_stream(self, device=None):
            return 0

        def get_active_torch_device(self):
            return torch.device("cpu")

    return Offline()


def _usage(compiled) -> dict:
    """Registers per thread, spilled bytes (stack + local) and shared memory of one compiled kernel."""
    import triton

    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(compiled.asm["cubin"])
        text = subprocess.run([str(tool), "-res-usage", str(path)], capture_output=True, text=True, check=True).stdout
        sass = subprocess.run([str(tool), "-sass", str(path)], capture_output=True, text=True, check=True).stdout
    fields = dict(re.findall(r"([A-Z]+(?:\[\d+\])?):(\d+)", text))
    return {
        "kernel": compiled.metadata.name,
        "registers": int(fields.get("REG", 0)),
        "spill_bytes": int(fields.get("STACK", 0)) + int(fields.get("LOCAL", 0)),
        "shared_bytes": int(compiled.metadata.shared) + int(fields.get("SHARED", 0)),
        "warps": int(compiled.metadata.num_warps),
        "mma_per_wait": mma_per_wait(sass),
        # the thread counts of the partial barriers (a named barrier over some of the CTA's warps)
        "barrier_threads": sorted(
            {int(n, 16) for n in re.findall(r"BAR\.SYNC\.DEFER_BLOCKING 0x[0-9a-f]+, (0x[0-9a-f]+)", sass)}
        ),
    }


def mma_per_wait(sass: str) -> float | None:
    """Warpgroup MMAs issued per wait for all of them, over the kernel's code (None: no wgmma).

    The tensor cores idle while a warpgroup waits for its last MMA and works on the result; a
    K step's MMAs issued back to back and waited for once (4 for a 128-deep fp16 step) keep them
    busy, one wait per MMA (what ptxas makes of Triton's fp8 promotion in some tiles, C7514)
    serialises them.
    """
    ops = re.findall(r"\b[HQI]GMMA\.|WARPGROUP\.DEPBAR\.LE gsb0, 0x0\b", sass)
    chains = "".join("G" if op.endswith(".") else "|" for op in ops).split("|")
    lengths = [len(chain) for chain in chains if chain]
    return sum(lengths) / len(lengths) if lengths else None


def resources(spec, library: dict, cells: list[str] | None = None) -> list[dict]:
    """One row per library entry and per cell that runs its own config (`Library.shape_configs`),
    or per cell of `cells`: config, speedup and each kernel's resources."""
    import importlib

    from triton.runtime import driver

    from benchmarks.cells import Prepared
    from benchmarks.matrix import MatrixError, parse_cell
    from kernels import autotune
    from targets import GemmConfig
    from targets.library import Library

    matmul = importlib.import_module("kernels.matmul")
    entries = []  # (cell, config, speedup): each bucket's config, and the cells that run their own
    shapes = Library(library.get("target", ""), library.get("triton", ""), entries=library["entries"])
    for key, entry in library["entries"].items():
        entries.append((entry.get("cell"), GemmConfig(**entry["config"]), entry.get("speedup_over_native")))
        entries += [(name, config, speedup) for name, (config, speedup) in shapes.own_configs(key).items()]
    entries = [e for e in entries if cells is None or e[0] in cells]
    missing = set(cells or ()) - {e[0] for e in entries}
    if missing:
        raise ResourcesError(f"no library entry for cell(s) {', '.join(sorted(missing))}")
    capability = int(spec.arch.removeprefix("sm_").rstrip("a"))
    rows = []
    saved = driver._active  # reset_active() would look for a GPU driver, which may not exist here
    driver.set_active(_offline_driver(capability))
    try:
        for name, config, speedup in sorted(entries, key=lambda e: (e[0] or "", str(e[1]))):
            try:
                _, cell = parse_cell(name)
            except MatrixError as err:
                raise ResourcesError(str(err)) from None
            # The benchmarks' own operands (dtypes, layouts, sizes), uninitialised: only compiled.
            prep = Prepared(cell, "cpu", values=False)
            row = {"cell": cell.name, "config": str(config), "speedup": speedup, "kernels": [], "error": None}
            with matmul.compile_only(spec.sm_count) as compiled:
                try:
                    prep.triton(config=config)
                except Exception as exc:  # noqa: BLE001 - refused or failed to compile: a row with its reason
                    row["error"] = autotune.failure_reason(exc)
            if row["error"] is None:
                row["kernels"] = [_usage(k) for k in compiled]
            rows.append(row)
    finally:
        driver._active = saved
    return rows


def programs_per_sm(spec, usage: dict) -> int:
    """Programs one SM can hold at once, by registers and by shared memory (whichever binds)."""
    threads = usage["warps"] * spec.warp_size
    by_registers = spec.registers_per_sm // max(1, usage["registers"] * threads)
    # The per-SM pool is the opt-in per-block maximum plus the 1 KiB the driver reserves per block.
    by_shared = (spec.smem_per_block_bytes + 1024) // (usage["shared_bytes"] + 1024)
    return min(by_registers, by_shared)


def render(spec, rows: list[dict]) -> str:
    lines = [
        "| cell | config | speedup | kernel | registers/thread | spilled bytes | shared KiB | programs/SM "
        "| wgmma per wait |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        speed = f"{row['speedup']:.3f}x" if row["speedup"] else "n/a"
        if row.get("error"):
            reason = row["error"].replace("|", "/").replace("\n", " ")
            lines.append(f"| {row['cell']} | `{row['config']}` | {speed} | **not compiled**: {reason} | | | | | |")
        for k in row["kernels"]:
            spill = f"**{k['spill_bytes']}**" if k["spill_bytes"] else "0"
            lines.append(
                f"| {row['cell']} | `{row['config']}` | {speed} | {k['kernel']} | {k['registers']} | {spill} "
                f"| {k['shared_bytes'] / 1024:.1f} | {programs_per_sm(spec, k)} "
                f"| {'-' if k['mma_per_wait'] is None else format(k['mma_per_wait'], '.1f')} |"
            )
    return "\n".join(lines) + "\n"


def main(args) -> int:
    import json

    if os.environ.get("TRITON_INTERPRET") == "1":
        print("gemmwatch resources: compiles for a GPU; unset TRITON_INTERPRET", file=sys.stderr)
        return 2
    import triton

    from targets import CATALOGUE, library

    spec = CATALOGUE.get(args.target)
    if spec is None or spec.vendor != "nvidia" or spec.is_interpreter:
        known = ", ".join(sorted(n for n, s in CATALOGUE.items() if s.vendor == "nvidia"))
        print(
            f"gemmwatch resources: target {args.target!r} is not an NVIDIA catalogue entry ({known})", file=sys.stderr
        )
        return 2
    path = Path(args.library) if args.library else library.library_path(spec.name, triton.__version__)
    if not path.exists():
        print(
            f"gemmwatch resources: no tuned-config library {path} (the library must be for the installed "
            f"Triton {triton.__version__}: resources depend on the compiler)",
            file=sys.stderr,
        )
        return 2
    try:
        data = json.loads(path.read_text())
        if data.get("triton") != triton.__version__:
            raise ResourcesError(
                f"{path} was tuned with Triton {data.get('triton')}, this is Triton {triton.__version__}: "
                "run in an environment with that version (ci/make_triton_env.sh)"
            )
        rows = resources(spec, data, args.cells)
    except (ResourcesError, json.JSONDecodeError) as err:
        print(f"gemmwatch resources: {err}", file=sys.stderr)
        return 2
    sys.stdout.write(render(spec, rows))
    failed = [f"{r['cell']}: {r['config']}" for r in rows if r.get("error")]
    if failed:
        print(f"gemmwatch resources: {len(failed)} config(s) not compiled: {'; '.join(failed)}", file=sys.stderr)
        return 1
    return 0
