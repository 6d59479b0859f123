"""Damaged run records (tests/leg/runs/damage.yaml): each refused before anything ran — by resume,
status, status --node, plan and replay: exit 3, the file, the line and the fix, no traceback,
not one byte changed — and `omg status` still lists the other runs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from .helpers import RUNS, omg_here, run_path, tree, write_graph

pytestmark = pytest.mark.damaged

GRAPH = """\
name: dmg
nodes:
  - id: a
    run: echo a >> marks.txt
  - id: gate1
    type: gate
    depends_on: [a]
  - id: b
    depends_on: [gate1]
    run: echo b >> marks.txt; echo b-said
  - id: gate2
    type: gate
    depends_on: [b]
  - id: c
    depends_on: [gate2]
    run: echo c >> marks.txt
"""

CASES: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "damage.yaml").read_text())
FIXES = ("`omg replay r --write`", "`omg resume --fetch REMOTE r`", "`omg run GRAPH")


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs `r` and `other`, both paused at gate2 after two legs, made once through the CLI;
    `leg1.state.json` is r's snapshot after its first leg."""
    root = tmp_path_factory.mktemp("baseline")
    write_graph(root, GRAPH)
    for rid in ("r", "other"):
        assert omg_here(root, "run", "g.yaml", "--run-id", rid, "--no-commit").code == 4
        if rid == "r":
            shutil.copy(run_path(root, "r") / "state.json", root / "leg1.state.json")
        assert omg_here(root, "resume", rid, "--approve", "gate1", "--no-commit").code == 4
    shutil.copy(run_path(root, "r") / "events.jsonl", root / "outside.jsonl")
    assert (root / "marks.txt").read_text().split() == ["a", "b", "a", "b"]
    return root


def _lines(rd: Path) -> list[bytes]:
    return (rd / "events.jsonl").read_bytes().splitlines(keepends=True)


def _event(raw: bytes) -> dict[str, Any]:
    return dict(json.loads(raw))


def _encode(ev: dict[str, Any]) -> bytes:
    return (json.dumps(ev, sort_keys=True, separators=(",", ":")) + "\n").encode()


def _set(doc: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for key in parents:
        doc = doc[key]
    doc[last] = value


def damage(root: Path, rd: Path, op: dict[str, Any]) -> None:
    """Apply one op of damage.yaml to the run directory ``rd``."""
    ((name, arg),) = op.items()
    lines = _lines(rd) if (rd / "events.jsonl").is_file() else []

    def events(new: list[bytes]) -> None:
        (rd / "events.jsonl").write_bytes(b"".join(new))

    if name == "drop":
        events(lines[: arg - 1] + lines[arg:])
    elif name == "duplicate":
        events(lines[:arg] + lines[arg - 1 :])
    elif name == "swap":
        a, b = arg
        lines[a - 1], lines[b - 1] = lines[b - 1], lines[a - 1]
        events(lines)
    elif name == "insert":
        events([*lines[: arg["after"]], arg["text"].encode() + b"\n", *lines[arg["after"] :]])
    elif name == "replace":
        raw = arg["bytes"] if "bytes" in arg else arg["text"].encode()
        lines[arg["line"] - 1] = raw + b"\n"
        events(lines)
    elif name == "edit":
        ev = _event(lines[arg["line"] - 1])
        ev.update(arg.get("set", {}))
        for key in arg.get("unset", []):
            del ev[key]
        lines[arg["line"] - 1] = _encode(ev)
        events(lines)
    elif name == "truncate":
        lines[arg["line"] - 1] = lines[arg["line"] - 1][: arg["keep"]] + b"\n"
        events(lines)
    elif name == "tear":
        events([*lines[:-1], lines[-1][: arg["keep"]]])
    elif name == "append":
        events([*lines, arg.encode()])
    elif name == "pad":
        ev = _event(lines[arg["line"] - 1])
        ev["detail"] = "x" * arg["bytes"]
        lines[arg["line"] - 1] = _encode(ev)
        events(lines)
    elif name == "nest" and "line" in arg:
        lines[arg["line"] - 1] = b"[" * arg["depth"] + b"]" * arg["depth"] + b"\n"
        events(lines)
    elif name == "nest":
        (rd / arg["file"]).write_bytes(
            b'{"nodes": ' + b"[" * arg["depth"] + b"]" * arg["depth"] + b"}"
        )
    elif name == "state_set":
        from omg.state.store import canonical_json

        st = json.loads((rd / "state.json").read_text())
        for dotted, value in arg.items():
            _set(st, dotted, value)
        (rd / "state.json").write_text(canonical_json(st))
    elif name == "state_replace":
        text = (rd / "state.json").read_text().splitlines(keepends=True)
        text[arg["line"] - 1] = arg["text"] + "\n"
        (rd / "state.json").write_text("".join(text))
    elif name == "state_bytes":
        (rd / "state.json").write_bytes(arg)
    elif name == "cut":
        (rd / arg["file"]).write_bytes((rd / arg["file"]).read_bytes()[: arg["keep"]])
    elif name == "copy":
        source = {"other": run_path(root, "other") / arg["file"], "leg1": root / "leg1.state.json"}
        shutil.copy(source[arg["from"]], rd / arg["file"])
    elif name == "directory":
        (rd / arg).unlink()
        (rd / arg).mkdir()
        (rd / arg / "inside").write_text("a directory where a file belongs\n")
    elif name == "write":
        (rd / arg["file"]).write_text(arg["text"])
    elif name == "empty":
        (rd / arg).write_bytes(b"")
    elif name == "remove":
        (rd / arg).unlink()
    elif name == "symlink":
        (rd / arg["file"]).unlink()
        (rd / arg["file"]).symlink_to(os.path.relpath(root / arg["to"], rd))
    elif name == "fifo":
        (rd / arg).unlink()
        os.mkfifo(rd / arg)
    else:
        raise AssertionError(f"damage.yaml: unknown op {name!r}")


def _damaged(baseline: Path, tmp_path: Path, case: dict[str, Any]) -> Path:
    """A copy of the baseline with the case's damage done to its run `r`."""
    root = tmp_path / "w"
    shutil.copytree(baseline, root, symlinks=True)
    for op in case["ops"]:
        damage(root, run_path(root, "r"), op)
    return root


REFUSED = [c for c in CASES if not c.get("accepted")]
ACCEPTED = [c for c in CASES if c.get("accepted")]


def test_the_corpus_covers_both_files_and_every_kind_of_damage() -> None:
    files = {c["refused"]["file"] for c in REFUSED}
    ops = {name for c in CASES for op in c["ops"] for name in op}
    assert files == {"events.jsonl", "state.json", "artifacts/b.out"}
    assert len(REFUSED) >= 40 and ACCEPTED
    assert {"drop", "duplicate", "swap", "replace", "tear", "copy", "state_set"} <= ops
    assert {"directory", "empty", "pad", "fifo", "symlink"} <= ops


@pytest.mark.parametrize("case", REFUSED, ids=[c["name"] for c in REFUSED])
def test_damage_is_refused_before_anything_runs_and_nothing_changes(
    case: dict[str, Any], baseline: Path, tmp_path: Path
) -> None:
    root = _damaged(baseline, tmp_path, case)
    want = case["refused"]
    before = tree(root)

    resume = ("resume", "r", "--approve", "gate2", "--no-commit")
    node, plan = ("status", "r", "--node", "b"), ("plan", "r", "--matrix")
    for args in (resume, ("status", "r"), node, plan, ("replay", "r")):
        res = omg_here(root, *args)
        assert "Traceback" not in res.err and "unexpected error" not in res.err, res.err
        if args[0] == "replay" and case.get("replay") == "differs":
            # The events are sound: replay folds them and says how state.json differs.
            assert res.code == 1 and "differs" in res.out, (res.out, res.err)
        elif args[0] == "replay" and case.get("replay") == "sound":
            # Events and state.json agree: replay checks them, not the nodes' reply files.
            assert res.code == 0, (res.out, res.err)
        else:
            if args[0] == "replay" and isinstance(case.get("replay"), dict):
                want = case["replay"]
            where = f"{RUNS / 'r' / want['file']}" + (
                f" line {want['line']}" if want["line"] else ""
            )
            assert res.code == 3, (args, res.out, res.err)
            assert f"omg: {where} " in res.err or f"{want['file']} in " in res.err, res.err
            assert want["says"] in res.err, res.err
            assert any(fix in res.err for fix in FIXES), f"no fix named: {res.err}"
        assert tree(root) == before, f"{args} changed the run's files (or ran a node)"

    assert "c" not in (root / "marks.txt").read_text().split(), "a node ran on a damaged record"
    listing = omg_here(root, "status")
    assert listing.code == 0, listing.err
    rows = {ln.split()[0]: ln for ln in listing.out.splitlines()[1:]}
    if case.get("listed") == "sizes":  # the listing of every run checks artifacts' sizes only
        assert "paused at gate gate2" in rows["r"], listing.out
    else:
        assert "damaged" in rows["r"] and case["refused"]["file"] in rows["r"], listing.out
    assert "paused at gate gate2" in rows["other"], listing.out
    assert tree(root) == before


@pytest.mark.parametrize("case", ACCEPTED, ids=[c["name"] for c in ACCEPTED])
def test_what_a_killed_leg_leaves_is_still_caught_up(
    case: dict[str, Any], baseline: Path, tmp_path: Path
) -> None:
    root = _damaged(baseline, tmp_path, case)
    res = omg_here(root, "resume", "r", "--approve", "gate2", "--no-commit")
    assert res.code == 0, res.err
    assert (root / "marks.txt").read_text().split()[-1] == "c"
    assert omg_here(root, "replay", "r").code == 0
