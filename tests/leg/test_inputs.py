"""Inputs: defaults apply; a missing required or an undeclared input is refused up front."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit import omg_run, write_graph

GRAPH = """
    name: greet
    inputs:
      task: {required: true, description: What to do.}
      who: {default: world}
      note: {description: "Optional, no default."}
    nodes:
      - id: greet
        run: 'touch ran.txt; printf "%s/%s/%s" {{ inputs.task }} {{ inputs.who }} {{ inputs.note }}'
"""


def test_defaults_apply_and_are_recorded(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(tmp_path, GRAPH)
    r = omg_run(omg, g, "-i", "task=wave")
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)
    assert r.artifact("greet") == "wave/world/"
    assert state["inputs"] == {"task": "wave", "who": "world", "note": ""}
    assert r.events()[0]["inputs"] == state["inputs"]

    r = omg_run(omg, g, "-i", "task=wave", "-i", "who=you", "--input", "note=hi", run_id="r2")
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    assert r.artifact("greet") == "wave/you/hi"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "task"),
        (("-i", "task=x", "-i", "bogus=1"), "bogus"),
        (("-i", "task=x", "-i", "Task=y"), "Task"),
    ],
)
def test_bad_inputs_are_refused_before_anything_runs(
    tmp_path: Path, omg, args: tuple[str, ...], said: str
) -> None:
    g = write_graph(tmp_path, GRAPH)
    for extra in ((), ("--dry-run",)):
        r = omg_run(omg, g, *args, *extra)
        assert r.code == 3, r.explain()
        assert said in r.err
        assert "Traceback" not in r.err
        assert not (tmp_path / "runs").exists()
        assert not (tmp_path / "ran.txt").exists()


def test_a_list_of_inputs_are_all_required(tmp_path: Path, omg) -> None:
    g = write_graph(
        tmp_path,
        """
        name: listed
        inputs: [repo, task]
        nodes:
          - id: a
            run: echo {{ inputs.repo }} {{ inputs.task }}
    """,
    )
    r = omg_run(omg, g, "-i", "repo=x")
    assert r.code == 3, r.explain()
    assert "-i task=VALUE" in r.err
    assert not (tmp_path / "runs").exists()


def test_a_malformed_input_is_a_usage_error(tmp_path: Path, omg) -> None:
    g = write_graph(tmp_path, GRAPH)
    r = omg_run(omg, g, "-i", "task", process=True)
    assert r.code == 2, r.explain()
    assert "name=value" in r.err
    assert not (tmp_path / "runs").exists()
