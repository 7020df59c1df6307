"""The timing protocol's CPU-checkable parts: operand copies (rotating instead of an L2 flush, or
flushed placements), the knobs, and on a GPU the protocol itself."""

import functools
import math
import re

import pytest
import torch

from benchmarks.cells import Cell, Prepared, relative_error
from benchmarks.measure import (
    PLACEMENTS,
    cold_l2_method,
    expected_call_seconds,
    measure_cell,
    placement_sensitive,
    timed_sides,
)
from benchmarks.timing import Placements, measure, rotating_copies
from targets import catalogue, detect

MiB = 1 << 20


def test_rotating_copies_move_twice_the_l2_between_uses_of_a_copy():
    l2 = 60 * MiB
    for footprint in (1 * MiB + 1, 4 * MiB, 32 * MiB, 59 * MiB, 61 * MiB, 2000 * MiB):
        copies = rotating_copies(footprint, l2, limit=1000)
        assert (copies - 1) * footprint >= 2 * l2 or copies == 2
        assert copies >= 2
        # ... and not more than needed
        assert copies == 2 or (copies - 2) * footprint < 2 * l2
    assert rotating_copies(32 * MiB, l2) == 5
    assert rotating_copies(1 * MiB, l2) == 0, "over the limit: the caller flushes instead"
    with pytest.raises(ValueError, match="sizes must be positive"):
        rotating_copies(0, l2)


def test_measure_cycles_through_every_copy_in_order():
    calls = []
    sides = [
        [lambda i=i: calls.append(("a", i)) for i in range(3)],
        [lambda i=i: calls.append(("b", i)) for i in range(3)],
    ]
    timing = measure(*sides, rounds=6, warmup=0)
    assert len(timing.samples) == 2 and all(len(s) == 6 for s in timing.samples)
    # Each round uses the next copy; the sides' order rotates from round to round.
    assert calls == [(side, r % 3) for r in range(6) for side in (("a", "b") if r % 2 == 0 else ("b", "a"))]


def test_every_side_takes_every_position_of_a_round_equally_often():
    from benchmarks.timing import round_order

    orders = [round_order(r, 3) for r in range(6)]
    assert orders[:3] == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    for side in range(3):
        assert sorted(order.index(side) for order in orders) == [0, 0, 1, 1, 2, 2]


def test_measure_refuses_unequal_rotations():
    with pytest.raises(ValueError, match="same number of callables on every side"):
        measure([lambda: None] * 2, [lambda: None] * 3, rounds=1, warmup=0)
    with pytest.raises(ValueError, match="same number of callables on every side"):
        measure([lambda: None] * 2, lambda: None, rounds=1, warmup=0)


@pytest.mark.parametrize("dtype", ["fp16", "fp8_e4m3"])
def test_operand_copies_are_equal_clones_with_the_same_strides(dtype, device):
    prep = Prepared(Cell(dtype, 33, 48, 64), device)
    copies = prep.operand_copies(3)
    assert copies[0] == (prep.a, prep.b, prep.out, prep.native_out)
    for ops in copies[1:]:
        for original, clone in zip(copies[0][:2], ops[:2]):
            assert clone.data_ptr() != original.data_ptr()
            assert clone.stride() == original.stride() and torch.equal(clone.float(), original.float())
    ref = prep.reference()
    for ops in copies:
        assert relative_error(prep.triton(operands=ops), ref) < 1e-2
        assert ops[2].data_ptr() == prep.triton(operands=ops).data_ptr(), "each copy writes its own output"


@pytest.mark.parametrize("dtype", ["fp16", "fp8_e4m3"])
def test_operand_copies_in_an_arena_lie_at_offsets_set_by_the_cell_alone(dtype, device):
    """GEMMWATCH_ARENA's copies: every copy, the first too, a view into the arena at the same
    offsets whatever was allocated before, with the operands' values and strides (fp8's column-major
    B too), each tensor 256-byte aligned, the copies apart; an arena too small is refused by name."""
    from benchmarks.cells import ARENA_ALIGN, TENSOR_ALIGN

    prep = Prepared(Cell(dtype, 33, 48, 64), device)
    need = prep.arena_bytes(3)
    assert need % (3 * ARENA_ALIGN) == 0 and need >= 3 * prep.footprint_bytes
    arena = torch.empty(need + 4096, dtype=torch.uint8, device=device)
    base = arena.data_ptr()
    copies = prep.operand_copies(3, arena=arena)
    originals = (prep.a, prep.b, prep.out, prep.native_out)
    offsets = []
    for i, ops in enumerate(copies):
        for original, view in zip(originals, ops):
            assert view.untyped_storage().data_ptr() == arena.untyped_storage().data_ptr(), "a view, not a copy"
            assert view.stride() == original.stride() and view.dtype == original.dtype
            assert (view.data_ptr() - base) % TENSOR_ALIGN == 0
        assert ops[0].data_ptr() - base == i * need // 3
        assert torch.equal(ops[0].float(), prep.a.float()) and torch.equal(ops[1].float(), prep.b.float())
        offsets.append([t.data_ptr() - base for t in ops])
    assert len({off for row in offsets for off in row}) == 12, "no two tensors share a place"
    ref = prep.reference()
    for ops in copies:
        assert relative_error(prep.triton(operands=ops), ref) < 1e-2
    held = torch.empty(12345, dtype=torch.uint8, device=device)  # another history, the same places
    again = Prepared(Cell(dtype, 33, 48, 64), device).operand_copies(3, arena=arena)
    assert [[t.data_ptr() - base for t in ops] for ops in again] == offsets
    del held
    with pytest.raises(ValueError, match=f"the operand arena holds {need - 1} bytes, {dtype} 33x48x64 needs {need}"):
        prep.operand_copies(3, arena=arena[: need - 1])


def test_timed_sides_put_placed_copies_in_the_arena_where_they_fit(monkeypatch, device):
    import benchmarks.measure
    from benchmarks.measure import operand_arena

    spec = catalogue.H200
    monkeypatch.setattr(benchmarks.measure, "_device_memory", lambda: 141 << 30)
    monkeypatch.setenv("GEMMWATCH_ARENA", "0")
    assert operand_arena() is False
    prep = Prepared(Cell("fp16", 16, 32, 32), device)
    arena = torch.empty(prep.arena_bytes(PLACEMENTS), dtype=torch.uint8, device=device)
    placed = timed_sides(prep, "cuda", spec, [lambda ops: ops, lambda ops: ops], arena=arena)
    assert all(isinstance(side, Placements) and len(side) == PLACEMENTS for side in placed)
    start, end = arena.data_ptr(), arena.data_ptr() + arena.numel()
    assert all(start <= fn()[0].data_ptr() < end for fn in placed[0]), "every copy in the arena"
    small = arena[: prep.arena_bytes(PLACEMENTS) - 1]
    assert callable(timed_sides(prep, "cuda", spec, [lambda ops: None], arena=small)[0]), "too big: one placement"
    monkeypatch.setattr(benchmarks.measure, "_arena", arena)  # (the process's, as prepare_process makes it)
    placed = timed_sides(prep, "cuda", spec, [lambda ops: ops])
    assert not any(start <= fn()[0].data_ptr() < end for fn in placed[0]), "GEMMWATCH_ARENA=0: fresh clones"
    monkeypatch.delenv("GEMMWATCH_ARENA")
    assert operand_arena() is True, "on by default: the protocol since 2026-12-03"
    placed = timed_sides(prep, "cuda", spec, [lambda ops: ops])
    assert all(start <= fn()[0].data_ptr() < end for fn in placed[0]), "the process's arena by default"
    monkeypatch.setenv("GEMMWATCH_ARENA", "yes")
    with pytest.raises(ValueError, match="GEMMWATCH_ARENA must be '0' or '1', got 'yes'"):
        operand_arena()


def test_timed_sides_flush_on_the_cpu_and_on_request(monkeypatch, device):
    import benchmarks.measure

    spec = catalogue.H200
    monkeypatch.setattr(benchmarks.measure, "_device_memory", lambda: 141 << 30)
    prep = Prepared(Cell("fp16", 16, 32, 32), device)
    sides = timed_sides(prep, "cpu", spec, [lambda ops: prep.triton(operands=ops)])
    assert callable(sides[0]), "no copies in the interpreter"
    monkeypatch.delenv("GEMMWATCH_COLD_L2", raising=False)
    assert cold_l2_method() == "flush", "the default"
    monkeypatch.setenv("GEMMWATCH_ARENA", "0")  # fresh clones (the arena's copies: the test above)
    placed = timed_sides(prep, "cuda", spec, [lambda ops: ops, lambda ops: ops])
    assert all(isinstance(side, Placements) and len(side) == PLACEMENTS for side in placed), "a small cell"
    assert [fn() for fn in placed[0]] == [fn() for fn in placed[1]], "both sides call the same copies in turn"
    assert len({fn()[1].data_ptr() for fn in placed[0]}) == PLACEMENTS, "each copy lies elsewhere"
    monkeypatch.setattr(benchmarks.measure, "_device_memory", lambda: PLACEMENTS * prep.footprint_bytes)
    assert callable(timed_sides(prep, "cuda", spec, [lambda ops: None])[0]), "copies over the memory share: one"
    monkeypatch.setenv("GEMMWATCH_COLD_L2", "rotate")
    small_l2 = spec.replace(l2_bytes=4096)
    rotated = timed_sides(prep, "cuda", small_l2, [lambda ops: ops])
    assert not isinstance(rotated[0], Placements)
    assert isinstance(rotated[0], list) and len(rotated[0]) == rotating_copies(prep.footprint_bytes, 4096)
    monkeypatch.setenv("GEMMWATCH_COLD_L2", "evict")
    with pytest.raises(ValueError, match="GEMMWATCH_COLD_L2 must be 'rotate' or 'flush', got 'evict'"):
        cold_l2_method()


class _Shape:
    """What placement_sensitive reads of a Prepared cell, without allocating the operands."""

    def __init__(self, dtype, M, N, K, element_bytes, out_bytes=2):
        self.cell = Cell(dtype, M, N, K)
        self.footprint_bytes = (M * K + K * N) * element_bytes + M * N * out_bytes


@pytest.mark.parametrize(
    "shape, sensitive",
    [
        (_Shape("fp16", 16, 4096, 4096, 2), True),  # decode: memory-bound
        (_Shape("bf16", 128, 57344, 8192, 2), True),  # M = 128: still below the ridge, 1 GB of weights
        (_Shape("fp16", 1024, 1024, 1024, 2), True),  # compute-bound, but a few microseconds in the L2
        (_Shape("fp16", 4096, 4096, 4096, 2), False),  # 180 us of MMAs
        (_Shape("fp8_e4m3", 4096, 57344, 8192, 1), False),
        (_Shape("fp32-ieee", 3000, 5000, 1000, 4, 4), False),  # fp32 at 67 TFLOP/s: compute-bound
    ],
)
def test_placement_copies_go_to_memory_bound_and_small_cells(shape, sensitive):
    assert placement_sensitive(shape, catalogue.H200) is sensitive
    unknown_bandwidth = catalogue.H200.replace(mem_bandwidth_gbs=None)
    assert placement_sensitive(shape, unknown_bandwidth) is (shape.footprint_bytes <= unknown_bandwidth.l2_bytes)


def _roofline(cell):
    return expected_call_seconds(Prepared(cell, "cpu", values=False), detect())


def test_the_expected_call_time_is_the_roofline_of_the_chip():
    h200 = catalogue.H200
    decode = _Shape("fp16", 16, 4096, 4096, 2)
    assert expected_call_seconds(decode, h200) == pytest.approx(decode.footprint_bytes / 4800e9)  # memory
    square = _Shape("fp16", 4096, 4096, 4096, 2)
    assert expected_call_seconds(square, h200) == pytest.approx(2 * 4096**3 / (h200.peak_tflops.get("fp16") * 1e12))
    assert expected_call_seconds(square, h200.replace(mem_bandwidth_gbs=None)) is None, "timed instead"


def test_the_cooldown_goes_to_cells_whose_roofline_time_is_long(monkeypatch):
    from benchmarks.measure import COOLDOWN_MIN_ROOFLINE_SECONDS, timing_plan

    monkeypatch.setenv("GEMMWATCH_COOLDOWN", "2")
    monkeypatch.delenv("GEMMWATCH_FLUSH", raising=False)
    monkeypatch.delenv("GEMMWATCH_STREAMS", raising=False)
    monkeypatch.delenv("GEMMWATCH_PLACEMENT_THREADS", raising=False)
    monkeypatch.delenv("GEMMWATCH_WORKSPACES", raising=False)
    monkeypatch.delenv("GEMMWATCH_FLUSH_BUFFERS", raising=False)
    monkeypatch.delenv("GEMMWATCH_CAPTURES", raising=False)
    monkeypatch.delenv("GEMMWATCH_SETTLE", raising=False)
    from benchmarks.measure import DEFAULT_FLUSH_BUFFERS

    knobs = {
        "flush_kind": "write",
        "streams": 1,
        "threads": True,
        "workspaces": None,
        "flush_buffers": int(DEFAULT_FLUSH_BUFFERS),
        "captures": 1,
        "settle": 0.0,
    }
    h200 = catalogue.H200
    fp8_square = _Shape("fp8_e4m3", 4096, 4096, 4096, 1)  # roofline 69 us: power-capped without a cooldown
    plan = timing_plan(fp8_square, h200)
    assert plan == {"call_seconds": expected_call_seconds(fp8_square, h200), "cooldown": 2.0, **knobs}
    assert plan["call_seconds"] >= COOLDOWN_MIN_ROOFLINE_SECONDS
    decode = _Shape("fp16", 16, 4096, 4096, 2)
    assert timing_plan(decode, h200) == {"call_seconds": expected_call_seconds(decode, h200), "cooldown": 0.0, **knobs}
    # Without the chip's figures the timing decides from its own estimate: the cooldown is passed on.
    unknown = h200.replace(mem_bandwidth_gbs=None)
    assert timing_plan(decode, unknown) == {"call_seconds": None, "cooldown": 2.0, **knobs}
    # The knobs the run records (protocol_id) reach every caller of the plan: suites, recheck, tuner.
    monkeypatch.setenv("GEMMWATCH_FLUSH", "read")
    monkeypatch.setenv("GEMMWATCH_STREAMS", "4")
    monkeypatch.setenv("GEMMWATCH_PLACEMENT_THREADS", "0")
    monkeypatch.setenv("GEMMWATCH_WORKSPACES", "32")
    monkeypatch.setenv("GEMMWATCH_FLUSH_BUFFERS", "3")
    monkeypatch.setenv("GEMMWATCH_CAPTURES", "4")
    monkeypatch.setenv("GEMMWATCH_SETTLE", "0.2")
    plan = timing_plan(decode, h200)
    assert plan["flush_kind"] == "read" and plan["streams"] == 4 and plan["threads"] is False
    assert plan["workspaces"] == 32 and plan["flush_buffers"] == 3 and plan["captures"] == 4
    assert plan["settle"] == 0.2


def test_the_flush_kind_is_read_from_the_environment_and_checked(monkeypatch):
    from benchmarks.measure import flush_kind

    monkeypatch.delenv("GEMMWATCH_FLUSH", raising=False)
    assert flush_kind() == "write", "the default: the protocol of every recorded result"
    monkeypatch.setenv("GEMMWATCH_FLUSH", "read")
    assert flush_kind() == "read"
    with pytest.raises(ValueError, match="flush_kind must be one of write, read, got 'evict'"):
        measure(lambda: None, rounds=1, warmup=0, flush_kind="evict")


def test_the_recorded_protocol_names_every_knob_that_changes_the_measurement(monkeypatch):
    from benchmarks.context import software_versions
    from benchmarks.measure import protocol_id
    from benchmarks.timing import PROTOCOL

    for name in ("GEMMWATCH_COLD_L2", "GEMMWATCH_FLUSH", "GEMMWATCH_STREAMS", "GEMMWATCH_COOLDOWN",
                 "GEMMWATCH_PLACEMENT_THREADS", "GEMMWATCH_WORKSPACES", "GEMMWATCH_EARLY_WORKSPACES",
                 "GEMMWATCH_FLUSH_BUFFERS", "GEMMWATCH_CAPTURES", "GEMMWATCH_SETTLE", "GEMMWATCH_ARENA"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEMMWATCH_INJECT_SLOWDOWN", "fp16 16x32x32=0.03")  # compared with clean runs: not named
    assert protocol_id() == PROTOCOL == software_versions()["timing_protocol"]
    monkeypatch.setenv("GEMMWATCH_FLUSH", "read")
    monkeypatch.setenv("GEMMWATCH_COOLDOWN", "0")
    assert protocol_id() == f"{PROTOCOL}+flush=read+cooldown=0"
    monkeypatch.setenv("GEMMWATCH_COLD_L2", "rotate")
    monkeypatch.setenv("GEMMWATCH_STREAMS", "4")
    assert protocol_id() == f"{PROTOCOL}+cold-l2=rotate+flush=read+streams=4+cooldown=0"
    monkeypatch.setenv("GEMMWATCH_PLACEMENT_THREADS", "0")
    assert protocol_id().endswith("+cooldown=0+placement-threads=0")
    monkeypatch.setenv("GEMMWATCH_WORKSPACES", "32")
    assert protocol_id().endswith("+placement-threads=0+workspaces=32")
    monkeypatch.setenv("GEMMWATCH_EARLY_WORKSPACES", "1")
    assert protocol_id().endswith("+workspaces=32")
    monkeypatch.setenv("GEMMWATCH_EARLY_WORKSPACES", "0")
    assert protocol_id().endswith("+workspaces=32+early-workspaces=0")
    from benchmarks.measure import DEFAULT_FLUSH_BUFFERS

    monkeypatch.setenv("GEMMWATCH_FLUSH_BUFFERS", DEFAULT_FLUSH_BUFFERS)
    assert protocol_id().endswith("+early-workspaces=0")
    other = "1" if DEFAULT_FLUSH_BUFFERS != "1" else "0"
    monkeypatch.setenv("GEMMWATCH_FLUSH_BUFFERS", other)
    assert protocol_id().endswith(f"+early-workspaces=0+flush-buffers={other}")
    monkeypatch.setenv("GEMMWATCH_CAPTURES", "4")
    assert protocol_id().endswith(f"+flush-buffers={other}+captures=4")
    monkeypatch.setenv("GEMMWATCH_SETTLE", "0.25")
    assert protocol_id().endswith("+captures=4+settle=0.25")
    monkeypatch.setenv("GEMMWATCH_ARENA", "1")
    assert protocol_id().endswith("+settle=0.25")
    monkeypatch.setenv("GEMMWATCH_ARENA", "0")
    assert protocol_id().endswith("+settle=0.25+arena=0")
    monkeypatch.setenv("GEMMWATCH_COOL_START", "1.5")
    assert protocol_id().endswith("+settle=0.25+cool-start=1.5+arena=0")


def test_early_workspaces_are_checked_and_nothing_is_prepared_off_the_gpu(monkeypatch):
    from benchmarks.measure import early_workspaces, prepare_process
    from benchmarks.timing import _Issuer

    monkeypatch.delenv("GEMMWATCH_EARLY_WORKSPACES", raising=False)
    assert early_workspaces() is True, "the default since protocol 2026-12-02b: when the process starts"
    for bad in ("yes", "2", ""):
        monkeypatch.setenv("GEMMWATCH_EARLY_WORKSPACES", bad)
        with pytest.raises(ValueError, match=f"GEMMWATCH_EARLY_WORKSPACES must be '0' or '1', got {bad!r}"):
            early_workspaces()
    monkeypatch.setenv("GEMMWATCH_EARLY_WORKSPACES", "1")
    issuers = len(_Issuer._all)
    prepare_process("cpu")  # the interpreter has no library workspaces: nothing to create
    assert len(_Issuer._all) == issuers


def test_the_workspaces_a_placed_replay_spreads_over_are_checked(monkeypatch):
    from benchmarks.measure import placement_workspaces

    monkeypatch.delenv("GEMMWATCH_WORKSPACES", raising=False)
    assert placement_workspaces() is None, "one per operand copy: the protocol of every recorded result"
    for bad in ("0", "65", "eight", "-4", ""):
        monkeypatch.setenv("GEMMWATCH_WORKSPACES", bad)
        with pytest.raises(ValueError, match=f"GEMMWATCH_WORKSPACES must be an integer in 1..64, got {bad!r}"):
            placement_workspaces()
    for bad in (0, 65, 2.0, True):
        with pytest.raises(ValueError, match="workspaces must be an int in 1..64"):
            measure(lambda: None, rounds=1, warmup=0, workspaces=bad)
    assert len(measure(lambda: None, rounds=2, warmup=0, workspaces=32).samples[0]) == 2


@pytest.mark.parametrize(
    ("env", "reader", "default", "bad_env", "env_message", "kwarg", "bad_values", "kwarg_message", "good"),
    [
        ("GEMMWATCH_FLUSH_BUFFERS", "flush_buffer_count", 0, ("65", "eight", "-1", ""),
         "must be an integer in 0..64", "flush_buffers", (-1, 65, 2.0, True, None), "must be an int in 0..64", 8),
        ("GEMMWATCH_CAPTURES", "graph_captures", 1, ("0", "17", "two", ""),
         "must be an integer in 1..16", "captures", (0, 17, 2.0, True, None), "must be an int in 1..16", 4),
        ("GEMMWATCH_SETTLE", "settle_seconds", 0.0, ("-0.1", "11", "long", "", "nan"),
         "must be a number of seconds in 0..10", "settle", (-1, 11, True, None, "0.2"),
         "must be a number of seconds in 0..10", 0.5),
    ],
)  # fmt: skip
def test_the_evidence_knobs_are_checked(
    monkeypatch, env, reader, default, bad_env, env_message, kwarg, bad_values, kwarg_message, good
):
    """Off by default (the protocol of every recorded result); a bad setting is refused, by name,
    from the environment and as timing.measure's argument."""
    from benchmarks import measure as measure_module

    read = getattr(measure_module, reader)
    monkeypatch.delenv(env, raising=False)
    assert read() == default
    monkeypatch.setenv(env, str(good))
    assert read() == good
    for bad in bad_env:
        monkeypatch.setenv(env, bad)
        with pytest.raises(ValueError, match=re.escape(f"{env} {env_message}, got {bad!r}")):
            read()
    for bad in bad_values:
        with pytest.raises(ValueError, match=re.escape(f"{kwarg} {kwarg_message}")):
            measure(lambda: None, rounds=1, warmup=0, **{kwarg: bad})
    assert len(measure(lambda: None, rounds=2, warmup=0, **{kwarg: good}).samples[0]) == 2


def test_no_flush_buffer_is_created_off_the_gpu(monkeypatch):
    from benchmarks import timing
    from benchmarks.measure import prepare_process

    monkeypatch.setenv("GEMMWATCH_FLUSH_BUFFERS", "8")
    prepare_process("cpu")  # the interpreter has no L2 to flush: nothing to create
    assert timing._flush_pool == {}


def test_measure_refuses_a_call_time_that_is_not_a_positive_number():
    for bad in (0, -1e-6, "1e-3"):
        with pytest.raises(ValueError, match="call_seconds must be a positive number of seconds"):
            measure(lambda: None, rounds=1, warmup=0, call_seconds=bad)
    assert len(measure(lambda: None, rounds=2, warmup=0, call_seconds=1e-5).samples[0]) == 2


def test_placements_are_flushed_copies_on_every_side_or_none():
    calls = []
    sides = [Placements([lambda i=i, s=s: calls.append((s, i)) for i in range(2)]) for s in "ab"]
    timing = measure(*sides, rounds=4, warmup=0)
    assert calls == [(s, r % 2) for r in range(4) for s in ("ab" if r % 2 == 0 else "ba")]
    assert timing.method.startswith("host-clock")
    with pytest.raises(ValueError, match="Placements on one side need Placements on every side"):
        measure(Placements([lambda: None] * 2), [lambda: None] * 2, rounds=1, warmup=0)
    with pytest.raises(ValueError, match="same number of callables on every side"):
        measure(Placements([lambda: None] * 2), lambda: None, rounds=1, warmup=0)


def test_cooldown_is_read_from_the_environment_and_checked(monkeypatch):
    from benchmarks.measure import cooldown

    # (the default: as long idle as busy, for long kernels)
    _check_knob(monkeypatch, "GEMMWATCH_COOLDOWN", cooldown, 1.0, ("1.5", 1.5), ("-1", "fast", "1000"),
                "must be a number in 0..100 (idle time per round time)")  # fmt: skip
    with pytest.raises(ValueError, match="cooldown must be a number in 0..100"):
        measure(lambda: None, rounds=1, cooldown=-0.5)


def test_the_streams_knob_is_read_from_the_environment_and_checked(monkeypatch):
    from benchmarks.measure import timing_streams

    _check_knob(monkeypatch, "GEMMWATCH_STREAMS", timing_streams, 1, ("4", 4), ("0", "17", "two", "-1", "1.5"),
                "must be an integer in 1..16")  # fmt: skip
    for bad in (0, 17, 2.0):
        with pytest.raises(ValueError, match=f"streams must be an int in 1..16, got {bad!r}"):
            measure(lambda: None, rounds=1, streams=bad)


@pytest.mark.gpu
def test_calls_spread_over_streams_stay_in_order_and_time_alike(gpu_to_itself):
    # Serial split-K: per-stream tile counters, and its partial sums allocated in the graph. Spread
    # over 4 streams each call still waits for the previous one (the sum is exact after the
    # replays: no slice raced another), and the same kernel times the same either way.
    import kernels
    from targets import GemmConfig

    gen = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn((16, 4096), device="cuda", generator=gen, dtype=torch.float16)
    b = torch.randn((4096, 4096), device="cuda", generator=gen, dtype=torch.float16)
    serial = GemmConfig(16, 64, 128, 4, 4, variant="splitk_serial", split_k=4)
    out = torch.empty((16, 4096), device="cuda", dtype=torch.float16)
    expected = kernels.matmul(a, b, config=GemmConfig(16, 64, 128, 4, 4, variant="splitk", split_k=4)).clone()

    def fn():
        kernels.matmul(a, b, config=serial, out=out)

    def native():
        torch.matmul(a, b)

    spread = measure(fn, native, rounds=10, warmup=1, streams=4)
    plain = measure(fn, native, rounds=10, warmup=1)
    assert spread.method == "cuda-graph+l2-flush+4-streams" and plain.method == "cuda-graph+l2-flush"
    assert spread.inner % 4 == 0
    assert torch.equal(out, expected)
    assert abs(spread.median(0) / plain.median(0) - 1) < 0.05, (spread.median(0), plain.median(0))
    assert abs(spread.median(1) / plain.median(1) - 1) < 0.05, (spread.median(1), plain.median(1))


@pytest.mark.gpu
def test_a_cooldown_idles_between_rounds_and_is_recorded():
    import time

    import torch

    fn = functools.partial(torch.cuda._sleep, 2_000_000)  # a GPU spin of about 1 ms
    measure(fn, rounds=2, warmup=1)  # one-time costs (graph pool, events) out of the comparison
    start = time.perf_counter()
    plain = measure(fn, rounds=10, warmup=1)
    busy = time.perf_counter() - start
    start = time.perf_counter()
    cooled = measure(fn, rounds=10, warmup=1, cooldown=2.0)
    idle = time.perf_counter() - start
    assert cooled.method == "cuda-graph+l2-flush+cooldown2" and plain.method == "cuda-graph+l2-flush"
    # Each of the 10 rounds idles twice its duration, which is at least the kernel's own time.
    assert idle - busy > 0.5 * 10 * 2.0 * cooled.median(0) * cooled.inner, (busy, idle, cooled.median(0))
    assert abs(cooled.median(0) / plain.median(0) - 1) < 0.1  # the kernel's own time is unchanged
    short = measure(functools.partial(torch.cuda._sleep, 20_000), rounds=3, warmup=1, cooldown=2.0)
    assert short.method == "cuda-graph+l2-flush", "calls below COOLDOWN_MIN_CALL_SECONDS run back to back"


def _check_knob(monkeypatch, env, read, default, good, bad_values, message):
    """An environment knob: `default` unset (the protocol of every recorded result), `good` = (raw,
    value) read back, each bad raw value refused by name with `message`."""
    monkeypatch.delenv(env, raising=False)
    assert read() == default, "the default: the protocol of every recorded result"
    monkeypatch.setenv(env, good[0])
    assert read() == good[1]
    for bad in bad_values:
        monkeypatch.setenv(env, bad)
        with pytest.raises(ValueError, match=re.escape(f"{env} {message}, got {bad!r}")):
            read()


def test_the_cool_start_knob_is_checked(monkeypatch):
    from benchmarks.measure import cool_start_seconds

    _check_knob(monkeypatch, "GEMMWATCH_COOL_START", cool_start_seconds, 0.0, ("2", 2.0),
                ("-1", "11", "warm", "", "nan"), "must be a number of seconds in 0..10")  # fmt: skip


class _Card:
    """NVML states read in turn, on a clock that the waiting itself advances."""

    def __init__(self, states):
        self.states, self.now, self.reads = list(states), 0.0, 0

    def read(self):
        self.reads += 1
        return self.states.pop(0) if len(self.states) > 1 else self.states[0]

    def sleep(self, seconds):
        self.now += seconds

    def clock(self):
        return self.now


def _state(watts, *reasons):
    return {"power_w": watts, "temperature_c": 50, "throttle_names": list(reasons)}


def test_a_cool_start_idles_while_the_card_is_capped_or_drawing_much_and_no_longer_than_its_limit():
    from benchmarks.measure import COOL_START_POLL_SECONDS, COOL_START_WATTS, cool_start

    hot, capped, cool = _state(618.6), _state(180.0, "sw_power_cap"), _state(150.0)
    card = _Card([hot, hot, capped, capped, cool, hot])
    waited = cool_start(2.0, card.read, sleep=card.sleep, clock=card.clock)
    assert card.reads == 5 and waited == pytest.approx(4 * COOL_START_POLL_SECONDS), "until the first cool reading"
    card = _Card([_state(COOL_START_WATTS)])
    assert cool_start(2.0, card.read, sleep=card.sleep, clock=card.clock) == 0.0 and card.reads == 1
    card = _Card([_state(COOL_START_WATTS + 1)])  # never cool: the limit ends the wait
    waited = cool_start(0.5, card.read, sleep=card.sleep, clock=card.clock)
    assert 0.5 <= waited < 0.5 + 2 * COOL_START_POLL_SECONDS
    card = _Card([{}])  # no NVML: nothing to wait for
    assert cool_start(2.0, card.read, sleep=card.sleep, clock=card.clock) == 0.0


def test_a_cell_waits_for_a_cool_start_on_the_gpu_only(device, monkeypatch):
    monkeypatch.setenv("GEMMWATCH_COOL_START", "0.5")
    result = measure_cell(Cell("fp16", 16, 32, 32), rounds=2, device=device, spec=detect())
    assert not result.failed and result.cool_start_s is None, "a short cell (and any off the GPU): no wait"


@pytest.mark.gpu
def test_a_long_cell_waits_for_a_cool_start(monkeypatch):
    monkeypatch.setenv("GEMMWATCH_COOL_START", "1.0")
    measure_cell(Cell("fp16", 4096, 4096, 4096), rounds=3, device="cuda", spec=detect())  # the card warm
    result = measure_cell(Cell("fp16", 4096, 4096, 4096), rounds=3, device="cuda", spec=detect())
    assert not result.failed, result.error
    assert 0.0 <= result.cool_start_s <= 1.1, result.cool_start_s


@pytest.mark.gpu
def test_a_decode_cell_is_timed_with_rotating_copies(monkeypatch):
    monkeypatch.setenv("GEMMWATCH_COLD_L2", "rotate")
    result = measure_cell(Cell("fp16", 16, 4096, 4096), rounds=5, device="cuda", spec=detect())
    assert not result.failed, result.error
    copies = rotating_copies(2 * (16 * 4096 + 4096 * 4096 + 16 * 4096), detect().l2_bytes)
    assert result.method == f"cuda-graph+{copies}-rotating-copies" and result.flush_s == 0.0
    assert result.inner % copies == 0 and min(result.triton_s) > 0 and min(result.native_s) > 0
    # The clock state around the cell's rounds is recorded with it (NVML).
    assert result.state_before["sm_clock_mhz"] > 0 and result.state_after["sm_clock_mhz"] > 0


@pytest.mark.gpu
def test_a_decode_cell_is_timed_over_flushed_placements_and_a_large_square_on_one(monkeypatch, gpu_to_itself):
    # (Its times are the flushed replays' less the flushes alone: with other workers' kernels on the
    # GPU a flush-only replay outlasted the cell's on the H200, and the cell's times came out zero.)
    monkeypatch.delenv("GEMMWATCH_COLD_L2", raising=False)
    decode = measure_cell(Cell("fp16", 16, 4096, 4096), rounds=5, device="cuda", spec=detect())
    assert not decode.failed, decode.error
    assert decode.method == f"cuda-graph+l2-flush+{PLACEMENTS}-placements" and decode.flush_s > 0
    assert decode.inner % PLACEMENTS == 0 and min(decode.triton_s) > 0 and min(decode.native_s) > 0
    square = measure_cell(Cell("fp16", 4096, 4096, 4096), rounds=3, device="cuda", spec=detect())
    assert square.method.startswith("cuda-graph+l2-flush") and "placements" not in square.method, square.method
    # The calls per replay follow the roofline estimate, not a timed one (the same in every run).
    assert decode.inner == PLACEMENTS * math.ceil(round(1e-3 / _roofline(Cell("fp16", 16, 4096, 4096))) / PLACEMENTS)


def test_the_compile_workers_can_be_stopped_and_come_back(monkeypatch):
    import os

    from kernels import autotune

    monkeypatch.setenv("GEMMWATCH_COMPILE_WORKERS", "2")
    autotune.compile_in_parallel(os.getpid, [(), ()])
    assert len(autotune._POOL) == 1
    autotune.shutdown_workers()  # what measure_cell does between a cell's first call and its timing
    assert not autotune._POOL
    autotune.shutdown_workers()  # idempotent
    autotune.compile_in_parallel(os.getpid, [(), ()])  # a later compile starts new workers
    assert len(autotune._POOL) == 1
    autotune.shutdown_workers()


def test_a_cell_compiles_at_its_turn_and_no_compile_worker_outlives_its_first_call(device, monkeypatch):
    from kernels import autotune

    stopped = []
    real = autotune.shutdown_workers
    monkeypatch.setattr(autotune, "shutdown_workers", lambda: (stopped.append(len(autotune._POOL)), real()))
    result = measure_cell(Cell("fp16", 16, 32, 32), rounds=2, device=device, spec=detect())
    assert not result.failed and isinstance(result.tune_seconds, float) and result.tune_seconds > 0
    assert stopped and not autotune._POOL, "the workers are stopped before the cell is timed"


@pytest.mark.gpu
def test_an_injected_slowdown_is_what_its_calibration_says(gpu_to_itself):
    # The spin kernel costs a fixed gap besides its cycles: a long call gets about the fraction
    # asked for; a call of a few microseconds gets more, and the returned figure says how much.
    import torch

    from benchmarks.measure import slowed

    for cycles, asked in ((1_000_000, 0.03), (10_000, 0.03)):
        fn = functools.partial(torch.cuda._sleep, cycles)
        slow, expected = slowed(fn, asked)
        timing = measure(fn, slow, rounds=10, warmup=1)
        measured = timing.median(1) / timing.median(0) - 1
        # (on the H200: 3.0% asked of a 0.5 ms call; 14.4% calibrated and 15.6% measured for a 5 us one)
        assert measured == pytest.approx(expected, rel=0.2, abs=0.005), (cycles, measured, expected)
        if cycles == 1_000_000:
            assert expected == pytest.approx(asked, abs=0.005)
        else:
            assert expected >= asked


def test_kernel_launches_are_read_from_the_profilers_trace_in_start_order():
    from benchmarks.measure import launches_from_trace

    trace = {"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1.0},
        {"ph": "X", "cat": "kernel", "name": "splitKreduce_kernel", "ts": 9.5,
         "args": {"grid": [72, 1, 1], "block": [128, 1, 1], "registers per thread": 32, "shared memory": 0}},
        {"ph": "X", "cat": "kernel", "name": "nvjet_sm90_splitK_NNT", "ts": 3.0,
         "args": {"grid": [36, 1, 4], "block": [384, 1, 1], "registers per thread": 168, "shared memory": 213000}},
        {"ph": "X", "cat": "kernel", "name": "no_args_kernel", "ts": 12.0},
        {"ph": "M", "name": "process_name"},
    ]}  # fmt: skip
    assert launches_from_trace(trace) == [
        {"name": "nvjet_sm90_splitK_NNT", "grid": [36, 1, 4], "block": [384, 1, 1], "registers": 168,
         "shared_memory": 213000},
        {"name": "splitKreduce_kernel", "grid": [72, 1, 1], "block": [128, 1, 1], "registers": 32, "shared_memory": 0},
        {"name": "no_args_kernel"},
    ]  # fmt: skip
    assert launches_from_trace({}) == [] and launches_from_trace([]) == []


@pytest.mark.gpu
def test_the_native_kernels_of_a_cell_are_recorded_on_request(monkeypatch):
    cell = Cell("fp16", 16, 4096, 4096)
    assert measure_cell(cell, rounds=3, device="cuda", spec=detect()).native_kernels is None
    monkeypatch.setenv("GEMMWATCH_NATIVE_KERNELS", "1")
    result = measure_cell(cell, rounds=3, device="cuda", spec=detect())
    assert not result.failed and result.native_kernels, result
    assert all(isinstance(name, str) and name for name in result.native_kernels)
    # with the launch geometry of each (the profiler's trace), in the same order
    assert [launch["name"] for launch in result.native_launches] == result.native_kernels
    assert all(len(launch["grid"]) == 3 and min(launch["grid"]) >= 1 for launch in result.native_launches), result


@pytest.mark.gpu
def test_the_side_timed_first_after_a_cooldown_is_not_slower(gpu_to_itself):
    # Three copies of one kernel: without the untimed opening replay, whichever side came first
    # after the idle ran 2.5-4% slow on the H200 (A/A rechecks of long cells).
    import statistics

    import torch

    from benchmarks.timing import round_order

    fn = functools.partial(torch.cuda._sleep, 1_000_000)  # about 0.5 ms: long enough for a cooldown
    timing = measure(fn, fn, fn, rounds=16, warmup=1, cooldown=1.0)
    assert timing.method.endswith("+cooldown1")
    excess = []
    for r in range(16):
        first = round_order(r, 4)[0]  # 4 graphs: the three sides and the flushes
        if first < 3:
            others = [timing.samples[i][r] for i in range(3) if i != first]
            excess.append(timing.samples[first][r] / statistics.median(others) - 1)
    assert abs(statistics.median(excess)) < 0.01, excess


@pytest.mark.gpu
def test_the_cooldown_follows_the_gpu_time_not_the_host_time(gpu_to_itself):
    # A short kernel behind a slow host call: eager estimates said ">= 250 us" for such cells in
    # some runs and not in others on the H200, and their timing method flipped with it.
    import time

    import torch

    def slow_to_launch():
        time.sleep(0.002)
        torch.cuda._sleep(20_000)  # about 10 us of GPU time

    timing = measure(slow_to_launch, rounds=3, warmup=1, cooldown=2.0)
    assert timing.method == "cuda-graph+l2-flush"
    # The calls per replay follow the GPU time too (1 ms / ~10 us), not the 2 ms per eager call.
    assert timing.inner >= 50, timing.inner


def test_the_cell_order_knob_reverses_the_measurement_order(monkeypatch, tmp_path):
    import json

    from benchmarks.measure import ENV_CELL_ORDER, ENV_PROGRESS, measure_cells

    cells = [Cell("fp16", 16, 32, 32), Cell("bf16", 8, 16, 64)]
    progress = tmp_path / "progress.jsonl"
    monkeypatch.setenv(ENV_PROGRESS, str(progress))
    monkeypatch.setenv(ENV_CELL_ORDER, "reverse")
    measured = measure_cells(cells, rounds=2, label="t")
    order = [json.loads(line)["cell"] for line in progress.read_text().splitlines()]
    assert order == ["bf16 8x16x64", "fp16 16x32x32"] and measured["context"]["cell_order"] == "reverse"
    assert set(measured["cells"]) == set(order)  # the results are keyed by cell, whatever the order
    monkeypatch.setenv(ENV_CELL_ORDER, "shuffled")
    with pytest.raises(ValueError, match="GEMMWATCH_CELL_ORDER must be 'forward' or 'reverse', got 'shuffled'"):
        measure_cells(cells, rounds=2)


def test_the_medians_standard_error_comes_from_the_spread_of_the_rounds():
    from benchmarks.measure import median_standard_error

    assert median_standard_error([1.0] * 30) == 0.0
    assert median_standard_error([1.0]) == math.inf
    spread = [1.0 + 0.01 * ((-1) ** i) for i in range(30)]  # +-1% rounds
    assert median_standard_error(spread) == pytest.approx(1.2533 * 1.4826 * 0.01 / math.sqrt(30), rel=1e-6)
    assert median_standard_error(spread * 4) == pytest.approx(median_standard_error(spread) / 2, rel=1e-6)
    # a few outlying rounds do not widen it
    even = sorted(1.0 + 0.01 * (i - 14.5) / 14.5 for i in range(30))
    assert median_standard_error([*even[:-2], 5.0, 9.0]) == median_standard_error(even)


def test_noisy_rounds_take_more_rounds_up_to_the_cap_and_quiet_ones_none():
    from benchmarks.measure import PRECISION, precise_rounds
    from benchmarks.timing import Timing

    def batches(spread):
        calls = []

        def more(n):
            calls.append(n)
            return Timing([[1.0 + spread * ((-1) ** i) for i in range(n)], [1.0] * n])

        return calls, more

    calls, more = batches(0.0005)
    quiet = precise_rounds(Timing([[1.0005, 0.9995] * 15, [1.0] * 30]), more, 30, 120)
    assert calls == [] and len(quiet.samples[0]) == 30

    calls, more = batches(0.004)  # +-0.4% rounds: 30 give 0.14%, 60 give 0.1%
    medium = precise_rounds(Timing([[1.004, 0.996] * 15, [1.0] * 30]), more, 30, 120)
    assert calls == [30] and len(medium.samples[0]) == len(medium.samples[1]) == 60

    calls, more = batches(0.02)  # never precise: stops at the cap, the last batch cut to fit
    noisy = precise_rounds(Timing([[1.02, 0.98] * 15, [1.0] * 30]), more, 30, 100)
    assert calls == [30, 30, 10] and len(noisy.samples[0]) == 100
    assert PRECISION == 0.001

    # one side (no native baseline): its own samples decide
    calls, more = batches(0.02)
    precise_rounds(Timing([[1.02, 0.98] * 15]), lambda n: Timing(more(n).samples[:1]), 30, 60)
    assert calls == [30]


def test_one_call_as_the_timing_issues_it():
    from benchmarks.timing import as_timed

    def f():
        return None

    def g():
        return None

    assert as_timed(f) is f
    assert as_timed([f, g]) is f  # rotating copies: the first, from this thread
    assert as_timed(Placements([f, g]), threads=False) is f
    assert as_timed(Placements([f])) is f  # one placement: no issuer
    issued = as_timed(Placements([f, g]))  # from the first placement's issuer (a GPU call)
    assert callable(issued) and issued is not f


def test_side_by_side_lines_each_side_against_the_first():
    import time

    from benchmarks.timing import side_by_side

    lines = side_by_side([("slow side", lambda: time.sleep(0.004)), ("fast", lambda: time.sleep(0.001))], rounds=3)
    assert [line.split()[0] for line in lines] == ["slow", "fast"]
    slow_us, slow_x = float(lines[0].split()[-2]), lines[0].split()[-1]
    fast_us, fast_x = float(lines[1].split()[-2]), float(lines[1].split()[-1].rstrip("x"))
    assert slow_x == "1.000x" and slow_us >= 4000 and 1000 <= fast_us < slow_us and fast_x > 1.5


def test_checked_sides_keep_the_sides_that_run_and_compute_the_reference(capsys):
    from benchmarks.timing import checked_sides, probe_table

    reference = torch.arange(12, dtype=torch.float64).reshape(3, 4) + 1
    right, wrong = reference.float().clone(), (reference * 1.1).float()

    def refused():
        raise ValueError("phase_a configs need A's rows a multiple of their 4 phases\nmore")

    kept = checked_sides(
        [("right", lambda: None, right), ("refused", refused, right), ("wrong", lambda: None, wrong)], reference
    )
    assert [name for name, _ in kept] == ["right"]
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "  refused: failed: ValueError: phase_a configs need A's rows a multiple of their 4 phases",
        "  wrong: relative error 0.1, dropped",
    ]
    if not torch.cuda.is_available():  # (no timing in the interpreter: the sides' names)
        assert probe_table(kept, rounds=3) == ["  checked (interpreter): right"]
