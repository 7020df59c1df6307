"""Measuring a list of cells: correctness first, then the interleaved timing protocol.

One function serves `gemmwatch bench` and the asv suites (which call it once
per operation class from `setup_cache` and read every metric from its result),
so every figure gemmwatch reports comes from the same code path.
"""

from __future__ import annotations

import functools
import json
import math
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field

from benchmarks.cells import TOLERANCE, Cell, Prepared, relative_error

DEFAULT_ROUNDS = 30
ENV_ROUNDS = "GEMMWATCH_ROUNDS"
ENV_PROGRESS = "GEMMWATCH_PROGRESS_FILE"
# Evidence knob for the detection power of the protocol, never set in normal
# runs: "CELL=FRACTION;..." (e.g. "fp16 4096x4096x4096=0.03") makes the Triton
# side of that cell about FRACTION slower on the GPU, by a calibrated spin kernel
# (torch.cuda._sleep) after each call, inside the timed graph.
ENV_INJECT = "GEMMWATCH_INJECT_SLOWDOWN"
ENV_NATIVE_KERNELS = "GEMMWATCH_NATIVE_KERNELS"
# Evidence knob: "reverse" measures a suite's cells in the opposite order ("forward", the default,
# the matrix's). A cell whose A/A offset follows its position in the run, not the cell, shows it.
ENV_CELL_ORDER = "GEMMWATCH_CELL_ORDER"


def cell_order() -> str:
    """GEMMWATCH_CELL_ORDER, checked: "forward" or "reverse"."""
    raw = os.environ.get(ENV_CELL_ORDER, "forward")
    if raw not in ("forward", "reverse"):
        raise ValueError(f"{ENV_CELL_ORDER} must be 'forward' or 'reverse', got {raw!r}")
    return raw


def kernel_launches(fn) -> list[dict]:
    """The GPU kernels one call of `fn` launches, in order, each with its launch geometry where the
    profiler gives it: {"name", "grid", "block", "registers", "shared_memory"}. The same kernel name
    can be launched over another grid (a split-K library kernel's split count is not in its name)."""
    import tempfile

    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()  # library handles and workspaces exist before the profiled call
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    names = [e.name for e in sorted(events, key=lambda e: e.time_range.start)]
    try:  # the chrome trace carries the geometry in every torch version that has the profiler
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "trace.json")
            prof.export_chrome_trace(path)
            with open(path) as f:
                launches = launches_from_trace(json.load(f))
    except Exception:  # noqa: BLE001 - a diagnostic: without the trace the names are still recorded
        launches = []
    if [launch["name"] for launch in launches] != names:
        return [{"name": name} for name in names]  # the trace does not match the events: names only
    return launches


def launches_from_trace(trace: dict) -> list[dict]:
    """The kernel events of a chrome trace (torch.profiler's export) in start order, as
    `kernel_launches` records them."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else []
    kernels = sorted(
        (e for e in events if isinstance(e, dict) and e.get("cat") == "kernel"), key=lambda e: e.get("ts", 0)
    )
    out = []
    for event in kernels:
        args = event.get("args") or {}
        launch = {"name": event.get("name", "")}
        for key, name in (("grid", "grid"), ("block", "block"), ("registers per thread", "registers"),
                          ("shared memory", "shared_memory")):  # fmt: skip
            if key in args:
                launch[name] = args[key]
        out.append(launch)
    return out


def injected_slowdowns() -> dict[str, float]:
    raw = os.environ.get(ENV_INJECT, "").strip()
    out = {}
    for item in filter(None, (part.strip() for part in raw.split(";"))):
        cell, _, fraction = item.rpartition("=")
        try:
            out[cell.strip()] = float(fraction)
        except ValueError:
            raise ValueError(f"{ENV_INJECT}: expected 'CELL=FRACTION;...', got {item!r}") from None
    return out


def slowed(side, fraction: float):
    """(`side` with each call followed by a GPU spin, the slowdown that spin adds).

    `side` is a callable or its copies. The spin is a kernel of its own, so it
    costs a fixed part (the gap between two kernels in the graph, about a
    microsecond) besides its cycles: the two are calibrated with the timing
    protocol itself (graph replays of the side followed by two spin lengths), and
    the cycles set so that the side is about `fraction` slower. Where the fixed
    part alone is more than that (kernels of a few microseconds), the spin is the
    shortest one and the slowdown returned is what it adds, larger than asked.
    """
    import torch

    from benchmarks.timing import measure

    fns = side if isinstance(side, list) else [side]

    def spin_after(fn, cycles):
        fn()
        torch.cuda._sleep(cycles)

    probes = (1_000, 40_000)
    timing = measure(fns[0], *(functools.partial(spin_after, fns[0], c) for c in probes), rounds=5, warmup=1)
    base, short, long = (timing.median(i) for i in range(3))
    per_cycle = max((long - short) / (probes[1] - probes[0]), 1e-15)
    fixed = max(short - base - per_cycle * probes[0], 0.0)  # the spin kernel's cost at zero cycles
    cycles = max(1, round((fraction * base - fixed) / per_cycle))
    expected = (fixed + per_cycle * cycles) / base
    wrapped = [functools.partial(spin_after, fn, cycles) for fn in fns]
    return (type(side)(wrapped) if isinstance(side, list) else wrapped[0]), expected


# How every call is made to read cold from HBM: "flush" (default): an L2 flush captured before
# each call and its time subtracted; "rotate": rotating operand copies, nothing subtracted. On the
# H200 neither had less cross-process noise than the other (docs/BENCHMARKS.md); flush is the
# method of every recorded result, so it stays the default.
ENV_COLD_L2 = "GEMMWATCH_COLD_L2"


def cold_l2_method() -> str:
    raw = os.environ.get(ENV_COLD_L2, "flush")
    if raw not in ("rotate", "flush"):
        raise ValueError(f"{ENV_COLD_L2} must be 'rotate' or 'flush', got {raw!r}")
    return raw


# Idle time after each timing round of a long kernel, as a multiple of the round's duration
# (timing.measure's `cooldown`). Default 1: on the H200 it kept power-capped cells at full
# clock and cut their cross-process noise 10-50x (docs/BENCHMARKS.md); 0 runs every round
# back to back.
ENV_COOLDOWN = "GEMMWATCH_COOLDOWN"
DEFAULT_COOLDOWN = "1"


def _env_number(name: str, default: str, high: float, what: str) -> float:
    """A number knob in 0..high, checked (`what` says what it is, for the message)."""
    raw = os.environ.get(name, default)
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= high:  # (NaN fails too)
        raise ValueError(f"{name} must be {what}, got {raw!r}")
    return value


def cooldown() -> float:
    return _env_number(ENV_COOLDOWN, DEFAULT_COOLDOWN, 100, "a number in 0..100 (idle time per round time)")


# Evidence knob: how the L2 flush evicts (timing.measure's `flush_kind`). "write" (the default, the
# protocol of every recorded result) zeroes twice the L2 and leaves it full of dirty lines, whose
# write-back the next kernel pays: on the H200 decode cells ran 10-15% faster on both sides, and not
# by the same amount, after a "read" flush (which sums twice the L2), but 2-3x noisier
# (docs/BENCHMARKS.md). "read" measures the matrix under a clean cold L2; its method is recorded.
ENV_FLUSH = "GEMMWATCH_FLUSH"


def flush_kind() -> str:
    """GEMMWATCH_FLUSH, checked: "write" (default) or "read"."""
    from benchmarks.timing import FLUSH_KINDS

    raw = os.environ.get(ENV_FLUSH, "write")
    if raw not in FLUSH_KINDS:
        raise ValueError(f"{ENV_FLUSH} must be one of {', '.join(map(repr, FLUSH_KINDS))}, got {raw!r}")
    return raw


def protocol_id() -> str:
    """The timing protocol's version (timing.PROTOCOL) with the measurement knobs that change what it
    measures when they are not the defaults (cold-L2 method, flush, streams, cooldown): recorded with
    every result as `timing_protocol`, so results measured otherwise are not compared with each
    other (ci.decision.CONTEXT_KEYS). An injected slowdown is not among them: its run is meant to
    be compared with clean ones."""
    from benchmarks.timing import PROTOCOL

    knobs = []
    if cold_l2_method() != "flush":
        knobs.append(f"cold-l2={cold_l2_method()}")
    if flush_kind() != "write":
        knobs.append(f"flush={flush_kind()}")
    if timing_streams() != 1:
        knobs.append(f"streams={timing_streams()}")
    if cooldown() != float(DEFAULT_COOLDOWN):
        knobs.append(f"cooldown={cooldown():g}")
    if not placement_threads():
        knobs.append("placement-threads=0")
    if placement_workspaces() is not None:
        knobs.append(f"workspaces={placement_workspaces()}")
    if not early_workspaces():
        knobs.append("early-workspaces=0")
    if flush_buffer_count() != int(DEFAULT_FLUSH_BUFFERS):
        knobs.append(f"flush-buffers={flush_buffer_count()}")
    if graph_captures() != int(DEFAULT_CAPTURES):
        knobs.append(f"captures={graph_captures()}")
    if settle_seconds():
        knobs.append(f"settle={settle_seconds():g}")
    if cool_start_seconds():
        knobs.append(f"cool-start={cool_start_seconds():g}")
    if not operand_arena():
        knobs.append("arena=0")
    return "+".join([PROTOCOL, *knobs])


# The CUDA streams each replay's calls take in turn (timing.measure's `streams`): > 1 spreads the
# per-stream and per-call scratch of a process over that many places. Default 1, the protocol of
# every recorded result; an experiment, measured on the H200 as no remedy (docs/BENCHMARKS.md).
ENV_STREAMS = "GEMMWATCH_STREAMS"


def _env_int(name: str, default: str | None, low: int, high: int) -> int | None:
    """An integer knob, checked against low..high; None when unset without a default."""
    raw = os.environ.get(name, default)
    if raw is None:
        return None
    if not (raw.isdigit() and low <= int(raw) <= high):
        raise ValueError(f"{name} must be an integer in {low}..{high}, got {raw!r}")
    return int(raw)


def _env_switch(name: str, default: str) -> bool:
    """A "0" / "1" knob, checked."""
    raw = os.environ.get(name, default)
    if raw not in ("0", "1"):
        raise ValueError(f"{name} must be '0' or '1', got {raw!r}")
    return raw == "1"


def timing_streams() -> int:
    from benchmarks.timing import MAX_STREAMS

    return _env_int(ENV_STREAMS, "1", 1, MAX_STREAMS)


# Evidence knob: "0" issues a placed cell's calls from the measuring thread on a pooled stream, one
# cuBLAS workspace for all its placements (timing.measure's `threads`; the protocol before
# 2026-12-02); "1", the default, from a host thread per placement, each with its own workspace.
ENV_PLACEMENT_THREADS = "GEMMWATCH_PLACEMENT_THREADS"


def placement_threads() -> bool:
    return _env_switch(ENV_PLACEMENT_THREADS, "1")


# Evidence knob: the cuBLAS workspaces (issuer threads, timing.measure's `workspaces`) a placed
# cell's calls take in turn. Unset: one per operand copy (the protocol of every recorded result).
# On the H200 the split-K cuBLAS decode cells' native time followed where the process had put the
# issuers' workspaces (6% between a short run and an injected one whose allocation history
# differed, 1-2% between whole-matrix runs at K = 18944; docs/BENCHMARKS.md): more workspaces
# spread a replay's calls over more of those places, as the copies do for the operands. Measured
# on the H200 (32, 2026-12-02 third session): the split-K cells' native spread widened, so unset.
ENV_WORKSPACES = "GEMMWATCH_WORKSPACES"


def placement_workspaces() -> int | None:
    """GEMMWATCH_WORKSPACES, checked; None when unset (one per copy)."""
    from benchmarks.timing import MAX_WORKSPACES

    return _env_int(ENV_WORKSPACES, None, 1, MAX_WORKSPACES)


# "1", the default since protocol 2026-12-02b: the issuers and their cuBLAS workspaces are created
# when a measuring process starts (`prepare_process`), before any cell, so that where they lie does
# not depend on the cells measured before the first placed one (a narrowed or injected run, another
# commit's kernels). On the H200 an injected run had put fp16 16x4096x4096's native (split-K) time
# 6.5% above the clean runs' without it, 0.3% with it (docs/BENCHMARKS.md, 2026-12-02, third
# session). "0": at the first placed cell, as protocol 2026-12-02 (an evidence knob, recorded).
ENV_EARLY_WORKSPACES = "GEMMWATCH_EARLY_WORKSPACES"


def early_workspaces() -> bool:
    return _env_switch(ENV_EARLY_WORKSPACES, "1")


# The L2 flush buffers (timing.measure's `flush_buffers`): "0", the protocol (2026-12-03 too), a
# buffer allocated for each cell's measurement, wherever the cells before it left room in the
# allocator; N >= 1, N buffers created when the measuring process starts (`prepare_process`), the
# calls of a placed cell's replay flushing them in turn.
ENV_FLUSH_BUFFERS = "GEMMWATCH_FLUSH_BUFFERS"
DEFAULT_FLUSH_BUFFERS = "0"


def flush_buffer_count() -> int:
    from benchmarks.timing import MAX_FLUSH_BUFFERS

    return _env_int(ENV_FLUSH_BUFFERS, DEFAULT_FLUSH_BUFFERS, 0, MAX_FLUSH_BUFFERS)


# The CUDA graphs each side of a placed cell's replay is captured in (timing.measure's `captures`):
# "1", the protocol (2026-12-03 too), one graph per side; N > 1, N graphs replayed one after
# another between the same events.
ENV_CAPTURES = "GEMMWATCH_CAPTURES"
DEFAULT_CAPTURES = "1"


def graph_captures() -> int:
    from benchmarks.timing import MAX_CAPTURES

    return _env_int(ENV_CAPTURES, DEFAULT_CAPTURES, 1, MAX_CAPTURES)


# Seconds of untimed replays right before each cell's first timed round (timing.measure's
# `settle`): "0", the protocol (2026-12-03 too). A cell measured right after its kernel was
# compiled (a run on a cold Triton cache) starts its rounds after the GPU idled for the compile,
# one measured in a warm run right after the previous cell's rounds; on the H200 17 of the 19 cells
# over the A/A goal in five cold/warm pairs had been compiled for 0.19-0.86 s right before their
# rounds in the cold run, against 38-69% of all cells (docs/BENCHMARKS.md, 2026-12-03, seventh
# session). Measured with 0.2 s: a cold/warm pair put 175 of 181 cells within 0.5%, the largest
# cells drawn into the power cap by the extra load (eighth session): an evidence knob.
ENV_SETTLE = "GEMMWATCH_SETTLE"


def settle_seconds() -> float:
    from benchmarks.timing import MAX_SETTLE_SECONDS

    return _env_number(ENV_SETTLE, "0", MAX_SETTLE_SECONDS, f"a number of seconds in 0..{MAX_SETTLE_SECONDS:g}")


# Evidence knob: the longest idle, in seconds, before the first call of a cell that gets a cooldown
# (`cool_start`). "0", the protocol (2026-12-03 too). In a warm run a long cell starts right after
# the previous cell's rounds, in a cold one after its compile's idle: on the H200 fp32-ieee
# 3000x5000x1000 started at 565-619 W and 54-58 C (once in the power cap) after fp16/bf16
# 3000x5000x1000 (short cells: no cooldown) in warm runs, at 122-273 W and 37-43 C after its
# compile in cold ones; in the pair where the warm run started it in the cap its Triton and native
# times were 0.7% apart, its ratio 0.1% (docs/BENCHMARKS.md, 2026-12-04, second session).
ENV_COOL_START = "GEMMWATCH_COOL_START"
MAX_COOL_START_SECONDS = 10.0
# A cell's start is cool where NVML shows none of these clock-event reasons and at most this power.
# NVML's power on Hopper is the average of the last second (nvmlDeviceGetPowerUsage): after a
# cell at 600 W it falls below 200 W once the card has idled most of a second, about what a
# compile's idle gave the cold runs (the H200 read 122-273 W there, prepared cells' calls included).
COOL_START_WATTS = 200.0
HOT_REASONS = frozenset({"sw_power_cap", "hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake"})
COOL_START_POLL_SECONDS = 0.02


def cool_start_seconds() -> float:
    return _env_number(
        ENV_COOL_START, "0", MAX_COOL_START_SECONDS, f"a number of seconds in 0..{MAX_COOL_START_SECONDS:g}"
    )


def cool_start(limit: float, read_state, *, sleep=time.sleep, clock=time.perf_counter) -> float:
    """Idle until `read_state()` (benchmarks.context.device_state's dict) shows a cool card (none of
    HOT_REASONS, at most COOL_START_WATTS), at most `limit` seconds; the seconds idled. An empty
    state (no NVML) is taken as cool: nothing to wait for."""
    begun = clock()
    while True:
        state = read_state()
        if not state or (
            not HOT_REASONS.intersection(state.get("throttle_names", ()))
            and state.get("power_w", 0.0) <= COOL_START_WATTS
        ):
            break
        if clock() - begun >= limit:
            break
        sleep(COOL_START_POLL_SECONDS)
    return clock() - begun


# Where a placed cell's operand copies lie (`timed_sides`): "0", the protocol up to 2026-12-02b,
# the prepared operands and clones of them, wherever the process's allocation history left room;
# "1", views into one block allocated when the measuring process starts (`process_arena`), each
# copy at an offset set by the cell alone, so that two runs of a commit place a cell's copies alike
# whatever they measured or compiled before it. On the H200 a split-K native time took a sequence of
# values over a process's repetitions, each with fresh clones, that repeated from process to process
# (bf16 128x3584x18944: 49.5, 49.3, 48.7, 48.7 us; docs/BENCHMARKS.md, 2026-12-03, eighth session).
# In the arena that cell's native time went flat over the repetitions (CV 0.97% -> 0.20%), and
# three whole-matrix runs on one card put every pair's cells within 0.5% but for a power-capped
# one (docs/BENCHMARKS.md, 2026-12-03, tenth session): the protocol since 2026-12-03 ("1", the default).
ENV_ARENA = "GEMMWATCH_ARENA"


def operand_arena() -> bool:
    return _env_switch(ENV_ARENA, "1")


_arena = None


def process_arena():
    """The process's operand arena: PLACEMENTS_MEMORY_SHARE of the device's memory as one flat uint8
    tensor, allocated at the first call (`prepare_process`, so before any cell) and kept."""
    global _arena
    if _arena is None:
        import torch

        from benchmarks.cells import ARENA_ALIGN

        size = int(PLACEMENTS_MEMORY_SHARE * _device_memory()) // ARENA_ALIGN * ARENA_ALIGN
        _arena = torch.empty(size, dtype=torch.uint8, device="cuda")
    return _arena


def prepare_process(device: str) -> None:
    """What a measuring process (the suites' `measure_cells`, a recheck) does before its first cell:
    on a GPU, the operand arena (GEMMWATCH_ARENA) and the flush buffers (GEMMWATCH_FLUSH_BUFFERS) are
    created, and (unless
    GEMMWATCH_EARLY_WORKSPACES=0) the placed cells' issuers and their library workspaces (one small
    cuBLAS GEMM each, and one cuBLASLt fp8 GEMM where the chip has fp8)."""
    if device != "cuda":
        return
    from benchmarks.timing import prepare_issuers, process_flush_buffers

    if operand_arena() and cold_l2_method() != "rotate":  # (rotating copies do not lie in it)
        process_arena()
    if flush_buffer_count():
        process_flush_buffers(flush_buffer_count())
    if not early_workspaces() or not placement_threads():
        return
    import torch

    a = torch.randn(16, 16, device="cuda", dtype=torch.float16)
    calls = [lambda: torch.matmul(a, a)]
    if not torch.version.hip and torch.cuda.get_device_capability() >= (8, 9):
        a8, one = a.to(torch.float8_e4m3fn), torch.ones((), device="cuda")
        calls.append(lambda: torch._scaled_mm(a8, a8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
    prepare_issuers(placement_workspaces() or PLACEMENTS, calls)


# Operand copies a placement-sensitive cell's replays cycle through (timing.Placements): on the
# H200, eight cut the spread of decode cells across fresh placements from 0.5-1.2% to 0.2-0.5%
# (ratio CV, docs/BENCHMARKS.md).
PLACEMENTS = 8
# The copies may take at most this share of the device's memory (otherwise one placement).
PLACEMENTS_MEMORY_SHARE = 0.25


# A cell's rounds go on, `rounds` more at a time, until the median ratio's standard error is at most
# PRECISION (relative) or MAX_ROUNDS_FACTOR x rounds are taken (on the GPU). On the H200 most cells'
# rounds spread by 0.1-0.5% and 30 rounds put the median within 0.1%; the large memory-bound gemv
# cells' native rounds spread by 1.1-1.8% (one cuBLAS kernel, the same in one process as across
# them), so 30 rounds left their median 0.3% apart from run to run and one of them over the 0.5%
# goal; 120 halve that (in a whole-matrix run on the H200, 36-41 of 181 cells took more than 30;
# docs/BENCHMARKS.md).
PRECISION = 0.001
MAX_ROUNDS_FACTOR = 4


def median_standard_error(samples) -> float:
    """The median's standard error relative to it, from the samples' median absolute deviation (a
    few outlying rounds do not ask for more): 1.2533 sigma / sqrt(n) for normal samples."""
    values = list(samples)
    if len(values) < 2:
        return math.inf
    median = statistics.median(values)
    mad = statistics.median(abs(x - median) for x in values)
    return 1.2533 * 1.4826 * mad / math.sqrt(len(values)) / abs(median) if median else math.inf


def precise_rounds(timing, measure_more, rounds: int, max_rounds: int):
    """`timing` with more rounds from `measure_more(n)` (a Timing of n more rounds of the same
    sides) appended, `rounds` at a time, until `median_standard_error` of its ratio (of its first
    side without a second) is at most PRECISION or `max_rounds` are taken."""

    def error() -> float:
        return median_standard_error(timing.ratios(0, 1) if len(timing.samples) > 1 else timing.samples[0])

    while len(timing.samples[0]) < max_rounds and error() > PRECISION:
        more = measure_more(min(rounds, max_rounds - len(timing.samples[0])))
        timing.samples = [a + b for a, b in zip(timing.samples, more.samples)]
    return timing


def roofline_seconds(prep: Prepared, spec) -> tuple[float, float] | None:
    """(seconds to move the cell's operands once at the memory bandwidth, seconds of its FLOPs
    at peak) on the spec's chip; None when the spec lacks either figure. (Computed here from the
    spec's fields rather than with `TargetSpec.roofline_seconds`: the suites also measure older
    commits, whose `targets` package comes from their worktree and may not have it.)"""
    peak = spec.peak_tflops.get(_peak_name(prep.cell.dtype))
    if not spec.mem_bandwidth_gbs or not peak:
        return None
    cell = prep.cell
    return prep.footprint_bytes / (spec.mem_bandwidth_gbs * 1e9), 2.0 * cell.M * cell.N * cell.K / (peak * 1e12)


def placement_sensitive(prep: Prepared, spec) -> bool:
    """Whether where the cell's operands lie moves its time: memory-bound by the chip's roofline
    (reading and writing the operands once takes longer than the FLOPs at peak), or small enough
    to fit in the L2 (a few microseconds, where the L2 slices the lines land in show). Decided from
    the cell and the TargetSpec alone, so every run of a cell times it the same way."""
    if prep.footprint_bytes <= spec.l2_bytes:
        return True
    roofline = roofline_seconds(prep, spec)
    return roofline is not None and roofline[0] >= roofline[1]


def expected_call_seconds(prep: Prepared, spec) -> float | None:
    """The cell's roofline time (the longer of its two `roofline_seconds`): what sets its calls
    per replay and whether it gets a cooldown (`timing_plan`), the same in every run. Kernels run
    slower than the roofline, so replays come out longer than the 1 ms aimed at, never shorter.
    None without the spec's figures (then the timing estimates it)."""
    roofline = roofline_seconds(prep, spec)
    return max(roofline) if roofline else None


# The cooldown goes to cells whose roofline time is at least this. On the H200 the default
# matrix's calls ran at 1.2-3.2x their roofline time (median 1.7; docs/BENCHMARKS.md), and the
# cells the power cap moved were the compute-bound ones of >= 100 us per call: fp8 4096x3584x3584
# (roofline 53 us, 109 us per call) and fp8 4096^3 (69 us, 123 us) had a Triton-time CV of 0.03-0.10%
# across runs with a cooldown and 0.55-2.2% without.
COOLDOWN_MIN_ROOFLINE_SECONDS = 50e-6


def timing_plan(prep: Prepared, spec) -> dict:
    """timing.measure's protocol arguments for the cell, one source for the suites, the recheck and
    the tuner (what `protocol_id` records): `call_seconds`, its roofline time; `cooldown`, the
    GEMMWATCH_COOLDOWN idle where that is >= COOLDOWN_MIN_ROOFLINE_SECONDS (without the spec's
    figures, timing.measure decides from its own estimate); `flush_kind` and `streams`, from
    GEMMWATCH_FLUSH and GEMMWATCH_STREAMS; `threads`, from GEMMWATCH_PLACEMENT_THREADS; `workspaces`,
    from GEMMWATCH_WORKSPACES; `flush_buffers`, from GEMMWATCH_FLUSH_BUFFERS; `captures`, from
    GEMMWATCH_CAPTURES; `settle`, from GEMMWATCH_SETTLE."""
    expected = expected_call_seconds(prep, spec)
    idle = cooldown()
    if expected is not None and expected < COOLDOWN_MIN_ROOFLINE_SECONDS:
        idle = 0.0
    return {
        "call_seconds": expected,
        "cooldown": idle,
        "flush_kind": flush_kind(),
        "streams": timing_streams(),
        "threads": placement_threads(),
        "workspaces": placement_workspaces(),
        "flush_buffers": flush_buffer_count(),
        "captures": graph_captures(),
        "settle": settle_seconds(),
    }


def timed_sides(prep: Prepared, device: str, spec, calls: list, arena=None) -> list:
    """The arguments of `timing.measure` for `calls` (functions of an operand tuple, see
    `Prepared.operand_copies`; None = the prepared operands). With GEMMWATCH_COLD_L2=rotate, per
    call a list over rotating copies (no flush), where the footprint allows; else, on the GPU, for
    a `placement_sensitive` cell, per call `timing.Placements` over PLACEMENTS flushed copies (in
    `arena`, by default the process's with GEMMWATCH_ARENA=1, where they fit); else (and always on
    the CPU) a single callable, cold by the L2 flush."""
    from benchmarks.timing import Placements, rotating_copies

    single = [functools.partial(call, None) for call in calls]
    if device != "cuda":
        return single
    if cold_l2_method() == "rotate":
        copies = rotating_copies(prep.footprint_bytes, spec.l2_bytes)
        if not copies:
            return single
        operands = prep.operand_copies(copies)
        return [[functools.partial(call, ops) for ops in operands] for call in calls]
    if not placement_sensitive(prep, spec):
        return single
    if arena is None and operand_arena():
        arena = process_arena()
    if arena is not None:
        fits = prep.arena_bytes(PLACEMENTS) <= arena.numel()
    else:
        fits = PLACEMENTS * prep.footprint_bytes <= PLACEMENTS_MEMORY_SHARE * _device_memory()
    if not fits:
        return single
    operands = prep.operand_copies(PLACEMENTS, arena=arena)
    return [Placements(functools.partial(call, ops) for ops in operands) for call in calls]


def _device_memory() -> int:
    import torch

    return torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory


def cell_key(cell: Cell) -> str:
    """A readable, unique id: 'fp16 4096x4096x4096' or 'bf16 4096x4096x4096 bias+gelu'."""
    return cell.name


@dataclass
class CellResult:
    """Everything measured for one cell. Times are seconds per call, one sample per round."""

    dtype: str
    shape: tuple[int, int, int]
    epilogue: str | None
    triton_s: list[float] = field(default_factory=list)
    native_s: list[float] | None = None
    ratio: list[float] | None = None  # Triton time / native time, per round
    rel_error: float | None = None  # Frobenius |C - ref| / |ref| against float64
    max_rel_error: float | None = None  # max |C - ref| / max |ref|
    tolerance: float | None = None
    tune_seconds: float | None = None  # first call: autotuning and compiling
    tflops: float | None = None  # of the median Triton time
    pct_of_peak: float | None = None
    config: str | None = None
    kernel_hash: str | None = None
    selection: str | None = None  # how the config was chosen
    instead_of: str | None = None  # the chosen config these operands could not take (`config` ran)
    native_note: str | None = None  # why there is no native baseline, if there is none
    error: str | None = None  # why the cell failed (compile error, wrong result)
    inner: int | None = None
    flush_s: float | None = None
    method: str | None = None
    method_note: str | None = None  # e.g. an injected slowdown (evidence runs only)
    # SM clock, power, temperature and throttle reasons (NVML) just before and after this cell's
    # timing rounds: a noisy cell can be matched to the clock state it was measured in.
    state_before: dict | None = None
    state_after: dict | None = None
    # Seconds idled before the cell's first call for a cool start (GEMMWATCH_COOL_START), if any.
    cool_start_s: float | None = None
    # The GPU kernels one native call launched (GEMMWATCH_NATIVE_KERNELS=1, diagnostic runs): a
    # native time that moves between processes can be matched to a different library choice; and
    # their launch geometry (`kernel_launches`), which can differ under one kernel name.
    native_kernels: list[str] | None = None
    native_launches: list[dict] | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None

    def median(self, series: str) -> float | None:
        values = getattr(self, series)
        return statistics.median(values) if values else None

    def as_dict(self) -> dict:
        return asdict(self)


def rounds_from_env(default: int = DEFAULT_ROUNDS) -> int:
    raw = os.environ.get(ENV_ROUNDS)
    if raw is None:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{ENV_ROUNDS} must be a positive integer, got {raw!r}")
    return int(raw)


def _peak_name(dtype: str) -> str:
    if dtype.startswith("fp8"):
        return "fp8"
    return {"fp32-ieee": "fp32", "fp32-tf32": "tf32"}.get(dtype, dtype)


def _max_rel_error(result, ref) -> float:
    diff = (result.double() - ref).abs()
    if not bool(diff.isfinite().all()):
        return math.inf
    return float(diff.max() / ref.abs().max().clamp_min(1e-30))


def _timed_call(prep: Prepared, device: str):
    """(output, seconds) of one Triton call, waited for: a first one chooses and compiles."""
    import torch

    start = time.perf_counter()
    out = prep.triton()
    if device == "cuda":
        torch.cuda.synchronize()
    return out, time.perf_counter() - start


def measure_cell(cell: Cell, *, rounds: int, device: str, spec) -> CellResult:
    """Check one cell against float64, then time Triton and native interleaved.

    The cell's first call chooses its config and compiles it (its seconds: `tune_seconds`), right
    before its timing; compile workers an autotune started are stopped before the timing. On the
    H200 a run that compiled every cell first (a compile pass, then the timing) put a cold run's
    cells up to 1.5% apart from two warm runs that agreed to 0.44% (docs/BENCHMARKS.md), and a run
    that compiles each cell at its turn agreed with its warm runs in 180 of 181 cells.
    """

    from benchmarks.context import device_state
    from benchmarks.timing import as_timed, measure, tflops
    from kernels import autotune

    result = CellResult(cell.dtype, (cell.M, cell.N, cell.K), cell.epilogue, tolerance=TOLERANCE[cell.dtype])
    try:
        prep = Prepared(cell, device)
        limit = cool_start_seconds() if device == "cuda" else 0.0
        if limit and (expected_call_seconds(prep, spec) or 0.0) >= COOLDOWN_MIN_ROOFLINE_SECONDS:
            result.cool_start_s = round(cool_start(limit, device_state), 3)
        out, result.tune_seconds = _timed_call(prep, device)
        autotune.shutdown_workers()  # (started by an autotune only: none may run while the cell is timed)
        selection = autotune.last()
        if selection is not None:
            result.config, result.kernel_hash = str(selection.config), selection.kernel_hash
            result.selection, result.instead_of = selection.method, selection.instead_of
        ref = prep.reference()
        result.rel_error = relative_error(out, ref)
        result.max_rel_error = _max_rel_error(out, ref)
        del ref
        if not result.rel_error <= result.tolerance:
            result.error = f"wrong result: relative error {result.rel_error:.3g} over tolerance {result.tolerance:.3g}"
            return result
        result.native_note = prep.native_supported()
        calls = [lambda ops: prep.triton(operands=ops)]
        if not result.native_note:
            calls.append(lambda ops: prep.native(operands=ops))
        sides = timed_sides(prep, device, spec, calls)
        inject = injected_slowdowns().get(cell_key(cell))
        if inject and device == "cuda":
            sides[0], expected = slowed(sides[0], inject)
            result.method_note = f"injected slowdown {inject:.1%} (calibrated: {expected:.1%})"
        result.state_before = device_state() or None
        plan = timing_plan(prep, spec)
        timing = measure(*sides, rounds=rounds, **plan)
        if device == "cuda":
            timing = precise_rounds(
                timing, lambda n: measure(*sides, rounds=n, warmup=0, **plan), rounds, MAX_ROUNDS_FACTOR * rounds
            )
        result.state_after = device_state() or None
        if os.environ.get(ENV_NATIVE_KERNELS) == "1" and device == "cuda" and not result.native_note:
            # after the rounds (no profiler in them), as the rounds issued it (timing.as_timed)
            result.native_launches = kernel_launches(as_timed(sides[1], plan["threads"]))
            result.native_kernels = [launch["name"] for launch in result.native_launches]
    except Exception as err:  # noqa: BLE001 - a failing cell is recorded and the run goes on
        result.error = f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}"
        return result
    result.triton_s = timing.samples[0]
    if not result.native_note:
        result.native_s = timing.samples[1]
        result.ratio = timing.ratios(0, 1)
    result.inner, result.flush_s, result.method = timing.inner, timing.flush_seconds, timing.method
    if not spec.is_interpreter:
        result.tflops = tflops(cell.M, cell.N, cell.K, result.median("triton_s"))
        peak = spec.peak_tflops.get(_peak_name(cell.dtype))
        result.pct_of_peak = 100.0 * result.tflops / peak if peak else None
    return result


def measure_cells(cells, *, rounds: int | None = None, label: str = "") -> dict:
    """Measure `cells` in order; returns {"context": ..., "cells": {cell_key: CellResult}}.

    Progress goes to stderr and, when GEMMWATCH_PROGRESS_FILE is set (by
    `gemmwatch run`), as JSON lines to that file.
    """
    import torch

    from benchmarks.context import device_description, device_state, software_versions
    from kernels import autotune
    from targets import detect

    rounds = rounds or rounds_from_env()
    order = cell_order()
    cells = list(reversed(cells)) if order == "reverse" else list(cells)
    spec = detect()
    device = "cuda" if torch.cuda.is_available() and not spec.is_interpreter else "cpu"
    context = {
        **device_description(),
        **software_versions(),
        "rounds": rounds,
        "cell_order": order,
        "state_before": device_state(),
        "started_at": time.time(),
    }
    results: dict[str, CellResult] = {}
    progress_path = os.environ.get(ENV_PROGRESS)
    start = time.perf_counter()
    prepare_process(device)
    for i, cell in enumerate(cells, 1):
        results[cell_key(cell)] = res = measure_cell(cell, rounds=rounds, device=device, spec=spec)
        line = {
            "suite": label,
            "index": i,
            "total": len(cells),
            "cell": cell_key(cell),
            "elapsed_s": round(time.perf_counter() - start, 1),
            "failed": res.failed,
        }
        print(
            f"[{label} {i}/{len(cells)}] {cell_key(cell)} {'FAILED ' + res.error if res.failed else ''}",
            file=sys.stderr,
        )
        if progress_path:
            with open(progress_path, "a") as f:
                f.write(json.dumps(line) + "\n")
    context["state_after"] = device_state()
    context["seconds"] = round(time.perf_counter() - start, 2)
    context["autotune"] = [s.as_dict() for s in autotune.selections()]
    return {"context": context, "cells": results}
