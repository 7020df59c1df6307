"""The GPU timing protocol every gemmwatch measurement uses.

Kernel time is GPU time: CUDA events around CUDA-graph replays, so host launch
overhead stays out (on the H200, graph timing cut the cross-process noise of a
20 us kernel from 8% to 0.4% against per-launch events). Each replay runs the
kernel `inner` times, each preceded by an L2 flush captured in the same graph;
a graph of the flushes alone is replayed in the same rounds and its time
subtracted, so the figure is a cold-L2 kernel time without the flush.

The two sides of a comparison (Triton and native, or base and head) are
interleaved A, B, flush in every round on the same inputs, and their ratio is
taken per round: clock and power drift (7-9% within one process on the H200)
moves both sides of a round together and cancels in the ratio.

On the CPU (Triton's interpreter) the same interface times with the host clock;
those numbers exercise the pipeline and carry no performance signal.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

# Replays are sized to take at least this long, far above event resolution (~0.5 us).
MIN_REPLAY_SECONDS = 1e-3
MAX_INNER = 200


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


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def measure(
    *fns: Callable[[], object],
    rounds: int = 30,
    warmup: int = 3,
    flush_l2: bool = True,
    l2_bytes: int | None = None,
) -> Timing:
    """Time `fns` interleaved (one replay of each per round); see the module docstring."""
    if not fns:
        raise ValueError("measure needs at least one callable")
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    for _ in range(warmup):  # compiles, autotunes, creates library handles
        for fn in fns:
            fn()
    if _cuda_available():
        return _measure_cuda(fns, rounds=rounds, flush_l2=flush_l2, l2_bytes=l2_bytes)
    return _measure_host(fns, rounds=rounds)


def _measure_host(fns, *, rounds) -> Timing:
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, out in zip(fns, samples):
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return Timing(samples, inner=1, method="host-clock (interpreter: not performance)")


def _measure_cuda(fns, *, rounds, flush_l2, l2_bytes) -> Timing:
    import torch

    if l2_bytes is None:
        l2_bytes = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    # Writing twice the L2's size evicts every line the previous kernel left.
    flush_buffer = torch.empty(max(2 * l2_bytes, 1 << 20), dtype=torch.uint8, device="cuda")

    def flush():
        if flush_l2:
            flush_buffer.zero_()

    torch.cuda.synchronize()
    inner = _choose_inner(fns)

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graphs = []
    with torch.cuda.stream(stream):
        for fn in (*fns, None):  # the last graph holds the flushes alone
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=stream):
                for _ in range(inner):
                    flush()
                    if fn is not None:
                        fn()
            graphs.append(g)
    torch.cuda.current_stream().wait_stream(stream)
    for g in graphs:  # the first replay uploads the graph
        g.replay()
    torch.cuda.synchronize()

    events: list[list[tuple]] = [[] for _ in graphs]
    for _ in range(rounds):
        for g, out in zip(graphs, events):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            g.replay()
            end.record()
            out.append((start, end))
    torch.cuda.synchronize()
    per_call = [[s.elapsed_time(e) / 1e3 / inner for s, e in pairs] for pairs in events]
    flush_each = per_call.pop()
    samples = [[max(x - f, 0.0) for x, f in zip(series, flush_each)] for series in per_call]
    return Timing(samples, inner=inner, flush_seconds=statistics.median(flush_each))


def _choose_inner(fns) -> int:
    """Calls per replay so that the fastest callable's replay lasts >= MIN_REPLAY_SECONDS."""
    import torch

    per_call = []
    for fn in fns:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            fn()
        end.record()
        torch.cuda.synchronize()
        per_call.append(start.elapsed_time(end) / 1e3 / 5)
    fastest = max(min(per_call), 1e-6)
    return int(min(MAX_INNER, max(1, round(MIN_REPLAY_SECONDS / fastest))))


def tflops(M: int, N: int, K: int, seconds: float) -> float:
    """TFLOP/s of an M x N x K GEMM (2 MNK FLOPs) taking `seconds`."""
    return 2.0 * M * N * K / seconds / 1e12 if seconds > 0 else float("nan")
