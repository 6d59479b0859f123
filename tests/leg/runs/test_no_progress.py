"""A stalled loop stops: a round whose findings repeat the previous round's (after normalising
whitespace, case and Markdown decoration), or whose re-run path left its lanes' trees as they
were, ends the loop with cause no_progress instead of spending the rounds left."""

from __future__ import annotations

from pathlib import Path

from kit import omg_call

from omg.ci import report_md as report
from omg.graph.load import graph_from_snapshot
from omg.state.store import RunDir

from .helpers import child_env, events, git_checkout, run_path, state

# The implementer changes its lane every round; the reviewer says the same thing each time,
# decorated differently (bold, then a list item in other case and spacing).
REPEATING = """\
name: repeating
nodes:
  - id: impl
    worktree: lane
    run: |
      n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n
      printf '%s' {{ feedback.review }} > last-review.txt
  - id: review
    depends_on: [impl]
    run: |
      n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
      if [ $n -eq 1 ]; then echo "**Finding:** the README is missing"; else
        echo "  - finding:   The readme IS   missing "; fi
      exit 1
    feedback: {rerun: impl, max: 5}
"""

# The implementer changes nothing; the reviewer's findings differ every round.
IDLE = """\
name: idle
nodes:
  - id: impl
    worktree: lane
    run: |
      echo "looked at it: {{ feedback.review }}"
  - id: review
    depends_on: [impl]
    run: |
      n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
      echo "finding $n: still no tests"; exit 1
    feedback: {rerun: impl, max: 5}
"""

# The implementer changes the lane and the findings change until the reviewer is satisfied.
CONVERGING = """\
name: converging
nodes:
  - id: impl
    worktree: lane
    run: |
      n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n
      printf '%s' {{ feedback.review }} > last-review.txt
  - id: review
    depends_on: [impl]
    run: |
      n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
      if [ $n -lt 4 ]; then echo "finding: $n of 3 tests missing"; exit 1; fi
      echo "SHIP IT"
    feedback: {rerun: impl, max: 5}
"""


def run(tmp_path: Path, graph: str) -> tuple[int, Path, str]:
    root = git_checkout(tmp_path / "w", {"g.yaml": graph})
    done = omg_call("run", "g.yaml", "--run-id", "r", cwd=root, env=child_env())
    return done.returncode, run_path(root, "r"), done.stdout + done.stderr


def rounds(evs: list[dict[str, object]], node: str) -> list[int]:
    return [int(str(e.get("round", 0))) for e in evs if e["event"] == "node_started"
            and e["node_id"] == node]  # fmt: skip


def test_a_reviewer_repeating_its_finding_stops_the_loop_after_the_second_identical_round(
    tmp_path: Path,
) -> None:
    code, rd, said = run(tmp_path, REPEATING)
    assert code == 1, said
    evs = events(rd)
    assert rounds(evs, "review") == [0, 1]  # two reviews, not six
    [failed] = [e for e in evs if e["event"] == "node_failed"]
    assert (failed["node_id"], failed["cause"], failed["judged"]) == ("review", "no_progress", True)
    detail = str(failed["detail"])
    assert detail.startswith("no_progress: round 1 of impl → review changed nothing")
    assert "the findings repeat the previous round's" in detail
    assert "4 of 5 round(s) unspent" in detail
    assert "repeated: - finding: The readme IS missing" in detail
    st = state(rd)
    assert st["nodes"]["review"]["cause"] == "no_progress"
    assert st["status"] == "failed"
    # the ledger of `omg status`, and the sticky comment, say why the loop stopped
    shown = omg_call("status", "r", cwd=rd.parents[2], env=child_env())
    assert "no_progress: round 1 of impl → review changed nothing" in shown.stdout
    stored = RunDir(rd)
    snap = stored.read_state()
    graph = graph_from_snapshot(snap["graph"], snap["graph_source"])
    sticky = report.comment(graph, snap, list(stored.read_events()), report.Situation("failed"),
                            report.Links(), 7)  # fmt: skip
    assert "no_progress: round 1 of impl → review changed nothing" in sticky


def test_an_implementer_that_changes_nothing_stops_the_loop(tmp_path: Path) -> None:
    code, rd, said = run(tmp_path, IDLE)
    assert code == 1, said
    evs = events(rd)
    assert rounds(evs, "review") == [0, 1]
    [fired] = [e for e in evs if e["event"] == "node_retried" and e["reason"] == "feedback"]
    assert set(fired["lane_trees"]) == {"lane"}  # type: ignore[arg-type]
    [failed] = [e for e in evs if e["event"] == "node_failed"]
    assert failed["cause"] == "no_progress"
    assert "left its lane (lane) exactly as the previous round did" in str(failed["detail"])


def test_a_converging_loop_is_not_stopped(tmp_path: Path) -> None:
    code, rd, said = run(tmp_path, CONVERGING)
    assert code == 0, said
    evs = events(rd)
    assert rounds(evs, "review") == [0, 1, 2, 3]
    assert not [e for e in evs if e.get("cause") == "no_progress"]


def test_the_switch_off_spends_every_round(tmp_path: Path) -> None:
    graph = REPEATING.replace("max: 5}", "max: 5, stop_on_no_progress: false}")
    code, rd, said = run(tmp_path, graph)
    assert code == 1, said
    evs = events(rd)
    assert rounds(evs, "review") == [0, 1, 2, 3, 4, 5]
    [failed] = [e for e in evs if e["event"] == "node_failed"]
    assert failed["cause"] == "nonzero_exit"
    assert str(failed["detail"]).startswith("feedback exhausted after 5 round(s)")


def test_a_stalled_loop_with_a_gate_pauses_there_showing_the_repeated_finding(
    tmp_path: Path,
) -> None:
    graph = REPEATING.replace("max: 5}", "max: 5, on_exhausted: gate}")
    code, rd, said = run(tmp_path, graph)
    assert code == 4, said
    evs = events(rd)
    assert rounds(evs, "review") == [0, 1]
    [escalated] = [e for e in evs if e["event"] == "node_retried" and e["reason"] == "exhausted"]
    assert escalated["cause"] == "no_progress"
    [paused] = [e for e in evs if e["event"] == "gate_paused"]
    assert paused["node_id"] == "review.exhausted"
    assert "no_progress" in str(paused["description"])
    assert "The readme IS   missing" in str(paused["description"])
    assert "review.exhausted" in said and "no_progress" in said
    stored = RunDir(rd)
    snap = stored.read_state()
    graph = graph_from_snapshot(snap["graph"], snap["graph_source"])
    sit = report.Situation("paused", "review.exhausted", "a" * 40, next="gate")
    sticky = report.comment(graph, snap, list(stored.read_events()), sit, report.Links(), 7)
    assert "/omg approve review.exhausted @aaaaaaa\n/omg reject" in sticky
    assert "/omg retry <guidance>" in sticky  # fresh rounds, with the person's words


def test_a_person_sends_a_stalled_loop_on_with_guidance_from_its_gate(tmp_path: Path) -> None:
    graph = REPEATING.replace("max: 5}", "max: 5, on_exhausted: gate}").replace(
        "    run: |\n      n=$(cat count",
        "    run: |\n      grep -q ship .omg/worktrees/r/lane/said.txt 2>/dev/null && exit 0\n"
        "      n=$(cat count",
    ).replace("> last-review.txt", "> last-review.txt\n      printf '%s' {{ guidance }} > said.txt")
    code, rd, said = run(tmp_path, graph)
    assert code == 4, said
    assert "omg resume r --retry-failed --guidance TEXT" in said
    root = rd.parents[2]
    again = omg_call("resume", "r", "--retry-failed", "--guidance", "ship it as it is",
                     cwd=root, env=child_env())  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    evs = events(rd)
    assert rounds(evs, "review") == [0, 1, 0]  # the loop's fresh rounds began with the words
    assert (root / ".omg/worktrees/r/lane/said.txt").read_text() == "ship it as it is"
