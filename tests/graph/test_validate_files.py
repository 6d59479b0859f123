"""Graph files as test cases: tests/graphs/invalid/*.yaml must be refused, valid/*.yaml accepted.

Headers (YAML comments at the top of a case file):
  # expect: <fragment>          invalid: some error's message contains the fragment (first line)
  # expect-line: <n>            invalid: that error is reported on line n
  # expect-warning: <fragment>  valid: some warning's message contains the fragment
  # expect-info: <fragment>     valid: some info finding's message contains the fragment
  # expect-quiet: <code>        valid: no finding carries that code
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kit import headers

from omg.graph.findings import Finding
from omg.graph.load import check_file

CASES = Path(__file__).parents[1] / "graphs"
INVALID = sorted((CASES / "invalid").glob("*.yaml"))
VALID = sorted((CASES / "valid").glob("*.yaml"))


def test_the_case_directories_hold_enough_cases() -> None:
    assert len(INVALID) >= 60, "every rule needs a refused case"
    assert len(VALID) >= 30, "every rule needs an accepted case"


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_graph_is_refused_with_its_message(path: Path) -> None:
    assert path.read_text(encoding="utf-8").startswith("# expect: "), "first line: # expect: …"
    (expected,) = headers(path, "expect")
    graph, found = check_file(path)
    errors = [f for f in found if f.severity == "error"]
    assert graph is None
    assert errors, f"{path.name}: no error reported"
    hits = [f for f in errors if expected in f.message]
    assert hits, f"{path.name}: no error says {expected!r}; got:\n" + _show(errors)
    assert all(f.line is not None for f in errors), "every error is located:\n" + _show(errors)
    for line in headers(path, "expect-line"):
        assert any(f.line == int(line) for f in hits), _show(hits)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_graph_has_no_errors_and_its_advisories(path: Path) -> None:
    graph, found = check_file(path)
    assert graph is not None, f"{path.name} refused:\n" + _show(found)
    assert not [f for f in found if f.severity == "error"]
    for severity in ("warning", "info"):
        said = [f.message for f in found if f.severity == severity]
        for fragment in headers(path, f"expect-{severity}"):
            assert any(fragment in m for m in said), f"no {severity} says {fragment!r}: {said}"
    for code in headers(path, "expect-quiet"):
        assert code not in {f.code for f in found}, _show(found)
    assert [f.code for f in found].count("worst-case") == 1, "the price tag is always given"


def _show(found: list[Finding]) -> str:
    return "\n".join(f.as_text() for f in found)
