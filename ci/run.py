"""`gemmwatch run`: measure one commit with the asv suites, into asv's results.

The runner's Python is fixed (a GPU box cannot install), so asv uses an
`existing` environment and `--set-commit-hash`. The commit measured is checked
out in a git worktree and put first on the benchmark processes' path
(ASV_PYTHONPATH): its `kernels` and `targets` are what runs, with the current
checkout's benchmark protocol, so base and head are measured the same way.
Nothing is installed.

Results land in `<results-dir>/<machine>/<sha8>-<env>.json` (machine = the
target's name; the Triton/torch/CUDA versions are machine params, which `asv
publish` turns into graph dimensions). A re-run of the same commit appends its
samples (`--append-samples`) and the previous file is kept in a backup first:
nothing recorded is lost. The run's context (clocks before/after, throttle
reasons, power, temperature, the autotune config and kernel hash per cell) goes
to `<results-dir>/../context/<machine>/`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path


class RunError(Exception):
    """Bad input or environment for `gemmwatch run`; exit status 2."""


@dataclass
class RunPlan:
    repo: Path
    sha: str
    results_dir: Path
    work_dir: Path
    machine: str
    python: str
    launch_method: str
    shapes: list[str] | None
    dtypes: list[str] | None
    matrix_path: str | None
    rounds: int | None
    autotune_top_k: int | None
    shard: str | None = None  # "i/n"
    gpu: str | None = None  # CUDA_VISIBLE_DEVICES for the benchmark processes


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RunError(f"git {' '.join(args)} failed in {repo}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def find_repo(start: Path) -> Path:
    proc = subprocess.run(["git", "-C", str(start), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RunError(f"{start} is not inside a git repository; run gemmwatch from the project's checkout")
    return Path(proc.stdout.strip())


def resolve_commit(repo: Path, commit: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        raise RunError(f"commit {commit!r} does not exist in {repo} (try `git fetch`, or a SHA, branch or tag)")
    return proc.stdout.strip()


def check_writable(path: Path) -> None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".gemmwatch-write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise RunError(f"results directory {path} is not writable: {err.strerror or err}") from None


def ensure_worktree(repo: Path, sha: str, root: Path) -> Path:
    """A detached worktree of `sha` (reused when it exists and is clean at `sha`)."""
    path = root / sha[:12]
    if path.exists():
        try:
            if git(path, "rev-parse", "HEAD") == sha and not git(path, "status", "--porcelain"):
                return path
        except RunError:
            pass
        shutil.rmtree(path, ignore_errors=True)
        git(repo, "worktree", "prune")
    root.mkdir(parents=True, exist_ok=True)
    git(repo, "worktree", "add", "--detach", "--force", str(path), sha)
    return path


def copy_suite(repo: Path, dest: Path) -> Path:
    """The current checkout's benchmarks/ alone in a folder (so the repo root is not on sys.path)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(repo / "benchmarks", dest / "benchmarks", ignore=shutil.ignore_patterns("__pycache__"))
    return dest / "benchmarks"


def write_machine_file(home: Path, machine: str, info: dict[str, str]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    import platform

    entry = {
        "machine": machine,
        "os": f"{platform.system()} {platform.release()}",
        "arch": platform.machine(),
        "cpu": platform.processor() or platform.machine(),
        "num_cpu": str(os.cpu_count()),
        "ram": str(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) if hasattr(os, "sysconf") else "",
        **info,
    }
    (home / ".asv-machine.json").write_text(json.dumps({machine: entry, "version": 1}, indent=2))


def write_asv_config(path: Path, repo: Path, suite_dir: Path, results_dir: Path, work_dir: Path) -> None:
    conf = {
        "version": 1,
        "project": "gemmwatch",
        "repo": str(repo),
        "branches": ["main"],
        "dvcs": "git",
        "environment_type": "existing",
        "benchmark_dir": str(suite_dir),
        "env_dir": str(work_dir / "env"),
        "results_dir": str(results_dir),
        "html_dir": str(results_dir.parent / "html"),
        "default_benchmark_timeout": 120,
    }
    path.write_text(json.dumps(conf, indent=2))


def _follow_progress(path: Path, stop: threading.Event, started: float) -> None:
    """Print the suites' progress lines (cell i of n, elapsed) while asv runs."""
    offset = 0
    while not stop.is_set():
        if path.exists():
            with open(path) as f:
                f.seek(offset)
                for line in f:
                    if not line.endswith("\n"):
                        break
                    offset += len(line)
                    try:
                        item = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    status = "FAILED" if item.get("failed") else "ok"
                    print(
                        f"  [{item['suite']} {item['index']}/{item['total']}] {item['cell']:<40} {status:<6} "
                        f"{time.perf_counter() - started:7.1f}s",
                        flush=True,
                    )
        stop.wait(0.5)


def result_files(results_dir: Path, machine: str, sha: str) -> list[Path]:
    return sorted((results_dir / machine).glob(f"{sha[:8]}-*.json"))


def summarize(result_file: Path) -> dict[str, int]:
    """Count measured, failed and skipped cells of the headline benchmarks in an asv result file."""
    data = json.loads(result_file.read_text())
    counts = {"measured": 0, "failed": 0, "skipped": 0}
    columns = data.get("result_columns", [])
    for name, row in data.get("results", {}).items():
        if not name.endswith("track_triton_time"):
            continue
        entry = dict(zip(columns, row))
        for value in entry.get("result") or []:
            if value is None:
                counts["failed"] += 1
            elif isinstance(value, float) and value != value:  # NaN: skipped
                counts["skipped"] += 1
            else:
                counts["measured"] += 1
    return counts


def execute(plan: RunPlan, *, interpreter: bool, machine_info: dict[str, str]) -> int:
    stamp = time.strftime("%Y%m%dT%H%M%S")
    work = plan.work_dir
    worktree = ensure_worktree(plan.repo, plan.sha, work / "worktrees")
    suite_dir = copy_suite(plan.repo, work / "suite")
    home = work / "home"
    write_machine_file(home, plan.machine, machine_info)
    conf_path = work / "asv.conf.json"
    write_asv_config(conf_path, plan.repo, suite_dir, plan.results_dir, work)

    # Never lose what is recorded: keep a copy of this commit's earlier result file.
    for existing in result_files(plan.results_dir, plan.machine, plan.sha):
        backup = plan.results_dir.parent / "results-backup" / plan.machine / f"{existing.stem}.{stamp}.json"
        backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(existing, backup)

    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    progress = logs / f"{stamp}-progress.jsonl"
    context_dir = plan.results_dir.parent / "context" / plan.machine / f"{plan.sha[:8]}-{stamp}"
    autotune_cache = autotune_cache_path(work, plan.machine, worktree)
    autotune_cache.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        {
            "ASV_PYTHONPATH": str(worktree),
            "HOME": str(home),
            "TRITON_CACHE_DIR": os.environ.get("TRITON_CACHE_DIR", str(Path.home() / ".triton" / "cache")),
            "GEMMWATCH_PROGRESS_FILE": str(progress),
            "GEMMWATCH_CONTEXT_DIR": str(context_dir),
            "GEMMWATCH_AUTOTUNE_CACHE": str(autotune_cache),
            "PYTHONUNBUFFERED": "1",
        }
    )
    if interpreter:
        env["TRITON_INTERPRET"] = "1"
    if plan.gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = plan.gpu
    for name, value in (
        ("GEMMWATCH_SHAPES", ",".join(plan.shapes or [])),
        ("GEMMWATCH_DTYPES", ",".join(plan.dtypes or [])),
        ("GEMMWATCH_MATRIX", plan.matrix_path or ""),
        ("GEMMWATCH_ROUNDS", str(plan.rounds or "")),
        ("GEMMWATCH_AUTOTUNE_TOP_K", str(plan.autotune_top_k or "")),
        ("GEMMWATCH_SHARD", plan.shard or ""),
    ):
        if value:
            env[name] = value
        else:
            env.pop(name, None)

    cmd = [
        plan.python, "-m", "asv", "run",
        "--config", str(conf_path),
        "-E", f"existing:{plan.python}",
        "--set-commit-hash", plan.sha,
        "--machine", plan.machine,
        "--launch-method", plan.launch_method,
        "--record-samples", "--append-samples",
        "--show-stderr",
    ]  # fmt: skip
    log_path = logs / f"{stamp}-asv.log"
    print(f"gemmwatch run: {plan.sha[:12]} on {plan.machine} -> {plan.results_dir} (log: {log_path})", flush=True)
    started = time.perf_counter()
    stop = threading.Event()
    follower = threading.Thread(target=_follow_progress, args=(progress, stop, started), daemon=True)
    follower.start()
    with open(log_path, "w") as log:
        proc = subprocess.run(cmd, cwd=plan.repo, env=env, stdout=log, stderr=subprocess.STDOUT)
    stop.set()
    follower.join()
    elapsed = time.perf_counter() - started

    files = result_files(plan.results_dir, plan.machine, plan.sha)
    # asv exits 2 when some benchmarks failed and still saves the others: a
    # failed cell is recorded and reported, the rest of the run stands.
    if proc.returncode not in (0, 2) or not files:
        tail = "".join(log_path.read_text().splitlines(keepends=True)[-30:])
        print(f"gemmwatch run: asv exited with {proc.returncode}; last lines of {log_path}:\n{tail}", file=sys.stderr)
        return 1
    newest = max(files, key=lambda p: p.stat().st_mtime)
    counts = summarize(newest)
    _write_context(context_dir, newest, plan, elapsed)
    print(
        f"gemmwatch run: {counts['measured']} cells measured, {counts['failed']} failed, "
        f"{counts['skipped']} skipped in {elapsed:.0f}s -> {newest}",
        flush=True,
    )
    if interpreter:
        print("NOTE: Triton interpreter run: a pipeline check, not performance.")
    else:
        untuned = untuned_cells(context_dir)
        if untuned:
            shown = ", ".join(untuned[:8]) + (f" and {len(untuned) - 8} more" if len(untuned) > 8 else "")
            print(
                f"gemmwatch run: {len(untuned)} cells ran without a tuned-library entry ({shown}): their configs "
                "were autotuned and can change with any kernel change, so a comparison may show the choice "
                "rather than the code; `gemmwatch tune` fills them",
                flush=True,
            )
    if counts["failed"] or proc.returncode:
        print(f"gemmwatch run: failed cells are recorded as failures; details in {log_path}", file=sys.stderr)
        return 1
    return 0


def library_notice(target: str, triton_version: str, top_k: int | None = None) -> str | None:
    """What a GPU run says before it starts when this target has no tuned library for this Triton
    version (`targets/tuned/<target>-triton<version>.json`, or GEMMWATCH_TUNED_DIR's): every bucket
    then autotunes its first candidates in the gate, and so takes seconds a cell (8-10 s a cell on the
    H100 SXM, whose cold run was cut after 55 of 122 matmul cells in 560 s: docs/BENCHMARKS.md,
    2026-12-05 third session). None when the library exists."""
    from kernels.autotune import DEFAULT_TOP_K
    from targets import catalogue, library

    directory = library.library_dir()
    if library.library_path(target, triton_version, directory).exists():
        return None
    order = "the target's own order"
    if target in catalogue.CATALOGUE:
        for other in catalogue.siblings(catalogue.get(target)):
            if library.library_path(other.name, triton_version, directory).exists():
                order = f"the order of {other.name}'s rankings (the same die; never its configs)"
                break
    return (
        f"gemmwatch run: no tuned library for {target} under Triton {triton_version} "
        f"({library.library_path(target, triton_version, directory)}): each shape bucket autotunes its first "
        f"{top_k or DEFAULT_TOP_K} candidates, in {order}, which takes seconds a cell and may choose differently "
        f"from run to run; `gemmwatch tune` writes the library"
    )


def suite_context_cells(context_dir: Path) -> dict[str, dict]:
    """{cell: entry} from the suites' context files of one run (`<Suite>.json`; run.json is their merge)."""
    cells: dict[str, dict] = {}
    for path in sorted(context_dir.glob("*.json")) if context_dir.is_dir() else []:
        if path.name != "run.json":
            cells.update(json.loads(path.read_text()).get("cells", {}))
    return cells


def named_context_cells(directory: str | Path, option: str = "--context") -> dict[str, dict]:
    """`suite_context_cells` of a directory a user named with `option`; a ResultsError naming the
    option and the directory where it holds no suite context."""
    from ci.asv_results import ResultsError

    cells = suite_context_cells(Path(directory))
    if not cells:
        raise ResultsError(
            f"{option} {directory}: no suite context files (<Suite>.json with 'cells') there; expected a "
            "directory `gemmwatch run` wrote under <results>/../context/<machine>/"
        )
    return cells


def untuned_cells(context_dir: Path) -> list[str]:
    """The cells of a run (its suites' context files) whose config did not come from the library."""
    cells = suite_context_cells(context_dir)
    return sorted(name for name, cell in cells.items() if cell.get("selection") not in (None, "tuned"))


def _context_of(python: str, repo: Path) -> dict[str, str]:
    """Device and versions as another Python environment sees them (e.g. one per Triton version)."""
    code = (
        "import json; from benchmarks.context import device_description, software_versions; "
        "print(json.dumps({**device_description(), **software_versions()}))"
    )
    env = {**os.environ, "PYTHONPATH": str(repo)}
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    except OSError as err:
        raise RunError(f"--python {python}: cannot run it ({err.strerror or err})") from None
    if proc.returncode != 0:
        last = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise RunError(f"--python {python}: could not import torch/triton there: {last[0]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def autotune_cache_path(work_dir: Path, machine: str, tree: Path) -> Path:
    """Where the autotune choices of `tree`'s kernels are kept (GEMMWATCH_AUTOTUNE_CACHE).

    Per target and kernel source (the file's entries are per Triton version), so a
    re-run of the same code, and `gemmwatch recheck` of it, times the same configs.
    """
    return work_dir / "autotune" / f"{machine}-{_source_hash(tree)}.json"


def _source_hash(tree: Path) -> str:
    """Hash of the kernel and target code of a checkout (what decides the best config)."""
    import hashlib

    digest = hashlib.sha256()
    for folder in ("kernels", "targets"):
        for path in sorted((tree / folder).rglob("*.py")):
            digest.update(path.relative_to(tree).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _write_context(context_dir: Path, result_file: Path, plan: RunPlan, elapsed: float) -> None:
    """Merge the suites' context files into one record beside the results."""
    suites = {}
    for path in sorted(context_dir.glob("*.json")) if context_dir.exists() else []:
        suites[path.stem] = json.loads(path.read_text())
    record = {
        "commit": plan.sha,
        "machine": plan.machine,
        "result_file": str(result_file),
        "wall_seconds": round(elapsed, 1),
        "suites": suites,
    }
    context_dir.mkdir(parents=True, exist_ok=True)
    (context_dir / "run.json").write_text(json.dumps(record, indent=1, default=str))


def check_measurement_knobs() -> None:
    """The suites' GEMMWATCH_* settings, read in every benchmark process: a bad value is refused
    here (ValueError naming the variable) rather than failing each suite inside asv."""
    from benchmarks.measure import (
        cell_order,
        cold_l2_method,
        cool_start_seconds,
        cooldown,
        early_workspaces,
        flush_buffer_count,
        flush_kind,
        graph_captures,
        injected_slowdowns,
        operand_arena,
        placement_threads,
        placement_workspaces,
        rounds_from_env,
        settle_seconds,
        timing_streams,
    )

    rounds_from_env()
    cold_l2_method()
    cooldown()
    injected_slowdowns()
    cell_order()
    timing_streams()
    flush_kind()
    placement_threads()
    placement_workspaces()
    early_workspaces()
    flush_buffer_count()
    graph_captures()
    settle_seconds()
    cool_start_seconds()
    operand_arena()


def main(args) -> int:
    from benchmarks import matrix as matrix_mod
    from ci.cli import use_interpreter_without_gpu

    try:
        repo = find_repo(Path(args.checkout or Path.cwd()))
        sha = resolve_commit(repo, args.commit)
        results_dir = Path(args.results_dir or repo / ".asv" / "results").resolve()
        check_writable(results_dir)
        interpreter = use_interpreter_without_gpu()
        shapes = [s for item in args.shapes or [] for s in item.split(",") if s]
        dtypes = [d for item in args.dtypes or [] for d in item.split(",") if d]
        selection = matrix_mod.select(
            matrix_mod.load(args.matrix), interpreter=interpreter, shapes=shapes or None, dtypes=dtypes or None
        )
        if args.shard:
            selection = matrix_mod.shard(selection, *matrix_mod.parse_shard(args.shard))
            if not selection.cells:
                raise matrix_mod.MatrixError(f"shard {args.shard} of this selection holds no cell")
        check_measurement_knobs()
    except (RunError, matrix_mod.MatrixError, ValueError) as err:
        print(f"gemmwatch run: {err}", file=sys.stderr)
        return 2

    from benchmarks.context import device_description, software_versions

    dirty = git(repo, "status", "--porcelain", "--", "kernels", "targets")
    if dirty and args.commit == "HEAD":
        print(
            "gemmwatch run: warning: uncommitted changes in kernels/ or targets/ are not measured "
            "(the commit is measured from a clean worktree); commit them first",
            file=sys.stderr,
        )

    if args.python and Path(args.python).resolve() != Path(sys.executable).resolve():
        try:
            info = _context_of(args.python, repo)
        except RunError as err:
            print(f"gemmwatch run: {err}", file=sys.stderr)
            return 2
    else:
        info = {**device_description(), **software_versions()}
    info.pop("python", None)  # asv records the environment's Python itself
    machine = args.machine or info["target"]
    plan = RunPlan(
        repo=repo,
        sha=sha,
        results_dir=results_dir,
        work_dir=Path(args.work_dir).resolve() if args.work_dir else repo / ".asv" / "gemmwatch",
        machine=machine,
        python=args.python or sys.executable,
        launch_method=args.launch_method,
        shapes=shapes or None,
        dtypes=dtypes or None,
        matrix_path=str(Path(args.matrix).resolve()) if args.matrix else None,
        rounds=5 if args.quick else args.rounds,
        autotune_top_k=4 if args.quick else None,
        shard=args.shard,
        gpu=args.gpu,
    )
    mode = "Triton interpreter (pipeline check, not performance)" if interpreter else info.get("device", "")
    print(
        f"gemmwatch run: {len(selection.cells)} cells ({', '.join(selection.sets) or 'explicit shapes'}"
        f"{', shard ' + args.shard if args.shard else ''}) "
        f"on {mode}; triton {info['triton']}, torch {info['torch']}",
        flush=True,
    )
    notice = None if interpreter else library_notice(info["target"], info["triton"], plan.autotune_top_k)
    if notice:
        print(notice, flush=True)
    try:
        return execute(plan, interpreter=interpreter, machine_info={k: str(v) for k, v in info.items()})
    except RunError as err:
        print(f"gemmwatch run: {err}", file=sys.stderr)
        return 2
