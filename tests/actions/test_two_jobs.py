"""A leg split in two jobs, as the shipped workflows run it: the run job (a read-only token)
runs the nodes and hands its commits and what it would publish off as a workflow artifact;
the publish job (the write token, no node) verifies that and only then pushes and publishes."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
import yaml

from omg.ci.handoff import Plan, bundle

from .kit import READ_TOKEN, Job, Repo, git, parse_outputs
from .stand_in import SHIPPED
from .test_pr_loop import GATED, sticky

Make = Callable[[str], Repo]
RUN = 8100  # the workflow run both jobs belong to


def run_job(gh: Repo, event: dict, out: Path) -> Job:
    return gh.run(
        "pull_request", event, token=READ_TOKEN, run_id=RUN,
        command=("leg", "--hand-off", str(out)),
    )  # fmt: skip


def publish_job(
    gh: Repo,
    event: dict,
    out: Path,
    rid: str,
    *,
    attempt: int = 1,
    digests: str = "",
    tamper: Callable[[Path], None] | None = None,
) -> Job:
    """The artifact ``out`` up and down by name in the workflow run (``tamper`` at the
    download, when given), then the publish job (given the keys job's ``digests``, as the
    shipped workflows give it)."""
    name = f"omg-handoff-{rid}-a{attempt}"
    into = out.parent / f"{out.name}-downloaded-{attempt}"
    gh.api.upload(RUN, name, out)
    gh.api.download(RUN, name, into)
    if tamper is not None:
        tamper(into)
    extra = {"OMG_SECRET_DIGESTS": digests}
    command = ("publish", str(into))
    return gh.run("pull_request", event, run_id=RUN, attempt=attempt, command=command, extra=extra)


def opened(gh: Repo, out: Path) -> tuple[str, dict, Job]:
    """PR #2 opened on the gated graph, and its run job: the head, the event, the job."""
    head = gh.push_pr(2, {"code.txt": "v1\n"})
    event = gh.pr_event("opened", 2)
    ran = run_job(gh, event, out)
    assert ran.rc == 0, ran.stderr
    return head, event, ran


def test_a_pr_leg_in_two_jobs_lands_the_run_comment_and_status_of_one_job(
    github: Make, tmp_path: Path
) -> None:
    gh, out = github(GATED), tmp_path / "up"
    t0 = time.perf_counter()
    head, event, ran = opened(gh, out)
    rid = ran.outputs["run-id"]
    assert ran.outputs["status"] == "paused"
    # the run job wrote nothing: no run branch on origin, no comment, no status
    assert gh.run_branches() == []
    assert gh.api.comments_on(2) == [] and gh.api.statuses.get(head) is None
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["run_id"] == rid and manifest["publish"]["status"]["sha"] == head
    t1 = time.perf_counter()
    done = publish_job(gh, event, out, rid)
    t2 = time.perf_counter()
    assert done.rc == 0, done.stderr
    state = gh.run_state(rid)
    assert state["status"] == "paused" and state["paused_at"] == "ok"
    moved = {r["ref"]: r["new"] for r in manifest["refs"]}
    assert gh.tip(f"omg/runs/{rid}") == moved[f"refs/heads/omg/runs/{rid}"]
    assert gh.tip(f"omg/work/{rid}/lane") == moved[f"refs/heads/omg/work/{rid}/lane"]
    assert state["legs"][0]["ci"]["workflow_run_id"] == str(RUN)
    # the comment the run job would have posted, posted by the publish job
    assert sticky(gh) == manifest["publish"]["comment"]["body"]
    assert "Ship it?" in sticky(gh)
    latest = gh.api.statuses[head][-1]
    assert latest["state"] == "pending" and latest["context"] == "omg/pr"
    print(
        f"\nrun job {t1 - t0:.2f}s, publish job {t2 - t1:.2f}s, artifact "
        f"{sum(p.stat().st_size for p in out.iterdir()):,} bytes"
    )


def test_a_node_of_the_run_job_cannot_write_with_the_token_it_finds(
    github: Make, tmp_path: Path
) -> None:
    gh = github(
        "name: pr\nnodes:\n  - id: attack\n    run: >-\n"
        '      git push "http://x-access-token:$GITHUB_TOKEN@${GITHUB_SERVER_URL#http://}/repo.git"'
        " HEAD:refs/heads/pwned;\n"
        "      echo push=$?;\n"
        "      curl -s -o /dev/null -w 'comment=%{http_code}\\n' -X POST"
        ' -H "Authorization: token $GITHUB_TOKEN" -d \'{"body":"pwned"}\''
        ' "$GITHUB_API_URL/repos/$GITHUB_REPOSITORY/issues/2/comments";\n'
        "      curl -s -o /dev/null -w 'status=%{http_code}\\n' -X POST"
        ' -H "Authorization: token $GITHUB_TOKEN" -d \'{"state":"success","context":"x"}\''
        ' "$GITHUB_API_URL/repos/$GITHUB_REPOSITORY/statuses/$GITHUB_SHA"\n'
        "    env: [GITHUB_TOKEN, GITHUB_SERVER_URL, GITHUB_API_URL, GITHUB_REPOSITORY, "
        "GITHUB_SHA]\n"
    )
    gh.push_pr(2, {"code.txt": "v1\n"})
    ran = run_job(gh, gh.pr_event("opened", 2), tmp_path / "up")
    assert ran.rc == 0, ran.stderr
    assert "refs/heads/pwned" not in [r for r in _refs(gh)]
    assert [c for c in gh.api.comments_on(2) if "pwned" in c["body"]] == []
    assert all(s["context"] != "x" for ss in gh.api.statuses.values() for s in ss)
    said = git(ran.clone, "show", f"omg/runs/{ran.outputs['run-id']}:artifacts/attack.out")
    assert "comment=403" in said and "status=403" in said and "push=0" not in said


def _refs(gh: Repo) -> list[str]:
    return list(pygit2.Repository(str(gh.origin)).references)


def rebundle(ran: Job, out: Path, manifest: dict) -> None:
    """The hand-off in ``out`` written again from the run job's clone as it stands now, with
    ``manifest``'s publish part: what a run job that lies consistently hands off."""
    for f in out.iterdir():
        f.unlink()
    out.rmdir()
    plan = Plan(manifest["run_id"], "pr", manifest["leg"], {}, tuple(manifest["base"]))
    bundle(ran.clone, out, plan, manifest["publish"])


def test_a_forged_verdict_between_the_jobs_is_refused_and_nothing_lands(
    github: Make, tmp_path: Path
) -> None:
    gh, out = github(GATED), tmp_path / "up"
    head, event, ran = opened(gh, out)
    rid = ran.outputs["run-id"]
    # what a compromised run job could hand off: the run's record saying "passed", committed
    # on the run branch, bundled consistently, and a success status to publish
    manifest = json.loads((out / "manifest.json").read_text())
    repo = pygit2.Repository(str(ran.clone))
    branch = f"refs/heads/omg/runs/{rid}"
    tip = repo.references[branch].peel(pygit2.Commit)
    state = json.loads(tip.tree["state.json"].data)
    state["status"], state["paused_at"] = "passed", None
    blob = repo.create_blob(json.dumps(state, indent=2).encode())
    build = repo.TreeBuilder(tip.tree)
    build.insert("state.json", blob, pygit2.enums.FileMode.BLOB)
    sig = pygit2.Signature("omg", "omg@example.com")
    repo.create_commit(branch, sig, sig, "verdict", build.write(), [tip.id])
    publish = manifest["publish"]
    publish["status"]["state"], publish["status"]["description"] = "success", "passed"
    rebundle(ran, out, manifest)
    done = publish_job(gh, event, out, rid)
    assert done.rc == 3, done.stderr
    assert "was refused (record)" in done.stderr
    assert gh.run_branches() == []  # nothing of the artifact landed
    assert [s["state"] for s in gh.api.statuses[head]] == ["failure"]
    body = sticky(gh)
    assert "refused" in body and "passed" not in body.split("refused", 1)[0]


def test_the_publish_job_posts_the_comment_and_status_of_the_record_not_the_run_jobs(
    github: Make, tmp_path: Path
) -> None:
    gh, out = github(GATED), tmp_path / "up"
    head, event, ran = opened(gh, out)
    rid = ran.outputs["run-id"]
    # a run job that hands off its honest commits with words of its own to publish
    manifest = json.loads((out / "manifest.json").read_text())
    publish = manifest["publish"]
    publish["comment"]["body"] = "### omg · passed ✅\n\n[Merge now](https://evil.example/)"
    publish["status"]["state"], publish["status"]["description"] = "success", "all passed"
    rebundle(ran, out, manifest)
    done = publish_job(gh, event, out, rid)
    assert done.rc == 0, done.stderr
    body = sticky(gh)
    assert "evil.example" not in body and "Merge now" not in body
    assert "Ship it?" in body  # the record's: paused at its gate
    assert [s["state"] for s in gh.api.statuses[head]] == ["pending"]
    assert "all passed" not in gh.api.statuses[head][-1]["description"]


def keys_job(secrets_held: dict[str, str]) -> str:
    """The shipped review workflow's keys job, its one step run by bash with ``secrets_held``
    as its env: the digests it outputs for the publish job."""
    doc = yaml.safe_load((SHIPPED / "omg-review.yml").read_text())
    [step] = doc["jobs"]["keys"]["steps"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "output"
        env = {"PATH": os.environ["PATH"], "GITHUB_OUTPUT": str(out), **secrets_held}
        subprocess.run(["bash", "-e", "-c", step["run"]], env=env, check=True, timeout=30)
        return parse_outputs(out.read_text())["digests"]


def test_a_model_key_in_the_hand_off_is_found_by_the_digest_the_keys_job_computes(
    github: Make, tmp_path: Path
) -> None:
    key = "sk-ant-api03-" + secrets.token_urlsafe(40)
    digests = keys_job(
        {"ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": "", "CLAUDE_CODE_OAUTH_TOKEN": ""}
    )
    assert digests.split() == [hashlib.sha256(key.encode()).hexdigest()]
    gh, out = github(GATED), tmp_path / "up"
    head, event, ran = opened(gh, out)
    rid = ran.outputs["run-id"]
    manifest = json.loads((out / "manifest.json").read_text())
    # a node that read the key (say, before the proxy took it) leaves it in its lane's files,
    # which no masker reads: the publish job holds no key, yet finds it by its digest
    repo = pygit2.Repository(str(ran.clone))
    lane = f"refs/heads/omg/work/{rid}/lane"
    tip = repo.references[lane].peel(pygit2.Commit)
    build = repo.TreeBuilder(tip.tree)
    build.insert("debug.txt", repo.create_blob(f"key={key}\n".encode()), pygit2.enums.FileMode.BLOB)
    sig = pygit2.Signature("omg", "omg@example.com")
    repo.create_commit(lane, sig, sig, "debug", build.write(), [tip.id])
    rebundle(ran, out, manifest)
    done = publish_job(gh, event, out, rid, digests=digests)
    assert done.rc == 3 and "was refused (secret)" in done.stderr, done.stderr
    assert gh.run_branches() == [] and [s["state"] for s in gh.api.statuses[head]] == ["failure"]
    assert key not in sticky(gh) and key not in done.stderr
    # without the digests the publish job has nothing to look for: the key would land
    blind = publish_job(gh, event, out, rid, attempt=2)
    assert blind.rc == 0, blind.stderr
    landed = pygit2.Repository(str(gh.origin)).references[lane].peel(pygit2.Commit)
    assert key in landed.tree["debug.txt"].data.decode()
