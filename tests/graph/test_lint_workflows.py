"""`omg lint` on GitHub workflow files: a workflow its legs dispatch the next leg to must take
what that dispatch sends (`run-id` alone), and no workflow may declare more inputs than GitHub
allows — each found before GitHub answers 422 and a run stops at its first leg."""

from __future__ import annotations

from pathlib import Path

import pytest

from omg.graph.lint import lint_files
from omg.graph.workflows import MAX_INPUTS

ROOT = Path(__file__).resolve().parents[2]

LEG = """\
      - uses: {uses}
        with:
          graph: ${{{{ inputs.graph }}}}
          max-minutes: "45"
{extra}"""


def workflow(inputs: str, *, uses: str = "./", extra: str = "", on: str = "") -> str:
    trigger = on or f"on:\n  workflow_dispatch:\n    inputs:\n{inputs}"
    steps = LEG.format(uses=uses, extra=extra)
    job = "jobs:\n  leg:\n    runs-on: ubuntu-latest\n    steps:\n"
    return f"{trigger}\npermissions: {{}}\n{job}{steps}"


GOOD = "      run-id: {required: true}\n      graph: {default: ''}\n"
GRAPH_REQUIRED = "      run-id: {default: ''}\n      graph:\n        required: true\n"
SELF = "          dispatch-workflow: omg-dispatch.yml\n"

#: (what, file text, the findings as (line, severity, words of the message))
CASES: list[tuple[str, str, list[tuple[int | None, str, str]]]] = [
    ("takes run-id alone", workflow(GOOD), []),
    ("naming itself, takes run-id alone", workflow(GOOD, extra=SELF), []),
    (
        "requires an input the dispatch lacks",
        workflow(GRAPH_REQUIRED, extra=SELF),
        [(5, "error", "requires input 'graph': GitHub answers 422 \"Required input 'graph' not")],
    ),
    (
        "a required input with a default is given it",
        workflow("      run-id: {required: true}\n      mode: {required: true, default: a}\n"),
        [],
    ),
    (
        "declares no run-id",
        workflow("      graph: {default: ''}\n"),
        [(2, "error", 'no run-id input: GitHub answers 422 "Unexpected inputs provided"')],
    ),
    (
        "takes run-id as a choice",
        workflow("      run-id: {type: choice, options: [a]}\n"),
        [(4, "error", "its run-id input is of type choice")],
    ),
    (
        "too many inputs",
        workflow(GOOD + "".join(f"      i{n}: {{default: ''}}\n" for n in range(MAX_INPUTS - 1))),
        [(3, "error", f"declares {MAX_INPUTS + 1} inputs; GitHub allows at most {MAX_INPUTS}")],
    ),
    (
        "no workflow_dispatch trigger to dispatch",
        workflow("", on="on:\n  schedule:\n    - cron: '17 3 * * *'"),
        [(1, "error", "no workflow_dispatch trigger: GitHub answers 422")],
    ),
    (
        "a leg with no budget dispatches nothing",
        workflow("", on="on: [pull_request]").replace('          max-minutes: "45"\n', ""),
        [],
    ),
    (
        "omg's action by its repository",
        workflow("      graph: {required: true}\n", uses="your-org/omg@" + "0" * 40),
        [(2, "error", "no run-id input"), (4, "error", "requires input 'graph'")],
    ),
    (
        "another action is none of omg's business",
        workflow("      graph: {required: true}\n", uses="someone/deploy@" + "0" * 40),
        [],
    ),
    (
        "a target known only when the job runs",
        workflow(GOOD, extra="          dispatch-workflow: ${{ vars.NEXT }}\n"),
        [],
    ),
    (
        "a target not beside it",
        workflow(GOOD, extra="          dispatch-workflow: elsewhere.yml\n"),
        [(16, "warning", "dispatch-workflow names elsewhere.yml, which is not beside")],
    ),
]


@pytest.mark.parametrize(("text", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_workflow_is_linted_for_the_dispatches_of_its_legs(
    text: str, want: list[tuple[int | None, str, str]], tmp_path: Path
) -> None:
    path = tmp_path / "omg-dispatch.yml"
    path.write_text(text)
    [(_, found)] = lint_files([path])
    assert [(f.line, f.severity) for f in found] == [(line, sev) for line, sev, _ in want]
    for f, (_, _, words) in zip(found, want, strict=True):
        assert words in f.message and f.code == "workflow-dispatch", f.message


def test_a_leg_dispatching_another_workflow_is_checked_against_that_file(tmp_path: Path) -> None:
    """The nightly dispatches its legs to omg-dispatch.yml: that file's inputs decide."""
    nightly = tmp_path / "omg-nightly.yml"
    nightly.write_text(workflow("", on="on:\n  schedule:\n    - cron: '17 3 * * *'", extra=SELF))
    (tmp_path / "omg-dispatch.yml").write_text(workflow(GRAPH_REQUIRED, extra=SELF))
    found = dict(lint_files([tmp_path]))
    [at_nightly] = found[str(nightly)]
    assert at_nightly.line == 13 and "dispatches omg-dispatch.yml with run-id alone" in (
        at_nightly.message
    )
    assert [f.line for f in found[str(tmp_path / "omg-dispatch.yml")]] == [5]


def test_the_shipped_workflows_lint_clean(omg) -> None:
    done = omg("lint", str(ROOT / ".github" / "workflows"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert ".github/workflows/omg-dispatch.yml: valid" in done.stdout


def test_lint_names_the_input_that_stops_a_dispatched_run(omg, tmp_path: Path) -> None:
    shipped = (ROOT / ".github" / "workflows" / "omg-dispatch.yml").read_text()
    path = tmp_path / "omg-dispatch.yml"
    path.write_text(shipped.replace("required: false", "required: true", 1))
    done = omg("lint", "--format", "github", str(path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith(f"::error file={path},line=")
    assert "Required input 'graph' not provided" in done.stdout
