"""The statistics of many runs: a thousand run branches come to exactly the figures they were
made with (read through `omg stats`, every format), runs are grouped by graph and version and
filtered by time and graph, and two versions are compared with their noise."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from gfm import read
from kit import omg_in_process

from omg.errors import UsageError
from omg.stats.compare import compare, pick
from omg.stats.facts import Damaged, GateWait, Loop, RunFacts, Version
from omg.stats.summary import summarise

from .synth import Expected, make_runs


@pytest.fixture(scope="module")
def thousand(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Expected]:
    repo = tmp_path_factory.mktemp("runs")
    return repo, make_runs(repo, 1000)


def versions_of(out: str) -> dict[str, dict[str, Any]]:
    [graph] = json.loads(out)["summary"]["graphs"]
    return {v["graph_sha256"]: v for v in graph["versions"]}


def test_a_thousand_runs_come_to_the_figures_they_were_made_with(
    thousand: tuple[Path, Expected],
) -> None:
    repo, want = thousand
    done = omg_in_process("stats", "--format", "json", cwd=repo)
    assert done.returncode == 0, done.stderr
    found = versions_of(done.stdout)
    assert set(found) == set(want.runs) and want.lagging == 200
    for key, v in found.items():
        assert v["runs"] == want.runs[key]
        assert {k: n for k, n in v["outcomes"].items() if n} == dict(want.outcomes[key])
        assert {k: n for k, n in v["endings"].items() if n} == dict(want.endings[key])
        assert {int(k): n for k, n in v["round_counts"].items()} == dict(want.rounds[key])
        assert v["cost"]["total"] == pytest.approx(want.cost[key])
        assert v["executions"]["total"] == want.executions[key]
        assert sorted(v["gate_wait"]["values"]) == pytest.approx(sorted(want.waits[key]))
        assert v["api_retries"]["total"] == want.api_retries[key]
        assert v["limit_pauses"] == want.limit_pauses[key]
        passed = want.outcomes[key]["passed"]
        assert v["cost_per_pass"] == pytest.approx(want.cost[key] / passed)
        assert v["passed"] == {
            "k": passed,
            "n": passed + want.outcomes[key]["failed"],
            "p": pytest.approx(passed / (passed + want.outcomes[key]["failed"])),
            "interval": [pytest.approx(x) for x in v["passed"]["interval"]],
        }


def test_two_versions_side_by_side_say_which_difference_is_beyond_noise(
    thousand: tuple[Path, Expected],
) -> None:
    repo, _ = thousand
    keys = list(versions_of(omg_in_process("stats", "-f", "json", cwd=repo).stdout).values())
    old, new = (v["version"] for v in keys)  # oldest first: the first prompt, then the second
    done = omg_in_process("stats", "--compare", old[:6], new, cwd=repo)
    assert done.returncode == 0, done.stderr
    rows = {ln.split("  ")[1].strip(): ln for ln in done.stdout.splitlines() if ln.startswith("  ")}
    # the second prompt converges in fewer rounds (1.0 against 1.67 on average): not noise
    assert rows["feedback rounds until convergence"].rstrip().endswith("no")
    # both pass as often: within noise
    assert "yes (the intervals overlap)" in rows["runs passed (of those that ended)"]
    assert "n=" in rows["cost per run"] and "95%" in rows["cost per run"]
    side = json.loads(omg_in_process("stats", "-f", "json", "--compare", old, new, cwd=repo).stdout)
    assert side["comparison"]["a"]["version"] == old and len(side["comparison"]["rows"]) == 8


def test_the_markdown_is_tables_github_renders(thousand: tuple[Path, Expected]) -> None:
    repo, _ = thousand
    done = omg_in_process("stats", "--format", "markdown", "--since", "2026-11-20", cwd=repo)
    assert done.returncode == 0, done.stderr
    page = read(done.stdout)
    assert page.tags.count("table") == 5 and "h4" in page.tags
    assert "since 2026-11-20T00:00+00:00" in done.stdout
    assert "\\$" in done.stdout and "math" not in page.html  # a $ is never read as math


def run(rid: str, graph: str = "g", sha: str = "a", **kw: Any) -> RunFacts:
    base: dict[str, Any] = {
        "run_id": rid, "version": Version(graph, sha * 64, ()), "outcome": "passed",
        "started": datetime(2026, 12, 1, tzinfo=UTC), "cost_usd": 1.0, "cost_unknown": False,
        "executions": 2, "attempts": 2, "pull_request": None, "rehearsal": False, "loops": (),
        "gates": (), "failures": (), "api_retries": 0, "limit_pauses": 0,
    }  # fmt: skip
    return RunFacts(**{**base, **kw})


def test_runs_group_by_graph_and_version_oldest_version_first() -> None:
    later = datetime(2026, 12, 5, tzinfo=UTC)
    s = summarise(
        [run("1", sha="b", started=later), run("2"), run("3", graph="h"),
         Damaged("4", "c" * 40, "not JSON")],
    )  # fmt: skip
    assert [g.name for g in s.graphs] == ["g", "h"] and s.runs == 3
    g = s.graphs[0]
    assert [v.graph_sha256[0] for v in g.versions] == ["a", "b"] and g.overall.runs == 2
    assert [d.run_id for d in s.damaged] == ["4"]


def test_since_and_graph_keep_the_runs_asked_for() -> None:
    t = datetime(2026, 12, 1, tzinfo=UTC)
    runs = [run("old", started=t - timedelta(days=9)), run("new", started=t), run("h", "h"),
            run("never", started=None)]  # fmt: skip
    s = summarise(runs, since=t - timedelta(days=7), graph="g")
    assert s.runs == 1 and s.graphs[0].overall.runs == 1


def test_cost_per_passed_run_and_per_pull_request_count_every_run() -> None:
    s = summarise(
        [run("1", pull_request=7, cost_usd=2.0), run("2", pull_request=7, outcome="superseded"),
         run("3", pull_request=8, outcome="failed", cost_usd=3.0)],
    )  # fmt: skip
    v = s.graphs[0].overall
    assert v.cost_per_pass == 6.0  # every run's spend over the one that passed
    assert v.cost_per_pr.values == (3.0, 3.0) and v.cost_per_pr.n == 2
    assert (v.passed.k, v.passed.n) == (1, 2)  # of the runs that ended


def test_loops_gates_and_failures_add_up_per_version() -> None:
    s = summarise(
        [run("1", loops=(Loop("r", 1, "converged"), Loop("r", 2, "exhausted")),
             gates=(GateWait("ok", 60.0, "approve"), GateWait("ok", None, "")),
             failures=(("r", "result_mismatch"), ("i", "timeout"), ("r", "result_mismatch"))),
         run("2", loops=(Loop("r", 1, "converged"),), cost_unknown=True)],
    )  # fmt: skip
    v = s.graphs[0].overall
    assert dict(v.round_counts) == {1: 2} and (v.converged.k, v.converged.n) == (2, 3)
    assert v.gate_wait.values == (60.0,) and v.gates_open == 1 and v.cost_unknown == 1
    assert v.failures == {"i": {"timeout": 1}, "r": {"result_mismatch": 2}}


@pytest.mark.parametrize(
    ("prefix", "said"),
    [("aaa", "at least 4 characters"), ("ffff", "names no version"), ("", "at least 4")],
)
def test_compare_names_the_versions_when_a_prefix_names_none(prefix: str, said: str) -> None:
    s = summarise([run("1"), run("2", sha="b")])
    with pytest.raises(UsageError, match=said) as caught:
        pick(s, prefix)
    assert s.versions()[0].version in str(caught.value)


def test_compare_refuses_a_prefix_of_two_versions() -> None:
    s = summarise([run("1"), run("2", sha="b")])
    [g] = s.graphs
    twins = tuple(replace(v, version=f"abcd{i}") for i, v in enumerate(g.versions))
    s = replace(s, graphs=(replace(g, versions=twins),))
    with pytest.raises(UsageError, match="more than one version"):
        pick(s, "abcd")
    assert pick(s, "ABCD1").version == "abcd1"  # hex digits in either case


def test_a_comparison_holds_both_sides_of_every_figure() -> None:
    s = summarise([run("1"), run("2"), run("3", sha="b", cost_usd=5.0)])
    a, b = (v.version for v in s.versions())
    c = compare(s, a, b)
    assert (c.a.version, c.b.version) == (a, b)
    cost = next(r for r in c.rows if r.figure == "cost per run")
    assert cost.within_noise is None  # one run of b: no interval, too few to tell
