"""A fake GitHub REST API on loopback, for testing ci.github_post with real HTTP.

It answers, under /api/v3 (as GitHub Enterprise does), the calls github3.py
4.0.1 makes to post a comment and statuses, with JSON complete enough for
github3's objects (it raises IncompleteResponse on a missing field). All URLs in
responses point back at this server, since github3 follows them.

    with FakeGitHub(token="t") as gh:
        gh.add_repo("octo", "kernels")
        gh.add_pull("octo/kernels", 7, head_sha="ab" * 20)
        post(..., api_url=gh.base_url)
        gh.requests  # what was asked, in order

Faults: `fail()` answers a given status to the next requests matching a method
and path; `rate_limit()` answers GitHub's rate-limit responses; `read_only`
makes every write a 403; a token other than the server's gets a 401.
"""

from __future__ import annotations

import html
import json
import re
import socket
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

API_PREFIX = "/api/v3"
COMMENT_MAX = 65536  # GitHub's limit on issue comment bodies
STATUS_DESCRIPTION_MAX = 140
STATES = ("success", "failure", "error", "pending")
DOCS = "https://docs.github.com/rest"

Response = tuple[int, dict[str, str], Any]


@dataclass
class LoggedRequest:
    """One request as the server saw it; `path` is without /api/v3 and the query, headers are lower-cased."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any


@dataclass
class Fault:
    method: str
    path: re.Pattern[str]
    status: int
    remaining: int
    headers: dict[str, str]
    payload: Any
    apply: bool
    query: dict[str, str]


@dataclass
class _Repo:
    id: int
    owner: str
    name: str
    private: bool
    pulls: dict[int, str] = field(default_factory=dict)  # number -> head sha

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class FakeGitHub:
    """A loopback GitHub REST server with in-memory repos, pull requests, comments and statuses."""

    def __init__(self, token: str = "fake-token", login: str = "gemmwatch-bot") -> None:
        self.token = token
        self.login = login
        self.read_only = False
        self.requests: list[LoggedRequest] = []
        self.comments: dict[tuple[str, int], list[dict[str, Any]]] = {}  # (full name, number) -> comments
        self.statuses: list[dict[str, Any]] = []  # each with "sha" and "repo" added
        self._repos: dict[str, _Repo] = {}
        self._faults: list[Fault] = []
        self._next_id = 1000
        self._clock = datetime(2024, 1, 1, tzinfo=UTC)
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        # shutdown() waits up to one poll interval; the default 0.5 s would dominate the tests' time
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, name="fake-github", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.drop_connections()
        self._server.server_close()  # joins the handler threads
        if self._thread is not None:
            self._thread.join()
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeGitHub is not started")
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """What to pass as api_url (github3.GitHubEnterprise adds /api/v3)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return self.base_url + API_PREFIX

    # -- state -------------------------------------------------------------------------------

    def add_repo(self, owner: str, name: str, *, private: bool = False) -> None:
        with self._lock:
            self._repos[f"{owner}/{name}"] = _Repo(id=self._new_id(), owner=owner, name=name, private=private)

    def add_pull(self, repo: str, number: int, *, head_sha: str) -> None:
        with self._lock:
            self._repos[repo].pulls[number] = head_sha
            self.comments.setdefault((repo, number), [])

    def add_comment(self, repo: str, number: int, body: str, *, user: str = "someone") -> dict[str, Any]:
        """Put a comment on the pull request directly, as if `user` had written it."""
        with self._lock:
            return self._add_comment(self._repos[repo], number, body, user)

    def comments_on(self, repo: str, number: int) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(c) for c in self.comments[(repo, number)]]

    def fail(
        self,
        method: str,
        path: str,
        status: int = 502,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        payload: Any = None,
        apply: bool = False,
        query: dict[str, str] | None = None,
    ) -> None:
        """Answer `status` to the next `times` requests matching `method` and `path`.

        `path` is a regular expression matched in full against the path without
        /api/v3 and the query; `query`, if given, must be part of the request's
        query (e.g. {"page": "2"}). With `apply`, the request is carried out first
        and only its answer is lost (a 502 from a proxy after GitHub did the work).
        """
        if payload is None:
            payload = {"message": "Server Error"} if status >= 500 else {"message": "Error", "documentation_url": DOCS}
        with self._lock:
            self._faults.append(
                Fault(
                    method.upper(),
                    re.compile(path),
                    status,
                    times,
                    dict(headers or {}),
                    payload,
                    apply,
                    dict(query or {}),
                )
            )

    def rate_limit(
        self, method: str, path: str, *, status: int = 403, retry_after: int | None = 60, times: int = 1
    ) -> None:
        """GitHub's rate-limit answer: 403 with X-RateLimit-Remaining: 0 (primary) or 429 (secondary)."""
        reset = int(datetime.now(UTC).timestamp()) + (retry_after or 3600)
        headers = {
            "X-RateLimit-Limit": "5000",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Used": "5000",
            "X-RateLimit-Reset": str(reset),
            "X-RateLimit-Resource": "core",
        }
        if status == 429:
            headers.pop("X-RateLimit-Remaining")
            message = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
        else:
            message = f"API rate limit exceeded for user {self.login}."
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        self.fail(
            method, path, status, times=times, headers=headers, payload={"message": message, "documentation_url": DOCS}
        )

    def count(self, method: str, path: str) -> int:
        """How many requests matched `method` and the regular expression `path` (in full)."""
        pattern = re.compile(path)
        return sum(1 for r in self.requests if r.method == method.upper() and pattern.fullmatch(r.path))

    # -- request handling --------------------------------------------------------------------

    def handle(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Response:
        """Answer one request: (status, headers, JSON payload or None)."""
        parts = urlsplit(target)
        path = parts.path
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        body: Any = None
        bad_json = False
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body, bad_json = raw.decode("utf-8", "replace"), True
        with self._lock:
            inside = path == API_PREFIX or path.startswith(API_PREFIX + "/")
            route = path[len(API_PREFIX) :] if inside else path
            self.requests.append(LoggedRequest(method, route, query, headers, body))
            fault = self._take_fault(method, route, query)
            if fault is not None and not fault.apply:
                return fault.status, fault.headers, fault.payload
            if headers.get("authorization") not in (f"token {self.token}", f"Bearer {self.token}"):
                answer: Response = 401, {}, {"message": "Bad credentials", "documentation_url": DOCS}
            elif not inside:
                answer = _not_found()
            elif bad_json:
                answer = 400, {}, {"message": "Problems parsing JSON", "documentation_url": DOCS}
            elif self.read_only and method in ("POST", "PATCH", "PUT", "DELETE"):
                answer = 403, {}, {"message": "Resource not accessible by integration", "documentation_url": DOCS}
            else:
                answer = self._route(method, route, query, body)
            if fault is not None:
                return fault.status, fault.headers, fault.payload
            return answer

    def _take_fault(self, method: str, route: str, query: dict[str, str]) -> Fault | None:
        for fault in self._faults:
            if (
                fault.remaining > 0
                and fault.method == method
                and fault.path.fullmatch(route)
                and fault.query.items() <= query.items()
            ):
                fault.remaining -= 1
                return fault
        return None

    def _route(self, method: str, route: str, query: dict[str, str], body: Any) -> Response:
        m = re.fullmatch(r"/repos/([^/]+)/([^/]+)(/.*)?", route)
        if not m:
            return _not_found()
        repo = self._repos.get(f"{m[1]}/{m[2]}")
        if repo is None:
            return _not_found()
        rest = m[3] or ""
        if method == "GET" and rest == "":
            return 200, {}, self._repo_json(repo)
        if pm := re.fullmatch(r"/pulls/(\d+)", rest):
            if method != "GET" or int(pm[1]) not in repo.pulls:
                return _not_found()
            return 200, {}, self._pull_json(repo, int(pm[1]))
        if im := re.fullmatch(r"/issues/(\d+)", rest):
            if method != "GET" or int(im[1]) not in repo.pulls:
                return _not_found()
            return 200, {}, self._issue_json(repo, int(im[1]))
        if cm := re.fullmatch(r"/issues/(\d+)/comments", rest):
            number = int(cm[1])
            if number not in repo.pulls:
                return _not_found()
            if method == "GET":
                return self._list_comments(repo, number, query)
            if method == "POST":
                return self._create_comment(repo, number, body)
            return _not_found()
        if em := re.fullmatch(r"/issues/comments/(\d+)", rest):
            if method == "PATCH":
                return self._edit_comment(repo, int(em[1]), body)
            return _not_found()
        if sm := re.fullmatch(r"/statuses/([^/]+)", rest):
            if method == "POST":
                return self._create_status(repo, sm[1], body)
            return _not_found()
        return _not_found()

    def _list_comments(self, repo: _Repo, number: int, query: dict[str, str]) -> Response:
        try:
            per_page = min(max(int(query.get("per_page", 30)), 1), 100)
            page = max(int(query.get("page", 1)), 1)
        except ValueError:
            return 422, {}, {"message": "Validation Failed", "documentation_url": DOCS}
        comments = self.comments[(repo.full_name, number)]
        last = max((len(comments) + per_page - 1) // per_page, 1)
        chunk = comments[(page - 1) * per_page : page * per_page]
        base = f"{self.api_url}/repos/{repo.full_name}/issues/{number}/comments"

        def link(p: int, rel: str) -> str:
            return f'<{base}?{urlencode({"per_page": per_page, "page": p})}>; rel="{rel}"'

        links = []
        if page > 1:
            links += [link(page - 1, "prev"), link(1, "first")]
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        headers = {"Link": ", ".join(links)} if links else {}
        return 200, headers, [dict(c) for c in chunk]

    def _create_comment(self, repo: _Repo, number: int, body: Any) -> Response:
        text = body.get("body") if isinstance(body, dict) else None
        invalid = self._check_comment_body(text)
        if invalid is not None:
            return invalid
        return 201, {}, dict(self._add_comment(repo, number, text, self.login))

    def _edit_comment(self, repo: _Repo, comment_id: int, body: Any) -> Response:
        for (full_name, _), comments in self.comments.items():
            if full_name != repo.full_name:
                continue
            for comment in comments:
                if comment["id"] == comment_id:
                    text = body.get("body") if isinstance(body, dict) else None
                    invalid = self._check_comment_body(text)
                    if invalid is not None:
                        return invalid
                    comment.update(body=text, body_text=text, body_html=_html(text), updated_at=self._tick())
                    return 200, {}, dict(comment)
        return _not_found()

    @staticmethod
    def _check_comment_body(text: Any) -> Response | None:
        if not isinstance(text, str) or not text:
            return 422, {}, {"message": 'Invalid request.\n\n"body" wasn\'t supplied.', "documentation_url": DOCS}
        if len(text) > COMMENT_MAX:
            return _validation_failed("IssueComment", "body", f"body is too long (maximum is {COMMENT_MAX} characters)")
        return None

    def _create_status(self, repo: _Repo, sha: str, body: Any) -> Response:
        if sha not in repo.pulls.values():
            return 422, {}, {"message": f"No commit found for SHA: {sha}", "documentation_url": DOCS}
        body = body if isinstance(body, dict) else {}
        state = body.get("state")
        if state not in STATES:
            return _validation_failed("Status", "state", f"state is not included in the list ({state!r})")
        description = body.get("description")
        if description is not None and len(description) > STATUS_DESCRIPTION_MAX:
            return _validation_failed(
                "Status", "description", f"description is too long (maximum is {STATUS_DESCRIPTION_MAX} characters)"
            )
        now = self._tick()
        status_id = self._new_id()
        status = {
            "url": f"{self.api_url}/repos/{repo.full_name}/statuses/{sha}",
            "avatar_url": None,
            "id": status_id,
            "node_id": f"SC_{status_id}",
            "state": state,
            "description": description,
            "target_url": body.get("target_url"),
            "context": body.get("context", "default"),
            "created_at": now,
            "updated_at": now,
            "creator": self._user_json(self.login),
        }
        self.statuses.append({**status, "sha": sha, "repo": repo.full_name})
        return 201, {}, status

    # -- JSON builders -----------------------------------------------------------------------

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _tick(self) -> str:
        self._clock += timedelta(seconds=1)
        return self._clock.strftime("%Y-%m-%dT%H:%M:%SZ")

    def _add_comment(self, repo: _Repo, number: int, body: str, user: str) -> dict[str, Any]:
        comment_id = self._new_id()
        now = self._tick()
        api = f"{self.api_url}/repos/{repo.full_name}"
        comment = {
            "url": f"{api}/issues/comments/{comment_id}",
            "html_url": f"{self.base_url}/{repo.full_name}/pull/{number}#issuecomment-{comment_id}",
            "issue_url": f"{api}/issues/{number}",
            "id": comment_id,
            "node_id": f"IC_{comment_id}",
            "user": self._user_json(user),
            "created_at": now,
            "updated_at": now,
            "author_association": "NONE" if user == self.login else "MEMBER",
            "body": body,
            "body_text": body,
            "body_html": _html(body),
            "performed_via_github_app": None,
            "reactions": {"url": f"{api}/issues/comments/{comment_id}/reactions", "total_count": 0},
        }
        self.comments.setdefault((repo.full_name, number), []).append(comment)
        return comment

    def _user_json(self, login: str) -> dict[str, Any]:
        api = f"{self.api_url}/users/{login}"
        return {
            "login": login,
            "id": sum(login.encode()) + 1,
            "node_id": f"U_{login}",
            "avatar_url": f"{self.base_url}/avatars/{login}",
            "gravatar_id": "",
            "url": api,
            "html_url": f"{self.base_url}/{login}",
            "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}",
            "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions",
            "organizations_url": f"{api}/orgs",
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events",
            "type": "Bot" if login == self.login else "User",
            "site_admin": False,
        }

    def _repo_json(self, repo: _Repo) -> dict[str, Any]:
        api = f"{self.api_url}/repos/{repo.full_name}"
        web = f"{self.base_url}/{repo.full_name}"
        host = urlsplit(self.base_url).netloc
        stamp = "2024-01-01T00:00:00Z"
        return {
            "id": repo.id,
            "node_id": f"R_{repo.id}",
            "name": repo.name,
            "full_name": repo.full_name,
            "owner": self._user_json(repo.owner),
            "private": repo.private,
            "visibility": "private" if repo.private else "public",
            "html_url": web,
            "description": "Triton GEMM kernels",
            "fork": False,
            "url": api,
            "archive_url": f"{api}/{{archive_format}}{{/ref}}",
            "assignees_url": f"{api}/assignees{{/user}}",
            "blobs_url": f"{api}/git/blobs{{/sha}}",
            "branches_url": f"{api}/branches{{/branch}}",
            "collaborators_url": f"{api}/collaborators{{/collaborator}}",
            "comments_url": f"{api}/comments{{/number}}",
            "commits_url": f"{api}/commits{{/sha}}",
            "compare_url": f"{api}/compare/{{base}}...{{head}}",
            "contents_url": f"{api}/contents/{{+path}}",
            "contributors_url": f"{api}/contributors",
            "deployments_url": f"{api}/deployments",
            "downloads_url": f"{api}/downloads",
            "events_url": f"{api}/events",
            "forks_url": f"{api}/forks",
            "git_commits_url": f"{api}/git/commits{{/sha}}",
            "git_refs_url": f"{api}/git/refs{{/sha}}",
            "git_tags_url": f"{api}/git/tags{{/sha}}",
            "git_url": f"git://{host}/{repo.full_name}.git",
            "hooks_url": f"{api}/hooks",
            "issue_comment_url": f"{api}/issues/comments{{/number}}",
            "issue_events_url": f"{api}/issues/events{{/number}}",
            "issues_url": f"{api}/issues{{/number}}",
            "keys_url": f"{api}/keys{{/key_id}}",
            "labels_url": f"{api}/labels{{/name}}",
            "languages_url": f"{api}/languages",
            "merges_url": f"{api}/merges",
            "milestones_url": f"{api}/milestones{{/number}}",
            "notifications_url": f"{api}/notifications{{?since,all,participating}}",
            "pulls_url": f"{api}/pulls{{/number}}",
            "releases_url": f"{api}/releases{{/id}}",
            "ssh_url": f"git@{host}:{repo.full_name}.git",
            "stargazers_url": f"{api}/stargazers",
            "statuses_url": f"{api}/statuses/{{sha}}",
            "subscribers_url": f"{api}/subscribers",
            "subscription_url": f"{api}/subscription",
            "tags_url": f"{api}/tags",
            "teams_url": f"{api}/teams",
            "trees_url": f"{api}/git/trees{{/sha}}",
            "clone_url": f"{web}.git",
            "mirror_url": None,
            "svn_url": web,
            "homepage": None,
            "language": "Python",
            "forks_count": 0,
            "stargazers_count": 0,
            "watchers_count": 0,
            "subscribers_count": 0,
            "network_count": 0,
            "size": 0,
            "default_branch": "main",
            "open_issues_count": len(repo.pulls),
            "topics": [],
            "has_issues": True,
            "has_projects": True,
            "has_wiki": True,
            "has_pages": False,
            "has_downloads": True,
            "archived": False,
            "disabled": False,
            "license": None,
            "allow_merge_commit": True,
            "allow_rebase_merge": True,
            "allow_squash_merge": True,
            "pushed_at": stamp,
            "created_at": stamp,
            "updated_at": stamp,
            "permissions": {"admin": False, "push": True, "pull": True},
        }

    def _pull_json(self, repo: _Repo, number: int) -> dict[str, Any]:
        api = f"{self.api_url}/repos/{repo.full_name}"
        web = f"{self.base_url}/{repo.full_name}"
        sha = repo.pulls[number]
        owner = self._user_json(repo.owner)
        repo_json = self._repo_json(repo)
        stamp = "2024-01-01T00:00:00Z"
        return {
            "url": f"{api}/pulls/{number}",
            "id": repo.id * 10_000 + number,
            "node_id": f"PR_{number}",
            "html_url": f"{web}/pull/{number}",
            "diff_url": f"{web}/pull/{number}.diff",
            "patch_url": f"{web}/pull/{number}.patch",
            "issue_url": f"{api}/issues/{number}",
            "commits_url": f"{api}/pulls/{number}/commits",
            "review_comments_url": f"{api}/pulls/{number}/comments",
            "review_comment_url": f"{api}/pulls/comments{{/number}}",
            "comments_url": f"{api}/issues/{number}/comments",
            "statuses_url": f"{api}/statuses/{sha}",
            "number": number,
            "state": "open",
            "locked": False,
            "active_lock_reason": None,
            "title": f"Pull request {number}",
            "user": self._user_json("author"),
            "body": "",
            "body_html": "",
            "body_text": "",
            "labels": [],
            "milestone": None,
            "created_at": stamp,
            "updated_at": stamp,
            "closed_at": None,
            "merged_at": None,
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": {"label": f"{repo.owner}:topic", "ref": "topic", "sha": sha, "user": owner, "repo": repo_json},
            "base": {"label": f"{repo.owner}:main", "ref": "main", "sha": "0" * 40, "user": owner, "repo": repo_json},
            "_links": {
                "self": {"href": f"{api}/pulls/{number}"},
                "html": {"href": f"{web}/pull/{number}"},
                "issue": {"href": f"{api}/issues/{number}"},
                "comments": {"href": f"{api}/issues/{number}/comments"},
                "review_comments": {"href": f"{api}/pulls/{number}/comments"},
                "review_comment": {"href": f"{api}/pulls/comments{{/number}}"},
                "commits": {"href": f"{api}/pulls/{number}/commits"},
                "statuses": {"href": f"{api}/statuses/{sha}"},
            },
            "author_association": "CONTRIBUTOR",
            "auto_merge": None,
            "draft": False,
            "merged": False,
            "mergeable": True,
            "rebaseable": True,
            "mergeable_state": "clean",
            "merged_by": None,
            "comments": len(self.comments.get((repo.full_name, number), [])),
            "review_comments": 0,
            "maintainer_can_modify": False,
            "commits": 1,
            "additions": 1,
            "deletions": 0,
            "changed_files": 1,
        }

    def _issue_json(self, repo: _Repo, number: int) -> dict[str, Any]:
        api = f"{self.api_url}/repos/{repo.full_name}"
        web = f"{self.base_url}/{repo.full_name}"
        stamp = "2024-01-01T00:00:00Z"
        return {
            "url": f"{api}/issues/{number}",
            "repository_url": api,
            "labels_url": f"{api}/issues/{number}/labels{{/name}}",
            "comments_url": f"{api}/issues/{number}/comments",
            "events_url": f"{api}/issues/{number}/events",
            "html_url": f"{web}/pull/{number}",
            "id": repo.id * 10_000 + number + 5_000,
            "node_id": f"I_{number}",
            "number": number,
            "title": f"Pull request {number}",
            "user": self._user_json("author"),
            "labels": [],
            "state": "open",
            "locked": False,
            "active_lock_reason": None,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": len(self.comments.get((repo.full_name, number), [])),
            "created_at": stamp,
            "updated_at": stamp,
            "closed_at": None,
            "closed_by": None,
            "author_association": "CONTRIBUTOR",
            "body": "",
            "body_html": "",
            "body_text": "",
            "pull_request": {
                "url": f"{api}/pulls/{number}",
                "html_url": f"{web}/pull/{number}",
                "diff_url": f"{web}/pull/{number}.diff",
                "patch_url": f"{web}/pull/{number}.patch",
            },
        }


def _not_found() -> Response:
    return 404, {}, {"message": "Not Found", "documentation_url": DOCS}


def _validation_failed(resource: str, field_name: str, message: str) -> Response:
    error = {"resource": resource, "code": "custom", "field": field_name, "message": message}
    return 422, {}, {"message": "Validation Failed", "errors": [error], "documentation_url": DOCS}


def _html(text: str) -> str:
    return f"<p>{html.escape(text)}</p>"


class _Server(ThreadingHTTPServer):
    """Joins its handler threads on close, after dropping idle keep-alive connections."""

    daemon_threads = False
    block_on_close = True
    fake: FakeGitHub

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """Wake handlers blocked on a keep-alive read; each then closes its own socket."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # the client closed it already


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as GitHub: requests reuses the connection across pages
    timeout = 10  # a stuck client cannot hold a handler thread for ever
    # headers and body are two writes; with Nagle on, each answer waits ~40 ms for a delayed ACK
    disable_nagle_algorithm = True
    server: _Server

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def do_PATCH(self) -> None:
        self._answer("PATCH")

    def do_PUT(self) -> None:
        self._answer("PUT")

    def do_DELETE(self) -> None:
        self._answer("DELETE")

    def _answer(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, extra, payload = self.server.fake.handle(method, self.path, headers, raw)
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the request log is in FakeGitHub.requests; stderr noise helps no test
