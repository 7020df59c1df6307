"""Reading and selecting from the shape x dtype matrix (benchmarks/matrix.toml).

One file is the source of truth for what is measured; the asv suites build
their params from `select()`, and `gemmwatch run` validates a selection with
the same code before starting anything.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.cells import DTYPES, Cell

DEFAULT_PATH = Path(__file__).with_name("matrix.toml")
EPILOGUES = ("bias+gelu", "bias+silu", "bias+relu", "bias+gelu_tanh", "bias")
_SHAPE = re.compile(r"^\s*(\d+)\s*x\s*(\d+)\s*x\s*(\d+)\s*$")
_NK = re.compile(r"^\s*(\d+)\s*x\s*(\d+)\s*$")

# Environment variables through which `gemmwatch run` passes a selection to
# the asv benchmark processes (asv passes the environment through).
ENV_MATRIX = "GEMMWATCH_MATRIX"
ENV_SHAPES = "GEMMWATCH_SHAPES"
ENV_DTYPES = "GEMMWATCH_DTYPES"
ENV_SHARD = "GEMMWATCH_SHARD"


class MatrixError(ValueError):
    """The matrix file or a selection from it is invalid; the message says where and why."""


def parse_shape(text: str, where: str) -> tuple[int, int, int]:
    match = _SHAPE.match(str(text))
    if not match:
        raise MatrixError(f"{where}: shape {text!r} is not of the form MxNxK (e.g. 4096x4096x4096)")
    shape = tuple(int(g) for g in match.groups())
    if min(shape) < 1:
        raise MatrixError(f"{where}: shape {text!r} has a zero dimension; expected M, N, K >= 1")
    return shape  # type: ignore[return-value]


def shape_id(shape: tuple[int, int, int]) -> str:
    return "x".join(str(d) for d in shape)


@dataclass(frozen=True)
class ShapeSet:
    name: str
    description: str
    shapes: tuple[tuple[int, int, int], ...]
    dtypes: tuple[str, ...] | None  # None: the mode's dtypes


@dataclass(frozen=True)
class Matrix:
    path: str
    sets: dict[str, ShapeSet]
    gpu_sets: tuple[str, ...]
    interpreter_sets: tuple[str, ...]
    gpu_dtypes: tuple[str, ...]
    interpreter_dtypes: tuple[str, ...]
    epilogues: tuple[str, ...]
    epilogue_gpu_shapes: tuple[tuple[int, int, int], ...]
    epilogue_interpreter_shapes: tuple[tuple[int, int, int], ...]
    epilogue_dtypes: tuple[str, ...]
    all_dtypes: tuple[str, ...] = field(default=tuple(DTYPES))


def _check_dtypes(values, where: str) -> tuple[str, ...]:
    if not isinstance(values, list) or not values:
        raise MatrixError(f"{where}: expected a non-empty list of dtype names, got {values!r}")
    for value in values:
        if value not in DTYPES:
            raise MatrixError(f"{where}: unknown dtype {value!r}; known dtypes: {', '.join(DTYPES)}")
    return tuple(values)


def _require(table: dict, key: str, where: str):
    if key not in table:
        raise MatrixError(f"{where}: missing key {key!r}")
    return table[key]


def load(path: str | os.PathLike | None = None) -> Matrix:
    """Parse and validate a matrix file (default: benchmarks/matrix.toml)."""
    path = Path(path or os.environ.get(ENV_MATRIX) or DEFAULT_PATH)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise MatrixError(f"matrix file {path} does not exist") from None
    except tomllib.TOMLDecodeError as err:
        raise MatrixError(f"matrix file {path} is not valid TOML: {err}") from None
    where = str(path)

    sets: dict[str, ShapeSet] = {}
    raw_sets = _require(data, "sets", where)
    if not isinstance(raw_sets, dict) or not raw_sets:
        raise MatrixError(f"{where}: [sets] must hold at least one named shape set")
    for name, raw in raw_sets.items():
        loc = f"{where} [sets.{name}]"
        if "shapes" in raw:
            shapes = tuple(parse_shape(s, loc) for s in raw["shapes"])
        elif "m" in raw and "nk" in raw:
            shapes = []
            for nk in raw["nk"]:
                match = _NK.match(str(nk))
                if not match:
                    raise MatrixError(f"{loc}: nk entry {nk!r} is not of the form NxK")
                n, k = (int(g) for g in match.groups())
                shapes.extend((int(m), n, k) for m in raw["m"])
            shapes = tuple(shapes)
        else:
            raise MatrixError(f"{loc}: expected 'shapes' (list of MxNxK) or 'm' and 'nk'")
        if not shapes:
            raise MatrixError(f"{loc}: the set has no shapes")
        dtypes = _check_dtypes(raw["dtypes"], f"{loc} dtypes") if "dtypes" in raw else None
        sets[name] = ShapeSet(name, str(raw.get("description", "")), shapes, dtypes)

    default = _require(data, "default", where)
    gpu_sets = tuple(_require(default, "gpu_sets", f"{where} [default]"))
    interpreter_sets = tuple(_require(default, "interpreter_sets", f"{where} [default]"))
    for name in (*gpu_sets, *interpreter_sets):
        if name not in sets:
            raise MatrixError(f"{where} [default]: unknown shape set {name!r}; defined sets: {', '.join(sets)}")
    dtypes = _require(data, "dtypes", where)
    gpu_dtypes = _check_dtypes(_require(dtypes, "gpu", f"{where} [dtypes]"), f"{where} [dtypes] gpu")
    interp_dtypes = _check_dtypes(_require(dtypes, "interpreter", f"{where} [dtypes]"), f"{where} [dtypes] interpreter")

    epi = data.get("epilogues", {})
    cases = tuple(epi.get("cases", ()))
    for case in cases:
        if case not in EPILOGUES:
            raise MatrixError(f"{where} [epilogues]: unknown case {case!r}; known: {', '.join(EPILOGUES)}")
    return Matrix(
        path=where,
        sets=sets,
        gpu_sets=gpu_sets,
        interpreter_sets=interpreter_sets,
        gpu_dtypes=gpu_dtypes,
        interpreter_dtypes=interp_dtypes,
        epilogues=cases,
        epilogue_gpu_shapes=tuple(parse_shape(s, f"{where} [epilogues]") for s in epi.get("gpu_shapes", ())),
        epilogue_interpreter_shapes=tuple(
            parse_shape(s, f"{where} [epilogues]") for s in epi.get("interpreter_shapes", ())
        ),
        epilogue_dtypes=_check_dtypes(epi["dtypes"], f"{where} [epilogues] dtypes") if "dtypes" in epi else (),
    )


@dataclass(frozen=True)
class Selection:
    """The cells one run measures."""

    cells: tuple[Cell, ...]
    sets: tuple[str, ...]
    interpreter: bool

    def for_suite(self, suite: str) -> tuple[Cell, ...]:
        return tuple(c for c in self.cells if suite_of(c) == suite)


def suite_of(cell: Cell) -> str:
    """Which asv class measures a cell: one class per operation."""
    if cell.epilogue:
        return "FusedEpilogue"
    return "ScaledMatmul" if cell.is_fp8 else "Matmul"


def select(
    matrix: Matrix,
    *,
    interpreter: bool,
    shapes: list[str] | None = None,
    dtypes: list[str] | None = None,
) -> Selection:
    """Cells for a run. `shapes`: set names and/or MxNxK literals; `dtypes`: a filter."""
    mode_dtypes = matrix.interpreter_dtypes if interpreter else matrix.gpu_dtypes
    if dtypes:
        for d in dtypes:
            if d not in DTYPES:
                raise MatrixError(f"unknown dtype {d!r} in the selection; known dtypes: {', '.join(DTYPES)}")
    wanted_dtypes = set(dtypes) if dtypes else None

    set_names: list[str] = []
    literals: list[tuple[int, int, int]] = []
    for item in shapes or []:
        if item in matrix.sets:
            set_names.append(item)
        elif _SHAPE.match(item):
            literals.append(parse_shape(item, "--shapes"))
        else:
            raise MatrixError(
                f"unknown shape set {item!r}; defined in {matrix.path}: {', '.join(matrix.sets)} "
                "(or give a literal MxNxK)"
            )
    if not shapes:
        set_names = list(matrix.interpreter_sets if interpreter else matrix.gpu_sets)

    cells: list[Cell] = []
    seen: set[tuple] = set()

    def add(dtype: str, shape: tuple[int, int, int], epilogue: str | None = None) -> None:
        if wanted_dtypes is not None and dtype not in wanted_dtypes:
            return
        key = (dtype, shape, epilogue)
        if key not in seen:
            seen.add(key)
            cells.append(Cell(dtype, *shape, epilogue=epilogue))

    for name in set_names:
        shape_set = matrix.sets[name]
        for shape in shape_set.shapes:
            for dtype in shape_set.dtypes or mode_dtypes:
                add(dtype, shape)
    for shape in literals:
        for dtype in mode_dtypes:
            add(dtype, shape)
    epi_shapes = matrix.epilogue_interpreter_shapes if interpreter else matrix.epilogue_gpu_shapes
    if shapes:  # an explicit selection keeps only the epilogue shapes it names
        epi_shapes = tuple(s for s in epi_shapes if s in literals)
    for shape in epi_shapes:
        for case in matrix.epilogues:
            for dtype in matrix.epilogue_dtypes:
                add(dtype, shape, case)
    if not cells:
        raise MatrixError(
            f"the selection (shapes={shapes or 'default'}, dtypes={dtypes or 'default'}) leaves no cell to measure"
        )
    return Selection(tuple(cells), tuple(set_names), interpreter)


def parse_shard(text: str) -> tuple[int, int]:
    """'i/n' (1 <= i <= n) -> (i, n)."""
    try:
        i, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise MatrixError(f"shard {text!r} is not of the form i/n (e.g. 2/4)") from None
    if not 1 <= i <= n:
        raise MatrixError(f"shard {text!r}: expected 1 <= i <= n")
    return i, n


def shard(selection: Selection, i: int, n: int) -> Selection:
    """Every n-th cell starting at the i-th: shards of one matrix are disjoint and cover it."""
    return Selection(selection.cells[i - 1 :: n], selection.sets, selection.interpreter)


def parse_cell(text: str) -> tuple[str, Cell]:
    """'[Suite ]dtype MxNxK[ epilogue]' -> (suite, Cell); the suite defaults to the cell's operation."""
    parts = text.split()
    suite = parts.pop(0) if parts and parts[0][:1].isupper() else None
    if len(parts) not in (2, 3):
        raise MatrixError(f"cell {text!r}: expected '[Suite] dtype MxNxK [epilogue]', e.g. 'fp16 4096x4096x4096'")
    dtype, shape, *epilogue = parts
    if dtype not in DTYPES:
        raise MatrixError(f"cell {text!r}: unknown dtype {dtype!r}; known dtypes: {', '.join(DTYPES)}")
    cell = Cell(dtype, *parse_shape(shape, f"cell {text!r}"), epilogue=epilogue[0] if epilogue else None)
    return suite or suite_of(cell), cell


def _env_list(name: str) -> list[str] | None:
    raw = os.environ.get(name, "").strip()
    return [item.strip() for item in raw.split(",") if item.strip()] or None


def from_environment() -> Selection:
    """The selection the asv benchmark processes see (set by `gemmwatch run`, or the default)."""
    from targets.detect import interpreter_requested

    selection = select(
        load(), interpreter=interpreter_requested(), shapes=_env_list(ENV_SHAPES), dtypes=_env_list(ENV_DTYPES)
    )
    if os.environ.get(ENV_SHARD):
        selection = shard(selection, *parse_shard(os.environ[ENV_SHARD]))
    return selection
