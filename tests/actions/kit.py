"""Workflow runs the way GitHub runs them: a bare origin, a fresh depth-1 checkout per job,
GitHub's environment variables, real webhook payloads, and the REST stand-in.

`Repo` is the repository on "GitHub" (a bare origin written with pygit2, PR heads published
as ``refs/pull/<n>/head`` the way GitHub keeps them); `Repo.job` is one workflow job running
``omg leg`` in its own fresh clone, returning what the job produced. A job runs the CLI's entry
point in the test's process when the repository says ``in_process`` (the tests' fixture does:
its exit code, output, GITHUB_OUTPUT and summary as the process would give them, without an
interpreter's start-up), unless a process is the point: jobs that race others (``start``), and
``process=True`` where the process itself is under test (the secret scrub's re-exec, what
`/proc` shows a node).
"""

from __future__ import annotations

import copy
import json
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2
from githttp import GitHttpServer
from kit import OmgProcess, omg_in_process, spawn_omg

from .stand_in import REPO, SHIPPED, StandIn, declared

PAYLOADS = Path(__file__).parent / "payloads"
#: A fake job token, fresh in every test process: tests prove it never leaks, and a search of
#: every process's command line must not find a parallel worker's checkout, which carries its
#: own token (as actions/checkout does) in a `git -c http.extraHeader=…` of its own.
TOKEN = f"ghs_simulated{secrets.token_hex(12)}"
#: The token of a job with ``permissions: contents: read``: it reads, and every write is 403.
READ_TOKEN = f"ghs_readonly{secrets.token_hex(12)}"
SIG = pygit2.Signature("Codertocat", "codertocat@example.com")
WORKFLOW = "omg-review.yml"
RESUME = "omg-resume.yml"
GRAPH_PATH = "graphs/pr.yaml"


def payload(name: str) -> dict[str, Any]:
    """A vendored @octokit/webhooks-examples payload, re-pointed at the simulated repository."""
    data: dict[str, Any] = json.loads((PAYLOADS / f"{name}.json").read_text())
    owner, repo = REPO.split("/")
    data["repository"]["full_name"] = REPO
    data["repository"]["name"] = repo
    data["repository"]["owner"]["login"] = owner
    data["repository"]["default_branch"] = "main"
    return data


def action_env(workflow: str, inputs: dict[str, str]) -> dict[str, str]:
    """The ``OMG_*`` variables omg's action gives `omg leg` in the shipped ``workflow``'s job
    when it is dispatched with ``inputs``: the step's ``with:`` (each ``${{ inputs.X }}`` read
    from the dispatch, else the input's declared default), else the action's defaults, through
    the action's ``env:`` — what a dispatched leg really gets (an input not sent is empty)."""
    import yaml

    doc = yaml.safe_load((SHIPPED / workflow).read_text())
    [step] = [  # the leg's step: of the one job, or of the run job of a leg split in two
        s for job in doc["jobs"].values() for s in job["steps"]
        if s.get("uses") == "./" and s.get("with", {}).get("job") != "publish"
    ]  # fmt: skip
    action = yaml.safe_load((SHIPPED.parents[1] / "action.yml").read_text())
    [leg] = [s for s in action["runs"]["steps"] if s.get("id") == "leg"]
    specs = declared((SHIPPED / workflow).read_text()) or {}

    def value(text: str) -> str:
        if text.startswith("${{ inputs.") and text.endswith(" }}"):
            name = text[len("${{ inputs.") : -3]
            return str(inputs.get(name, specs.get(name, {}).get("default", "")))
        return text

    out = {}
    for var, expr in leg["env"].items():
        name = expr[len("${{ inputs.") : -3] if expr.startswith("${{ inputs.") else ""
        if var.startswith("OMG_") and name in action["inputs"]:
            given = step.get("with", {}).get(name, action["inputs"][name].get("default", ""))
            out[var] = value(str(given))
    return out


def git(cwd: Path, *args: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def parse_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: ``name=value`` lines and ``name<<DELIM`` blocks."""
    out: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body = []
            for inner in lines:
                if inner == delim:
                    break
                body.append(inner)
            else:
                raise AssertionError(f"output {name}: delimiter {delim} never closes")
            out[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


@dataclass
class Job:
    """What one workflow job left behind."""

    rc: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    clone: Path
    env: dict[str, str]
    seconds: float = 0.0  # the wall time of `omg leg` alone (the checkout not included)

    @property
    def annotations(self) -> list[str]:
        return [ln for ln in self.stdout.splitlines() if ln.startswith("::")]


@dataclass
class Running:
    """A job still running (for races): ``wait`` gives what it left behind."""

    proc: OmgProcess | subprocess.Popen[str]
    work: Path
    env: dict[str, str]

    def wait(self) -> Job:
        out, err = self.proc.communicate(timeout=120)
        return Repo.result(self.proc.returncode, out, err, self.work, self.env)


@dataclass
class Repo:
    """The simulated GitHub repository: origin, pull requests, the API stand-in."""

    root: Path
    api: StandIn
    graph: str
    server: GitHttpServer  # origin, over smart HTTP behind the workflow token, as on GitHub
    origin: Path = field(init=False)
    jobs: int = 0
    heads: dict[int, str] = field(default_factory=dict)
    #: Jobs run in the caller's process (the tests) rather than each in its own (the
    #: benchmarks, which time a job's process and run several at once from threads).
    in_process: bool = False

    def __post_init__(self) -> None:
        self.origin = self.server.bare
        # GitHub serves any commit its refs reach by its id (actions/checkout fetches a sha so)
        pygit2.Repository(str(self.origin)).config["uploadpack.allowReachableSHA1InWant"] = True
        self.main = self.commit("refs/heads/main", {GRAPH_PATH: self.graph, "README.md": "hi\n"})

    # -- the repository on GitHub -------------------------------------------------------

    def commit(self, ref: str, files: dict[str, str], parent: str | None = None) -> str:
        repo = pygit2.Repository(str(self.origin))
        base = repo.get(parent) if parent else None
        tree = self._tree(repo, files, base.tree if base is not None else None)
        parents = [parent] if parent else []
        oid = repo.create_commit(None, SIG, SIG, f"update {', '.join(files)}", tree, parents)
        repo.references.create(ref, oid, force=True)
        return str(oid)

    def _tree(self, repo: pygit2.Repository, files: dict[str, str], base: Any) -> pygit2.Oid:
        index = pygit2.Index()
        if base is not None:
            index.read_tree(base)
        for path, text in files.items():
            blob = repo.create_blob(text.encode())
            index.add(pygit2.IndexEntry(path, blob, pygit2.enums.FileMode.BLOB))
        return index.write_tree(repo)

    def push_main(self, files: dict[str, str]) -> str:
        """A merged change: a commit on main (what pull requests opened after it target)."""
        self.main = self.commit("refs/heads/main", files, self.main)
        return self.main

    def push_pr(
        self,
        number: int,
        files: dict[str, str],
        branch: str = "feature",
        *,
        on: str = "",
        fork: bool = False,
    ) -> str:
        """Push to the PR's branch (its first commit on ``on``, main's tip by default); GitHub
        moves ``refs/pull/<n>/head`` with it. A ``fork``'s branch is in the fork: here its
        commit is reached by ``refs/pull/<n>/head`` alone, as GitHub keeps it."""
        parent = self.heads.get(number, on or self.main)
        if fork:
            sha = self.commit(f"refs/pull/{number}/head", files, parent)
        else:
            sha = self.commit(f"refs/heads/{branch}", files, parent)
            self.commit_ref(f"refs/pull/{number}/head", sha)
        self.heads[number] = sha
        self.api.set_pull(number, sha, branch, fork=fork, base_sha=self.main)
        return sha

    def commit_ref(self, ref: str, sha: str) -> None:
        pygit2.Repository(str(self.origin)).references.create(ref, sha, force=True)

    def run_branches(self) -> list[str]:
        repo = pygit2.Repository(str(self.origin))
        return sorted(r for r in repo.references if r.startswith("refs/heads/omg/runs/"))

    def run_file(self, run_id: str, name: str) -> str:
        repo = pygit2.Repository(str(self.origin))
        commit = repo.revparse_single(f"refs/heads/omg/runs/{run_id}")
        return str(commit.tree[name].data.decode())

    def run_head(self, run_id: str) -> str:
        repo = pygit2.Repository(str(self.origin))
        return str(repo.references[f"refs/heads/omg/runs/{run_id}"].target)

    def run_state(self, run_id: str) -> dict[str, Any]:
        state: dict[str, Any] = json.loads(self.run_file(run_id, "state.json"))
        return state

    def node_starts(self, run_id: str) -> list[str]:
        return [e["node_id"] for e in self.run_events(run_id) if e["event"] == "node_started"]

    def run_events(self, run_id: str) -> list[dict[str, Any]]:
        """events.jsonl on origin's run branch, then its chunks in events/."""
        text = self.run_file(run_id, "events.jsonl")
        repo = pygit2.Repository(str(self.origin))
        tree = repo.revparse_single(f"refs/heads/omg/runs/{run_id}").peel(pygit2.Commit).tree
        if "events" in tree:
            chunks = tree["events"].peel(pygit2.Tree)
            text += "".join(repo[e.id].data.decode() for e in sorted(chunks, key=lambda e: e.name))
        return [json.loads(ln) for ln in text.splitlines()]

    def notes(self, run_id: str) -> dict[str, dict[str, Any]]:
        """The notes origin holds about the run, not folded in yet: note id → what it records."""
        repo = pygit2.Repository(str(self.origin))
        prefix = f"refs/omg/notes/{run_id}/"
        return {
            name.removeprefix(prefix): json.loads(
                repo.revparse_single(name).peel(pygit2.Commit).tree["note.json"].data
            )
            for name in repo.references
            if name.startswith(prefix)
        }

    # -- events -------------------------------------------------------------------------

    def tip(self, branch: str) -> str:
        return str(pygit2.Repository(str(self.origin)).references[f"refs/heads/{branch}"].target)

    def pr_event(
        self, action: str, number: int, *, before: str = "", base: str = "main"
    ) -> dict[str, Any]:
        """The event of PR ``number`` at its head, targeting branch ``base`` (at its tip)."""
        name = action if action in ("opened", "synchronize", "reopened") else "ready_for_review"
        data = payload(f"pull_request.{name}")
        data["action"] = action
        data["number"] = number
        pr = data["pull_request"]
        pr["number"] = number
        pr["draft"] = False
        pr["head"]["sha"] = self.heads[number]
        pr["head"]["ref"] = "feature"
        pr["head"]["repo"] = copy.deepcopy(data["repository"])
        pr["base"]["repo"] = copy.deepcopy(data["repository"])
        pr["base"]["ref"], pr["base"]["sha"] = base, self.tip(base)
        if before:
            data["before"], data["after"] = before, self.heads[number]
        return data

    def comment_event(
        self,
        number: int,
        body: str,
        login: str,
        association: str,
        *,
        bot: bool = False,
        shape: str = "issue_comment.created",
    ) -> dict[str, Any]:
        """A comment on PR ``number``; ``shape``: the payload it is made from (the example on
        an issue, given ``issue.pull_request``; or one on a pull request, which has it)."""
        data = payload(shape)
        data["issue"]["number"] = number
        pull = data["issue"].setdefault("pull_request", {})
        pull["url"] = f"https://api.github.com/repos/{REPO}/pulls/{number}"
        # GitHub has the comment before the job starts
        c = self.api.add_comment(number, body, login, "Bot" if bot else "User")
        data["comment"]["id"] = c["id"]
        data["comment"]["body"] = body
        data["comment"]["user"]["login"] = login
        data["comment"]["user"]["type"] = "Bot" if bot else "User"
        data["comment"]["author_association"] = association
        return data

    def dispatch_event(self, inputs: dict[str, str]) -> dict[str, Any]:
        data = payload("workflow_dispatch")
        data["inputs"] = inputs
        data["workflow"] = f".github/workflows/{RESUME}"
        return data

    # -- one workflow job ---------------------------------------------------------------

    def checkout(self, clone: Path, ref: str, sha: str | None) -> None:
        """What actions/checkout leaves: a repository with ``origin`` (no credentials kept),
        one commit of ``ref`` fetched at depth 1 over the authenticated smart HTTP server, and
        that commit checked out — on a branch of the same name, or detached for a PR head or a
        commit named by its id (a PR's base).
        Done with pygit2 in this process: the clone is the fixture, not the thing under test."""
        clone.mkdir(parents=True)
        repo = pygit2.init_repository(str(clone))
        origin = repo.remotes.create("origin", self.server.url)
        auth = pygit2.RemoteCallbacks(credentials=pygit2.UserPass("x-access-token", TOKEN))
        branch = ref.removeprefix("refs/heads/")
        detached = ref.startswith("refs/pull/") or ref == sha  # a PR's head, or a commit by id
        local = "refs/remotes/origin/pr" if detached else f"refs/remotes/origin/{branch}"
        origin.fetch(
            [f"+{ref}:{local}"], callbacks=auth, depth=1, prune=pygit2.enums.FetchPrune.NO_PRUNE
        )
        commit = repo.get(sha) if sha else repo.references[local].peel(pygit2.Commit)
        assert isinstance(commit, pygit2.Commit), f"{ref}: {sha} was not fetched"
        repo.checkout_tree(commit.tree, strategy=pygit2.enums.CheckoutStrategy.FORCE)
        if detached:
            repo.set_head(commit.id)
        else:
            local_branch = repo.branches.local.create(branch, commit, force=True)
            local_branch.upstream = repo.branches.remote[f"origin/{branch}"]
            repo.set_head(f"refs/heads/{branch}")

    def job(
        self,
        event_name: str,
        event: dict[str, Any],
        *,
        actor: str = "Codertocat",
        run_id: int | None = None,
        attempt: int = 1,
        extra: dict[str, str] | None = None,
        start: bool = False,
        python: tuple[str, ...] = (),
        command: tuple[str, ...] = ("leg",),
        workflow: str | None = None,
        process: bool = False,
        pr_checkout: str = "base",
        token: str = TOKEN,
    ) -> Job | Running:
        """Run one job (``omg leg`` unless ``command`` says otherwise, in ``workflow``); with
        ``start`` return the running process (for races) instead. ``pr_checkout``: what a
        pull_request job checks out — the PR's base, as omg-review.yml does, or (``head``) the
        PR's head, as workflows written before it did."""
        self.jobs += 1
        n = self.jobs
        runner = self.root / f"runner-{n}"
        work = runner / "work"
        temp = runner / "temp"
        temp.mkdir(parents=True)
        if event_name == "pull_request":
            number = event["number"]
            # omg-review.yml checks out the base the PR targets (its graph judges the PR);
            # omg fetches the PR's head into the lanes
            base = event["pull_request"]["base"]["sha"]
            if pr_checkout == "head":
                self.checkout(
                    work, f"refs/pull/{number}/head", event["pull_request"]["head"]["sha"]
                )
            else:
                self.checkout(work, base, base)
            gh_ref = f"refs/pull/{number}/merge"
            workflow_ref = f"{REPO}/.github/workflows/{WORKFLOW}@{gh_ref}"
        else:
            self.checkout(work, "refs/heads/main", None)
            gh_ref = "refs/heads/main"
            workflow_ref = f"{REPO}/.github/workflows/{workflow or RESUME}@{gh_ref}"
        event_path = temp / "event.json"
        event_path.write_text(json.dumps(event))
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(runner / "home"),
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": self.api.url,
            "GITHUB_SERVER_URL": self.server.url.rsplit("/", 1)[0],
            "GITHUB_TOKEN": token,
            "GITHUB_OUTPUT": str(temp / "output"),
            "GITHUB_STEP_SUMMARY": str(temp / "summary.md"),
            "GITHUB_WORKFLOW_REF": workflow_ref,
            "GITHUB_REF": gh_ref,
            "GITHUB_SHA": self.main,
            "GITHUB_ACTOR": actor,
            "GITHUB_RUN_ID": str(run_id if run_id is not None else 7000 + n),
            "GITHUB_RUN_ATTEMPT": str(attempt),
            "OMG_GRAPH": GRAPH_PATH,
            "OMG_RUN_ID": "",  # the action passes every input, empty when unset
            "OMG_MAX_MINUTES": "",
            "OMG_MAX_NODES": "",
            "OMG_PUSH": "origin",
            "OMG_DISPATCH_WORKFLOW": workflow or RESUME,
            "OMG_INPUTS": "",
            # GitHub's 5xx answers are retried after 10 ms, not 1 s (doubling): the retries
            # are what these jobs show; how long they wait is the client's unit test
            "OMG_API_BACKOFF": "0.01",
            **(extra or {}),
        }
        (runner / "home").mkdir()
        argv = [sys.executable, *python, "-m", "omg", *command]  # python: a profiler's flags
        if start and not python:
            return Running(spawn_omg(*command, cwd=work, env=env), work, env)
        if start:
            proc = subprocess.Popen(
                argv, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            return Running(proc, work, env)
        t0 = time.perf_counter()
        if process or python or not self.in_process:
            done = subprocess.run(
                argv, cwd=work, env=env, capture_output=True, text=True, timeout=120
            )
        else:
            done = omg_in_process(*command, cwd=work, env=env)
        job = self.result(done.returncode, done.stdout, done.stderr, work, env)
        job.seconds = time.perf_counter() - t0
        return job

    @staticmethod
    def result(rc: int, stdout: str, stderr: str, work: Path, env: dict[str, str]) -> Job:
        out = Path(env["GITHUB_OUTPUT"])
        summary = Path(env["GITHUB_STEP_SUMMARY"])
        return Job(
            rc,
            stdout,
            stderr,
            parse_outputs(out.read_text()) if out.exists() else {},
            summary.read_text() if summary.exists() else "",
            work,
            env,
        )

    def run(self, event_name: str, event: dict[str, Any], **kw: Any) -> Job:
        job = self.job(event_name, event, **kw)
        assert isinstance(job, Job)
        return job
