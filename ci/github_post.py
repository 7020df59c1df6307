"""Post gemmwatch's report to a pull request: one comment, edited in place, and commit statuses.

The comment is recognised by MARKER (an HTML comment, invisible on GitHub), so
each run edits the bot's earlier comment instead of adding another one. Every
API call is retried on its own (5xx, rate limits, connection errors), so a
failure halfway through never repeats the steps that already succeeded.

Exit codes carried by PostError: 2 bad input, 3 authentication failed, 4
forbidden, 5 repository or pull request not found, 6 request rejected (422 and
other 4xx), 7 GitHub unreachable or still failing after the retries.
"""

from __future__ import annotations

import email.utils
import logging
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

import github3
import github3.exceptions
import requests

MARKER = "<!-- gemmwatch:comment -->"

STATES = ("success", "failure", "error", "pending")
DESCRIPTION_MAX = 140
RETRY_AFTER_CAP = 600.0

EXIT_INPUT = 2
EXIT_AUTH = 3
EXIT_FORBIDDEN = 4
EXIT_NOT_FOUND = 5
EXIT_REJECTED = 6
EXIT_UNAVAILABLE = 7

LOG = logging.getLogger(__name__)

# GitHub's rules: owners are alphanumerics and single hyphens, names add "." and "_".
_OWNER_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_NAME_RE = re.compile(r"[A-Za-z0-9._-]{1,100}")

T = TypeVar("T")


class PostError(Exception):
    """Posting failed; .exit_code says how; the message never contains the token."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.exit_code))


@dataclass
class StatusSpec:
    context: str
    state: str
    description: str
    target_url: str | None = None


@dataclass
class PostResult:
    comment_id: int
    comment_url: str
    created: bool
    statuses: list[str]


def with_marker(body: str) -> str:
    """The comment body as posted: MARKER on its own first line unless the body has it already."""
    return body if MARKER in body else f"{MARKER}\n{body}"


def truncate_description(description: str) -> str:
    """GitHub rejects status descriptions over 140 characters; cut with an ellipsis."""
    if len(description) <= DESCRIPTION_MAX:
        return description
    return description[: DESCRIPTION_MAX - 1] + "…"


def dry_run(body: str, statuses: list[StatusSpec]) -> str:
    """The comment that would be posted, then one line per status."""
    _check_statuses(statuses)
    lines = [with_marker(body).rstrip("\n"), ""]
    for spec in statuses:
        line = f"status {spec.context}: {spec.state} - {truncate_description(spec.description)}"
        if spec.target_url:
            line += f" ({spec.target_url})"
        lines.append(line)
    return "\n".join(lines) + "\n"


def post(
    *,
    repo: str,
    pr: int,
    body: str,
    statuses: list[StatusSpec],
    token: str | None,
    api_url: str | None = None,
    retries: int = 4,
    backoff: float = 1.0,
    sleep: Callable[[float], object] = time.sleep,
) -> PostResult:
    """Create or edit the bot's comment on `repo`#`pr` and set `statuses` on the PR's head commit.

    `api_url` None means github.com; otherwise a GitHub Enterprise base URL
    (the API is under `<api_url>/api/v3`). Each API call is tried up to
    `retries` more times, sleeping `backoff * 2**attempt` seconds, or the
    server's Retry-After (capped at 600 s) when it sends one.
    """
    owner, name = _check_repo(repo)
    _check_pr(pr)
    if not isinstance(body, str):
        raise PostError(f"body: expected a str, got {type(body).__name__}", EXIT_INPUT)
    _check_statuses(statuses)
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise PostError(f"retries: expected an int >= 0, got {retries!r}", EXIT_INPUT)
    if not isinstance(backoff, int | float) or backoff < 0:
        raise PostError(f"backoff: expected a number >= 0, got {backoff!r}", EXIT_INPUT)
    # A token read from a file or a secret often ends in a newline, which is invalid in a header.
    token = token.strip() if isinstance(token, str) else None
    if not token:
        raise PostError(
            "GITHUB_TOKEN is not set (or empty): a token with issues/pull-requests write and statuses write is needed to post",
            EXIT_INPUT,
        )
    base_url = _check_api_url(api_url)

    client = _Client(repo=repo, pr=pr, token=token, retries=retries, backoff=float(backoff), sleep=sleep)
    gh = _connect(token, base_url)
    try:
        return _post(client, gh, owner, name, with_marker(body), statuses)
    finally:
        gh.session.close()


def _post(
    client: _Client, gh: github3.GitHub, owner: str, name: str, body: str, statuses: list[StatusSpec]
) -> PostResult:
    repository = client.call("read the repository", lambda: gh.repository(owner, name))
    pull = client.call("read the pull request", lambda: repository.pull_request(client.pr))
    head_sha = pull.head.sha
    issue = client.call("read the pull request's issue", lambda: repository.issue(client.pr))

    existing = _find_bot_comment(client.call("list the pull request's comments", lambda: list(issue.comments())))
    if existing is None:
        comment = client.call("create the comment", _create_once(client, issue, body))
        created = True
    else:
        comment = existing
        created = False
        if existing.body != body:
            client.call("edit the comment", lambda: _edit(existing, body))
        else:
            LOG.info("comment %s already has this body; left as it is", existing.id)

    done: list[str] = []
    for spec in statuses:
        client.call(
            f"set the status {spec.context!r} on {head_sha}",
            lambda spec=spec: repository.create_status(
                head_sha,
                spec.state,
                target_url=spec.target_url,
                description=truncate_description(spec.description),
                context=spec.context,
            ),
        )
        done.append(spec.context)
    return PostResult(comment_id=comment.id, comment_url=comment.html_url, created=created, statuses=done)


def _find_bot_comment(comments: Iterable[Any]) -> Any | None:
    """The most recent comment carrying MARKER; several can exist after a race between two runs."""
    ours = [c for c in comments if MARKER in (c.body or "")]
    if len(ours) > 1:
        LOG.warning("%d comments carry the gemmwatch marker; editing the most recent one", len(ours))
    epoch = datetime.min.replace(tzinfo=UTC)
    return max(ours, key=lambda c: (c.created_at or epoch, c.id), default=None)


def _edit(comment: Any, body: str) -> bool | None:
    # github3 reports some failures as False instead of raising.
    return comment.edit(body) or None


def _create_once(client: _Client, issue: Any, body: str) -> Callable[[], Any]:
    """Create the comment; on a retry, first look for it again.

    A 5xx or a dropped connection can arrive after GitHub stored the comment,
    and posting again would leave two.
    """
    attempts = 0

    def create() -> Any:
        nonlocal attempts
        attempts += 1
        if attempts > 1:
            found = _find_bot_comment(issue.comments())
            if found is not None:
                LOG.info("the failed attempt created comment %s; using it", found.id)
                if found.body != body and not found.edit(body):
                    return None
                return found
        return issue.create_comment(body)

    return create


def _connect(token: str, base_url: str | None) -> github3.GitHub:
    if base_url is None:
        return github3.GitHub(token=token)
    return github3.GitHubEnterprise(base_url, token=token)


@dataclass
class _Client:
    """Runs one API operation at a time with retries, and turns failures into PostError."""

    repo: str
    pr: int
    token: str = field(repr=False)  # the dataclass repr would print it in tracebacks with locals
    retries: int
    backoff: float
    sleep: Callable[[float], object]

    def call(self, what: str, operation: Callable[[], T | None]) -> T:
        for attempt in range(self.retries + 1):
            try:
                result = operation()
            except (github3.exceptions.ConnectionError, requests.exceptions.ConnectionError) as exc:
                # github3 wraps requests' error; its own text adds a class repr and a preamble
                outcome = (f"cannot reach GitHub ({_one_line(getattr(exc, 'exception', exc))})", None)
            except github3.exceptions.TransportError as exc:
                outcome = self._error(
                    f"could not {what}: {_one_line(getattr(exc, 'exception', exc))}", EXIT_UNAVAILABLE
                )
            except github3.exceptions.GitHubError as exc:
                outcome = self._classify(what, exc)
            else:
                if result is None or result is False:
                    raise self._error(f"could not {what}: GitHub's response had no data", EXIT_UNAVAILABLE)
                return result
            # Raised here, outside the except blocks, so the PostError does not chain github3's
            # exception, whose response still holds the request and its Authorization header.
            if isinstance(outcome, PostError):
                raise outcome
            problem, delay = outcome
            if attempt == self.retries:
                raise self._error(
                    f"could not {what}: {problem}; gave up after {self.retries} retries", EXIT_UNAVAILABLE
                )
            if delay is None:
                delay = self.backoff * 2**attempt
            LOG.warning("%s: %s; retry %d/%d in %gs", what, self._redact(problem), attempt + 1, self.retries, delay)
            self.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _classify(self, what: str, exc: github3.exceptions.GitHubError) -> PostError | tuple[str, float | None]:
        """(problem, delay or None for the backoff) when worth retrying, else the PostError to raise."""
        response = getattr(exc, "response", None)
        detail = _detail(exc)
        if response is None or response.status_code < 400:
            return self._error(f"could not {what}: unexpected response from GitHub: {detail}", EXIT_UNAVAILABLE)
        status = response.status_code
        headers = response.headers
        retry_after = _retry_after(headers.get("Retry-After"))
        rate_limited = status == 429 or (
            status == 403
            and (
                headers.get("X-RateLimit-Remaining") == "0"
                or retry_after is not None
                # secondary rate limits do not always come with Retry-After
                or "rate limit" in detail.lower()
            )
        )
        if rate_limited:
            return f"rate limited ({status}: {detail})", retry_after
        if status >= 500 or retry_after is not None:
            return f"GitHub answered {status} ({detail})", retry_after
        where = f"{self.repo}#{self.pr}"
        if status == 401:
            return self._error(f"authentication failed: check GITHUB_TOKEN (GitHub said: {detail})", EXIT_AUTH)
        if status == 403:
            return self._error(
                f"forbidden: the token lacks permission to {what} on {where}; it needs issues/pull-requests write "
                f"and statuses write (GitHub said: {detail})",
                EXIT_FORBIDDEN,
            )
        if status == 404:
            return self._error(
                f"repository or pull request not found: {where} (or the token cannot see it) while trying to {what}",
                EXIT_NOT_FOUND,
            )
        return self._error(f"GitHub rejected the request ({status}): {detail} (while trying to {what})", EXIT_REJECTED)

    def _error(self, message: str, exit_code: int) -> PostError:
        return PostError(self._redact(message), exit_code)

    def _redact(self, text: str) -> str:
        # Defence in depth: the server's text is echoed into messages and logs. A very short
        # (fake) token would match inside ordinary words and garble the message instead.
        return text.replace(self.token, "***") if len(self.token) >= 8 else text


def _detail(exc: github3.exceptions.GitHubError) -> str:
    """GitHub's message and its per-field error messages, on one line."""
    msg = getattr(exc, "msg", None)
    if isinstance(msg, bytes):
        msg = msg.decode("utf-8", "replace")
    parts = [_one_line(msg)[:300]] if msg else []
    for error in getattr(exc, "errors", None) or []:
        if isinstance(error, dict):
            text = error.get("message") or " ".join(str(error.get(k)) for k in ("resource", "field", "code"))
        else:
            text = str(error)
        if text:
            parts.append(_one_line(text))
    return ": ".join(parts) or "no message"


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date), capped at 600."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = (when - datetime.now(UTC)).total_seconds()
    return min(max(seconds, 0.0), RETRY_AFTER_CAP)


def _one_line(value: object) -> str:
    return " ".join(str(value).split())


def _check_repo(repo: object) -> tuple[str, str]:
    if isinstance(repo, str) and repo.count("/") == 1:
        owner, name = repo.split("/")
        if (
            _OWNER_RE.fullmatch(owner)
            and "--" not in owner
            and not owner.endswith("-")
            and _NAME_RE.fullmatch(name)
            and name not in (".", "..")
        ):
            return owner, name
    raise PostError(f"repo: expected OWNER/NAME (e.g. octo-org/gemm-kernels), got {repo!r}", EXIT_INPUT)


def _check_pr(pr: object) -> None:
    if isinstance(pr, bool) or not isinstance(pr, int) or pr < 1:
        raise PostError(f"pr: expected a pull request number >= 1, got {pr!r}", EXIT_INPUT)


def _check_statuses(statuses: object) -> None:
    if not isinstance(statuses, list | tuple):
        raise PostError(f"statuses: expected a list of StatusSpec, got {type(statuses).__name__}", EXIT_INPUT)
    for i, spec in enumerate(statuses):
        if not isinstance(spec, StatusSpec):
            raise PostError(f"statuses[{i}]: expected a StatusSpec, got {type(spec).__name__}", EXIT_INPUT)
        if not isinstance(spec.context, str) or not spec.context.strip():
            raise PostError(f"statuses[{i}].context: expected a non-empty name, got {spec.context!r}", EXIT_INPUT)
        if spec.state not in STATES:
            raise PostError(f"statuses[{i}].state: expected one of {', '.join(STATES)}, got {spec.state!r}", EXIT_INPUT)
        if not isinstance(spec.description, str):
            raise PostError(f"statuses[{i}].description: expected a str, got {spec.description!r}", EXIT_INPUT)
        if spec.target_url is not None and not _is_http_url(spec.target_url):
            raise PostError(
                f"statuses[{i}].target_url: expected an http(s) URL or None, got {spec.target_url!r}", EXIT_INPUT
            )


def _check_api_url(api_url: str | None) -> str | None:
    """The GitHub Enterprise base URL, or None for github.com."""
    if api_url is None:
        return None
    if not isinstance(api_url, str) or not _is_http_url(api_url):
        raise PostError(
            f"api_url: expected an http(s) URL such as https://ghe.example.com, got {api_url!r}", EXIT_INPUT
        )
    base = api_url.rstrip("/")
    # github3 appends /api/v3 itself; accept the API URL too, as GITHUB_API_URL gives it.
    base = base.removesuffix("/api/v3")
    if urlsplit(base).netloc.lower() == "api.github.com":
        return None
    return base


def _is_http_url(value: object) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)
