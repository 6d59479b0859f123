"""A passed node's reply file, deleted or edited after it passed: `omg status RUN` and `omg
resume RUN` refuse, naming the file and the repair — which works — while `omg status` lists the
other runs; a run recorded before the reply's digest was kept is read as before."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .helpers import child_env, git_checkout, omg_here

pytestmark = pytest.mark.damaged

GRAPH = """\
name: said
nodes:
  - id: a
    run: echo a-said
  - id: look
    type: gate
    depends_on: [a]
  - id: b
    depends_on: [look]
    run: printf '%s' {{ artifacts.a | inline }} > seen.txt
"""


def _paused(tmp_path: Path) -> Path:
    """Runs `r` and `other` of GRAPH, committed in git and paused at the gate."""
    work = git_checkout(tmp_path / "w", {"g.yaml": GRAPH})
    for rid in ("r", "other"):
        assert omg_here(work, "run", "g.yaml", "--run-id", rid).code == 4
    return work


@pytest.mark.parametrize("damage", ["deleted", "edited to the same size"])
def test_a_damaged_artifact_is_named_with_its_repair_and_the_repair_works(
    tmp_path: Path, damage: str
) -> None:
    work = _paused(tmp_path)
    artifact = work / ".omg" / "runs" / "r" / "artifacts" / "a.out"
    assert artifact.read_text() == "a-said\n"
    if damage == "deleted":
        artifact.unlink()
    else:
        artifact.write_text("a-lied\n")
    why = "is missing" if damage == "deleted" else "was changed after its node passed"
    rel = ".omg/runs/r/artifacts/a.out"
    repair = f"git show omg/runs/r:artifacts/a.out > {rel}"
    for args in (("status", "r"), ("resume", "r", "--approve", "look")):
        res = omg_here(work, *args)
        assert res.code == 3 and "Traceback" not in res.err, res.err
        said = " ".join(res.err.split())
        assert f"{rel} {why}: node 'a' passed with a reply of 7 bytes" in said, said
        assert f"`{repair}`" in said and "`omg run GRAPH`" in said
    assert not (work / "seen.txt").exists()  # b never read what was left of a's reply
    listing = omg_here(work, "status")
    assert listing.code == 0, listing.err
    rows = {ln.split()[0]: ln for ln in listing.out.splitlines()[1:]}
    assert "paused at gate look" in rows["other"]
    if damage == "deleted":
        assert "damaged: artifacts/a.out" in rows["r"], listing.out

    done = subprocess.run(["sh", "-c", repair], cwd=work, env=child_env(), capture_output=True)
    assert done.returncode == 0, done.stderr  # the repair the message names, as a person runs it
    res = omg_here(work, "resume", "r", "--approve", "look")
    assert res.code == 0, res.err
    assert (work / "seen.txt").read_text() == "a-said\n"


def _as_recorded_before_digests(run_dir: Path) -> None:
    """The run as an omg that kept no artifact digest recorded it."""
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    for ev in events:
        ev.pop("artifact", None)
    text = "".join(json.dumps(ev, sort_keys=True, separators=(",", ":")) + "\n" for ev in events)
    (run_dir / "events.jsonl").write_text(text)
    state = json.loads((run_dir / "state.json").read_text())
    for rec in state["nodes"].values():
        rec.pop("artifact", None)
    from omg.state.store import canonical_json

    (run_dir / "state.json").write_text(canonical_json(state))


def test_a_run_recorded_before_artifact_digests_stays_readable(tmp_path: Path) -> None:
    work = _paused(tmp_path)
    run_dir = work / ".omg" / "runs" / "r"
    _as_recorded_before_digests(run_dir)
    assert omg_here(work, "status", "r").code == 0
    res = omg_here(work, "resume", "r", "--approve", "look", "--no-commit")
    assert res.code == 0, res.err
    assert (work / "seen.txt").read_text() == "a-said\n"
