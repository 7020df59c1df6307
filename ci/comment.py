"""Rendering the PR comment: a pure function from comparisons to GitHub-flavoured markdown.

Order of importance, which is also the order things are cut when the comment
would exceed GitHub's 65,536-character limit (last cut first): the summary
line, regressions, failures, improvements, the speedup-over-native table, the
noisy / not-called list, the unchanged cells (folded in <details>).
"""

from __future__ import annotations

from ci.decision import CellComparison, Comparison, Verdict

GITHUB_LIMIT = 65536
MARKS = (("🟢", 1.0), ("🟡", 0.9), ("🔴", 0.0))  # speedup >= 1.00, 0.90-1.00, < 0.90


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1%}"


def _num(x: float | None, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def speed_mark(speedup: float) -> str:
    return next(mark for mark, bound in MARKS if speedup >= bound)


def _target_name(comp: Comparison) -> str:
    device = str(comp.head_params.get("device") or comp.machine)
    return device.replace("NVIDIA ", "")


def summary_line(comparisons: list[Comparison]) -> str:
    regressed = sum(len(c.by_verdict(Verdict.REGRESSED)) for c in comparisons)
    improved = sum(len(c.by_verdict(Verdict.IMPROVED)) for c in comparisons)
    failed = sum(len(c.by_verdict(Verdict.FAILED)) for c in comparisons)
    cells = sum(len(c.cells) for c in comparisons)
    parts = [_plural(regressed, "regression"), _plural(improved, "improvement")]
    if failed:
        parts.append(_plural(failed, "failed cell"))
    where = "; ".join(f"{_target_name(c)}, Triton {c.triton}" for c in comparisons)
    return f"{', '.join(parts)} in {_plural(cells, 'cell')} — {where}"


def _change_table(cells: list[CellComparison], limit: int | None = None) -> list[str]:
    lines = [
        "| cell | metric | base | head | change | interval | q | Triton time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    shown = cells if limit is None else cells[:limit]
    for c in shown:
        interval = f"{_pct(c.interval[0])} .. {_pct(c.interval[1])}" if c.interval else "-"
        q = "-" if c.q_value is None else f"{c.q_value:.2g}"
        lines.append(
            f"| `{c.name}` | {c.metric} | {_num(c.base and c.base.median)} | {_num(c.head and c.head.median)} "
            f"| **{_pct(c.change)}** | {interval} | {q} | {_pct(c.triton_change)} |"
        )
    if limit is not None and len(cells) > limit:
        lines.append(f"| … and {len(cells) - limit} more | | | | | | | |")
    return lines


def _note_table(cells: list[CellComparison]) -> list[str]:
    lines = ["| cell | verdict | note |", "|---|---|---|"]
    lines += [f"| `{c.name}` | {c.verdict.value} | {c.note or '-'} |" for c in cells]
    return lines


def speedup_table(comp: Comparison) -> list[str]:
    """native time / Triton time at head: shapes as rows, dtypes as columns."""
    rows: dict[str, dict[str, float | None]] = {}
    dtypes: list[str] = []
    for c in comp.cells:
        if c.verdict in (Verdict.MISSING,):
            continue
        dtype, shape, *epilogue = c.cell.split(" ")
        row = " ".join([shape, *epilogue])
        rows.setdefault(row, {})[dtype] = c.speedup_head
        if dtype not in dtypes:
            dtypes.append(dtype)
    if not rows:
        return []
    lines = ["| shape | " + " | ".join(dtypes) + " |", "|---" * (len(dtypes) + 1) + "|"]
    for row, values in rows.items():
        cells = []
        for d in dtypes:
            v = values.get(d)
            cells.append("" if d not in values else ("n/a" if v is None else f"{speed_mark(v)} {v:.2f}"))
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return lines


def _context(comp: Comparison, dashboard_url: str | None) -> list[str]:
    p = comp.head_params
    parts = [
        f"GPU {p.get('device', comp.machine)}",
        f"driver {p.get('driver', '?')}",
        f"CUDA {p.get('cuda', '?')}",
        f"cuBLAS {p.get('cublas', '?')}",
        f"torch {p.get('torch', '?')}",
        f"Triton {comp.triton}",
        f"base `{comp.base_commit[:10]}`",
        f"head `{comp.head_commit[:10]}`",
    ]
    line = "<sub>" + " · ".join(parts)
    if dashboard_url:
        line += f" · [dashboard]({dashboard_url})"
    return [line + "</sub>"]


def _section(comp: Comparison, level: int, dashboard_url: str | None) -> list[str]:
    """One target/Triton section; higher `level` drops the less important parts."""
    s = comp.settings
    counts = comp.counts()
    head = (
        f"### {_target_name(comp)} · Triton {comp.triton} — "
        f"{_plural(counts['regressed'], 'regression')}, {_plural(counts['improved'], 'improvement')}, "
        f"{counts['unchanged']} unchanged, {counts['noisy']} noisy"
    )
    out = [head, ""]
    if comp.context_diff:
        diffs = ", ".join(f"{k} `{b}` → `{h}`" for k, (b, h) in comp.context_diff.items())
        out += [f"> [!WARNING]\n> Base and head ran in different contexts ({diffs}): no cell is called.", ""]
    regressed = sorted(comp.by_verdict(Verdict.REGRESSED), key=lambda c: -(c.change or 0))
    if regressed:
        out += [
            f"**Regressions** (change > threshold, default {s.threshold:.0%}; "
            f"Benjamini-Hochberg q < {s.alpha}; {s.confidence:.0%} interval)",
            "",
            *_change_table(regressed, limit=None if level < 5 else 30),
            "",
        ]
    failed = comp.by_verdict(Verdict.FAILED)
    if failed:
        out += ["**Failed cells**", "", *_note_table(failed[: None if level < 5 else 30]), ""]
    improved = sorted(comp.by_verdict(Verdict.IMPROVED), key=lambda c: c.change or 0)
    if improved:
        out += ["**Improvements**", "", *_change_table(improved, limit=None if level < 4 else 10), ""]
    if level < 3:
        table = speedup_table(comp)
        if table:
            out += [
                "**Speedup over native** at head (native time / Triton time; 🟢 >= 1.00, 🟡 0.90-1.00, 🔴 < 0.90)",
                "",
                *table,
                "",
            ]
    others = [c for c in comp.cells if c.verdict in (Verdict.NOISY, Verdict.NOT_CALLED, Verdict.INSUFFICIENT,
                                                     Verdict.NEW, Verdict.MISSING)]  # fmt: skip
    if others and level < 2:
        out += [
            f"<details><summary>Not called: {len(others)} cells (noisy, insufficient, new, missing)</summary>",
            "",
            *_note_table(others),
            "",
            "</details>",
            "",
        ]
    unchanged = comp.by_verdict(Verdict.UNCHANGED)
    if unchanged and level < 1:
        out += [
            f"<details><summary>Unchanged: {len(unchanged)} cells</summary>",
            "",
            *_change_table(unchanged),
            "",
            "</details>",
            "",
        ]
    out += _context(comp, dashboard_url)
    return out


_CUTS = (
    "",
    "the unchanged cells",
    "the unchanged and not-called cells",
    "the unchanged and not-called cells and the speedup tables",
    "the unchanged and not-called cells, the speedup tables and most improvements",
    "everything but the first regressions and failures",
)


def render(comparisons: list[Comparison], *, dashboard_url: str | None = None, limit: int = GITHUB_LIMIT) -> str:
    """The comment body (without the bot's hidden marker, which the poster adds)."""
    if not comparisons:
        return "## gemmwatch\n\nNo results to compare."
    for level in range(len(_CUTS)):
        lines = [f"## gemmwatch: {summary_line(comparisons)}", ""]
        for comp in comparisons:
            lines += [*_section(comp, level, dashboard_url), ""]
        if level:
            lines.append(f"_Truncated to fit GitHub's {limit:,}-character limit: left out {_CUTS[level]}._")
        body = "\n".join(lines).rstrip() + "\n"
        if len(body) <= limit - 200:  # room for the poster's marker
            return body
    return body[: limit - 300] + "\n\n_Truncated to fit GitHub's comment limit._\n"
