"""Damaged run directories: a clear error (exit 3, no traceback) and not one byte rewritten."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import Cli
from .helpers import child_env, omg_cmd, run_path, write_graph

pytestmark = pytest.mark.damaged

GRAPH = """\
name: dmg
nodes:
  - id: a
    run: 'true'
  - id: gate
    type: gate
    depends_on: [a]
  - id: b
    depends_on: [gate]
    run: 'true'
"""


def _set_state(field: str, value: object) -> Callable[[Path], None]:
    def damage(rd: Path) -> None:
        st = json.loads((rd / "state.json").read_text())
        st[field] = value
        (rd / "state.json").write_text(json.dumps(st))

    return damage


def _append(data: bytes) -> Callable[[Path], None]:
    def damage(rd: Path) -> None:
        with (rd / "events.jsonl").open("ab") as fh:
            fh.write(data)

    return damage


def _last_line_schema(rd: Path) -> None:
    lines = (rd / "events.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    last["schema"] = 7
    (rd / "events.jsonl").write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n")


def _drop_last_lines(rd: Path) -> None:
    lines = (rd / "events.jsonl").read_text().splitlines(keepends=True)
    (rd / "events.jsonl").write_text("".join(lines[:-2]))


def _truncate_state(rd: Path) -> None:
    data = (rd / "state.json").read_bytes()
    (rd / "state.json").write_bytes(data[: len(data) // 2])


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "torn last event line": (_append(b'{"schema":1,"seq":6,"event":"node_sta'), "torn"),
    "garbage event line": (_append(b"\x00\x01 not json at all\n"), "not a JSON event"),
    "foreign JSON line": (_append(b'{"hello": "world"}\n'), "not an omg event"),
    "unknown event schema": (_last_line_schema, "event schema 7"),
    "events truncated at a line boundary": (_drop_last_lines, "events were lost"),
    "empty events": (lambda rd: (rd / "events.jsonl").write_bytes(b""), "events were lost"),
    "missing events": (lambda rd: (rd / "events.jsonl").unlink(), "no events.jsonl"),
    "unknown state schema": (_set_state("schema", 99), "state schema 99"),
    "garbage state": (
        lambda rd: (rd / "state.json").write_bytes(b"\x89PNG\r\n\x1a\n\xff"),
        "not valid JSON",
    ),
    "truncated state": (_truncate_state, "not valid JSON"),
    "state of the wrong shape": (_set_state("nodes", ["a"]), "damaged: field 'nodes'"),
    "state record of the wrong shape": (
        _set_state("nodes", {"a": {"verdict": "PASS"}}),
        "field 'round' of node 'a'",
    ),
    "state that is not an object": (
        lambda rd: (rd / "state.json").write_text("[1, 2]\n"),
        "not an omg state file",
    ),
}


def files(rd: Path) -> dict[str, bytes]:
    """Everything but the lock (whose holder's pid each leg rewrites)."""
    return {p.name: p.read_bytes() for p in rd.iterdir() if p.is_file() and p.name != "leg.lock"}


@pytest.fixture(scope="module")
def paused_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run paused at its gate (made once through the real CLI; each test damages a copy)."""
    root = tmp_path_factory.mktemp("paused")
    write_graph(root, GRAPH)
    res = subprocess.run(
        omg_cmd("run", "g.yaml", "--run-id", "r", "--no-commit"),
        cwd=root,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 4, res.stderr
    return run_path(root, "r")


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_damage_is_a_clear_error_and_nothing_is_rewritten(
    cli: Cli, tmp_path: Path, damage: str, paused_run: Path
) -> None:
    write_graph(tmp_path, GRAPH)
    rd = run_path(tmp_path, "r")
    shutil.copytree(paused_run, rd)
    apply, words = DAMAGE[damage]
    apply(rd)
    before = files(rd)

    for args in (("resume", "r", "--approve", "gate"), ("status", "r"), ("replay", "r")):
        res = cli(*args)
        if args[0] == "replay" and "lost" in words:
            # replay folds whatever events there are and reports how the snapshot differs.
            assert res.returncode == 1 and "differs" in res.stdout, res.stderr
        else:
            assert res.returncode == 3, (args, res.stdout, res.stderr)
            assert words in res.stderr, (args, res.stderr)
        assert "Traceback" not in res.stderr and "unexpected error" not in res.stderr
        assert files(rd) == before, f"{args} rewrote the damaged run directory"

    listing = cli("status")
    assert listing.returncode == 0
    assert "damaged" in next(ln for ln in listing.stdout.splitlines() if ln.startswith("r "))
    assert files(rd) == before


def test_a_damaged_run_does_not_hide_the_others(cli: Cli, tmp_path: Path) -> None:
    write_graph(tmp_path, GRAPH)
    assert cli("run", "g.yaml", "--run-id", "bad").returncode == 4
    assert cli("run", "g.yaml", "--run-id", "good").returncode == 4
    (run_path(tmp_path, "bad") / "state.json").write_text("{")
    out = cli("status").stdout
    assert "paused at gate gate" in next(ln for ln in out.splitlines() if ln.startswith("good"))
    assert cli("resume", "good", "--approve", "gate").returncode == 0
