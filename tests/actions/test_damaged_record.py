"""A run branch whose record was damaged (a line dropped, a verdict flipped), or a lease omg
cannot read: every `omg leg` that fetches it refuses at once — exit 3, naming the file and line
or the ref, and the fix — runs nothing, pushes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable

import pygit2
import pytest

from .kit import Repo

CHAIN = """\
name: pr
nodes:
  - id: a
    run: echo a
  - id: b
    depends_on: [a]
    run: echo b > b-ran.txt
"""

Make = Callable[[str], Repo]


def _damage(gh: Repo, rid: str, files: dict[str, str]) -> str:
    """Commit ``files`` onto the run branch on origin, as a hand with push access might."""
    ref = f"refs/heads/omg/runs/{rid}"
    head = str(pygit2.Repository(str(gh.origin)).references[ref].target)
    return gh.commit(ref, files, parent=head)


def _events_without_line(gh: Repo, rid: str, n: int) -> str:
    lines = gh.run_file(rid, "events.jsonl").splitlines(keepends=True)
    return "".join(lines[: n - 1] + lines[n:])


def _flipped_state(gh: Repo, rid: str) -> str:
    state = gh.run_state(rid)
    state["nodes"]["a"]["verdict"] = "FAIL"
    return json.dumps(state, indent=2, sort_keys=True) + "\n"


@pytest.mark.parametrize(
    ("damage", "where"),
    [
        (lambda gh, rid: {"events.jsonl": _events_without_line(gh, rid, 2)}, "events.jsonl line 2"),
        (lambda gh, rid: {"state.json": _flipped_state(gh, rid)}, "state.json line"),
    ],
    ids=["a line dropped from events.jsonl", "a verdict flipped in state.json"],
)
def test_every_leg_on_a_damaged_run_branch_refuses_before_running(
    github: Make, damage: Callable[[Repo, str], dict[str, str]], where: str
) -> None:
    gh = github(CHAIN)
    gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2), extra={"OMG_MAX_NODES": "1"})
    assert first.outputs["next"] == "dispatch", first.stderr
    rid = first.outputs["run-id"]
    head = _damage(gh, rid, damage(gh, rid))
    events = gh.run_file(rid, "events.jsonl")

    for job in (
        gh.run("workflow_dispatch", gh.dispatch_event({"run-id": rid})),
        gh.run("pull_request", gh.pr_event("reopened", 2)),
    ):
        assert job.rc == 3, job.stderr
        assert where in job.stderr and "omg ran nothing and changed nothing" in job.stderr
        assert "Traceback" not in job.stderr
        assert not list(job.clone.rglob("b-ran.txt")), "a node ran on the damaged record"
    ref = f"refs/heads/omg/runs/{rid}"
    assert str(pygit2.Repository(str(gh.origin)).references[ref].target) == head, "pushed"
    assert gh.run_file(rid, "events.jsonl") == events


GATED = """\
name: pr
nodes:
  - id: a
    run: echo a
  - id: ok
    type: gate
    depends_on: [a]
  - id: b
    depends_on: [ok]
    run: echo b > b-ran.txt
"""


def test_a_damaged_lease_refuses_the_comment_leg_naming_its_ref_and_nothing_runs(
    github: Make,
) -> None:
    gh = github(GATED)
    gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2))
    assert first.outputs["status"] == "paused", first.stderr
    rid = first.outputs["run-id"]
    ref = f"refs/omg/lease/{rid}"
    origin = pygit2.Repository(str(gh.origin))
    last = origin.revparse_single(ref).peel(pygit2.Commit)
    lease = origin[last.tree["lease.json"].id].data
    damaged = lease.replace(b'"pid": ', b'"pid": 1e999, "was": ')  # a number past any bound
    gh.commit(ref, {"lease.json": damaged.decode()}, parent=str(last.id))
    head = gh.run_head(rid)

    job = gh.run("issue_comment", gh.comment_event(2, "/omg approve ok", "octocat", "MEMBER"))
    assert job.rc == 3, job.stderr
    said = " ".join(job.stderr.split())
    assert "Traceback" not in said and "unexpected error" not in said
    assert f"its lease {ref} on origin is damaged" in said, said
    assert f"`git push origin :{ref}`" in said
    assert not list(job.clone.rglob("b-ran.txt")), "a node ran under a lease omg cannot read"
    assert gh.run_head(rid) == head  # nothing pushed
