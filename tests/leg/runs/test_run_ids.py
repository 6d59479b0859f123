"""Hostile run ids: every command that takes one refuses it the same way (exit 2, what a run id
looks like), before it reads or writes anything — inside .omg/runs/ or outside it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .helpers import omg_here, run_path, tree, write_graph

pytestmark = pytest.mark.damaged  # it plants copies of a run where hostile ids would lead

GRAPH = """\
name: ids
nodes:
  - id: a
    run: echo a >> marks.txt
  - id: gate
    type: gate
    depends_on: [a]
"""

#: Each command, with {id} where the run id goes ("leg" alone takes it from the dispatch input).
COMMANDS = {
    "run": ["run", "g.yaml", "--run-id", "{id}", "--no-commit"],
    "run --dry-run": ["run", "g.yaml", "--run-id", "{id}", "--dry-run"],
    "resume": ["resume", "{id}", "--no-commit"],
    "resume --approve": ["resume", "{id}", "--approve", "gate", "--no-commit"],
    "replay": ["replay", "{id}"],
    "replay --write": ["replay", "{id}", "--write"],
    "status": ["status", "{id}"],
    "status --node": ["status", "{id}", "--node", "a"],
    "clean": ["clean", "{id}"],
    "plan": ["plan", "{id}", "--matrix"],
    "leg --run-id": ["leg", "--run-id", "{id}"],
    "leg (dispatch input)": ["leg"],
    "leg --fold": ["leg", "--fold", "--run-id", "{id}"],
    "leg --node": ["leg", "--node", "a", "--run-id", "{id}"],
}
HOSTILE = {
    "parent": "../x",
    "nested": "a/b",
    "trailing newline": "x\n",
    "absolute": "{outside}",
    "too long": "x" * 101,
    "very long": "x" * 5000,
    "empty": "",
    "unicode": "ünïcödé",
    "unicode letter": "run-é",
    "dot": ".",
    "dot dot": "..",
    "NUL": "x\0y",
    "dots inside": "a..b",
    "ends in .lock": "x.lock",
    "ends in a dot": "x.",
    "leading space": " x",
    "right-to-left mark": "\u202erun",
    "the .omg directory": ".omg",
    "backslash": "..\\x",
}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding one real run `good`, copies of it where a hostile id would lead
    (`.omg/x`, `.omg/runs/a/b`, an absolute path outside), and a dispatch event for `omg leg`."""
    repo = tmp_path / "repo"
    write_graph(repo, GRAPH)
    assert omg_here(repo, "run", "g.yaml", "--run-id", "good", "--no-commit").code == 4
    good = run_path(repo, "good")
    for lure in (repo / ".omg" / "x", run_path(repo, "a") / "b", tmp_path / "outside" / "x"):
        shutil.copytree(good, lure)
    monkeypatch.setenv("GITHUB_EVENT_NAME", "workflow_dispatch")
    monkeypatch.setenv("GITHUB_REPOSITORY", "octo-org/octo-repo")
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # nothing may be asked of it
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(tmp_path / "event.json"))
    return repo


def _dispatch(root: Path, run_id: str) -> None:
    payload = json.loads((Path(__file__).parents[2] / "actions/payloads/workflow_dispatch.json")
                         .read_text())  # fmt: skip
    payload["inputs"] = {"run-id": run_id}
    (root.parent / "event.json").write_text(json.dumps(payload))


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_refuses_every_hostile_run_id_before_touching_anything(
    root: Path, command: str
) -> None:
    outside = str(root.parent / "outside" / "x")
    for name, hostile in HOSTILE.items():
        run_id = hostile.replace("{outside}", outside)
        _dispatch(root, run_id if command == "leg (dispatch input)" else "")
        before = tree(root.parent)
        argv = [a.replace("{id}", run_id) for a in COMMANDS[command]]
        res = omg_here(root, *argv)
        assert "Traceback" not in res.err and "unexpected error" not in res.err, (name, res.err)
        assert res.code == 2, (name, res.code, res.out, res.err)
        if run_id or not command.startswith("leg"):  # `leg` takes an empty id as none given
            assert "is not a run id" in res.err, (name, res.err)
            assert "\n" not in res.err.rstrip("\n"), f"{name}: the id was printed raw"
        assert tree(root.parent) == before, f"{command} {name!r} read or wrote something"
    assert (root / "marks.txt").read_text().split() == ["a"], "a node ran"


def test_a_long_graph_name_is_refused_and_a_snapshots_still_makes_a_valid_run_id(
    root: Path,
) -> None:
    from omg.state.runid import is_run_id, pr_run_id

    write_graph(root, GRAPH.replace("name: ids", f"name: {'very long name.. ' * 20}x.lock"))
    res = omg_here(root, "run", "g.yaml", "--no-commit")
    assert res.code == 3 and "write name: very-long-name.-very-long-name" in res.err, res.err
    assert not [p for p in (root / ".omg" / "runs").iterdir() if p.name not in ("good", "a")]
    # a run snapshotted before names were held to run-id form still gets a valid id
    rid = pr_run_id(12345, "review " * 40, "0123456789abcdef")
    assert is_run_id(rid) and rid.startswith("pr-12345-review-") and rid.endswith("-0123456")


def test_a_directory_whose_name_is_not_a_run_id_never_hides_the_others(root: Path) -> None:
    (root / ".omg" / "runs" / "evil\nname").mkdir()
    listing = omg_here(root, "status")
    assert listing.code == 0, listing.err
    lines = listing.out.splitlines()
    assert any(ln.startswith("good ") and "paused at gate gate" in ln for ln in lines), lines
    assert any("not a run" in ln and "'evil\\nname'" in ln for ln in lines), lines
