"""`gemmwatch publish`: asv's dashboard plus gemmwatch's own static pages.

`asv publish` (real asv, in a subprocess, with a generated config) writes its
dashboard to the html directory: index.html, index.json, graphs/. gemmwatch then
adds `gemmwatch/` beside it:

- `gemmwatch/index.html`: every (machine, Triton version) found in the results;
- one page per (machine, Triton version): the speedup over native
  (1 / median Triton/native ratio) of the newest commit on the branch as a
  shapes x dtypes heatmap, each cell linking to its graph in asv's dashboard;
  the geomean speedup of every commit on the branch as an SVG line chart; the
  context (GPU, driver, CUDA, cuBLAS, torch, Triton).

The pages are static HTML with inline CSS and SVG: no JavaScript, no network.

asv's dashboard state lives in the URL hash (asv/www/asv.js `parse_hash_string`,
graphdisplay.js `setup_benchmark_params`): `#<benchmark>?<key>=<value>&...`,
keys and values encoded with JavaScript's encodeURIComponent. A machine param
(`machine`, `triton`, `branch`, ...) selects those graphs; `p-<param name>`
selects benchmark parameter values, compared verbatim with the values of
index.json, i.e. with their quotes (`p-shape='4096x4096x4096'`).
"""

from __future__ import annotations

import html
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from ci.asv_results import Entry, ResultFile, ResultsError, load
from ci.comment import MARKS

GOOD, FAIR = MARKS[0][1], MARKS[1][1]  # speedup >= 1.00 green, 0.90-1.00 amber, < 0.90 red: as in the PR comment
HEADLINE = "track_ratio"  # Triton time / native time, per round
FALLBACK = "track_triton_time"  # the graph a cell without a native baseline links to
DTYPE_ORDER = ("fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp32-tf32", "fp32-ieee")
SUBDIR = "gemmwatch"


class PublishError(Exception):
    """Bad input for `gemmwatch publish` (exit status 2); the message names what is wrong."""


class AsvPublishFailed(Exception):
    """`asv publish` itself failed (exit status 1); the message holds the end of its output."""


# --------------------------------------------------------------------------- results


@dataclass
class Run:
    """One asv result file on disk."""

    path: Path
    commit: str
    date: int  # ms since the epoch, the result file's "date" (asv: the commit's date)
    machine: str
    triton: str
    params: dict
    result: ResultFile | None = None


@dataclass
class Cell:
    suite: str  # "Matmul", "ScaledMatmul", "FusedEpilogue"
    params: tuple[str, ...]  # (shape, dtype[, epilogue])
    prefix: str = ""  # the benchmark name without the metric, e.g. "bench_gemm.Matmul"
    ratio: Entry | None = None
    triton: Entry | None = None

    @property
    def shape(self) -> str:
        return self.params[0]

    @property
    def dtype(self) -> str:
        return self.params[1] if len(self.params) > 1 else ""

    @property
    def row(self) -> str:
        """Heatmap row: the shape, plus the epilogue for fused cells ('4096x4096x4096 bias+gelu')."""
        return " ".join([self.shape, *self.params[2:]])

    @property
    def median_ratio(self) -> float | None:
        e = self.ratio
        if e is None or e.value is None or math.isnan(e.value):
            return None
        samples = [s for s in e.samples or () if s is not None and math.isfinite(s)]
        value = _median(samples) if samples else e.value
        return value if value > 0 and math.isfinite(value) else None

    @property
    def speedup(self) -> float | None:
        r = self.median_ratio
        return None if r is None else 1.0 / r

    @property
    def status(self) -> str:
        """'ok' (a speedup), 'failed', 'n/a' (measured, no native baseline) or 'absent' (not measured)."""
        if self.speedup is not None:
            return "ok"
        if (self.ratio is not None and self.ratio.failed) or (self.triton is not None and self.triton.failed):
            return "failed"
        t = self.triton
        if t is not None and t.value is not None and math.isfinite(t.value):
            return "n/a"
        return "absent"

    @property
    def rounds(self) -> int:
        return len(self.ratio.samples) if self.ratio is not None and self.ratio.samples else 0


@dataclass
class Group:
    """All runs of one (machine, Triton version)."""

    machine: str
    triton: str
    runs: list[Run] = field(default_factory=list)
    on_branch: list[Run] = field(default_factory=list)

    @property
    def slug(self) -> str:
        return f"{_slug(self.machine)}-triton-{_slug(self.triton)}.html"


def _median(values: list[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "unknown"


def _version_key(version: str) -> tuple:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.+-]", version))


def result_paths(results_dir: Path) -> list[Path]:
    """asv's layout: <results>/<machine>/<sha8>-<env>.json (machine.json describes the machine)."""
    return sorted(p for p in results_dir.glob("*/*.json") if p.name != "machine.json")


def scan(results_dir: Path) -> list[Run]:
    runs = []
    for path in result_paths(results_dir):
        try:
            data = json.loads(path.read_text())
            params = data["params"]
            runs.append(
                Run(
                    path=path,
                    commit=data["commit_hash"],
                    date=int(data.get("date") or 0),
                    machine=str(params.get("machine") or path.parent.name),
                    triton=str(params.get("triton") or "unknown"),
                    params=params,
                )
            )
        except (OSError, ValueError, KeyError, TypeError) as err:
            print(f"gemmwatch publish: warning: skipping {path}: not an asv result file ({err})", file=sys.stderr)
    return runs


def cells_of(runs: list[Run]) -> dict[tuple[str, tuple[str, ...]], Cell]:
    """The cells of one commit; with several result files (environments), the later file wins per cell."""
    cells: dict[tuple[str, tuple[str, ...]], Cell] = {}
    for run in runs:
        if run.result is None:
            continue
        for e in run.result.entries:
            parts = e.benchmark.split(".")
            metric = parts[-1]
            if metric not in (HEADLINE, FALLBACK) or len(e.params) < 2:
                continue
            suite = parts[-2] if len(parts) >= 2 else ""
            cell = cells.setdefault((suite, e.params), Cell(suite, e.params, ".".join(parts[:-1])))
            if metric == HEADLINE:
                cell.ratio = e
            else:
                cell.triton = e
    return {k: c for k, c in cells.items() if c.status != "absent"}


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


# --------------------------------------------------------------------------- git and asv


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)


def find_repo(start: Path) -> Path:
    proc = _git(start, "rev-parse", "--show-toplevel")
    if proc.returncode != 0:
        raise PublishError(f"{start} is not inside a git repository; asv needs the project's git checkout")
    return Path(proc.stdout.strip())


def branch_commits(repo: Path, branch: str) -> set[str]:
    if _git(repo, "rev-parse", "--verify", "--quiet", f"{branch}^{{commit}}").returncode != 0:
        raise PublishError(f"branch {branch!r} does not exist in {repo} (--branch names the one to publish)")
    proc = _git(repo, "rev-list", branch)
    if proc.returncode != 0:
        raise PublishError(f"git rev-list {branch} failed in {repo}: {proc.stderr.strip()}")
    return set(proc.stdout.split())


def _repo_asv_settings(repo: Path) -> dict:
    """show_commit_url of the checkout's own asv.conf.json, where it has one (asv links commits with it)."""
    path = repo / "asv.conf.json"
    if not path.is_file():
        return {}
    try:
        from asv import util

        conf = util.load_json(str(path), js_comments=True)
    except Exception:  # noqa: BLE001 - a broken project config only loses the commit links
        return {}
    return {k: conf[k] for k in ("show_commit_url",) if isinstance(conf.get(k), str)}


def run_asv_publish(results_dir: Path, html_dir: Path, repo: Path, branches: tuple[str, ...], title: str) -> None:
    with tempfile.TemporaryDirectory(prefix="gemmwatch-publish-") as tmp:
        conf = {
            "version": 1,
            "project": title,
            # asv's header links the project name here: gemmwatch's pages, next to asv's index.html
            "project_url": f"{SUBDIR}/index.html",
            "repo": str(repo),
            "branches": list(branches),
            "dvcs": "git",
            "environment_type": "existing",
            # asv publish reads benchmarks.json from the results; the suite itself is not imported
            # (the folder need not even exist), so the checkout's own benchmarks/ is named, not copied.
            "benchmark_dir": str(repo / "benchmarks"),
            "env_dir": str(Path(tmp) / "env"),
            "results_dir": str(results_dir),
            "html_dir": str(html_dir),
            **_repo_asv_settings(repo),
        }
        conf_path = Path(tmp) / "asv.conf.json"
        conf_path.write_text(json.dumps(conf, indent=2))
        proc = subprocess.run(
            [sys.executable, "-m", "asv", "publish", "--config", str(conf_path)],
            cwd=tmp,
            capture_output=True,
            text=True,
        )
    if proc.returncode != 0 or not (html_dir / "index.json").is_file():
        tail = "".join((proc.stdout + proc.stderr).splitlines(keepends=True)[-30:])
        raise AsvPublishFailed(f"asv publish exited with {proc.returncode}:\n{tail}")


def asv_graph_link(
    benchmarks: dict, benchmark: str, params: tuple[str, ...], state: dict[str, str], prefix: str = "../index.html"
) -> str | None:
    """The URL of a cell's graph in asv's dashboard, or None when asv does not know the benchmark or values.

    `p-<name>` values must equal index.json's (quoted) parameter values exactly:
    graphdisplay.js compares them with `Array.includes`.
    """
    desc = benchmarks.get(benchmark)
    if not desc or len(desc.get("params") or []) != len(params):
        return None
    query = [(k, v) for k, v in state.items()]
    for name, values, wanted in zip(desc.get("param_names") or [], desc["params"], params):
        match = next((v for v in values if _unquote(v) == wanted), None)
        if match is None:
            return None
        query.append((f"p-{name}", match))
    args = "&".join(f"{_encode_component(k)}={_encode_component(v)}" for k, v in query)
    return f"{prefix}#{_encode_component(benchmark)}?{args}"


def _encode_component(text: str) -> str:
    """JavaScript's encodeURIComponent (what asv's format_hash_string uses)."""
    return quote(text, safe="-_.!~*'()")


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


# --------------------------------------------------------------------------- rendering

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2430; margin: 24px;
       background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
a { color: #1a56c4; } .muted { color: #5b6472; } .context { color: #39414d; margin: 4px 0 16px; }
.note { background: #fff4d6; border: 1px solid #e6c46a; padding: 6px 10px; display: inline-block; }
table { border-collapse: collapse; } th, td { padding: 4px 8px; }
table.list th, table.list td { border-bottom: 1px solid #dde1e7; text-align: left; }
table.heatmap th { font-weight: 600; white-space: nowrap; background: #f3f5f8; border: 1px solid #dde1e7; }
table.heatmap th[scope=row] { text-align: left; font-family: ui-monospace, Menlo, Consolas, monospace;
       font-weight: 500; }
table.heatmap td { border: 1px solid #dde1e7; width: 84px; min-width: 84px; height: 26px; padding: 0;
       text-align: center; font-variant-numeric: tabular-nums; }
table.heatmap td a, table.heatmap td span { display: block; padding: 4px 6px; color: inherit; text-decoration: none; }
table.heatmap td a:hover { outline: 2px solid #1d2430; outline-offset: -2px; }
table.heatmap td.na { background: #eceef1; color: #5b6472; font-style: italic; }
table.heatmap td.failed { background: #4a4f57; color: #fff; font-weight: 600; }
table.heatmap td.empty { background: #fafbfc; }
.legend span { display: inline-block; padding: 2px 8px; margin-right: 6px; border: 1px solid #dde1e7; }
svg text { font: 12px system-ui, sans-serif; fill: #39414d; }
"""


def _mix(c0: tuple[int, int, int], c1: tuple[int, int, int], t: float) -> tuple[int, int, int]:
    t = min(max(t, 0.0), 1.0)
    return tuple(round(a + (b - a) * t) for a, b in zip(c0, c1))


def cell_colour(speedup: float) -> tuple[str, str]:
    """(background, text) colour: green >= GOOD, amber FAIR..GOOD, red < FAIR, deeper the further from 1."""
    if speedup >= GOOD:
        bg = _mix((214, 241, 219), (27, 122, 58), (speedup - GOOD) / 1.0)  # full green at 2x
    elif speedup >= FAIR:
        bg = _mix((255, 236, 179), (230, 160, 20), (GOOD - speedup) / (GOOD - FAIR))
    else:
        bg = _mix((250, 205, 205), (176, 32, 32), (FAIR - speedup) / 0.4)  # full red at 0.5x
    luminance = 0.2126 * bg[0] + 0.7152 * bg[1] + 0.0722 * bg[2]
    return "#{:02x}{:02x}{:02x}".format(*bg), ("#ffffff" if luminance < 140 else "#111111")


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _date(ms: int, fmt: str = "%Y-%m-%d %H:%M UTC") -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime(fmt) if ms else "unknown date"


def _page(title: str, body: list[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_esc(title)}</title>",
            f"<style>{CSS}</style>",
            "</head><body>",
            *body,
            "</body></html>",
            "",
        ]
    )


def _context_line(params: dict, commit: str, date: int) -> str:
    parts = [
        f"GPU {params.get('device') or params.get('machine', '?')}",
        f"driver {params.get('driver', '?')}",
        f"CUDA {params.get('cuda', '?')}",
        f"cuBLAS {params.get('cublas', '?')}",
        f"torch {params.get('torch', '?')}",
        f"Triton {params.get('triton', '?')}",
        f"commit {commit[:10]} ({_date(date)})",
    ]
    return " · ".join(parts)


def _is_interpreter(params: dict) -> bool:
    return params.get("machine") == "cpu-interpreter" or str(params.get("device", "")).startswith("Triton interpreter")


def _dtype_key(dtype: str) -> tuple[int, str]:
    return (DTYPE_ORDER.index(dtype), "") if dtype in DTYPE_ORDER else (len(DTYPE_ORDER), dtype)


def heatmap(cells: dict, benchmarks: dict, state: dict[str, str]) -> list[str]:
    plain = [c for c in cells.values() if len(c.params) == 2]
    fused = [c for c in cells.values() if len(c.params) > 2]
    rows = list(dict.fromkeys(c.row for c in plain)) + list(dict.fromkeys(c.row for c in fused))
    dtypes = sorted(dict.fromkeys(c.dtype for c in cells.values()), key=_dtype_key)
    grid = {(c.row, c.dtype): c for c in cells.values()}
    out = ['<table class="heatmap" id="heatmap">', '<thead><tr><th scope="col">shape</th>']
    out += [f'<th scope="col">{_esc(d)}</th>' for d in dtypes]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append(f'<tr><th scope="row">{_esc(row)}</th>')
        for dtype in dtypes:
            cell = grid.get((row, dtype))
            if cell is None:
                out.append('<td class="empty"></td>')
                continue
            out.append(_heatmap_cell(cell, benchmarks, state))
        out.append("</tr>")
    out.append("</tbody></table>")
    return out


def _heatmap_cell(cell: Cell, benchmarks: dict, state: dict[str, str]) -> str:
    name = " ".join([cell.suite, cell.dtype, cell.row])
    status = cell.status
    metric = FALLBACK if status == "n/a" else HEADLINE
    link = asv_graph_link(benchmarks, f"{cell.prefix}.{metric}", cell.params, state)
    attrs = f'data-suite="{_esc(cell.suite)}" data-params="{_esc(" ".join(cell.params))}"'
    if status == "ok":
        speedup = cell.speedup
        bg, fg = cell_colour(speedup)
        text = f"{speedup:.2f}"
        rounds = f", {cell.rounds} rounds" if cell.rounds else ""
        tip = f"{name}: speedup over native {speedup:.3f} (Triton/native {cell.median_ratio:.4g}{rounds})"
        cls, style = "cell ok", f' style="background:{bg};color:{fg}"'
        attrs += f' data-speedup="{speedup:.6g}"'
    elif status == "failed":
        text, tip, cls, style = "failed", f"{name}: failed (compile error or wrong result)", "cell failed", ""
    else:
        text, tip, cls, style = "n/a", f"{name}: no native baseline (Triton time only)", "cell na", ""
    if link:
        tip += " — open the graph in asv's dashboard"
        inner = f'<a href="{_esc(link)}" title="{_esc(tip)}">{_esc(text)}</a>'
    else:
        inner = f'<span title="{_esc(tip)}">{_esc(text)}</span>'
    return f'<td class="{cls}" {attrs}{style}>{inner}</td>'


def _nice_step(span: float, target: int = 5) -> float:
    raw = span / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def _digits(step: float) -> int:
    """Decimals that show every tick of `step` exactly (at least 2, as the heatmap)."""
    return next((d for d in range(2, 6) if abs(round(step, d) - step) < 1e-9), 6)


HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
TIME_STEPS = (HOUR_MS, 3 * HOUR_MS, 6 * HOUR_MS, 12 * HOUR_MS, DAY_MS, 2 * DAY_MS, 7 * DAY_MS, 14 * DAY_MS,
              30 * DAY_MS, 91 * DAY_MS, 182 * DAY_MS, 365 * DAY_MS)  # fmt: skip


def _time_ticks(lo: float, hi: float, max_ticks: int = 6) -> tuple[list[int], str]:
    """Round times (UTC) between lo and hi, and their strftime format."""
    span = hi - lo
    step = next((s for s in TIME_STEPS if span / s <= max_ticks), None)
    if step is None:
        step = 365 * DAY_MS * math.ceil(span / (365 * DAY_MS) / max_ticks)
    ticks = list(range(math.ceil(lo / step) * step, int(hi) + 1, step))
    return ticks, ("%Y-%m-%d" if step >= DAY_MS else "%m-%d %H:%M")


def history_svg(points: list[tuple[int, float, str, int]], width: int = 860, height: int = 300) -> str:
    """Line chart of (date ms, geomean, commit, cells), with axes, ticks, labels and the 1.0 (native) line."""
    left, right, top, bottom = 64, 36, 16, 52
    pw, ph = width - left - right, height - top - bottom
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    lo, hi = min([*ys, GOOD]), max([*ys, GOOD])
    pad = max((hi - lo) * 0.08, 0.02)
    lo, hi = lo - pad, hi + pad
    step = _nice_step(hi - lo)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    x_pad = (max(xs) - min(xs)) * 0.04 or 12 * HOUR_MS
    x0, x1 = min(xs) - x_pad, max(xs) + x_pad

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def sy(y: float) -> float:
        return top + (hi - y) / (hi - lo) * ph

    out = [
        f'<svg id="history" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="geomean speedup over native per commit">',
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="#fbfcfd" stroke="#c9ced6"/>',
    ]
    digits = _digits(step)
    for i in range(round((hi - lo) / step) + 1):
        y = lo + i * step
        py = sy(y)
        out.append(f'<line x1="{left}" y1="{py:.1f}" x2="{left + pw}" y2="{py:.1f}" stroke="#e6e9ee"/>')
        out.append(f'<text x="{left - 6}" y="{py + 4:.1f}" text-anchor="end">{y:.{digits}f}</text>')
    if lo <= GOOD <= hi:
        py = sy(GOOD)
        out.append(
            f'<line class="native" x1="{left}" y1="{py:.1f}" x2="{left + pw}" y2="{py:.1f}" stroke="#8a94a3" '
            'stroke-dasharray="5 4"/>'
        )
        out.append(f'<text x="{left + pw - 4}" y="{py - 5:.1f}" text-anchor="end">native = 1.00</text>')
    ticks, fmt = _time_ticks(x0, x1)
    for t in ticks:
        px = sx(t)
        out.append(f'<line x1="{px:.1f}" y1="{top + ph}" x2="{px:.1f}" y2="{top + ph + 5}" stroke="#8a94a3"/>')
        out.append(f'<text x="{px:.1f}" y="{top + ph + 18}" text-anchor="middle">{_esc(_date(t, fmt))}</text>')
    out.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 8}" text-anchor="middle">commit date (UTC)</text>'
        f'<text transform="translate(14 {top + ph / 2:.1f}) rotate(-90)" text-anchor="middle">'
        "geomean speedup over native</text>"
    )
    coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(xs, ys))
    out.append(f'<polyline points="{coords}" fill="none" stroke="#1a56c4" stroke-width="2"/>')
    for date, value, commit, n in points:
        colour = cell_colour(value)[0]
        out.append(
            f'<circle cx="{sx(date):.1f}" cy="{sy(value):.1f}" r="4" fill="{colour}" stroke="#1a56c4">'
            f"<title>{_esc(commit[:10])} {_esc(_date(date))}: {value:.3f} over {n} cells</title></circle>"
        )
    out.append("</svg>")
    return "\n".join(out)


def _commit_history(group: Group) -> list[tuple[Run, dict]]:
    """[(newest run of the commit, its cells)] for each commit on the branch, oldest first."""
    by_commit: dict[str, list[Run]] = {}
    for run in sorted(group.on_branch, key=lambda r: (r.date, r.path.stat().st_mtime, str(r.path))):
        by_commit.setdefault(run.commit, []).append(run)
    history = [(runs[-1], cells_of(runs)) for runs in by_commit.values()]
    return sorted(history, key=lambda item: (item[0].date, item[0].path.stat().st_mtime))


def group_page(group: Group, benchmarks: dict, branch: str, multi_branch: bool, title: str) -> tuple[str, dict]:
    """The page of one (machine, Triton version), and a summary for the landing page."""
    heading = f"{group.machine} · Triton {group.triton}"
    body = [
        f"<h1>{_esc(title)}: {_esc(heading)}</h1>",
        '<p class="muted"><a href="index.html">all targets</a> · <a href="../index.html">asv dashboard</a></p>',
    ]
    history = _commit_history(group)
    summary = {"commits": len(history), "newest": None, "geomean": None, "cells": 0}
    if not history:
        body.append(f"<p>No result of this machine and Triton version is on branch {_esc(branch)}.</p>")
        return _page(f"{title}: {heading}", body), summary
    newest, cells = history[-1]
    state = {"machine": group.machine, "triton": group.triton}
    if multi_branch:
        state["branch"] = branch
    speedups = [c.speedup for c in cells.values() if c.speedup is not None]
    gm = geomean(speedups)
    summary.update(newest=newest, geomean=gm, cells=len(cells))
    body.append(f'<p class="context" id="context">{_esc(_context_line(newest.params, newest.commit, newest.date))}</p>')
    if _is_interpreter(newest.params):
        body.append('<p class="note">Triton interpreter run: a pipeline check, not performance.</p>')
    counts = {
        "≥ 1.00": sum(s >= GOOD for s in speedups),
        "0.90–1.00": sum(FAIR <= s < GOOD for s in speedups),
        "< 0.90": sum(s < FAIR for s in speedups),
        "n/a": sum(c.status == "n/a" for c in cells.values()),
        "failed": sum(c.status == "failed" for c in cells.values()),
    }
    body.append(f"<h2>Speedup over native at {_esc(newest.commit[:10])} (newest on {_esc(branch)})</h2>")
    body.append(
        '<p class="muted">native time / Triton time = 1 / median of the per-round Triton/native ratio; '
        "above 1.00 Triton is faster. Rows: shapes (M×N×K; fused epilogues as extra rows), columns: dtypes. "
        "Each cell opens its graph in asv's dashboard.</p>"
    )
    body.append(
        f'<p id="summary">{len(cells)} cells, geomean {"—" if gm is None else f"{gm:.3f}"}: '
        + ", ".join(f"{n} {label}" for label, n in counts.items())
        + "</p>"
    )
    body += heatmap(cells, benchmarks, state)
    legend = [(f"≥ {GOOD:.2f}", 1.5), (f"{FAIR:.2f}–{GOOD:.2f}", 0.95), (f"< {FAIR:.2f}", 0.7)]
    body.append('<p class="legend">')
    for label, value in legend:
        bg, fg = cell_colour(value)
        body.append(f'<span style="background:{bg};color:{fg}">{_esc(label)}</span>')
    body.append('<span style="background:#eceef1"><i>n/a</i>: no native baseline</span>')
    body.append('<span style="background:#4a4f57;color:#fff">failed</span></p>')

    points = []
    rows = []
    for run, commit_cells in history:
        gm_c = geomean([c.speedup for c in commit_cells.values() if c.speedup is not None])
        n = sum(c.speedup is not None for c in commit_cells.values())
        if gm_c is not None:
            points.append((run.date, gm_c, run.commit, n))
        rows.append(
            f"<tr><td><code>{_esc(run.commit[:10])}</code></td><td>{_esc(_date(run.date))}</td>"
            f"<td>{'—' if gm_c is None else f'{gm_c:.3f}'}</td><td>{n}</td></tr>"
        )
    body.append(f"<h2>Geomean speedup over native per commit on {_esc(branch)}</h2>")
    if points:
        body.append(history_svg(points))
    else:
        body.append("<p>No commit has a measured speedup yet.</p>")
    body.append(
        f"<details><summary>{len(rows)} commits</summary>"
        '<table class="list" id="history-table"><thead><tr><th>commit</th><th>date</th><th>geomean</th>'
        "<th>cells</th></tr></thead><tbody>" + "".join(reversed(rows)) + "</tbody></table></details>"
    )
    return _page(f"{title}: {heading}", body), summary


def landing_page(groups: list[Group], summaries: list[dict], branch: str, title: str) -> str:
    body = [
        f"<h1>{_esc(title)}</h1>",
        f'<p class="muted">Speedup of the Triton kernels over the native library, per target and Triton version, '
        f"for commits on {_esc(branch)}. The full history of every metric is in "
        f'<a href="../index.html">asv\'s dashboard</a>.</p>',
        '<table class="list" id="targets"><thead><tr><th>machine</th><th>device</th><th>Triton</th>'
        "<th>newest commit</th><th>commits</th><th>cells</th><th>geomean speedup</th></tr></thead><tbody>",
    ]
    for group, s in zip(groups, summaries):
        device = group.runs[-1].params.get("device", "") if group.runs else ""
        newest = s["newest"]
        when = f"<code>{_esc(newest.commit[:10])}</code> {_esc(_date(newest.date))}" if newest else "—"
        gm = s["geomean"]
        cell = "—"
        if gm is not None:
            bg, fg = cell_colour(gm)
            cell = f'<span style="background:{bg};color:{fg};padding:2px 6px">{gm:.3f}</span>'
        body.append(
            f'<tr><td><a href="{_esc(group.slug)}">{_esc(group.machine)}</a></td><td>{_esc(device)}</td>'
            f'<td><a href="{_esc(group.slug)}">{_esc(group.triton)}</a></td><td>{when}</td>'
            f"<td>{s['commits']}</td><td>{s['cells']}</td>"
            f"<td>{cell}</td></tr>"
        )
    body.append("</tbody></table>")
    return _page(title, body)


# --------------------------------------------------------------------------- entry points


def publish(
    results_dir: Path,
    html_dir: Path,
    *,
    repo: Path,
    branches: tuple[str, ...] | list[str] = ("main",),
    dashboard_title: str = "gemmwatch",
) -> Path:
    """Run `asv publish`, then write gemmwatch's pages under html_dir/gemmwatch; return the landing page."""
    results_dir, html_dir = Path(results_dir).resolve(), Path(html_dir).resolve()
    branches = tuple(branches) or ("main",)
    if not results_dir.is_dir():
        raise PublishError(f"results directory {results_dir} does not exist (run `gemmwatch run` first)")
    if not result_paths(results_dir):
        raise PublishError(f"results directory {results_dir} holds no asv result files (run `gemmwatch run` first)")
    if not (results_dir / "benchmarks.json").is_file():
        raise PublishError(
            f"{results_dir / 'benchmarks.json'} is missing: asv publish needs the benchmark list that asv run writes"
        )
    repo = find_repo(Path(repo))
    on_branch = branch_commits(repo, branches[0])
    for other in branches[1:]:
        branch_commits(repo, other)  # exists: asv would fail on it later

    run_asv_publish(results_dir, html_dir, repo, branches, dashboard_title)

    benchmarks = json.loads((results_dir / "benchmarks.json").read_text())
    groups: dict[tuple[str, str], Group] = {}
    for run in scan(results_dir):
        group = groups.setdefault((run.machine, run.triton), Group(run.machine, run.triton))
        group.runs.append(run)
        if run.commit in on_branch:
            try:
                run.result = load(run.path)
            except ResultsError as err:
                print(f"gemmwatch publish: warning: skipping {err}", file=sys.stderr)
                continue
            group.on_branch.append(run)
    ordered = sorted(groups.values(), key=lambda g: (g.machine, _version_key(g.triton)))
    for g in ordered:
        g.runs.sort(key=lambda r: r.date)

    out = html_dir / SUBDIR
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    summaries = []
    for group in ordered:
        page, summary = group_page(group, benchmarks, branches[0], len(branches) > 1, dashboard_title)
        (out / group.slug).write_text(page, encoding="utf-8")
        summaries.append(summary)
    landing = out / "index.html"
    landing.write_text(landing_page(ordered, summaries, branches[0], dashboard_title), encoding="utf-8")
    return landing


def main(args) -> int:
    try:
        checkout = getattr(args, "checkout", None)
        repo = find_repo(Path(checkout) if checkout else Path.cwd())
        results_arg = getattr(args, "results_dir", None)
        html_arg = getattr(args, "html_dir", None)
        results_dir = Path(results_arg) if results_arg else repo / ".asv" / "results"
        html_dir = Path(html_arg) if html_arg else repo / ".asv" / "html"
        branch = getattr(args, "branch", None) or "main"
        landing = publish(results_dir, html_dir, repo=repo, branches=(branch,))
    except PublishError as err:
        print(f"gemmwatch publish: {err}", file=sys.stderr)
        return 2
    except AsvPublishFailed as err:
        print(f"gemmwatch publish: {err}", file=sys.stderr)
        return 1
    print(landing)
    return 0
