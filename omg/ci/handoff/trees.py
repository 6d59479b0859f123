"""The hand-off's commits checked where they stand, in the quarantine: each ref's history
against its old commit and the base, the run branch's trees against what a run directory may
hold, lanes' trees against names a checkout could be harmed by, every size bounded, and the
run's record at its new tip put through the record check the leg does before it runs."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from omg.ci.handoff.limits import BLOB, EXECUTABLE, GITLINK, Limits, name_problem, run_path_problem
from omg.ci.handoff.outcome import Refusal
from omg.nodefile import on_disk
from omg.state.chunks import MAX_LINE
from omg.state.snapshot import parse_state
from omg.state.verify import Damaged, Snapshot, state_fix, verify

if TYPE_CHECKING:
    from omg.git.quarantine import Quarantine, TreeEntry

#: Where a refusal says the run's files are: the run branch's tree, as a run directory.
RUNS = Path("omg/runs")


class Counter:
    """The entries of new trees checked so far, against the bound: each (path, object) once,
    however many commits repeat it, and each new tree entered once at each path."""

    def __init__(self, q: Quarantine, limits: Limits) -> None:
        self.q, self.limits = q, limits
        self.checked: set[tuple[str, str, int]] = set()
        self.entered: set[tuple[str, str]] = set()

    def enter(self, path: str, tree: str) -> bool:
        if tree not in self.q.oids or (path, tree) in self.entered:
            return False
        self.entered.add((path, tree))
        return True

    def fresh(self, ref: str, e: TreeEntry) -> bool:
        """Whether entry ``e`` is yet to be checked (counted against the bound if so)."""
        key = (e.path, e.oid, e.mode)
        if key in self.checked:
            return False
        self.checked.add(key)
        if len(self.checked) > self.limits.entries:
            raise Refusal("size", f"{ref}:{e.path}", f"the new trees hold more than "
                          f"{self.limits.entries:,} entries")  # fmt: skip
        return True

    def walk(self, ref: str, tree: str) -> Iterator[TreeEntry]:
        """The entries of ``tree`` (new, or unchecked at their path) yet to be checked."""
        if not self.enter("", tree):
            return
        for e in self.q.entries(tree, enter=self.enter):
            if self.fresh(ref, e):
                yield e


def history(q: Quarantine, ref: str, old: str | None, new: str, haves: Sequence[str],
            *, run: bool, base: Sequence[str]) -> list[str]:  # fmt: skip
    """The ref's new commits, oldest first, once its tip is known to extend what it must:
    its old commit, or — a lane made in this leg — one of the base commits."""
    if q.commit(new) is None:
        raise Refusal("objects", ref, f"moves to {new[:12]}, which is no commit of the pack")
    if old is not None and not q.descends(new, old):
        raise Refusal("ancestry", ref, f"moves to {new[:12]}, which does not descend from "
                      f"{old[:12]}, where it stood: its history was rewritten")  # fmt: skip
    if old is None and not run and not any(q.descends(new, b) for b in base):
        raise Refusal("ancestry", ref, f"is a new lane at {new[:12]}, which descends from none "
                      "of the commits the leg started from")  # fmt: skip
    commits = q.commits(new, haves)
    if run:
        for c in commits:
            parents = (q.commit(c) or ([], ""))[0]
            if len(parents) > 1:
                raise Refusal("ancestry", ref, f"holds the merge {c[:12]}; a run branch is one "
                              "line of commits")  # fmt: skip
    return commits


def run_trees(q: Quarantine, ref: str, commits: Sequence[str], limits: Limits,
              count: Counter) -> None:  # fmt: skip
    """Every new tree of the run branch's new commits holds only what a run directory may."""
    for c in commits:
        tree = (q.commit(c) or ([], ""))[1]
        for e in count.walk(ref, tree):
            where = f"{ref}:{e.path}"
            why = name_problem(e.path) or run_path_problem(e.path, e.mode)
            if why is not None:
                raise Refusal("tree", where, why)
            _size(q, e.oid, e.mode, where, limits)


def lane_trees(q: Quarantine, ref: str, commits: Sequence[str], limits: Limits,
               count: Counter) -> None:  # fmt: skip
    """Every new entry of a lane's new commits has a name a checkout may write and a bounded
    size; a submodule the leg added is refused (its commit lives outside the pack)."""
    for c in commits:
        parents, tree = q.commit(c) or ([], "")
        for e in count.walk(ref, tree):
            where = f"{ref}:{e.path}"
            why = name_problem(e.path)
            if why is not None:
                raise Refusal("tree", where, why)
            if e.mode == GITLINK and (
                not parents or q.entry_at(parents[0], e.path) != (e.mode, e.oid)
            ):
                raise Refusal("tree", where, "is a submodule the leg added; a lane's new "
                              "commits may not point outside the pack")  # fmt: skip
            if e.oid in q.oids:
                _size(q, e.oid, e.mode, where, limits)


def _size(q: Quarantine, oid: str, mode: int, where: str, limits: Limits) -> None:
    if mode in (BLOB, EXECUTABLE) and q.size(oid) > limits.file_bytes:
        raise Refusal("size", where, f"is {q.size(oid):,} bytes, more than the "
                      f"{limits.file_bytes:,} one file may hold")  # fmt: skip


#: A gate decision as the record holds it: the gate, approve (or reject), by whom, why.
Ruling = tuple[str, bool, str, str]


def record(q: Quarantine, run_id: str, tip: str, after: int = 0) -> list[Ruling]:
    """The run's record at commit ``tip``: every line of the event log, seq running on, the
    run id, state.json against the fold at its seq, each passed node's artifact against its
    size and SHA-256 — refused as a Damaged names it; the gate decisions it records after seq
    ``after``, in order."""
    run_dir = RUNS / run_id
    files = {e.path: e.oid for e in q.entries((q.commit(tip) or ([], ""))[1])}
    chunks = sorted(p for p in files if p.startswith("events/"))
    segments = [run_dir / p for p in ["events.jsonl", *chunks] if p in files]
    if not segments:
        raise Refusal("record", f"{run_dir}/events.jsonl", "is missing: the run branch holds "
                      "no event log")  # fmt: skip
    blobs = {run_dir / p: oid for p, oid in files.items()}

    def opener(path: Path) -> BinaryIO:
        return io.BytesIO(q.data(blobs[path]))

    try:
        snapshot = None
        if "state.json" in files:
            raw = q.data(files["state.json"])
            snapshot = Snapshot(parse_state(raw, run_dir / "state.json", state_fix(run_dir)),
                                run_dir / "state.json")  # fmt: skip
        state, last = verify(segments, snapshot, max_line=MAX_LINE, opener=opener)
        if snapshot is None or snapshot.state["seq"] != last:
            at = "none" if snapshot is None else f"one at seq {snapshot.state['seq']}"
            raise Damaged(
                run_dir / "state.json", None, f"is {at}, but the event log runs to seq {last}: "
                "a leg's last commit holds its state folded up to its last event",
                state_fix(run_dir),
            )  # fmt: skip
    except Damaged as exc:
        where = str(exc.path) + (f" line {exc.line}" if exc.line is not None else "")
        raise Refusal("record", where, exc.problem) from None
    for node_id, rec in state["nodes"].items():
        want = rec.get("artifact")
        if want is None or rec["verdict"] != "PASS":
            continue
        name = f"artifacts/{on_disk(node_id)}.out"
        oid = files.get(name)
        data = b"" if oid is None else q.data(oid)
        if len(data) != want["bytes"] or hashlib.sha256(data).hexdigest() != want["sha256"]:
            raise Refusal("record", f"{run_dir}/{name}", f"is not the reply node {node_id!r} "
                          f"passed with ({want['bytes']:,} bytes, sha256 "
                          f"{want['sha256'][:12]}…)")  # fmt: skip
    return _rulings((q.data(blobs[seg]) for seg in segments), after)


def _rulings(logs: Iterable[bytes], after: int) -> list[Ruling]:
    """The gate decisions of event logs the record check passed, after seq ``after``."""
    found: list[Ruling] = []
    for data in logs:
        for line in data.splitlines():
            ev = json.loads(line) if line.strip() else {}
            if ev.get("event") in ("gate_approved", "gate_rejected") and ev["seq"] > after:
                approve = ev["event"] == "gate_approved"
                found.append((ev["node_id"], approve, ev.get("by", ""), ev.get("reason") or ""))
    return found
