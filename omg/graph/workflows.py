"""A GitHub workflow file given to `omg lint`: its `workflow_dispatch` inputs against GitHub's
limit, and the workflows its legs dispatch the next leg to against what that dispatch sends
(``run-id`` alone) — pure, on parsed YAML; `graph/lint` reads the files."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from omg.graph.findings import Finding
from omg.graph.positions import Path, json_path
from omg.graph.yamlpos import Parsed

#: The one input a leg's dispatch of the next leg sends (`ci/reporting.dispatch`).
DISPATCH_INPUT = "run-id"
#: The most inputs GitHub lets a `workflow_dispatch` trigger declare and a dispatch provide.
MAX_INPUTS = 25
#: The fan-out modes a step of omg's action runs in that dispatch: a leg, and a wave's fold.
_DISPATCHING = ("", "fold")
#: What makes a leg dispatch its next: a budget it may run out of, or a target named.
_BUDGETS = ("max-minutes", "max-nodes", "dispatch-workflow")
#: omg's action: this repository's own (``./``) or ``<owner>/omg[/path]@<ref>``.
_OMG_ACTION = re.compile(r"^(?:\./?|[\w.-]+/omg(?:/[\w./-]*)?@\S+)$")
_WORKFLOW = re.compile(r"^jobs\s*:", re.MULTILINE)
CODE = "workflow-dispatch"


def is_workflow(text: str) -> bool:
    """A GitHub workflow (top-level ``jobs:``), told from a graph without parsing it."""
    return _WORKFLOW.search(text) is not None


def check(
    parsed: Parsed, file: str, name: str, sibling: Callable[[str], Parsed | None]
) -> list[Finding]:
    """Every way the workflow ``name`` (parsed from ``file``) would have GitHub refuse a
    dispatch: more inputs than GitHub allows, and — for each step of omg's action that may
    dispatch the next leg — a target (``dispatch-workflow:``, else this workflow itself;
    ``sibling(name)`` parses one beside it, None when there is none) that has no
    ``workflow_dispatch``, takes no ``run-id``, or requires an input the dispatch lacks."""
    out = [
        Finding(file, p.line, "error", "yaml", f"{p.message}; fix the YAML")
        for p in parsed.problems
    ]
    data = parsed.data
    if out or not isinstance(data, dict):
        return out

    def at(path: Path, message: str, severity: Any = "error") -> Finding:
        line, column = parsed.positions.at(path)
        return Finding(file, line, severity, CODE, message, column=column, path=json_path(path))

    inputs = dispatch_inputs(data)
    if inputs is not None and len(inputs) > MAX_INPUTS:
        out.append(
            at(
                ("on", "workflow_dispatch", "inputs"),
                f"workflow_dispatch declares {len(inputs)} inputs; GitHub allows at most "
                f"{MAX_INPUTS}, and refuses to dispatch the workflow",
            )
        )
    for step_path, target in legs(data):
        if target == "" or target == name:
            problems = refusals(inputs, name)
            out.extend(at(_input_path(key), message) for key, message in problems)
            continue
        if "${{" in target:
            continue  # known when the job runs
        other = sibling(target)
        where = (*step_path, "with", "dispatch-workflow")
        if other is None or not isinstance(other.data, dict):
            out.append(
                at(where, f"dispatch-workflow names {target}, which is not beside this "
                   "workflow; legs of this workflow dispatch the next leg there", "warning")
            )  # fmt: skip
            continue
        for _, message in refusals(dispatch_inputs(other.data), target):
            out.append(at(where, message))
    return out


def legs(data: Mapping[str, Any]) -> list[tuple[Path, str]]:
    """Each step of omg's action that dispatches a next leg — a wave's fold, or a leg with a
    budget (``max-minutes``, ``max-nodes``) or a ``dispatch-workflow`` — with the workflow it
    dispatches to ('' for none named: its own)."""
    out: list[tuple[Path, str]] = []
    jobs = data.get("jobs")
    for job_name, job in (jobs.items() if isinstance(jobs, dict) else ()):
        steps = job.get("steps") if isinstance(job, dict) else None
        for i, step in enumerate(steps if isinstance(steps, list) else ()):
            if not isinstance(step, dict) or not _OMG_ACTION.match(str(step.get("uses", ""))):
                continue
            given = step.get("with")
            given = given if isinstance(given, dict) else {}
            mode = str(given.get("fanout") or "")
            budget = any(given.get(k) not in (None, "") for k in _BUDGETS)
            if mode not in _DISPATCHING or not (mode == "fold" or budget):
                continue
            out.append((("jobs", job_name, "steps", i), str(given.get("dispatch-workflow") or "")))
    return out


def dispatch_inputs(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The inputs the workflow's ``workflow_dispatch`` trigger declares (name → its mapping);
    None when it has no such trigger."""
    on = data.get("on")
    if on == "workflow_dispatch" or (isinstance(on, list) and "workflow_dispatch" in on):
        return {}
    if not isinstance(on, dict) or "workflow_dispatch" not in on:
        return None
    trigger = on["workflow_dispatch"]
    inputs = trigger.get("inputs") if isinstance(trigger, dict) else None
    return {str(k): v for k, v in inputs.items()} if isinstance(inputs, dict) else {}


def refusals(inputs: Mapping[str, Any] | None, target: str) -> list[tuple[str, str]]:
    """Why GitHub would refuse a leg's dispatch of ``target`` (``run-id`` alone), each with
    the input it is about ('' for the trigger): GitHub's own words, then the fix."""
    sent = f"a leg dispatches {target} with {DISPATCH_INPUT} alone"
    if inputs is None:
        return [
            ("", f"{sent}, but it has no workflow_dispatch trigger: GitHub answers 422 "
             "\"Workflow does not have 'workflow_dispatch' trigger\"; add one with a run-id "
             "input, or name another workflow in dispatch-workflow")
        ]  # fmt: skip
    out: list[tuple[str, str]] = []
    if DISPATCH_INPUT not in inputs:
        out.append(
            ("", f"{sent}, but it declares no {DISPATCH_INPUT} input: GitHub answers 422 "
             f"\"Unexpected inputs provided\"; declare {DISPATCH_INPUT} under "
             "workflow_dispatch.inputs")
        )  # fmt: skip
    for key, spec in inputs.items():
        spec = spec if isinstance(spec, dict) else {}
        kind = str(spec.get("type") or "string")
        if key == DISPATCH_INPUT and kind != "string":
            out.append(
                (key, f"{sent}, a run id, but its {key} input is of type {kind}: GitHub "
                 f"refuses a run id there; make it `type: string`")
            )  # fmt: skip
        elif key != DISPATCH_INPUT and spec.get("required") is True and _no_default(spec):
            out.append(
                (key, f"{sent}, but it requires input {key!r}: GitHub answers 422 \"Required "
                 f"input '{key}' not provided\" and the run stops at its first leg; make it "
                 "`required: false` (an input not given is empty)")
            )  # fmt: skip
    return out


def _no_default(spec: Mapping[str, Any]) -> bool:
    default = spec.get("default")
    return default is None or default == ""


def _input_path(key: str) -> Path:
    trigger: Path = ("on", "workflow_dispatch")
    return (*trigger, "inputs", key) if key else trigger
