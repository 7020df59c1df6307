"""The GPU timing protocol every gemmwatch measurement uses.

Kernel time is GPU time: CUDA events around CUDA-graph replays, so host launch
overhead stays out (on the H200, graph timing cut the cross-process noise of a
20 us kernel from 8% to 0.4% against per-launch events). Each replay runs the
kernel `inner` times, each preceded by an L2 flush captured in the same graph;
a graph of the flushes alone is replayed in the same rounds and its time
subtracted, so the figure is a cold-L2 kernel time without the flush.

Instead of a flush, a side may come as a list of callables, one per copy of
the operands ("rotating copies"): each replay then cycles through all copies,
so every call reads operands that R - 1 other calls (>= twice the L2) have
pushed out of the cache since their last use. Nothing is subtracted, so for
kernels shorter than the flush itself (decode shapes: a 20 us GEMM against a
40 us flush of 2 x 60 MiB) the flush's jitter cannot land in the kernel's
time; measured on the H200, though, neither method had less cross-process
noise (docs/BENCHMARKS.md), and the flush stays the default.

The two sides of a comparison (Triton and native, or base and head) are
interleaved A, B, flush in every round on the same inputs, and their ratio is
taken per round: clock and power drift (7-9% within one process on the H200)
moves both sides of a round together and cancels in the ratio. The order rotates
from round to round (A B F, B F A, F A B, ...): with a fixed order, base and head
of the same code differed by 2-8% in some cells on the H200, always in favour of
the side timed second.

A cooldown (`cooldown` > 0) idles the GPU after each round for that multiple of
the round's own duration (each round then opens with an untimed replay, so that
no timed side pays for the idle: in A/A rechecks on the H200 the side timed first
after it was 2.5-4% slower, whichever it was), for kernels of at least
COOLDOWN_MIN_CALL_SECONDS: long
compute-bound kernels (fp8 at M = 4096) draw the H200 into its power cap, its
clock falling from 1980 to 1545 MHz within a cell, and with the idle time their
rounds run at full clock (on the H200, cross-process ratio CV 4.6% -> 0.1% at fp8
8192^3). The threshold was 250 us until the H200 showed 4096^3 fp16/bf16 cells (180 us) and
fp8 4096x6144x4096 (150 us) in the power cap too (1980 -> 1605-1740 MHz within the cell, Triton
time 1.5-3% apart between runs); the suites pass the cells' roofline times and choose the cells
themselves (benchmarks.measure.timing_plan). Short kernels never reach the cap, and idling before
them only adds the clock's ramp-up to their rounds, so they keep running back to back.

Where a cell's operands lie in memory moves short and memory-bound kernels: on the H200, the
same decode cell timed on freshly allocated operands, eight times in one process, spread by
0.5-1.2% (CV of the ratio; up to 2.5% from slowest to fastest), and that is what put whole-matrix
runs of one commit 1-3% apart in those cells (each run's allocation history gives a cell its own
placement). Such a cell's sides therefore come as `Placements`: the calls of a replay cycle
through copies of the operands allocated apart, each call flushed as before, so a process's
median spans several placements (eight: the spread across repetitions fell to 0.2-0.5%;
docs/BENCHMARKS.md). Long compute-bound kernels do not move with placement and are timed on one.

The native library's own state moves such a cell too: cuBLAS's workspace (torch keeps one per
cuBLAS handle and stream; the split-K, stream-K and fp8 kernels of K = 8192 use it) lies wherever the
process's history put it, and freeing and reallocating it alone moved bf16 128x3584x18944's native
time by up to 1.2% and fp8 128x8192x8192's by 0.8% on the H200 (docs/BENCHMARKS.md). So each
placement's calls are also issued from a host thread of its own (`_Issuer`: torch gives every host
thread its own cuBLAS handle, hence its own workspace on the same stream), and the library's output
is placed with the operands (an output allocated inside the graph is one block for every call of a
replay); captured in thread-local mode, on one stream kept for them, so a process holds PLACEMENTS
workspaces for them, not one per pooled stream. Where those workspaces lie moves the cells whose
cuBLAS kernels split K: allocated at a process's first placed cell, the N = 3584-4096 decode cells'
native time on the H200 was 6% longer in a run whose allocation history before that cell differed
(an injected run) than in whole-matrix and short runs; so `prepare_issuers` creates them when the
measuring process starts (benchmarks.measure.prepare_process; 0.3% then). `workspaces` > the copies
spreads a replay's calls over more of them (GEMMWATCH_WORKSPACES, an evidence knob: on the H200 it
widened the split-K cells' spread); `threads=False`, GEMMWATCH_PLACEMENT_THREADS=0, measures as
before 2026-12-02 (docs/BENCHMARKS.md).

Per-process state a call reads and writes besides its operands, at one place for a whole
process, can give each process its own offset: the split-K partial sums allocated in the graph
(every call of a replay gets the same block), the serial split-K's tile counters and cuBLAS's
workspace (one per stream). With `streams` = S > 1 the calls of a replay are issued in turn on S
streams joined into the capture (still one after another: each waits for the previous), so a
replay spreads over S of each, and a process's median over S placements (the joins between the
streams cost both sides alike; the flushes' graph has none). An experiment, measured on the
H200: no remedy (4 streams moved native times by up to 5%, the joins; what moved the split-K
cells between runs was the operands' placement, above; docs/BENCHMARKS.md); 1 (the default) is
the protocol of every recorded result.

Two more places a placed cell's replay can spread over, both experiments measured on the H200
and off by default (docs/BENCHMARKS.md, 2026-12-03, seventh session): `flush_buffers` = N, the
process's N flush buffers, created when it starts (`process_flush_buffers`), taken in turn by
the calls (moving the flush buffer did not move the noisy cells, and eight did not narrow them);
`captures` = N, each side's calls captured in N graphs replayed between the same events (a
native split-K time took one of two values per capture; eight narrowed it within a process from
0.5% to 0.05-0.09% and widened two other cells to 0.3%). And `settle` seconds of untimed
replays before the first timed round (GEMMWATCH_SETTLE): the cells over the A/A goal in
cold/warm pairs had nearly all been compiled right before their rounds in the cold run, the GPU
idle meanwhile; with 0.2 s a cold/warm pair put 175 of 181 cells within 0.5%, the largest drawn
into the power cap (eighth session). Where a placed cell's operand copies lie is the caller's:
benchmarks.measure.timed_sides puts them in an arena allocated when the process starts
(GEMMWATCH_ARENA, on by default since protocol 2026-12-03: it flattened the split-K cells' native
time over repetitions, and cold/warm pairs on one card came within 0.5% in all cells but a
power-capped one; tenth session).

On the CPU (Triton's interpreter) the same interface times with the host clock;
those numbers exercise the pipeline and carry no performance signal.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# The protocol's version, recorded with every result (benchmarks.context): a change here that moves
# the figures gets a new one, and results of different versions are not compared with each other
# (ci.decision.CONTEXT_KEYS: "context differs", as for another driver). 2026-12-01: flushed
# placements and roofline-sized replays (docs/BENCHMARKS.md, fourth session); results without
# the key are of earlier protocols. 2026-12-02: each placement's calls from a host thread of its
# own (its own cuBLAS workspace), fp8's native output placed with the operands. 2026-12-02b: the
# issuers and their workspaces created when the measuring process starts (benchmarks.measure.
# prepare_process), so that no cell's history moves where they lie. 2026-12-03: a placed cell's
# operand copies in the process's arena (benchmarks.measure, GEMMWATCH_ARENA), at offsets set by the
# cell alone.
PROTOCOL = "2026-12-03"

# Replays are sized to take at least this long, far above event resolution (~0.5 us).
MIN_REPLAY_SECONDS = 1e-3
MAX_INNER = 200
MAX_STREAMS = 16
MAX_WORKSPACES = 64
MAX_FLUSH_BUFFERS = 64
MAX_CAPTURES = 16
MAX_SETTLE_SECONDS = 10.0
FLUSH_KINDS = ("write", "read")
# Calls timed shorter than this get no cooldown (see the module docstring); a caller that passes
# `call_seconds` decides itself.
COOLDOWN_MIN_CALL_SECONDS = 100e-6


@dataclass
class Timing:
    """Per-round samples (seconds per call) of callables timed interleaved, in argument order."""

    samples: list[list[float]]
    inner: int = 1
    flush_seconds: float = 0.0  # per call, already subtracted
    method: str = "cuda-graph+l2-flush"

    def median(self, i: int) -> float:
        return statistics.median(self.samples[i])

    def ratios(self, i: int = 0, j: int = 1) -> list[float]:
        """Per-round time ratios samples[i] / samples[j]."""
        return [x / y for x, y in zip(self.samples[i], self.samples[j])]

    def ratio_median(self, i: int = 0, j: int = 1) -> float:
        return statistics.median(self.ratios(i, j))


class Placements(list):
    """One side's callables over copies of its operands at different places in memory, each call
    still preceded by the L2 flush: a replay cycles through them, so a process's median spans
    several placements instead of the one its allocation history gave it (see the module
    docstring)."""


class _Issuer:
    """A host thread that makes one placement's calls, kept for the process's life: torch's cuBLAS
    handles are per host thread (one handed back when its thread ends may go to the next), and
    its workspaces per handle and stream, so each issuer's calls use a workspace of their own."""

    _all: list[_Issuer] = []

    def __init__(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"gemmwatch-placement{len(self._all)}")

    @classmethod
    def first(cls, n: int) -> list[_Issuer]:
        while len(cls._all) < n:
            cls._all.append(cls())
        return cls._all[:n]

    def call(self, fn, stream):
        """fn() on `stream` from this thread, on the caller's device; waits for it (and raises what it raised)."""
        import torch

        device = torch.cuda.current_device()

        def issue():
            torch.cuda.set_device(device)
            with torch.cuda.stream(stream):
                return fn()

        return self._thread.submit(issue).result()


def prepare_issuers(n: int, calls: Sequence[Callable[[], object]]) -> None:
    """Create the first `n` issuers now, each making `calls` (small library calls) on the placements'
    stream: their cuBLAS handles and workspaces are then allocated at this point of the process
    (its start, before any cell) instead of at its first placed cell, where whatever the cells
    before it left in the allocator decides where they land."""
    import torch

    stream = _placements_stream()
    stream.wait_stream(torch.cuda.current_stream())
    for issuer in _Issuer.first(n):
        for fn in calls:
            issuer.call(fn, stream)
    torch.cuda.synchronize()


_placement_stream = None


def _placements_stream():
    """The stream placed sides are captured on when the caller names none: one for the process, so
    that it holds one workspace per issuer (torch's pooled streams would each add as many)."""
    global _placement_stream
    import torch

    if _placement_stream is None:
        _placement_stream = torch.cuda.Stream()
    return _placement_stream


def _issued_apart(sides, threads: bool) -> bool:
    """Whether `measure` issues these sides' calls from a thread per placement."""
    return threads and all(isinstance(side, Placements) for side in sides) and len(sides[0]) > 1


def as_timed(side, threads: bool = True):
    """One call of `side` (a callable or its copies) as `measure` issues it: for placed copies, the
    first from its issuer on the placements' stream (that thread's cuBLAS handle and workspace, so a
    profiler sees the library's choice for the timed calls); else the first copy, or `side` itself."""
    if not isinstance(side, (list, tuple)):
        return side
    if not _issued_apart([side], threads):
        return side[0]
    return lambda: _Issuer.first(1)[0].call(side[0], _placements_stream())


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def measure(
    *fns: Callable[[], object] | Sequence[Callable[[], object]],
    rounds: int = 30,
    warmup: int = 3,
    flush_l2: bool = True,
    l2_bytes: int | None = None,
    cooldown: float = 0.0,
    streams: int = 1,
    stream=None,
    flush_kind: str = "write",
    call_seconds: float | None = None,
    threads: bool = True,
    workspaces: int | None = None,
    flush_buffers: int = 0,
    captures: int = 1,
    settle: float = 0.0,
) -> Timing:
    """Time `fns` interleaved (one replay of each per round); see the module docstring.

    Each of `fns` is a callable, or a list of callables over rotating copies of
    the operands (the same length for every side); with copies, no flush, unless
    every side comes as `Placements` (then each call is flushed as a single one is).
    `streams`: the CUDA streams a replay's calls take in turn (see the module docstring).
    `stream`: the CUDA stream to capture and replay on (default: a new one from torch's pool).
    `flush_kind`: how the L2 flush evicts: "write" (zeroes twice the L2) or "read" (sums it).
    `threads`: Placements' calls from a host thread per placement (`_Issuer`, the default); False:
    from the caller's thread, on a stream of torch's pool (the protocol before 2026-12-02).
    `workspaces`: with threads, the issuers (so cuBLAS workspaces) a placed replay's calls take in
    turn, call k from issuer k mod `workspaces` (default: one per copy, the protocol of every
    recorded result); more spread the library's scratch over more places than there are copies.
    `flush_buffers`: 0, the flush writes (or reads) a buffer allocated for this measurement; N >= 1,
    the calls of a replay over copies flush the process's first N flush buffers in turn (call k
    buffer k mod N; `process_flush_buffers`, kept for the process's life), a single call its first.
    `captures`: for calls over copies, each side's calls of a replay are captured in that many CUDA
    graphs, replayed one after another between the same two events (a graph instantiation can
    set a call's time for all its replays: then a sample spans that many of them); a single call's
    side is always one graph.
    `settle`: seconds of untimed replays (every side's and the flushes', in turn) right before the
    first timed round, so that the rounds start with the GPU busy for that long whatever came
    before them (a compile's idle in a run on a cold Triton cache, the previous cell's rounds in a
    warm one).
    `call_seconds`: the expected GPU time of one call, which then sets the calls per replay
    instead of a timed estimate, and `cooldown` is applied as given (the caller decides which
    calls get one; with a timed estimate, those of >= COOLDOWN_MIN_CALL_SECONDS): a figure derived
    from the problem keeps both the same in every run (timed, a call near a boundary took 1 call
    per replay in one run and 2 in the next, and its time moved 6% with it on the H200).
    """
    if not fns:
        raise ValueError("measure needs at least one callable")
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    if not (isinstance(cooldown, (int, float)) and 0 <= cooldown <= 100):
        raise ValueError(f"cooldown must be a number in 0..100 (idle time per round time), got {cooldown!r}")
    if call_seconds is not None and not (isinstance(call_seconds, (int, float)) and call_seconds > 0):
        raise ValueError(f"call_seconds must be a positive number of seconds, got {call_seconds!r}")
    if flush_kind not in FLUSH_KINDS:
        raise ValueError(f"flush_kind must be one of {', '.join(FLUSH_KINDS)}, got {flush_kind!r}")
    if not (isinstance(streams, int) and 1 <= streams <= MAX_STREAMS):
        raise ValueError(f"streams must be an int in 1..{MAX_STREAMS}, got {streams!r}")
    if workspaces is not None:
        _check_int("workspaces", workspaces, 1, MAX_WORKSPACES)
    _check_int("flush_buffers", flush_buffers, 0, MAX_FLUSH_BUFFERS)
    _check_int("captures", captures, 1, MAX_CAPTURES)
    if isinstance(settle, bool) or not isinstance(settle, (int, float)) or not 0 <= settle <= MAX_SETTLE_SECONDS:
        raise ValueError(f"settle must be a number of seconds in 0..{MAX_SETTLE_SECONDS:g}, got {settle!r}")
    sides = [list(fn) if isinstance(fn, (list, tuple)) else [fn] for fn in fns]
    copies = {len(side) for side in sides}
    listed = [isinstance(fn, (list, tuple)) for fn in fns]
    placed = [isinstance(fn, Placements) for fn in fns]
    if any(listed) and (len(copies) != 1 or not all(listed) or 0 in copies):
        raise ValueError(f"measure: operand copies need the same number of callables on every side, got {copies}")
    if any(placed) and not all(placed):
        raise ValueError("measure: Placements on one side need Placements on every side (flushed copies)")
    rotating = any(listed) and not any(placed)
    for _ in range(warmup):  # compiles, autotunes, creates library handles
        for side in sides:
            for fn in side:
                fn()
    if _cuda_available():
        return _measure_cuda(
            sides,
            rounds=rounds,
            flush_l2=flush_l2 and not rotating,
            l2_bytes=l2_bytes,
            cooldown=cooldown,
            streams=streams,
            stream=stream,
            flush_kind=flush_kind,
            call_seconds=call_seconds,
            placed=_issued_apart(fns, threads),
            workspaces=workspaces,
            flush_buffers=flush_buffers,
            captures=captures,
            settle=settle,
        )
    return _measure_host(sides, rounds=rounds)


def _check_int(name: str, value, low: int, high: int) -> None:
    """`value` an int (not a bool) in low..high, else a ValueError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an int in {low}..{high}, got {value!r}")


def round_order(r: int, n: int) -> list[int]:
    """The order of n sides in round r: rotated by one each round (see the module docstring)."""
    return [(r + i) % n for i in range(n)]


def _measure_host(sides, *, rounds) -> Timing:
    samples: list[list[float]] = [[] for _ in sides]
    for r in range(rounds):
        for i in round_order(r, len(sides)):
            fn = sides[i][r % len(sides[i])]
            start = time.perf_counter()
            fn()
            samples[i].append(time.perf_counter() - start)
    return Timing(samples, inner=1, method="host-clock (interpreter: not performance)")


def _measure_cuda(
    sides,
    *,
    rounds,
    flush_l2,
    l2_bytes,
    cooldown=0.0,
    streams=1,
    stream=None,
    flush_kind="write",
    call_seconds=None,
    placed=False,
    workspaces=None,
    flush_buffers=0,
    captures=1,
    settle=0.0,
) -> Timing:
    import torch

    copies = len(sides[0])
    buffers = []
    if flush_l2:
        # Writing twice the L2's size evicts every line the previous kernel left.
        nbytes = flush_bytes(l2_bytes)
        if flush_buffers:
            buffers = process_flush_buffers(flush_buffers if copies > 1 else 1, nbytes)
        else:
            buffers = [torch.zeros(nbytes // 4, dtype=torch.float32, device="cuda")]

    def flush(k=0):
        if not buffers:
            return
        buffer = buffers[k % len(buffers)]
        if flush_kind == "read":
            buffer.sum()
        else:
            buffer.zero_()

    torch.cuda.synchronize()

    issuers = _Issuer.first(workspaces or copies) if placed else None
    stream = stream or (_placements_stream() if placed else torch.cuda.Stream())
    stream.wait_stream(torch.cuda.current_stream())
    # The streams a replay's calls take in turn: the capturing one, and streams - 1 forked from it.
    turns = [stream] + [torch.cuda.Stream() for _ in range(streams - 1)]
    for other in turns[1:]:
        other.wait_stream(torch.cuda.current_stream())

    # Whole cycles through the copies (every call's previous use of its copy is `copies` calls back),
    # the streams and the issuers (each takes the same share of the calls).
    cycle = math.lcm(copies, streams, len(issuers) if issuers else 1, max(len(buffers), 1))
    captures = captures if copies > 1 else 1

    def call(side, k):
        """A side's k-th call of a replay: copy k mod copies, on stream k mod streams, from issuer k mod issuers."""
        fn = side[k % copies]
        on = turns[k % streams]
        if on is not stream:
            on.wait_stream(stream)  # in order: after everything the capturing stream holds so far
        if issuers is not None:
            issuers[k % len(issuers)].call(fn, on)
        elif on is stream:
            fn()
        else:
            with torch.cuda.stream(on):
                fn()
        if on is not stream:
            stream.wait_stream(on)

    graphs = []
    with torch.cuda.stream(stream):
        # One cycle of calls first, each copy on the streams and from the issuers the replays use it
        # on: per-stream and per-thread state (the serial split-K's tile counters, library handles
        # and workspaces) then exists before capture instead of inside it.
        for k in range(cycle):
            for side in sides:
                call(side, k)
        if call_seconds is None:
            per_call = _per_call_seconds([side[0] for side in sides], stream, flush if buffers else None)
            if max(per_call) < COOLDOWN_MIN_CALL_SECONDS:
                cooldown = 0.0
        else:  # the caller's figure; its `cooldown` is then applied as given
            per_call = [call_seconds] * len(sides)
        # Whole cycles in every graph of a side: call k of the replay is call k of the cycle.
        inner = cycle * captures * math.ceil(_choose_inner(per_call) / (cycle * captures))
        per_graph = inner // captures
        for side in (*sides, None) if buffers else sides:  # the last: the flushes alone
            parts = []
            for c in range(captures):
                g = torch.cuda.CUDAGraph()
                # Thread-local: the issuers' calls into the capture are not "unsafe" calls of another thread.
                with torch.cuda.graph(g, stream=stream, capture_error_mode="thread_local" if placed else "global"):
                    for k in range(c * per_graph, (c + 1) * per_graph):
                        flush(k)
                        if side is not None:
                            call(side, k)
                parts.append(g)
            graphs.append(_Replay(parts))
    torch.cuda.current_stream().wait_stream(stream)
    for g in graphs:  # the first replay uploads the graphs
        g.replay()
    torch.cuda.synchronize()
    if settle:
        begun = time.perf_counter()
        while time.perf_counter() - begun < settle:
            for g in graphs:
                g.replay()
            torch.cuda.synchronize()

    events: list[list[tuple]] = [[] for _ in graphs]
    for r in range(rounds):
        # Round r starts with graph r mod n: every side takes every position in the round
        # equally often, so what a position brings (the clock's ramp after a cooldown, the
        # work just before) is spread over the sides instead of always landing on one.
        order = round_order(r, len(graphs))
        if cooldown:
            # After the idle, the first replay of a round ran ~3% slow on the H200 (the clock's ramp,
            # the GPU waiting for the replay's submission): an untimed replay takes that instead.
            graphs[order[0]].replay()
        for i in order:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graphs[i].replay()
            end.record()
            events[i].append((start, end))
        if cooldown:
            first, last = events[order[0]][-1][0], events[order[-1]][-1][1]
            last.synchronize()
            time.sleep(first.elapsed_time(last) / 1e3 * cooldown)
    torch.cuda.synchronize()
    per_call = [[s.elapsed_time(e) / 1e3 / inner for s, e in pairs] for pairs in events]
    idle = (f"+{streams}-streams" if streams > 1 else "") + (f"+cooldown{cooldown:g}" if cooldown else "")
    idle += f"+settle{settle:g}s" if settle else ""
    if not buffers:
        method = f"cuda-graph+{copies}-rotating-copies" if copies > 1 else "cuda-graph (warm L2)"
        return Timing(per_call, inner=inner, flush_seconds=0.0, method=method + idle)
    flush_each = per_call.pop()
    samples = [[max(x - f, 0.0) for x, f in zip(series, flush_each)] for series in per_call]
    placements = f"+{copies}-placements" if copies > 1 else ""
    if issuers is not None and len(issuers) != copies:
        placements += f"+{len(issuers)}-workspaces"
    if len(buffers) > 1:
        placements += f"+{len(buffers)}-flush-buffers"
    if captures > 1:
        placements += f"+{captures}-captures"
    return Timing(
        samples,
        inner=inner,
        flush_seconds=statistics.median(flush_each),
        method=Timing.method + ("-read" if flush_kind == "read" else "") + placements + idle,
    )


class _Replay:
    """A side's replay: its graphs, one after another."""

    def __init__(self, parts) -> None:
        self.parts = parts

    def replay(self) -> None:
        for g in self.parts:
            g.replay()


def flush_bytes(l2_bytes: int | None = None) -> int:
    """The size of an L2 flush buffer: twice the L2 (at least 1 MiB), whole float32 words."""
    import torch

    if l2_bytes is None:
        l2_bytes = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    return max(2 * l2_bytes, 1 << 20) // 4 * 4


_flush_pool: dict[tuple[int, int], list] = {}


def process_flush_buffers(n: int, nbytes: int | None = None) -> list:
    """The process's first `n` L2 flush buffers of `nbytes` (default `flush_bytes()`) on the current
    device, created when first asked for and kept for the process's life: created when the
    measuring process starts (benchmarks.measure.prepare_process), where they lie does not depend on
    the cells measured before, and a replay over several spans as many places in memory."""
    import torch

    nbytes = nbytes or flush_bytes()
    pool = _flush_pool.setdefault((torch.cuda.current_device(), nbytes), [])
    while len(pool) < n:
        pool.append(torch.zeros(nbytes // 4, dtype=torch.float32, device="cuda"))
    return pool[:n]


def drop_flush_buffers() -> None:
    """Forget the process's flush buffers (the next measurement creates them anew): for probes of
    where they lie."""
    _flush_pool.clear()


def rotating_copies(footprint_bytes: int, l2_bytes: int, limit: int = 64) -> int:
    """Operand copies that make every call cold in L2 without a flush; 0 if more than `limit` would be needed.

    A call's previous use of its copy is `copies - 1` calls back; those calls
    must have moved at least twice the L2's size (the flush's own margin).
    At least 2, so that a footprint larger than the L2 is not re-read warm
    from its own tail.
    """
    if footprint_bytes <= 0 or l2_bytes <= 0:
        raise ValueError(f"rotating_copies: sizes must be positive, got {footprint_bytes}, {l2_bytes}")
    copies = max(2, math.ceil(2 * l2_bytes / footprint_bytes) + 1)
    return copies if copies <= limit else 0


def _per_call_seconds(fns, stream, flush=None, calls: int = 3, replays: int = 5) -> list[float]:
    """Each callable's GPU time per call: a CUDA graph of `calls` calls (each after `flush`,
    whose own graph's time is subtracted), replayed and timed.

    Host launch overhead stays out, so the figure (which sets the calls per replay and
    whether a cooldown applies) is the same from run to run: estimated from eager calls,
    it was the host's launch rate for short kernels and jumped with any host hiccup (on
    the H200, 21 of 181 short cells timed with a cooldown in one run and not in another;
    one 8 us cell's ratio moved 5% with it). Each graph's time is the median of `replays`
    replays: from one replay, the difference of two ~120 us graphs (three flushes with and
    without the calls) put a 7 us cell's calls per replay at 144 in one run and 200 in the
    next. Captured on `stream`, after a call of each.
    """
    import torch

    def graph_seconds(fn) -> float:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=stream):
            for _ in range(calls):
                if flush is not None:
                    flush()
                if fn is not None:
                    fn()
        g.replay()  # uploads the graph
        seconds = []
        for _ in range(replays):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(stream)
            g.replay()
            end.record(stream)
            end.synchronize()
            seconds.append(start.elapsed_time(end) / 1e3 / calls)
        return statistics.median(seconds)

    flush_seconds = graph_seconds(None) if flush is not None else 0.0
    return [max(graph_seconds(fn) - flush_seconds, 1e-7) for fn in fns]


def _choose_inner(per_call: list[float]) -> int:
    """Calls per replay so that the fastest callable's replay lasts >= MIN_REPLAY_SECONDS."""
    fastest = max(min(per_call), 1e-6)
    return int(min(MAX_INNER, max(1, round(MIN_REPLAY_SECONDS / fastest))))


def tflops(M: int, N: int, K: int, seconds: float) -> float:
    """TFLOP/s of an M x N x K GEMM (2 MNK FLOPs) taking `seconds`."""
    return 2.0 * M * N * K / seconds / 1e12 if seconds > 0 else float("nan")


def side_by_side(named: Sequence[tuple[str, Callable[[], object]]], rounds: int, warmup: int = 2) -> list[str]:
    """The probes' table: `named` (label, call) timed in one interleaved measurement, one line each
    with its median in us and the first side's median over its own (x > 1: faster than the first)."""
    timing = measure(*[call for _, call in named], rounds=rounds, warmup=warmup)
    base = timing.median(0)
    width = max(48, *(len(name) for name, _ in named))
    return [
        f"  {name:<{width}} {timing.median(i) * 1e6:8.2f}  {base / timing.median(i):6.3f}x"
        for i, (name, _) in enumerate(named)
    ]


def checked_sides(
    sides: Sequence[tuple[str, Callable[[], object], object]], reference, max_error: float = 2e-2
) -> list[tuple[str, Callable[[], object]]]:
    """The probes' sides that run and compute `reference` (a float64 tensor): each (label, call,
    output) is called once and its output compared (relative Frobenius error <= `max_error`); one
    that raises or errs is printed with its reason and left out, the others still checked."""
    import torch
    from triton.errors import TritonError  # (a compile that fails: CompilationError)

    checked = []
    for name, call, result in sides:
        try:
            call()
            if torch.cuda.is_available():
                torch.cuda.synchronize()
        except (TritonError, RuntimeError, ValueError) as err:  # the other sides still run
            print(f"  {name}: failed: {type(err).__name__}: {str(err).splitlines()[0][:160]}")
            continue
        error = ((result.double() - reference).norm() / reference.norm()).item()
        if error > max_error:
            print(f"  {name}: relative error {error:.3g}, dropped")
            continue
        checked.append((name, call))
    return checked


def probe_table(named: Sequence[tuple[str, Callable[[], object]]], rounds: int) -> list[str]:
    """A probe's lines for its checked sides (`checked_sides`): on a GPU `side_by_side`'s table under
    its heading, in the interpreter (no timing there) the sides' names."""
    import torch

    if not torch.cuda.is_available():
        return ["  checked (interpreter): " + ", ".join(name for name, _ in named)]
    heading = f"  (us, median of {rounds} rounds, L2 flushed; x = {named[0][0]} / side)"
    return [heading, *side_by_side(named, rounds)]
