"""Spend caps across runs when a leg runs as two jobs: the run job (a read-only token) reads the
remote's spend books before the leg, so its caps see every run's spend; the publish job (the
write token) appends the leg's spend to the remote's books from the verified record — never
from the run job's books — retrying when another job moved a book first."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pygit2
import pytest
from kit import ScriptedClaude

from .kit import READ_TOKEN, Job, Repo
from .test_caps import CAPPED, book, sticky

Make = Callable[[str], Repo]
RUN = 8300  # the workflow runs of these tests' legs count up from here

DAY = """\
name: pr
day_budget_usd: 5
nodes:
  - id: impl
    prompt: Implement it.
"""


def repo(github: Make, graph: str, tmp: Path) -> tuple[Repo, ScriptedClaude, dict[str, str]]:
    """The repository on ``graph``, and an agent CLI whose every execution costs $0.03."""
    claude = ScriptedClaude(tmp / "claude")
    claude.replies([{"result": "DONE", "cost": 0.03}])
    return github(graph), claude, {"OMG_CLAUDE_BIN": str(claude.bin)}


def run_job(gh: Repo, name: str, event: dict[str, Any], out: Path, run: int, extra: dict) -> Job:
    ran = gh.run(name, event, token=READ_TOKEN, run_id=run, extra=extra,
                 command=("leg", "--hand-off", str(out)))  # fmt: skip
    assert ran.rc == 0, ran.stderr
    return ran


def opened(gh: Repo, out: Path, extra: dict) -> tuple[dict[str, Any], Job]:
    """PR #2 opened, and its run job (handing off into ``out``): the event, the job."""
    gh.push_pr(2, {"code.txt": "v1\n"})
    event = gh.pr_event("opened", 2)
    return event, run_job(gh, "pull_request", event, out, RUN, extra)


def artifact(gh: Repo, out: Path, run: int, tamper: Callable[[Path], None] | None = None) -> Path:
    """The hand-off ``out`` up and down by name in workflow run ``run`` (``tamper``ed at the
    download, when given)."""
    into = out.parent / f"{out.name}-down"
    gh.api.upload(run, f"omg-handoff-a{run}", out)
    gh.api.download(run, f"omg-handoff-a{run}", into)
    if tamper is not None:
        tamper(into)
    return into


def publish(gh: Repo, name: str, event: dict[str, Any], into: Path, run: int, extra: dict) -> Job:
    return gh.run(name, event, run_id=run, extra=extra, command=("publish", str(into)))


def by_hand(gh: Repo, name: str, data: bytes) -> str:
    """Today's book on the remote, as a hand with push access might leave it: one file
    ``name`` holding ``data``; its ref."""
    origin = pygit2.Repository(str(gh.origin))
    ref = "refs/omg/spend/day/" + datetime.now(UTC).strftime("%Y-%m-%d")
    tree = origin.TreeBuilder()
    tree.insert(name, origin.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
    who = pygit2.Signature("Someone", "someone@example.com")
    origin.references.create(ref, origin.create_commit(None, who, who, "by hand", tree.write(), []))
    return ref


def spent(gh: Repo, scope: str) -> tuple[float, set[str]]:
    """What the remote's book of ``scope`` holds: its sum, and the runs in it."""
    entries = json.loads(book(gh, scope))["entries"].values()
    return round(sum(e["usd"] for e in entries), 10), {e["run"] for e in entries}


def test_a_pr_cap_in_two_jobs_stops_the_next_run_as_one_job_does(
    github: Make, tmp_path: Path
) -> None:
    gh, claude, extra = repo(github, CAPPED, tmp_path)
    old = gh.push_pr(2, {"code.txt": "v1\n"})
    event = gh.pr_event("opened", 2)
    ran = run_job(gh, "pull_request", event, tmp_path / "up-1", RUN, extra)
    first = ran.outputs["run-id"]
    assert ran.outputs["status"] == "passed" and len(claude.calls()) == 2
    origin = pygit2.Repository(str(gh.origin))
    assert "refs/omg/spend/pr/2" not in origin.references  # the run job wrote nothing there
    done = publish(gh, "pull_request", event, artifact(gh, tmp_path / "up-1", RUN), RUN, extra)
    assert done.rc == 0, done.stderr
    assert spent(gh, "pr/2") == (0.06, {first})  # impl, then review: from the record

    gh.push_pr(2, {"code.txt": "v2\n"})
    event = gh.pr_event("synchronize", 2, before=old)
    ran = run_job(gh, "pull_request", event, tmp_path / "up-2", RUN + 1, extra)
    assert (ran.outputs["status"], ran.outputs["next"]) == ("paused", "none")
    assert len(claude.calls()) == 2  # the cap saw the first run's spend: nothing started
    done = publish(gh, "pull_request", event, artifact(gh, tmp_path / "up-2", RUN + 1), RUN + 1,
                   extra)  # fmt: skip
    assert done.rc == 0, done.stderr
    rid = ran.outputs["run-id"]
    state = gh.run_state(rid)
    assert state["legs"][-1]["reason"] == "spend_cap" and state["nodes"] == {}
    assert state["legs"][-1]["capped"] == {
        "node_id": "impl",
        "scope": "pull_request",
        "key": "2",
        "cap_usd": 0.05,
        "spent_usd": 0.06,
    }
    assert "the pull request spend cap (PR #2, all its runs): $0.06 of $0.05" in sticky(gh, 2)
    assert spent(gh, "pr/2") == (0.06, {first})  # the paused leg spent nothing


def test_a_run_job_that_rewrites_or_hands_off_its_book_changes_nothing_on_the_remote(
    github: Make, tmp_path: Path
) -> None:
    gh, claude, extra = repo(github, CAPPED, tmp_path)
    out = tmp_path / "up"
    event, ran = opened(gh, out, extra)
    rid = ran.outputs["run-id"]
    assert len(claude.calls()) == 2
    # the run job's own book says $0 was spent: a commit of its checkout, on the book's ref
    local = pygit2.Repository(str(ran.clone))
    assert "refs/omg/spend/pr/2" in local.references  # the leg's caps booked it here
    zero = json.dumps({"scope": "pr/2", "entries": {}}).encode()
    tree = local.TreeBuilder()
    tree.insert("spend.json", local.create_blob(zero), pygit2.GIT_FILEMODE_BLOB)
    who = pygit2.Signature("omg", "omg@example.invalid")
    forged = local.create_commit(None, who, who, "nothing spent", tree.write(), [])
    local.references.create("refs/omg/spend/pr/2", forged, force=True)

    def with_book(into: Path) -> None:  # the forged book listed as a ref the leg moved
        manifest = json.loads((into / "manifest.json").read_text())
        manifest["refs"].append({"ref": "refs/omg/spend/pr/2", "old": None, "new": str(forged)})
        (into / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))

    refused = publish(gh, "pull_request", event, artifact(gh, out, RUN, with_book), RUN, extra)
    assert refused.rc == 3 and "is not the branch of run" in refused.stderr, refused.stderr
    origin = pygit2.Repository(str(gh.origin))
    assert "refs/omg/spend/pr/2" not in origin.references and gh.run_branches() == []

    done = publish(gh, "pull_request", event, artifact(gh, out, RUN + 1), RUN + 1, extra)
    assert done.rc == 0, done.stderr
    state = gh.run_state(rid)
    assert spent(gh, "pr/2") == (state["cost_usd"], {rid}) and state["cost_usd"] == 0.06
    seqs = {e["seq"] for e in gh.run_events(rid) if e.get("cost_usd")}
    keys = set(json.loads(book(gh, "pr/2"))["entries"])
    assert keys == {f"{rid}:{e['node_id']}:{e['seq']}" for e in gh.run_events(rid)
                    if e["seq"] in seqs}  # fmt: skip


def test_two_publish_jobs_appending_to_one_day_book_at_once_both_land(
    github: Make, tmp_path: Path
) -> None:
    gh, claude, extra = repo(github, DAY, tmp_path)
    legs = []
    for n in (2, 3):
        gh.push_pr(n, {f"code{n}.txt": "v1\n"})
        event = gh.pr_event("opened", n)
        out = tmp_path / f"up-{n}"
        ran = run_job(gh, "pull_request", event, out, RUN + n, extra)
        legs.append((event, artifact(gh, out, RUN + n), RUN + n, ran.outputs["run-id"]))
    racing = [
        gh.job(
            "pull_request",
            event,
            run_id=run,
            extra=extra,
            command=("publish", str(into)),
            start=True,
        )
        for event, into, run, _ in legs
    ]
    assert len(claude.calls()) == 2
    for job in racing:
        assert not isinstance(job, Job)
        done = job.wait()
        assert done.rc == 0, done.stderr
    day = [r for r in pygit2.Repository(str(gh.origin)).references if "refs/omg/spend/day/" in r]
    assert len(day) == 1, day
    assert spent(gh, day[0].removeprefix("refs/omg/spend/")) == (0.06, {r for *_, r in legs})


def booked_elsewhere(gh: Repo, scope: str, run: str, usd: float) -> None:
    """Another job's append to the remote's book of ``scope``: a child of where it stands."""
    origin = pygit2.Repository(str(gh.origin))
    ref = f"refs/omg/spend/{scope}"
    parent = origin.references.get(ref)
    book = json.loads(_book(origin, ref)) if parent is not None else {"scope": scope, "entries": {}}
    at = "2026-01-01T00:00:00Z"
    book["entries"][f"{run}:impl:1"] = {"run": run, "node": "impl", "usd": usd, "settled": True,
                                        "at": at}  # fmt: skip
    tree = origin.TreeBuilder()
    tree.insert("spend.json", origin.create_blob(json.dumps(book).encode()),
                pygit2.GIT_FILEMODE_BLOB)  # fmt: skip
    who = pygit2.Signature("omg", "omg@example.invalid")
    parents = [parent.target] if parent is not None else []
    new = origin.create_commit(None, who, who, f"book {run}", tree.write(), parents)
    origin.references.create(ref, new, force=True)


def _book(origin: pygit2.Repository, ref: str) -> bytes:
    return bytes(origin.revparse_single(ref).peel(pygit2.Commit).tree["spend.json"].data)


def test_a_publish_job_whose_day_book_moved_before_its_push_reads_it_again_and_lands(
    github: Make, tmp_path: Path
) -> None:
    gh, claude, extra = repo(github, DAY, tmp_path)
    scope = "day/" + datetime.now(UTC).strftime("%Y-%m-%d")
    booked_elsewhere(gh, scope, "run-a", 0.5)
    out = tmp_path / "up"
    event, ran = opened(gh, out, extra)
    assert len(claude.calls()) == 1
    raced: list[bytes] = []

    def race(body: bytes) -> None:  # another job appends between this job's read and push
        if f"refs/omg/spend/{scope}".encode() in body and not raced:
            raced.append(body)
            booked_elsewhere(gh, scope, "run-b", 0.25)

    gh.server.before_push = race
    done = publish(gh, "pull_request", event, artifact(gh, out, RUN), RUN, extra)
    assert done.rc == 0, done.stderr
    assert raced  # the book moved under the first push
    assert spent(gh, scope) == (0.78, {"run-a", "run-b", ran.outputs["run-id"]})


@pytest.mark.parametrize(("name", "data"), [("spend.json", b"not json"), ("notes.txt", b"hi\n")])
def test_a_run_job_refuses_a_leg_whose_remote_book_cannot_be_read(
    github: Make, tmp_path: Path, name: str, data: bytes
) -> None:
    gh, claude, extra = repo(github, DAY, tmp_path)
    ref = by_hand(gh, name, data)
    gh.push_pr(2, {"code.txt": "v1\n"})
    ran = gh.run("pull_request", gh.pr_event("opened", 2), token=READ_TOKEN, run_id=RUN,
                 extra=extra, command=("leg", "--hand-off", str(tmp_path / "up")))  # fmt: skip
    said = " ".join(ran.stderr.split())
    assert ran.rc != 0 and "Traceback" not in said, said
    assert f"spend book {ref} on origin" in said  # never read as $0
    assert f"git push --force origin <commit>:{ref}" in said  # how to restore it
    assert claude.calls() == []


def test_a_book_damaged_before_the_publish_job_fails_it_after_the_leg_landed(
    github: Make, tmp_path: Path
) -> None:
    gh, _, extra = repo(github, DAY, tmp_path)
    event, ran = opened(gh, tmp_path / "up", extra)
    ref = by_hand(gh, "spend.json", b"not json")
    origin = pygit2.Repository(str(gh.origin))
    damaged = origin.references[ref].target
    done = publish(gh, "pull_request", event, artifact(gh, tmp_path / "up", RUN), RUN, extra)
    said = " ".join(done.stderr.split())
    assert done.rc != 0 and "Traceback" not in said, said
    assert f"the spend of run {ran.outputs['run-id']} was not booked: spend book {ref}" in said
    assert gh.run_state(ran.outputs["run-id"])["status"] == "passed"  # the leg landed
    assert "omg:sticky" in sticky(gh, 2)  # and was reported
    assert origin.references[ref].target == damaged  # the damaged book stays for a person


FORGING = """\
name: pr
pr_budget_usd: 0.05
nodes:
  - id: impl
    prompt: Implement it.
  - id: forge
    depends_on: [impl]
    run: git update-ref -d refs/omg/spend/pr/2
  - id: review
    depends_on: [forge]
    prompt: Review it.
"""


def test_a_node_that_moves_the_run_jobs_copy_of_a_book_gets_no_more_admitted(
    github: Make, tmp_path: Path
) -> None:
    """The run job keeps its reservations in the checkout's copy of each book, where a node
    can reach it: a copy moved behind omg's back admits nothing more, never a fresh budget."""
    gh, claude, extra = repo(github, FORGING, tmp_path)
    gh.push_pr(2, {"code.txt": "v1\n"})
    event = gh.pr_event("opened", 2)
    ran = gh.run("pull_request", event, token=READ_TOKEN, run_id=RUN, extra=extra,
                 command=("leg", "--hand-off", str(tmp_path / "up")))  # fmt: skip
    assert len(claude.calls()) == 1, ran.stderr  # impl ran; review was never admitted
    assert "was moved in this checkout while the leg ran" in ran.stderr
