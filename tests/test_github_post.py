"""ci.github_post against a real HTTP server on loopback (tests/github_fake.py), through github3.py and requests."""

from __future__ import annotations

import logging
import pickle
import socket
import traceback

import pytest
from github_fake import FakeGitHub

from ci.github_post import MARKER, PostError, PostResult, StatusSpec, dry_run, post

TOKEN = "ghp_gemmwatchTESTsecret0123456789"
REPO = "octo/kernels"
PR = 7
HEAD = "c0ffee" + "0" * 34
COMMENTS = r"/repos/octo/kernels/issues/7/comments"
STATUS_PATH = rf"/repos/octo/kernels/statuses/{HEAD}"


@pytest.fixture
def github():
    with FakeGitHub(token=TOKEN) as server:
        server.add_repo("octo", "kernels")
        server.add_pull(REPO, PR, head_sha=HEAD)
        yield server


@pytest.fixture
def sleeps() -> list[float]:
    return []


def _post(server: FakeGitHub, sleeps: list[float], body: str = "All kernels within noise.", **kwargs) -> PostResult:
    args = {
        "repo": REPO,
        "pr": PR,
        "body": body,
        "statuses": [],
        "token": TOKEN,
        "api_url": server.base_url,
        "backoff": 0.5,
        "sleep": sleeps.append,
    }
    args.update(kwargs)
    return post(**args)


def _bot_comments(server: FakeGitHub) -> list[dict]:
    return [c for c in server.comments_on(REPO, PR) if MARKER in c["body"]]


def _error(server: FakeGitHub, sleeps: list[float], **kwargs) -> PostError:
    with pytest.raises(PostError) as info:
        _post(server, sleeps, **kwargs)
    return info.value


def _assert_no_token(*texts: object) -> None:
    for text in texts:
        assert TOKEN not in str(text)
        assert TOKEN[:8] not in str(text)


# -- comment: create, edit, pagination ---------------------------------------------------------


def test_creates_the_comment_when_the_bot_has_none(github, sleeps):
    github.add_comment(REPO, PR, "LGTM", user="alice")

    result = _post(github, sleeps, body="## gemmwatch\nno regressions")

    assert result.created is True
    (comment,) = _bot_comments(github)
    assert comment["id"] == result.comment_id
    assert comment["body"] == f"{MARKER}\n## gemmwatch\nno regressions"
    assert result.comment_url == comment["html_url"]
    assert result.comment_url.startswith(github.base_url)
    assert github.count("POST", COMMENTS) == 1
    assert sleeps == []
    # every call was authenticated with the token, in the form github3 sends it
    assert github.requests
    for request in github.requests:
        assert request.headers["authorization"] == f"token {TOKEN}"
        assert request.headers["accept"] == "application/vnd.github.v3.full+json"


def test_second_post_edits_the_same_comment_and_leaves_others_alone(github, sleeps):
    github.add_comment(REPO, PR, "first!", user="alice")
    first = _post(github, sleeps, body="run 1: 2 regressions")
    github.add_comment(REPO, PR, "looking into it", user="bob")
    others_before = [c for c in github.comments_on(REPO, PR) if MARKER not in c["body"]]

    second = _post(github, sleeps, body="run 2: all clear")

    assert second.created is False
    assert second.comment_id == first.comment_id
    assert second.comment_url == first.comment_url
    assert github.count("POST", COMMENTS) == 1
    assert github.count("PATCH", rf"/repos/octo/kernels/issues/comments/{first.comment_id}") == 1
    (bot,) = _bot_comments(github)
    assert bot["body"] == f"{MARKER}\nrun 2: all clear"
    assert [c for c in github.comments_on(REPO, PR) if MARKER not in c["body"]] == others_before
    assert len(github.comments_on(REPO, PR)) == 3


def test_body_that_already_has_the_marker_is_not_marked_twice(github, sleeps):
    _post(github, sleeps, body=f"header\n{MARKER}\ntable")
    (bot,) = _bot_comments(github)
    assert bot["body"] == f"header\n{MARKER}\ntable"


def test_same_body_again_is_not_re_sent(github, sleeps):
    first = _post(github, sleeps, body="unchanged")
    second = _post(github, sleeps, body="unchanged")
    assert (second.comment_id, second.created) == (first.comment_id, False)
    assert github.count("PATCH", r".*") == 0
    assert github.count("POST", COMMENTS) == 1


@pytest.mark.parametrize("position", [150, 230], ids=["page2", "page3"])
def test_bot_comment_beyond_the_first_page_is_found(github, sleeps, position):
    for i in range(250):
        if i == position:
            github.add_comment(REPO, PR, f"{MARKER}\nold report", user=github.login)
        else:
            github.add_comment(REPO, PR, f"chatter {i}", user="alice")
    old_id = _bot_comments(github)[0]["id"]

    result = _post(github, sleeps, body="new report")

    assert (result.comment_id, result.created) == (old_id, False)
    assert github.count("POST", COMMENTS) == 0
    assert len(github.comments_on(REPO, PR)) == 250
    pages = [r.query.get("page", "1") for r in github.requests if r.method == "GET" and r.path == COMMENTS]
    assert pages == ["1", "2", "3"]
    assert all(r.query["per_page"] == "100" for r in github.requests if r.method == "GET" and r.path == COMMENTS)


def test_most_recent_of_several_marker_comments_is_edited(github, sleeps):
    older = github.add_comment(REPO, PR, f"{MARKER}\nreport A", user=github.login)
    newer = github.add_comment(REPO, PR, f"{MARKER}\nreport B", user=github.login)

    result = _post(github, sleeps, body="report C")

    assert result.comment_id == newer["id"]
    bodies = {c["id"]: c["body"] for c in github.comments_on(REPO, PR)}
    assert bodies == {older["id"]: f"{MARKER}\nreport A", newer["id"]: f"{MARKER}\nreport C"}


# -- statuses ----------------------------------------------------------------------------------


def test_statuses_are_set_per_target_on_the_head_sha(github, sleeps):
    long_description = "3 regressions: " + ", ".join(f"fp16 {n}x{n}x{n} -{n % 9}%" for n in range(64, 4096, 128))
    specs = [
        StatusSpec("gemmwatch/h200", "failure", long_description, "https://ci.example/runs/42"),
        StatusSpec("gemmwatch/mi300x", "success", "within noise"),
        StatusSpec("gemmwatch/l4", "pending", "queued"),
    ]

    result = _post(github, sleeps, statuses=specs)

    assert result.statuses == ["gemmwatch/h200", "gemmwatch/mi300x", "gemmwatch/l4"]
    got = [(s["sha"], s["context"], s["state"], s["target_url"]) for s in github.statuses]
    assert got == [
        (HEAD, "gemmwatch/h200", "failure", "https://ci.example/runs/42"),
        (HEAD, "gemmwatch/mi300x", "success", None),
        (HEAD, "gemmwatch/l4", "pending", None),
    ]
    h200 = github.statuses[0]["description"]
    assert len(long_description) > 140
    assert len(h200) == 140
    assert h200 == long_description[:139] + "…"
    assert github.statuses[1]["description"] == "within noise"


def test_status_failure_after_the_comment_does_not_repeat_the_comment(github, sleeps):
    github.fail("POST", STATUS_PATH, 503, times=2)

    result = _post(github, sleeps, statuses=[StatusSpec("gemmwatch/h200", "success", "ok")])

    assert result.statuses == ["gemmwatch/h200"]
    assert len(github.statuses) == 1
    assert github.count("POST", COMMENTS) == 1
    assert sleeps == [0.5, 1.0]


# -- retries -----------------------------------------------------------------------------------


def test_5xx_on_create_is_retried_with_backoff(github, sleeps):
    github.fail("POST", COMMENTS, 502)

    result = _post(github, sleeps)

    assert result.created is True
    assert len(_bot_comments(github)) == 1
    assert github.count("POST", COMMENTS) == 2
    assert sleeps == [0.5]


def test_5xx_after_github_stored_the_comment_does_not_duplicate_it(github, sleeps):
    # The proxy answers 502 but GitHub created the comment: the retry must find it, not post again.
    github.fail("POST", COMMENTS, 502, apply=True)

    result = _post(github, sleeps, body="report")

    (bot,) = _bot_comments(github)
    assert result.comment_id == bot["id"]
    assert result.created is True
    assert github.count("POST", COMMENTS) == 1
    assert sleeps == [0.5]


def test_5xx_in_the_middle_of_pagination_is_retried(github, sleeps):
    for i in range(120):
        github.add_comment(REPO, PR, f"chatter {i}", user="alice")
    bot = github.add_comment(REPO, PR, f"{MARKER}\nold", user=github.login)
    github.fail("GET", COMMENTS, 500, query={"page": "2"})

    result = _post(github, sleeps, body="new")

    assert (result.comment_id, result.created) == (bot["id"], False)
    assert github.count("POST", COMMENTS) == 0
    pages = [r.query.get("page", "1") for r in github.requests if r.method == "GET" and r.path == COMMENTS]
    assert pages == ["1", "2", "1", "2"]  # the listing starts over
    assert sleeps == [0.5]


def test_exhausted_5xx_retries_exit_7(github, sleeps):
    github.fail("GET", r"/repos/octo/kernels/pulls/7", 503, times=100)

    err = _error(github, sleeps, retries=4)

    assert err.exit_code == 7
    assert "503" in str(err) and "gave up after 4 retries" in str(err)
    assert sleeps == [0.5, 1.0, 2.0, 4.0]
    assert github.count("GET", r"/repos/octo/kernels/pulls/7") == 5
    assert github.comments_on(REPO, PR) == []


def test_default_backoff_doubles_from_one_second(github, sleeps):
    github.fail("GET", r"/repos/octo/kernels", 500, times=2)
    result = post(repo=REPO, pr=PR, body="x", statuses=[], token=TOKEN, api_url=github.base_url, sleep=sleeps.append)
    assert result.created is True
    assert sleeps == [1.0, 2.0]


def test_rate_limit_403_honours_retry_after(github, sleeps):
    github.rate_limit("POST", COMMENTS, status=403, retry_after=7)

    result = _post(github, sleeps)

    assert result.created is True
    assert sleeps == [7.0]
    assert len(_bot_comments(github)) == 1


def test_rate_limit_429_honours_retry_after(github, sleeps):
    github.rate_limit("GET", COMMENTS, status=429, retry_after=3, times=2)

    _post(github, sleeps)

    assert sleeps == [3.0, 3.0]


def test_rate_limit_without_retry_after_backs_off(github, sleeps):
    github.rate_limit("GET", r"/repos/octo/kernels", status=403, retry_after=None)
    _post(github, sleeps)
    assert sleeps == [0.5]


def test_retry_after_is_capped_at_600_seconds(github, sleeps):
    github.rate_limit("GET", r"/repos/octo/kernels", status=429, retry_after=3600)
    _post(github, sleeps)
    assert sleeps == [600.0]


def test_retry_after_on_a_5xx_is_honoured(github, sleeps):
    github.fail("GET", r"/repos/octo/kernels/issues/7", 503, headers={"Retry-After": "2"})
    _post(github, sleeps)
    assert sleeps == [2.0]


def test_rate_limit_that_never_lifts_exits_7(github, sleeps):
    github.rate_limit("GET", r"/repos/octo/kernels", status=403, retry_after=5, times=100)

    err = _error(github, sleeps, retries=2)

    assert err.exit_code == 7
    assert "rate limited" in str(err)
    assert sleeps == [5.0, 5.0]


# -- errors ------------------------------------------------------------------------------------


def test_wrong_token_exits_3(github, sleeps):
    err = _error(github, sleeps, token="ghp_wrong")
    assert err.exit_code == 3
    assert str(err).startswith("authentication failed: check GITHUB_TOKEN")
    assert "ghp_wrong" not in str(err)
    assert sleeps == []


@pytest.mark.parametrize(("repo", "pr"), [("octo/kernels", 999), ("octo/missing", 7)])
def test_unknown_pull_request_or_repo_exits_5(github, sleeps, repo, pr):
    err = _error(github, sleeps, repo=repo, pr=pr)
    assert err.exit_code == 5
    assert f"repository or pull request not found: {repo}#{pr}" in str(err)
    assert sleeps == []


def test_forbidden_exits_4(github, sleeps):
    github.read_only = True
    err = _error(github, sleeps)
    assert err.exit_code == 4
    assert str(err).startswith("forbidden: the token lacks permission")
    assert "statuses write" in str(err)
    assert "Resource not accessible by integration" in str(err)
    assert sleeps == []


def test_oversized_body_is_rejected_with_githubs_message(github, sleeps):
    err = _error(github, sleeps, body="x" * 70_000)
    assert err.exit_code == 6
    assert str(err).startswith("GitHub rejected the request (422): Validation Failed")
    assert "body is too long (maximum is 65536 characters)" in str(err)
    assert github.comments_on(REPO, PR) == []
    assert sleeps == []


def test_unreachable_server_exits_7(sleeps):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # nothing listens on the port now: connection refused
    with pytest.raises(PostError) as info:
        post(
            repo=REPO,
            pr=PR,
            body="x",
            statuses=[],
            token=TOKEN,
            api_url=f"http://127.0.0.1:{port}",
            retries=2,
            backoff=0.25,
            sleep=sleeps.append,
        )
    assert info.value.exit_code == 7
    assert "cannot reach GitHub" in str(info.value)
    assert sleeps == [0.25, 0.5]


# -- input -------------------------------------------------------------------------------------


@pytest.mark.parametrize("token", [None, "", "  \n"])
def test_missing_token_exits_2_without_a_request(github, sleeps, token):
    err = _error(github, sleeps, token=token)
    assert err.exit_code == 2
    assert str(err).startswith("GITHUB_TOKEN is not set")
    assert github.requests == []


@pytest.mark.parametrize("repo", ["octo", "octo/kernels/x", "/kernels", "octo/", "oc to/kernels", "octo/..", 7, None])
def test_bad_repo_exits_2(github, sleeps, repo):
    err = _error(github, sleeps, repo=repo)
    assert err.exit_code == 2
    assert "repo: expected OWNER/NAME" in str(err)
    assert github.requests == []


@pytest.mark.parametrize("pr", [0, -3, "7", True, 7.0])
def test_bad_pr_exits_2(github, sleeps, pr):
    err = _error(github, sleeps, pr=pr)
    assert err.exit_code == 2
    assert "pr: expected a pull request number >= 1" in str(err)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (StatusSpec("gemmwatch/h200", "ok", "x"), "statuses[0].state: expected one of success, failure"),
        (StatusSpec("", "success", "x"), "statuses[0].context: expected a non-empty name"),
        (StatusSpec("gemmwatch/h200", "success", "x", "ftp://x"), "statuses[0].target_url: expected an http(s) URL"),
    ],
)
def test_bad_status_exits_2(github, sleeps, spec, expected):
    err = _error(github, sleeps, statuses=[spec])
    assert err.exit_code == 2
    assert expected in str(err)
    assert github.requests == []


def test_api_url_may_include_the_api_prefix(github, sleeps):
    result = _post(github, sleeps, api_url=github.api_url + "/")
    assert result.created is True


def test_bad_api_url_exits_2(github, sleeps):
    err = _error(github, sleeps, api_url="ghe.example.com")
    assert err.exit_code == 2
    assert "api_url: expected an http(s) URL" in str(err)


# -- the token stays secret ---------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["401", "403", "404", "422", "502", "rate", "ok"])
def test_token_never_appears_in_errors_results_or_logs(github, sleeps, caplog, fault):
    caplog.set_level(logging.DEBUG)
    kwargs: dict = {"retries": 1, "statuses": [StatusSpec("gemmwatch/h200", "success", "fine")]}
    if fault == "401":
        github.token = "another-token"
    elif fault == "403":
        github.read_only = True
    elif fault == "404":
        kwargs["pr"] = 404
    elif fault == "422":
        kwargs["body"] = "y" * 65_537
    elif fault == "502":
        github.fail("POST", STATUS_PATH, 502, times=5)
    elif fault == "rate":
        github.rate_limit("GET", COMMENTS, retry_after=1, times=5)

    try:
        result = _post(github, sleeps, **kwargs)
    except PostError as err:
        assert fault != "ok"
        _assert_no_token(err, repr(err), err.args, "".join(traceback.format_exception(err)))
        assert err.__cause__ is None and err.__context__ is None
    else:
        assert fault == "ok"
        _assert_no_token(result, repr(result))
    _assert_no_token(caplog.text, *(r.getMessage() for r in caplog.records))


def test_post_error_pickles_with_its_exit_code():
    err = pickle.loads(pickle.dumps(PostError("forbidden: x", 4)))
    assert (str(err), err.exit_code) == ("forbidden: x", 4)


# -- dry run -----------------------------------------------------------------------------------


def test_dry_run_shows_the_comment_and_one_line_per_status(github):
    text = dry_run(
        "## gemmwatch\n| shape | Δ |\n",
        [
            StatusSpec("gemmwatch/h200", "failure", "2 regressions", "https://ci.example/runs/1"),
            StatusSpec("gemmwatch/mi300x", "success", "d" * 200),
        ],
    )
    assert text == (
        f"{MARKER}\n## gemmwatch\n| shape | Δ |\n"
        "\n"
        "status gemmwatch/h200: failure - 2 regressions (https://ci.example/runs/1)\n"
        f"status gemmwatch/mi300x: success - {'d' * 139}…\n"
    )
    assert github.requests == []


def test_dry_run_rejects_a_bad_state():
    with pytest.raises(PostError) as info:
        dry_run("x", [StatusSpec("gemmwatch/h200", "passed", "x")])
    assert info.value.exit_code == 2
