"""The `gemmwatch` command line. Heavy imports (torch, triton) happen inside commands."""

from __future__ import annotations

import argparse
import os
import sys


def use_interpreter_without_gpu() -> bool:
    """Fall back to Triton's interpreter when there is no GPU (before triton is imported).

    Returns whether the interpreter is in use.
    """
    if "TRITON_INTERPRET" not in os.environ:
        import torch

        if not torch.cuda.is_available():
            os.environ["TRITON_INTERPRET"] = "1"
    from targets.detect import interpreter_requested

    return interpreter_requested()


def _lazy(module: str, function: str = "main"):
    """A subcommand handler that imports its module only when the subcommand runs (`--help` stays instant)."""

    def handler(args) -> int:
        import importlib

        return getattr(importlib.import_module(module), function)(args)

    return handler


def _add_base_head(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base", metavar="COMMIT", help="base commit (its results in --results-dir)")
    p.add_argument("--head", metavar="COMMIT", help="head commit")
    p.add_argument("--base-results", metavar="FILE", help="an asv result file for the base (e.g. a runner's artifact)")
    p.add_argument("--head-results", metavar="FILE", help="an asv result file for the head")
    p.add_argument("--results-dir", metavar="DIR", help="asv results directory (default .asv/results)")
    p.add_argument("--machine", help="only this machine/target (default: every machine both commits have)")
    p.add_argument("--axis", choices=("commit", "triton"), default="commit",
                   help="what differs between base and head: the commit, or the Triton version (exempt from the context check)")  # fmt: skip
    p.add_argument("--config", metavar="PYPROJECT", default="pyproject.toml",
                   help="thresholds from [tool.gemmwatch.compare] (default ./pyproject.toml)")  # fmt: skip
    p.add_argument("--checkout", metavar="DIR", help="git checkout to resolve commit names in (default: cwd)")
    p.add_argument("--recheck", nargs="+", action="extend", metavar="REPORT.json",
                   help="reports of `gemmwatch recheck` (one per target): their verdicts replace those cells' verdicts")  # fmt: skip
    p.add_argument("--recheck-from", metavar="DIR", help="every recheck.json below DIR (e.g. the downloaded artifacts)")
    p.add_argument("--history", nargs="+", metavar="RESULT.json",
                   help="earlier runs (e.g. of main): their run-to-run spread, per machine and Triton version, "
                        "widens each cell's interval")  # fmt: skip
    p.add_argument("--history-from", metavar="DIR",
                   help="every result file below DIR as --history (e.g. a checkout of the results store); "
                        "the newest 20 runs per machine and Triton version are used")  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gemmwatch",
        description="Continuous performance-regression checks for Triton GEMM kernels against the native library.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    bench = sub.add_parser(
        "bench",
        help="table of Triton vs native time, TFLOP/s and speedup for a small shape x dtype set",
        description="Time kernels.matmul / kernels.scaled_matmul against torch (cuBLAS) on a small set of cells. "
        "Without a GPU the kernels run in Triton's interpreter: a correctness and pipeline check, not performance.",
    )
    bench.add_argument(
        "--dtypes", nargs="+", metavar="DTYPE", help="only these dtypes (fp16 bf16 fp8_e4m3 fp32-ieee ...)"
    )
    bench.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="interleaved timing rounds per cell (default: 30 on GPU, 3 in the interpreter)",
    )
    bench.add_argument("--json", metavar="PATH", help="also write the rows and context as JSON")
    bench.set_defaults(func=_lazy("ci.bench"))

    trial = sub.add_parser(
        "try",
        help="time named configs on cells against the library's choice and the native library",
        description="For each cell: the native library, the launcher's own choice (tuned library, else autotune) "
        "and each named config, checked against a float64 reference and timed in one interleaved measurement with "
        "the suites' protocol; a config that cannot run the cell or computes it wrong is reported with its reason. "
        "Without a GPU the kernels run in Triton's interpreter (a correctness check, not performance).",
    )
    trial.add_argument("--cells", nargs="+", required=True, metavar="CELL",
                       help="e.g. 'fp8_e4m3 1x3584x3584' 'fp16 4096x4096x4096 bias+gelu'")  # fmt: skip
    trial.add_argument("--configs", nargs="+", required=True, metavar="NAME",
                       help="config names as the library writes them, e.g. BM1-BN64-BK256-w4-s1-g8-sks8-fma")  # fmt: skip
    trial.add_argument("--rounds", type=int, default=0,
                       help="interleaved timing rounds per cell (default: 30 on GPU, 2 in the interpreter)")  # fmt: skip
    trial.add_argument("--no-library", action="store_true",
                       help="leave out the launcher's own choice (the tuned library's entry, else an autotune of the "
                            "cell: long where the installed Triton has no library)")  # fmt: skip
    trial.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    trial.set_defaults(func=_lazy("ci.trial"))

    probe = sub.add_parser(
        "probe",
        help="run each candidate config of a cell once, in a process of its own, and check it (finds a config "
        "that faults or computes wrong)",
        description="For each cell: its candidate configs (the running target's, all of them; --match narrows them, "
        "--configs names them instead), each run once in a child process and checked against a float64 reference: "
        "right, refused by the launcher, wrong, failed, faulted (the child's GPU context failed or it died) or hung "
        "(past --timeout). A fault ends only its child. Exit 1 if any config is wrong, failed, faulted or hung. "
        "Without a GPU the kernels run in Triton's interpreter.",
    )
    probe.add_argument("--cells", nargs="+", required=True, metavar="CELL", help="e.g. 'fp16 128x4608x3584'")
    probe.add_argument("--match", metavar="REGEX",
                       help="only the candidates whose names this finds (a pattern that starts with '-' goes after "
                            "'=': --match=-xn)")  # fmt: skip
    probe.add_argument("--configs", nargs="+", metavar="NAME", help="these configs instead of the candidates")
    probe.add_argument("--jobs", type=int, default=4, help="child processes at a time (default 4)")
    probe.add_argument("--timeout", type=float, default=180.0, help="seconds a child may run (default 180)")
    probe.add_argument("--json", metavar="PATH", help="also write the verdicts as JSON")
    probe.set_defaults(func=_lazy("ci.probe"))

    run = sub.add_parser(
        "run",
        help="measure a commit with the asv suites into .asv/results (the main job)",
        description="Run the asv suites for one commit (default HEAD) with the fixed Python environment: the commit's "
        "kernels come from a git worktree, nothing is installed. On a GPU the default matrix of benchmarks/matrix.toml "
        "is measured; without one, the smoke set runs in Triton's interpreter as a pipeline check (not performance).",
    )
    run.add_argument("commit", nargs="?", default="HEAD", help="commit, branch or tag to measure (default HEAD)")
    run.add_argument("--shapes", nargs="+", metavar="SET|MxNxK", help="shape sets of the matrix and/or literal shapes")
    run.add_argument(
        "--dtypes", nargs="+", metavar="DTYPE", help="only these dtypes (fp16 bf16 fp8_e4m3 fp32-tf32 ...)"
    )
    run.add_argument("--quick", action="store_true", help="5 timing rounds and 4 autotune candidates: fast, noisier")
    run.add_argument("--rounds", type=int, help="interleaved timing rounds per cell (default 30)")
    run.add_argument("--matrix", metavar="PATH", help="matrix file (default benchmarks/matrix.toml)")
    run.add_argument("--shard", metavar="I/N", help="measure the I-th of N disjoint shares of the cells (one per GPU)")
    run.add_argument("--gpu", metavar="INDEX", help="CUDA_VISIBLE_DEVICES for the measurement (e.g. the shard's GPU)")
    run.add_argument("--results-dir", metavar="DIR", help="asv results directory (default .asv/results)")
    run.add_argument("--work-dir", metavar="DIR", help="worktrees, logs, generated config (default .asv/gemmwatch)")
    run.add_argument("--machine", help="asv machine name (default: the detected target, e.g. h200)")
    run.add_argument("--python", metavar="PATH", help="Python of the environment to measure with (default: this one)")
    run.add_argument("--checkout", metavar="DIR", help="the project checkout (default: the current directory's)")
    run.add_argument(
        "--launch-method", choices=("forkserver", "spawn"), default="forkserver", help="asv's (default forkserver)"
    )
    run.set_defaults(func=_lazy("ci.run"))

    noise = sub.add_parser(
        "noise",
        help="A/A report: per-cell run-to-run variation of one commit measured several times",
        description="Coefficient of variation and largest difference of the per-run medians (Triton/native "
        "ratio, Triton time, native time) across asv result files of the same commit from separate processes.",
    )
    noise.add_argument("files", nargs="+", metavar="RESULT.json", help="asv result files (two or more)")
    noise.add_argument("--target", type=float, default=0.005, help="CV goal as a fraction (default 0.005)")
    noise.add_argument("--clocks", action="store_true",
                       help="for the cells above the goal, the SM clock/power/throttle state around their rounds "
                            "in each run, and whether the runs launched the same Triton config and native kernels "
                            "(from the context `gemmwatch run` writes beside the results)")  # fmt: skip
    noise.add_argument("--context", nargs="+", metavar="DIR",
                       help="with --clocks: each result file's context directory, in the files' order (what "
                            "`gemmwatch run` wrote under <results>/../context/<machine>/), where the files no "
                            "longer lie beside it (e.g. unpacked from an evidence pack)")  # fmt: skip
    noise.set_defaults(func=_lazy("ci.noise"))

    exp = sub.add_parser(
        "explain",
        help="per losing cell: our launch beside the native library's (tiles, rounds, clusters; markdown)",
        description="For the fp16/bf16/fp8 cells below --below x native in an asv result file of `gemmwatch run`: "
        "our config's tiles and rounds on the SMs, the native kernel's tile, cluster and CTAs (from the run's "
        "context, recorded with GEMMWATCH_NATIVE_KERNELS=1), and the differences tied to lost time so far.",
    )
    exp.add_argument("file", metavar="RESULT.json", help="an asv result file written by `gemmwatch run`")
    exp.add_argument("--context", metavar="DIR",
                     help="the run's context directory (<Suite>.json files), where it is not beside the results")  # fmt: skip
    exp.add_argument("--below", type=float, default=1.0, help="speedup below which a cell is listed (default 1.0)")
    exp.add_argument("--sms", type=int, help="SMs of the GPU (default: the result's target's)")
    exp.set_defaults(func=_lazy("ci.explain"))

    tab = sub.add_parser(
        "table",
        help="per-cell speed table: native and Triton TFLOP/s, speedup, before vs after (markdown)",
        description="Reads asv result files written by `gemmwatch run`; geomean speedup per dtype at the end.",
    )
    tab.add_argument("--after", required=True, nargs="+", metavar="RESULT.json",
                     help="the run to report (several: parts of the matrix measured apart, each cell in one)")  # fmt: skip
    tab.add_argument(
        "--before", nargs="+", metavar="RESULT.json", help="an earlier run to set beside it (or its parts)"
    )
    tab.add_argument("--after-context", nargs="+", metavar="DIR",
                     help="the after run's context directories, one per file, where they are not beside the results "
                          "(what `gemmwatch run` wrote under <results>/../context/<machine>/): the configs of the "
                          "cells that crossed 1.00x")  # fmt: skip
    tab.add_argument("--before-context", nargs="+", metavar="DIR", help="the same for the before run")
    tab.set_defaults(func=_lazy("ci.table"))

    cmp_ = sub.add_parser(
        "compare",
        help="verdict per cell, base vs head: exit 0 no regression, 1 regression or failure, 2 bad input",
        description="Compare two commits' asv results (or two result files) cell by cell: regressed, improved, "
        "unchanged, noisy, new, missing, failed, insufficient, not-called.",
    )
    _add_base_head(cmp_)
    cmp_.add_argument("--json", action="store_true", help="print the verdicts as JSON (schema in the README)")
    cmp_.set_defaults(func=_lazy("ci.compare", "main_compare"))

    com = sub.add_parser(
        "comment",
        help="post (or update) the PR comment and set a commit status per target",
        description="Render the comparison as one PR comment, edit the bot's earlier comment or create one, and set "
        "gemmwatch/<target> statuses on the PR head. Token from GITHUB_TOKEN (never printed).",
    )
    _add_base_head(com)
    com.add_argument("--repo", dest="repo_slug", metavar="OWNER/NAME", required=True, help="the GitHub repository")
    com.add_argument("--pr", type=int, required=True, help="pull request number")
    com.add_argument("--api-url", metavar="URL", help="GitHub Enterprise base URL (the API is URL/api/v3)")
    com.add_argument("--dashboard-url", metavar="URL", help="link to the published dashboard")
    com.add_argument("--dry-run", action="store_true", help="print the comment and statuses instead of posting")
    com.set_defaults(func=_lazy("ci.compare", "main_comment"))

    sim = sub.add_parser(
        "simulate",
        help="false-alarm and detection rates of the decision, by resampling real A/A runs",
        description="Simulate PR runs from two or more result files of one commit measured in separate processes: "
        "A/A false alarms per 100 runs, and detection of injected slowdowns.",
    )
    sim.add_argument("files", nargs="+", metavar="RESULT.json")
    sim.add_argument("--trials", type=int, default=100, help="simulated PR runs per scenario (default 100)")
    sim.add_argument("--slowdown", type=float, nargs="*", default=[0.02, 0.05], help="injected slowdowns")
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--json", metavar="PATH",
                     help="also write the figures, with every cell's detection rate per slowdown, as JSON here")  # fmt: skip
    sim.add_argument(
        "--history", nargs="+", metavar="RESULT.json", help="earlier runs to estimate run-to-run noise from"
    )
    sim.add_argument("--config", metavar="PYPROJECT", default="pyproject.toml")
    sim.add_argument("--recheck", nargs="+", metavar="REPORT.json",
                     help="A/A reports of `gemmwatch recheck`: simulate the workflow's recheck of flagged cells too")  # fmt: skip
    sim.add_argument("--only-rechecked", action="store_true",
                     help="count only the cells the --recheck reports cover (e.g. a recheck cut short)")  # fmt: skip
    sim.add_argument("--cells", nargs="+", metavar="PATTERN",
                     help="count only cells whose 'Suite cell' name matches (fnmatch, e.g. '* fp16 *')")  # fmt: skip
    sim.set_defaults(func=_lazy("ci.simulate"))

    rck = sub.add_parser(
        "recheck",
        help="re-measure flagged cells with base and head kernels side by side in one process",
        description="Load the base and head commits' kernels (git worktrees) into one process and time the flagged "
        "cells interleaved (base, head, native each round); confirms or clears what compare flagged.",
    )
    _add_base_head(rck)
    rck.add_argument("--cells", nargs="+", metavar="CELL", help="cells to recheck, e.g. 'fp16 4096x4096x4096' "
                     "(default: those compare calls regressed, improved or noisy, and unchanged ones moved by half "
                     "their threshold)")  # fmt: skip
    rck.add_argument("--rounds", type=int, default=30, help="paired rounds per cell (default 30)")
    rck.add_argument("--max-rounds", type=int, metavar="N",
                     help="a cell still noisy gets --rounds more at a time, up to N in all (default 3 x --rounds)")  # fmt: skip
    rck.add_argument("--work-dir", metavar="DIR", help="where the worktrees live (default .asv/gemmwatch)")
    rck.add_argument("--output", metavar="PATH", help="also write the JSON report here")
    rck.set_defaults(func=_lazy("ci.recheck"))

    mrg = sub.add_parser(
        "merge",
        help="merge results directories or runner artifacts into one, without overwriting anything",
        description="Join asv results (shards, targets, runners, Triton versions) cell by cell into a results "
        "directory; a cell measured on both sides keeps the destination's value and is reported.",
    )
    mrg.add_argument("--into", required=True, metavar="DIR", help="destination results directory (the store)")
    mrg.add_argument("sources", nargs="+", metavar="SRC", help="results directories or artifact directories")
    mrg.set_defaults(func=_lazy("ci.store", "main_merge"))

    prn = sub.add_parser(
        "prune",
        help="apply the store's pruning policy (drop old samples, remove very old results)",
        description="Keep every file of the newest --keep-full commits per machine and environment; older files "
        "keep medians and intervals but lose their per-round samples; files older than --max-age-days go.",
    )
    prn.add_argument("--store", required=True, metavar="DIR", help="the results store")
    prn.add_argument("--keep-full", type=int, default=100, help="newest result files per machine/env kept whole")
    prn.add_argument("--max-age-days", type=float, default=730, help="remove result files older than this")
    prn.set_defaults(func=_lazy("ci.store", "main_prune"))

    tun = sub.add_parser(
        "tune",
        help="fill the tuned-config library: time every candidate per cell, keep the best (and the losers)",
        description="detect the target -> candidates from its TargetSpec (every kernel variant) -> compile them "
        "in parallel and rank them with short runs -> time the best of each variant, interleaved with the native "
        "library, with the suites' timing protocol -> pick the fastest correct one -> write "
        "targets/tuned/<target>-triton<ver>.json with the configs that lost and those that failed. The launcher "
        "then uses it instead of autotuning.",
    )
    tun.add_argument("--shapes", nargs="+", metavar="SET|MxNxK",
                     help="shape sets of the matrix and/or literal shapes (each bucket they touch is tuned on all "
                          "the matrix's cells in it)")  # fmt: skip
    tun.add_argument("--dtypes", nargs="+", metavar="DTYPE", help="only these dtypes")
    tun.add_argument("--matrix", metavar="PATH", help="matrix file (default benchmarks/matrix.toml)")
    tun.add_argument("--top-k", type=int, default=None,
                     help="rank only the first K candidates of each cell of a bucket (default: all, at most the target's "
                          "first 128; 0: none, only the library's entries are timed again)")  # fmt: skip
    tun.add_argument("--each-path", type=int, default=1, metavar="N",
                     help="with the first --top-k, also rank the first N candidates of each kernel path (variant, "
                          "FMA, swap-AB, Gluon split, clusters) they hold fewer of (default 1; 0: the first "
                          "--top-k alone)")  # fmt: skip
    tun.add_argument("--order", choices=("library", "space"), default="library",
                     help="the order the candidates are taken in: 'library' (default), each cell's space ordered by "
                          "the coarse rankings the library holds of its nearest cells, alternating with the "
                          "target's own order; 'space', the target's order alone")  # fmt: skip
    tun.add_argument("--finalists", type=int, default=2,
                     help="candidates per kernel variant and cell timed with the full protocol (default 2)")  # fmt: skip
    tun.add_argument("--rounds", type=int, default=10, help="interleaved rounds of the finalists (default 10)")
    tun.add_argument("--refine", type=int, default=2, metavar="N",
                     help="after the coarse pass, also time the other K steps, stage counts and splits of the N "
                          "fastest output tiles (default 2; 0: none)")  # fmt: skip
    tun.add_argument("--match", metavar="REGEX",
                     help="only the candidate configs whose names this finds, e.g. 'fma$' (one kernel path); the "
                          "library's entry is still timed against them and kept unless one is faster (a pattern "
                          "that starts with '-' goes after '=': --match=-c[mn]2$)")  # fmt: skip
    tun.add_argument("--dir", metavar="DIR",
                     help="library directory (default: the launcher's, $GEMMWATCH_TUNED_DIR or targets/tuned); "
                          "one without a library for this target and Triton starts from the launcher's, so its "
                          "entries are kept and timed beside the candidates")  # fmt: skip
    tun.add_argument(
        "--fresh", action="store_true", help="with --dir: start an empty library there instead (no incumbents timed)"
    )
    tun.add_argument("--seed", metavar="LIBRARY.json",
                     help="another Triton version's library of this target, or a library of a chip of the same "
                          "die (the H200's for the H100 SXM): where this target's library for this Triton has no "
                          "entry for a bucket, that library's config (and its cells' own) is timed here beside the "
                          "candidates, as an incumbent; only what is timed is written (--top-k 0: the seed's configs "
                          "alone, a quick library for a new Triton or a new chip); with --order library its "
                          "rankings also order the candidates, for the cells this library has not ranked")  # fmt: skip
    tun.add_argument("--also", metavar="LIBRARY.json",
                     help="a library --seed would take (a chip of the same die, or another Triton version): the "
                          "configs it runs on each cell of a bucket (the bucket's, and the cells' own) are timed here "
                          "beside the incumbent on every bucket tuned, so a config that won on the other chip is "
                          "tried even where this library's rankings never reached it")  # fmt: skip
    tun.add_argument("--below", type=float, metavar="SPEEDUP",
                     help="only the buckets with a selected cell whose speedup over native in --run is below this "
                          "(e.g. 0.9), each tuned on all its cells, the slowest first")  # fmt: skip
    tun.add_argument("--run", metavar="RESULT.json", help="the asv result file --below reads (a `gemmwatch run`)")
    tun.add_argument("--resume", action="store_true",
                     help="skip cells the library already has an entry for (an interrupted tune goes on)")  # fmt: skip
    tun.add_argument("--resume-since", metavar="TIME",
                     help="skip the buckets whose entry was measured at or after this ISO 8601 time (UTC unless "
                          "given): a re-tune stopped by its deadline goes on")  # fmt: skip
    tun.add_argument("--deadline", type=float, metavar="SECONDS",
                     help="start no bucket that would end past this many seconds (judged by the mean bucket so "
                          "far): what is tuned is kept, the cells not reached are listed, exit 1")  # fmt: skip
    tun.add_argument("--plan", action="store_true",
                     help="print what each bucket's coarse pass would time on each cell, and which candidates the "
                          "library's rankings of its neighbours put there, without timing anything (no GPU needed "
                          "with --target)")  # fmt: skip
    tun.add_argument("--target", metavar="NAME",
                     help="with --plan: the catalogue target to plan for (e.g. h200; default: this machine's), its "
                          "library for the installed Triton")  # fmt: skip
    tun.add_argument("--allow-interpreter", action="store_true",
                     help="run the pipeline in the interpreter (its timings are not performance)")  # fmt: skip
    tun.set_defaults(func=_lazy("ci.tune"))

    res = sub.add_parser(
        "resources",
        help="registers, spills, shared memory of the tuned kernels, compiled for the target without a GPU",
        description="Compiles each tuned config (or those of --cells) for the target chip with the installed "
        "Triton, as a launch there would, and reads the binaries' resource use (markdown table).",
    )
    res.add_argument("--target", required=True, help="catalogue target, e.g. h200")
    res.add_argument("--library", metavar="PATH", help="library file (default targets/tuned/<target>-triton<ver>.json)")
    res.add_argument("--cells", nargs="+", metavar="CELL", help="only these cells, e.g. 'fp8_e4m3 4096x4096x4096'")
    res.set_defaults(func=_lazy("ci.resources"))

    tdiff = sub.add_parser(
        "tuned-diff",
        help="markdown: which cells of a tuned-config library changed the config they run (their bucket's or their own), "
        "with both speedups",
        description="Compares two library files of the same target and Triton version (e.g. the committed one "
        "and a scheduled re-tune). A missing OLD file counts as an empty library.",
    )
    tdiff.add_argument("old", metavar="OLD.json")
    tdiff.add_argument("new", metavar="NEW.json")
    tdiff.set_defaults(func=_lazy("ci.tune", "main_diff"))

    pub = sub.add_parser(
        "publish",
        help="asv publish plus gemmwatch's speedup-over-native pages per target and Triton version",
        description="Run asv publish on the results, then add html/gemmwatch/: a heatmap of shapes x dtypes coloured "
        "by native/Triton speed for the newest commit on the branch, the history of the geomean, each cell linking "
        "to its asv graph.",
    )
    pub.add_argument("--results-dir", metavar="DIR", help="asv results directory (default .asv/results)")
    pub.add_argument(
        "--html-dir", metavar="DIR", help="where the dashboard goes (default .asv/html; asv empties it first)"
    )
    pub.add_argument("--checkout", metavar="DIR", help="the project's git checkout (default: the current directory's)")
    pub.add_argument("--branch", default="main", help="branch whose commits are published (default main)")
    pub.set_defaults(func=_lazy("ci.publish"))

    bis = sub.add_parser(
        "bisect",
        help="narrow a regression of some cells to one commit, or to one Triton version",
        description="Commits: each step measures the cells with the good commit's and the candidate's kernels side "
        "by side in one process. Triton: each step runs the cells under another environment's Python and compares "
        "to the good version. Exit 1 when a first bad commit/version is found, 0 when the range does not regress.",
    )
    bis.add_argument("--cells", nargs="+", required=True, metavar="CELL", help="e.g. 'fp16 4096x4096x4096'")
    bis.add_argument("--good", metavar="COMMIT", help="a commit without the regression")
    bis.add_argument("--bad", metavar="COMMIT", help="a commit with it")
    bis.add_argument("--triton", nargs="+", metavar="VERSION=PYTHON",
                     help="Triton versions in release order (good first, bad last), each with its environment's Python")  # fmt: skip
    bis.add_argument("--rounds", type=int, default=30, help="paired rounds per step (commit bisection)")
    bis.add_argument("--checkout", metavar="DIR", help="the project checkout (default: cwd)")
    bis.add_argument("--work-dir", metavar="DIR", help="worktrees and results (default .asv/gemmwatch)")
    bis.add_argument("--config", metavar="PYPROJECT", default="pyproject.toml")
    bis.add_argument("--output", metavar="PATH", help="also write the JSON report here")
    bis.set_defaults(func=_lazy("ci.bisect"))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    rounds = getattr(args, "rounds", None)
    if (rounds is not None and rounds < 0) or (args.command == "run" and rounds == 0):
        parser.error(f"--rounds must be >= 1, got {rounds}")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
