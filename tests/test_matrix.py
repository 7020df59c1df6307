"""The shape x dtype matrix file and selections from it."""

import pytest

from benchmarks import matrix
from benchmarks.matrix import MatrixError


@pytest.fixture(scope="module")
def default():
    return matrix.load()


def test_default_file_is_valid(default):
    assert {"square", "llm", "odd", "smoke"} <= set(default.sets)
    assert default.sets["square"].shapes == ((1024,) * 3, (2048,) * 3, (4096,) * 3, (8192,) * 3)
    assert all(any(d % 16 for d in shape) for shape in default.sets["odd"].shapes), "odd shapes must be odd"


def test_llm_set_has_the_model_projections_at_each_m(default):
    llm = default.sets["llm"].shapes
    assert {m for m, _, _ in llm} == {1, 16, 128, 4096}
    # Llama-3-8B fused QKV and down projection, Llama-3-70B gate+up, Qwen2.5-7B down.
    for n, k in [(6144, 4096), (4096, 14336), (57344, 8192), (3584, 18944)]:
        assert all((m, n, k) in llm for m in (1, 16, 128, 4096))


def test_default_gpu_selection(default):
    sel = matrix.select(default, interpreter=False)
    names = {c.name for c in sel.cells}
    assert "fp16 4096x4096x4096" in names and "fp32-ieee 4096x4096x4096" in names
    assert "fp32-tf32 4096x4096x4096" in names
    assert "fp8_e4m3 1x4096x4096" in names
    assert "fp32-ieee 1x4096x4096" not in names  # llm set restricts its dtypes
    assert "bf16 4096x4096x4096 bias+gelu" in names
    assert len(sel.cells) == len(names), "no duplicates"
    assert {matrix.suite_of(c) for c in sel.cells} == {"Matmul", "ScaledMatmul", "FusedEpilogue"}


def test_interpreter_selection_is_the_smoke_set(default):
    sel = matrix.select(default, interpreter=True)
    assert sel.sets == ("smoke",)
    assert max(c.M * c.N * c.K for c in sel.cells) <= 64**3 * 2


def test_narrowing_by_set_literal_and_dtype(default):
    sel = matrix.select(default, interpreter=False, shapes=["square", "100x200x300"], dtypes=["bf16"])
    assert {c.dtype for c in sel.cells} == {"bf16"}
    assert {(c.M, c.N, c.K) for c in sel.cells} == {(s,) * 3 for s in (1024, 2048, 4096, 8192)} | {(100, 200, 300)}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"shapes": ["huge"]}, "unknown shape set 'huge'; defined in .*matrix.toml: square, llm"),
        ({"dtypes": ["int4"]}, "unknown dtype 'int4' in the selection; known dtypes: fp16"),
        ({"shapes": ["odd"], "dtypes": ["fp8_e4m3"]}, "leaves no cell to measure"),
        ({"shapes": ["0x4x4"]}, "zero dimension"),
    ],
)
def test_bad_selections(default, kwargs, message):
    with pytest.raises(MatrixError, match=message):
        matrix.select(default, interpreter=False, **kwargs)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[sets.a]\nshapes=['1x2x3']\ndtypes=['fp64']\n", r"\[sets.a\] dtypes: unknown dtype 'fp64'"),
        ("[sets.a]\nshapes=['12x3']\n", "shape '12x3' is not of the form MxNxK"),
        ("[sets.a]\nshapes=['1x2x3']\n[default]\ngpu_sets=['b']\ninterpreter_sets=['a']\n", "unknown shape set 'b'"),
        ("[sets.a]\nshapes=['1x2x3']\n", r"missing key 'default'"),
        ("this is = = not toml", "is not valid TOML"),
    ],
)
def test_bad_matrix_files_name_the_file_and_the_problem(tmp_path, text, message):
    path = tmp_path / "m.toml"
    path.write_text(text)
    with pytest.raises(MatrixError, match=message) as info:
        matrix.load(path)
    assert str(path) in str(info.value)


def test_missing_matrix_file(tmp_path):
    with pytest.raises(MatrixError, match="does not exist"):
        matrix.load(tmp_path / "nope.toml")
