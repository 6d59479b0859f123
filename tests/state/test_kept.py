"""The ledger kept with the verified point: a look at a run looked at before folds only the
events after the kept rows and prints what a fold of every event prints; a kept file changed,
cut, replaced or linked, or a record changed under it, is never folded on from."""

from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from test_vouched import edit, write_run

from omg.cli.ledger import render
from omg.graph.build import graph_from_data
from omg.ledgerrows import limits
from omg.state import fold
from omg.state.kept import LEDGER, run_ledger
from omg.state.ledger import Ledger, ledger
from omg.state.store import RunDir, canonical_json, load_run
from omg.state.verify import Damaged
from omg.state.vouched import VERIFIED, read_point

GRAPH = {"name": "g", "nodes": [{"id": "a", "run": "true"}, {"id": "b", "run": "true"}]}
BASE = {"schema": 1, "ts": "2026-12-01T00:00:00.000Z", "run_id": "r"}


def history(seed: int, legs: int = 6) -> list[dict[str, Any]]:
    """A sound stream of every kind of execution: passes, failures, retries, deferrals,
    corrections, fired arcs, a provider's limit, refusals, and legs killed mid-execution."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []

    def emit(leg: int, kind: str, **fields: Any) -> None:
        out.append({**BASE, "seq": len(out) + 1, "leg": leg, "event": kind, **fields})

    for leg in range(1, legs + 1):
        first = {"graph": GRAPH, "graph_source": "g.yaml", "graph_sha256": "", "inputs": {}}
        emit(leg, "run_started", **(first if leg == 1 else {}))
        for _ in range(rng.randrange(20, 60)):
            nid = rng.choice("ab")
            cost = round(rng.uniform(0, 0.5), 4)
            how = rng.randrange(9)
            if how == 0:  # refused before it could start: a row of no attempts
                emit(
                    leg,
                    "node_failed",
                    node_id=nid,
                    verdict="FAIL",
                    cause="run_error",
                    detail="no room",
                )
                continue
            emit(leg, "node_started", node_id=nid)
            if how == 1:
                emit(leg, "node_retried", node_id=nid, reason="retry", cause="nonzero_exit",
                     cost_usd=cost)  # fmt: skip
                emit(leg, "node_passed", node_id=nid, verdict="PASS", provenance="exit-only",
                     cost_usd=cost, duration_s=1.5)  # fmt: skip
            elif how == 2:
                emit(leg, "node_failed", node_id=nid, verdict="FAIL", cause="nonzero_exit",
                     detail="exit 1", cost_usd=cost, duration_s=0.25)  # fmt: skip
            elif how == 3:
                emit(leg, "node_retried", node_id=nid, reason="leg_budget", cause="nonzero_exit",
                     cost_usd=cost)  # fmt: skip
            elif how == 4:
                emit(
                    leg,
                    "node_retried",
                    node_id=nid,
                    reason="correction",
                    cause="output_error",
                    cost_usd=cost,
                )
                emit(leg, "node_passed", node_id=nid, verdict="PASS", provenance="exit-only",
                     cost_usd=cost)  # fmt: skip
            elif how == 5:
                emit(leg, "node_retried", node_id=nid, reason="limit", cause="run_error",
                     cost_usd=cost, cost_unknown=True)  # fmt: skip
            elif how == 6:
                emit(leg, "node_retried", node_id=nid, reason="feedback", round=2,
                     cause="result_mismatch", detail="feedback round 2", cost_usd=cost)  # fmt: skip
            elif how == 7:  # still in flight when the next event comes: a start after a start
                pass
            else:
                emit(leg, "node_passed", node_id=nid, verdict="PASS", provenance="exit-only",
                     cost_usd=cost, duration_s=2, detail="passed after 1 attempt(s)")  # fmt: skip
        if rng.random() < 0.7:  # else the leg was killed: what it had in flight was cut
            emit(leg, "run_finished", outcome="paused", reason="leg_budget")
    return out


def look(rd: RunDir) -> Ledger:
    """What `omg status RUN` does: the record checked, then the ledger from the kept rows."""
    state, _ = load_run(rd)
    return run_ledger(rd, limits(graph_from_data(state["graph"])))


def printed(rd: RunDir, book: Ledger) -> str:
    state = fold(list(rd.read_events()))
    return render(graph_from_data(state["graph"]), state, (), book=book)


def from_scratch(rd: RunDir) -> str:
    events = list(rd.read_events())
    state = fold(events)
    graph = graph_from_data(state["graph"])
    return render(graph, state, (), book=ledger(events, limits(graph)))


def append(rd: RunDir, evs: list[dict[str, Any]]) -> None:
    """What a later leg does: its events appended, state.json rewritten as their fold."""
    for ev in evs:
        rd.append_event(ev)
    rd.close()
    rd.state_path.write_text(canonical_json(fold(list(rd.read_events()))))


def kept_run(tmp_path: Path, seed: int = 1, *, cut: int | None = None) -> tuple[RunDir, list[Any]]:
    """A run looked at once (its rows kept with its point), and the events a later leg adds."""
    evs = history(seed)
    cut = len(evs) * 2 // 3 if cut is None else cut
    rd = write_run(tmp_path / "runs" / "r", evs[:cut])
    look(rd)
    point = read_point(rd.path)
    assert point is not None and point.kept is not None and point.kept.seq == cut
    return RunDir(rd.path), evs[cut:]


def rekey(rd: RunDir) -> None:
    """Name the kept file's bytes, as they now are, in verified.json (a consistent rewrite)."""
    point = json.loads((rd.path / VERIFIED).read_text())
    point["kept"][4] = hashlib.sha256((rd.path / LEDGER).read_bytes()).hexdigest()
    (rd.path / VERIFIED).write_text(json.dumps(point))


# -- the kept rows are used, and print what the whole fold prints ---------------------------
def test_a_look_folds_on_from_the_kept_rows_not_from_the_first_event(tmp_path: Path) -> None:
    """What the kept rows say is taken from them: a marker put in them comes out of a look."""
    rd, _ = kept_run(tmp_path)
    edit(rd.path / LEDGER, b'"no room"', b'"MARKER!"')
    rekey(rd)
    assert any(r.detail == "MARKER!" for r in look(rd).rows)


@pytest.mark.parametrize("seed", range(8))
def test_the_ledger_from_the_kept_rows_prints_as_the_ledger_of_every_event(
    tmp_path: Path, seed: int
) -> None:
    evs = history(seed)
    cut = random.Random(seed).randrange(2, len(evs) - 1)  # mid-execution, mid-leg, anywhere
    rd, more = kept_run(tmp_path, seed, cut=cut)
    assert printed(rd, look(rd)) == from_scratch(rd)  # nothing new: the kept rows alone
    append(rd, more)
    assert printed(rd, look(rd)) == from_scratch(rd)  # the kept rows and what followed
    point = read_point(rd.path)
    assert point is not None and point.kept is not None and point.kept.seq == len(evs)
    assert printed(rd, look(RunDir(rd.path))) == from_scratch(rd)  # kept again at the end


def test_a_legs_report_folds_on_from_the_kept_rows_to_the_logs_end(tmp_path: Path) -> None:
    """A leg's end (no check in this process): the kept rows, then every event to the end."""
    rd, more = kept_run(tmp_path, 3)
    append(rd, more)
    assert printed(rd, run_ledger(RunDir(rd.path), limits(graph_from_data(GRAPH)))) == (
        from_scratch(rd)
    )


# -- a record changed behind omg's back after its rows were kept -----------------------------
def _cost_changed(rd: RunDir) -> None:
    path = rd.segments()[1]
    data = path.read_bytes()
    at = data.index(b'"cost_usd":0.')
    path.write_bytes(data[:at] + b'"cost_usd":9.' + data[at + 13 :])


def _chunk_removed(rd: RunDir) -> None:
    rd.segments()[1].unlink()


def _line_dropped(rd: RunDir) -> None:
    path = rd.segments()[0]
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:5] + lines[6:]))


@pytest.mark.parametrize("tamper", [_cost_changed, _chunk_removed, _line_dropped])
def test_a_record_changed_under_the_kept_rows_is_refused(tmp_path: Path, tamper: Any) -> None:
    rd, _ = kept_run(tmp_path)
    tamper(rd)
    with pytest.raises(Damaged):
        look(rd)


def test_a_record_rewritten_to_agree_with_itself_is_not_folded_on_from(tmp_path: Path) -> None:
    """The events and state.json rewritten by hand to agree (the whole check passes them):
    the rows kept from the bytes of before are dropped with the point."""
    rd, _ = kept_run(tmp_path, 2)
    _cost_changed(rd)
    rd.state_path.write_text(canonical_json(fold(list(rd.read_events()))))
    assert printed(rd, look(rd)) == from_scratch(rd)
    assert "$9." in from_scratch(rd)


def test_an_event_appended_by_hand_is_checked_then_folded(tmp_path: Path) -> None:
    rd, more = kept_run(tmp_path, 4)
    with rd.segments()[-1].open("a") as fh:  # by hand, state.json left behind: a killed leg's
        fh.write(json.dumps(more[0], sort_keys=True, separators=(",", ":")) + "\n")
    assert printed(rd, look(rd)) == from_scratch(rd)
    with rd.segments()[-1].open("a") as fh:  # a line no leg writes
        fh.write(json.dumps({**more[1], "seq": 10**6}) + "\n")
    with pytest.raises(Damaged):
        look(rd)


# -- the kept file itself changed: never trusted, folded from every event and kept anew ------
def _edited(rd: RunDir) -> None:
    edit(rd.path / LEDGER, b'"no room"', b'"MARKER!"')


def _cut(rd: RunDir) -> None:
    data = (rd.path / LEDGER).read_bytes()
    (rd.path / LEDGER).write_bytes(data[: len(data) // 2])


def _emptied(rd: RunDir) -> None:
    (rd.path / LEDGER).write_bytes(b"")


def _removed(rd: RunDir) -> None:
    (rd.path / LEDGER).unlink()


def _a_directory(rd: RunDir) -> None:
    (rd.path / LEDGER).unlink()
    (rd.path / LEDGER).mkdir()


def _point_names_another_place(rd: RunDir) -> None:
    point = json.loads((rd.path / VERIFIED).read_text())
    point["kept"][1] = "events/0000000999.jsonl"
    (rd.path / VERIFIED).write_text(json.dumps(point))


@pytest.mark.parametrize(
    "damage", [_edited, _cut, _emptied, _removed, _a_directory, _point_names_another_place]
)
def test_a_kept_file_changed_is_ignored_and_kept_anew(tmp_path: Path, damage: Any) -> None:
    rd, more = kept_run(tmp_path)
    append(rd, more)
    damage(rd)
    assert printed(rd, look(rd)) == from_scratch(rd)
    assert "MARKER!" not in from_scratch(rd)
    point = read_point(rd.path)
    if (rd.path / LEDGER).is_dir():  # nothing omg replaces: none kept, the old name unused
        assert printed(rd, look(RunDir(rd.path))) == from_scratch(rd)
        return
    assert point is not None and point.kept is not None
    digest = hashlib.sha256((rd.path / LEDGER).read_bytes()).hexdigest()
    assert point.kept.sha256 == digest


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b["columns"][4].__setitem__(0, "$1,000,000"),  # a cost that is text
        lambda b: b["columns"][1].__setitem__(0, None),  # a leg that is none
        lambda b: b["columns"][0].pop(),  # columns of unequal lengths
        lambda b: b["columns"].pop(),  # a field missing
        lambda b: b["open"].__setitem__("a", 10**9),  # an open row past the rows
        lambda b: b["open"].__setitem__("a", -1),
        lambda b: b.__setitem__("columns", {"rows": 1}),
        lambda b: b.__setitem__("run_id", "other"),
        lambda b: b.__setitem__("seq", 1),
        lambda b: b.__setitem__("format", 0),
        lambda b: b.__setitem__("open", []),  # open rows that are not a mapping
        lambda b: b.__setitem__("open", "a"),
        lambda b: b["at"].__setitem__(1, 0),  # the file's place not the point's
        lambda b: b["columns"][7].__setitem__(0, "\x1b]0;owned\x07PASS"),  # a verdict
        lambda b: b["columns"][7].__setitem__(0, "SHIPPED"),  # that is none of a row's
        lambda b: b["columns"][0].__setitem__(0, "a\x1b[2J"),  # a node that clears the screen
        lambda b: b["columns"].__setitem__(8, ["\x1b[8m"] * len(b["columns"][8])),  # provenance
    ],
)
def test_hostile_kept_rows_named_by_the_point_are_never_used(tmp_path: Path, change: Any) -> None:
    """Rows and point rewritten together (as only a writer of the run directory can): rows of
    the wrong shape or type are still never used, nor make omg fail."""
    rd, _ = kept_run(tmp_path)
    body = json.loads((rd.path / LEDGER).read_text())
    change(body)
    (rd.path / LEDGER).write_text(json.dumps(body))
    rekey(rd)
    assert printed(rd, look(rd)) == from_scratch(rd)
    assert "\x1b" not in printed(rd, look(rd))


@pytest.mark.parametrize("big", ["1e999", "NaN", "-Infinity"])
def test_a_kept_number_past_a_floats_range_is_never_used(tmp_path: Path, big: str) -> None:
    rd, _ = kept_run(tmp_path)
    body = json.loads((rd.path / LEDGER).read_text())
    body["columns"][4][0] = "BIG"  # a cost
    (rd.path / LEDGER).write_text(json.dumps(body).replace('"BIG"', big))
    rekey(rd)
    assert printed(rd, look(rd)) == from_scratch(rd)


def test_a_kept_file_that_is_a_link_is_not_followed_nor_written_through(tmp_path: Path) -> None:
    rd, more = kept_run(tmp_path)
    outside = tmp_path / "elsewhere.json"
    os.replace(rd.path / LEDGER, outside)
    before = outside.read_bytes()
    (rd.path / LEDGER).symlink_to(outside)
    rekey_target = hashlib.sha256(before).hexdigest()
    point = read_point(rd.path)
    assert point is not None and point.kept is not None and point.kept.sha256 == rekey_target
    append(rd, more)
    assert printed(rd, look(rd)) == from_scratch(rd)
    assert outside.read_bytes() == before  # the link was replaced, not written through
    assert not (rd.path / LEDGER).is_symlink()


def test_status_as_json_lists_the_executions_from_the_kept_rows(tmp_path: Path) -> None:
    """`omg status RUN --format json` reads the kept rows too, and says what every event says."""
    from omg.cli.machine import run as as_json
    from omg.cli.status import show

    rd, more = kept_run(tmp_path, 5)
    append(rd, more)
    edit(rd.path / LEDGER, b'"no room"', b'"MARKER!"')  # (not used: the point names the rows
    doc = json.loads(show(rd.path.parent, "r", as_json=True))  # it kept, not these bytes)
    events = list(rd.read_events())
    state = fold(events)
    whole = as_json(graph_from_data(state["graph"]), state, events, doc["derived"], None)
    assert doc["executions"] == whole["executions"] and "MARKER!" not in json.dumps(doc)
    edit(rd.path / LEDGER, b'"no room"', b'"MARKER!"')  # the rows kept anew, edited again,
    rekey(rd)  # and named so by the point
    doc = json.loads(show(rd.path.parent, "r", as_json=True))
    assert "MARKER!" in json.dumps(doc["executions"])  # the kept rows, as the point names them


def _moved_to_the_points_end(point: dict[str, Any]) -> None:
    point["kept"][1:4] = point["files"][-1]


def _cut_mid_line(point: dict[str, Any]) -> None:
    point["kept"][2] -= 7


def _a_line_earlier(point: dict[str, Any]) -> None:
    point["kept"][3] -= 1


@pytest.mark.parametrize("move", [_moved_to_the_points_end, _cut_mid_line, _a_line_earlier])
def test_a_kept_place_changed_in_the_point_alone_is_never_folded_on_from(
    tmp_path: Path, move: Any
) -> None:
    """verified.json alone edited (its digest of the rows untouched): the place the rows stop
    at is the rows file's own too, so the rows are folded from every event, and kept anew."""
    rd, more = kept_run(tmp_path, cut=100)
    append(rd, more)
    load_run(RunDir(rd.path))  # a later leg's start: the point moves on, the rows' name carried
    point = json.loads((rd.path / VERIFIED).read_text())
    assert point["kept"][0] == 100 < point["seq"]
    move(point)
    (rd.path / VERIFIED).write_text(json.dumps(point))
    assert printed(rd, look(RunDir(rd.path))) == from_scratch(rd)
    assert printed(rd, look(RunDir(rd.path))) == from_scratch(rd)  # and the next look too


def test_a_line_holding_a_carriage_return_as_json_space_is_one_line_as_the_check_reads_it(
    tmp_path: Path,
) -> None:
    rd = write_run(tmp_path / "runs" / "r", history(1))
    lines = rd.events_path.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b",", b",\r", 1)  # JSON whitespace: the record check accepts it
    rd.events_path.write_bytes(b"".join(lines))
    assert printed(rd, look(RunDir(rd.path))) == from_scratch(rd)


def test_a_legs_report_from_a_point_edited_while_it_ran_folds_the_whole_record(
    tmp_path: Path,
) -> None:
    rd, more = kept_run(tmp_path, cut=100)
    append(rd, more)
    point = json.loads((rd.path / VERIFIED).read_text())
    point["files"][-1][1] -= 7  # no longer a line's end: no place to fold on from
    (rd.path / VERIFIED).write_text(json.dumps(point))
    book = run_ledger(RunDir(rd.path), limits(graph_from_data(GRAPH)))  # unchecked, as a leg's end
    assert printed(rd, book) == from_scratch(rd)


def test_the_kept_rows_types_are_rows_fields_as_json_gives_them_back() -> None:
    import types
    import typing
    from dataclasses import fields

    from omg.state import kept
    from omg.state.ledger import Row

    def as_json(hint: Any) -> frozenset[type]:
        if typing.get_origin(hint) is typing.Literal:
            return frozenset({type(a) for a in typing.get_args(hint)})
        if isinstance(hint, types.UnionType):
            return frozenset().union(*(as_json(a) for a in typing.get_args(hint)))
        return frozenset({int, float}) if hint is float else frozenset({hint})

    hints = typing.get_type_hints(Row)
    assert tuple(as_json(hints[f.name]) for f in fields(Row)) == kept._FIELDS
