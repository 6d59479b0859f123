"""Two legs of one run, each in two jobs, interleaved — run job A, run job B, publish A, publish
B: the leg whose publish job finds the run moved on by the other lost a race. Its hand-off is
verified against where its own leg started, then dropped, and the run is reported as the
remote holds it — no failure, nothing refused, unless the hand-off is also tampered with."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omg.ci.handoff import Plan, bundle

from .kit import READ_TOKEN, Job, Repo
from .test_pr_loop import GATED, opened, replies, sticky
from .test_two_jobs_attacks import _extra_event

Make = Callable[[str], Repo]


class Leg:
    """A leg's run job, run now (workflow run ``run``); ``publish()`` its publish job."""

    def __init__(self, gh: Repo, name: str, event: dict[str, Any], tmp: Path, run: int,
                 actor: str = "Codertocat") -> None:  # fmt: skip
        self.gh, self.name, self.event, self.run, self.actor = gh, name, event, run, actor
        self.out, self.into = tmp / f"up-{run}", tmp / f"down-{run}"
        self.ran = gh.run(name, event, token=READ_TOKEN, run_id=run, actor=actor,
                          command=("leg", "--hand-off", str(self.out)))  # fmt: skip
        assert self.ran.rc == 0, self.ran.stderr

    def publish(self) -> Job:
        self.gh.api.upload(self.run, f"omg-handoff-a{self.run}", self.out)
        self.gh.api.download(self.run, f"omg-handoff-a{self.run}", self.into)
        return self.gh.run(self.name, self.event, run_id=self.run, actor=self.actor,
                           command=("publish", str(self.into)))  # fmt: skip


def _approvals(gh: Repo, tmp: Path) -> tuple[str, str, Leg, Leg]:
    """A gated run, and two legs of the same `/omg approve` (a comment posted twice) whose run
    jobs both ran while the run waited at its gate."""
    rid, _ = opened(gh)
    approve = "/omg approve ok looks right"
    a = Leg(gh, "issue_comment", gh.comment_event(2, approve, "octocat", "MEMBER"), tmp, 8301,
            "octocat")  # fmt: skip
    b = Leg(gh, "issue_comment", gh.comment_event(2, approve, "octocat", "MEMBER"), tmp, 8302,
            "octocat")  # fmt: skip
    return rid, gh.heads[2], a, b


def test_a_comment_leg_that_lost_its_race_is_answered_as_decided_and_not_refused(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GATED)
    rid, head, a, b = _approvals(gh, tmp_path)
    won = a.publish()
    assert won.rc == 0 and won.outputs["status"] == "passed", won.stderr
    tip = gh.run_head(rid)
    lost = b.publish()
    assert lost.rc == 0, lost.stderr
    assert "refused" not in lost.stderr and "another leg advanced run" in lost.stderr
    assert gh.run_head(rid) == tip  # nothing of B landed: the run is A's
    assert [s["state"] for s in gh.api.statuses[head]][-1] == "success"
    assert "failure" not in [s["state"] for s in gh.api.statuses[head]]
    body = sticky(gh)
    assert "passed" in body and "refused" not in body
    state = gh.run_state(rid)
    assert state["gates"]["ok"]["by"] == "octocat" and len(state["legs"]) == 2
    [answer] = replies(gh)  # B's comment is answered with how the run stands: decided
    assert f"omg:reply={b.event['comment']['id']}" in answer and "passed" in answer


def test_a_tampered_hand_off_whose_run_also_moved_is_still_refused(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GATED)
    rid, head, a, b = _approvals(gh, tmp_path)
    manifest = json.loads((b.out / "manifest.json").read_text())
    _extra_event(gh, b.ran.clone, rid)  # B's record forged, bundled consistently
    for f in b.out.iterdir():
        f.unlink()
    b.out.rmdir()
    olds = {r["ref"]: r["old"] for r in manifest["refs"]}
    plan = Plan(rid, "pr", manifest["leg"], olds, tuple(manifest["base"]))
    bundle(b.ran.clone, b.out, plan, manifest["publish"])
    assert a.publish().rc == 0
    tip = gh.run_head(rid)
    done = b.publish()
    assert done.rc == 3, done.stderr
    assert "was refused (record)" in done.stderr and "Traceback" not in done.stderr
    assert gh.run_head(rid) == tip
    assert gh.api.statuses[head][-1]["state"] == "failure"
    assert "the leg's output was refused" in sticky(gh)


def test_a_push_leg_that_lost_its_race_is_reported_without_failure(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GATED)
    head = gh.push_pr(2, {"code.txt": "v1\n"})
    # the head's event delivered twice (an opened and a synchronize of the same head): both
    # run jobs start its run; the second publish job finds it started by the first
    a = Leg(gh, "pull_request", gh.pr_event("opened", 2), tmp_path, 8401)
    b = Leg(gh, "pull_request", gh.pr_event("synchronize", 2, before="1" * 40), tmp_path, 8402)
    won = a.publish()
    assert won.rc == 0 and won.outputs["status"] == "paused", won.stderr
    rid = won.outputs["run-id"]
    tip = gh.run_head(rid)
    lost = b.publish()
    assert lost.rc == 0, lost.stderr
    assert f"another leg advanced run {rid} first; nothing of this leg landed" in lost.stderr
    assert gh.run_head(rid) == tip and len(gh.run_state(rid)["legs"]) == 1
    assert "failure" not in [s["state"] for s in gh.api.statuses[head]]
    assert "waiting" in sticky(gh) or "ok" in sticky(gh)
    assert "refused" not in sticky(gh)
