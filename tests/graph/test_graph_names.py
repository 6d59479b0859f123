"""A graph's name is written as its run ids hold it, so no two graphs share a run id: names that
differ only in spelling are refused at load, at their line, with the name to write instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from omg.graph.load import check_file
from omg.state.runid import dated_run_id, dispatched_run_id, pr_run_id

REFUSED = [
    ("review loop", "review-loop"),
    ("Review-Loop", "review-loop"),
    ("REVIEW_LOOP", "review_loop"),
    ("review..loop", "review.loop"),
    ("-review-loop-", "review-loop"),
    ("x.lock", "x-lock"),
    ("trailing.", "trailing"),
    ("a/b", "a-b"),
    ("r" * 65, "r" * 64),
]
#: Names that one run id would hold alike (the last pair: a run id cuts a name past 64).
ALIKE = [
    ("review loop", "review-loop"),
    ("Review-Loop", "review-loop"),
    ("review/loop", "review-loop"),
    ("r" * 80 + "a", "r" * 80 + "b", "r" * 64),
]


def findings(tmp_path: Path, name: str) -> list[tuple[int | None, str, str]]:
    g = tmp_path / "g.yaml"
    g.write_text(f'# a graph\nname: "{name}"\nnodes:\n  - {{id: a, run: "true"}}\n')
    _, found = check_file(g)
    return [(f.line, f.code, f.message) for f in found if f.severity == "error"]


@pytest.mark.parametrize(("name", "fixed"), REFUSED)
def test_a_name_a_run_id_would_respell_is_refused_with_the_name_to_write(
    tmp_path: Path, name: str, fixed: str
) -> None:
    ((line, code, message),) = findings(tmp_path, name)
    assert (line, code) == (2, "graph-name")
    assert message.endswith(f"— write name: {fixed}"), message


@pytest.mark.parametrize("names", ALIKE, ids=lambda n: n[-1][:12])
def test_names_one_run_id_would_hold_alike_are_never_both_accepted(
    tmp_path: Path, names: tuple[str, ...]
) -> None:
    """Whatever is accepted gets run ids of its own, even with the longest pull request
    number, day and workflow run GitHub gives."""
    accepted = [n for n in names if not findings(tmp_path, n)]
    assert accepted == [names[-1]]
    (name,) = accepted
    assert pr_run_id(2**31, name, "f" * 40) == f"pr-{2**31}-{name}-fffffff"
    assert dated_run_id(name, "20991231") == f"schedule-{name}-20991231"
    assert dispatched_run_id(name, str(2**63)) == f"dispatch-{name}-{2**63}"
