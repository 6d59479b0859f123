"""Model construction: schema-valid graph data (YAML or a snapshot) → the frozen Graph."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, cast

from omg.graph.model import (
    DEFAULT_CONCURRENCY,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_HOPS,
    DEFAULT_TIMEOUT,
    DEFAULT_VERIFY_TIMEOUT,
    Backoff,
    Feedback,
    Graph,
    Handoff,
    Input,
    Kind,
    Node,
    PermissionMode,
    Retry,
    SuccessCheck,
    Verify,
    Worktree,
)
from omg.graphdata import GraphData, InputSpecData, NodeData, RetryData, VerifyData
from omg.kinds import Cause
from omg.runtimes import DEFAULT_RUNTIME, Runtime


def _str_or_none(v: Any) -> str | None:
    return None if v is None else str(v)


def _duration_text(v: Any, default: str) -> str:
    if v is None:
        return default
    if isinstance(v, int | float) and not isinstance(v, bool):
        return f"{v}s"
    return str(v)


def _inputs(raw: list[str] | dict[str, InputSpecData | None] | None) -> tuple[Input, ...]:
    if raw is None:
        return ()
    if isinstance(raw, list):
        return tuple(Input(name=str(x)) for x in raw)
    out = []
    for name, given in raw.items():
        spec: InputSpecData = given or {}
        default = spec.get("default")
        out.append(
            Input(
                name=str(name),
                default=None if default is None else str(default),
                description=str(spec.get("description", "")),
                required=bool(spec.get("required", False)),
                secret=bool(spec.get("secret", False)),
            )
        )
    return tuple(out)


def _verify(raw: VerifyData | None) -> Verify | None:
    if raw is None:
        return None
    return Verify(
        command=str(raw.get("command", "")),
        cwd=_str_or_none(raw.get("cwd")),
        timeout=_duration_text(raw.get("timeout"), DEFAULT_VERIFY_TIMEOUT),
        expect_exit=int(raw.get("expect_exit", 0)),
        output_matches=_str_or_none(raw.get("output_matches")),
    )


def _retry(raw: RetryData | None) -> Retry:
    if not raw:
        return Retry()
    bo = raw.get("backoff")
    backoff = None
    if bo is not None:
        if isinstance(bo, Mapping):
            backoff = Backoff(
                initial=_duration_text(bo.get("initial"), "1s"),
                factor=_float(bo.get("factor", 2.0)),
                max=_duration_text(bo.get("max"), "1m"),
            )
        else:
            backoff = Backoff(initial=_duration_text(bo, "1s"), factor=1.0, max="24h")
    return Retry(
        max=int(raw.get("max", 0)),
        on=tuple(cast(Cause, c) for c in raw.get("on", ())),
        backoff=backoff,
    )


def _worktree(raw: Any) -> Worktree | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        return Worktree(name=raw)
    return Worktree(
        name=str(raw.get("name", "")),
        branch=_str_or_none(raw.get("branch")),
        push=bool(raw.get("push", False)),
    )


def _env(raw: Any) -> tuple[tuple[str, str | None], ...]:
    if raw is None:
        return ()
    if isinstance(raw, list):
        return tuple((str(k), None) for k in raw)
    return tuple((str(k), None if v is None else str(v)) for k, v in raw.items())


def node_kind(raw: NodeData) -> Kind:
    """The kind a node's keys declare; ``type: gate`` wins, then ``run:``, else agent."""
    if raw.get("type") == "gate":
        return "gate"
    if "run" in raw:
        return "shell"
    return "agent"


def node_from_data(raw: NodeData) -> Node:
    sc = raw.get("success_check") or {}
    fb = raw.get("feedback")
    tools = raw.get("allowed_tools")
    budget = raw.get("budget_usd")
    return Node(
        id=str(raw.get("id", "")),
        kind=node_kind(raw),
        depends_on=tuple(str(p) for p in raw.get("depends_on") or ()),
        prompt=_str_or_none(raw.get("prompt")),
        run=_str_or_none(raw.get("run")),
        description=str(raw.get("description", "")),
        runtime=cast(Runtime, raw.get("runtime", DEFAULT_RUNTIME)),
        agent=_str_or_none(raw.get("agent")),
        model=_str_or_none(raw.get("model")),
        allowed_tools=None if tools is None else tuple(str(t) for t in tools),
        permission_mode=cast("PermissionMode | None", raw.get("permission_mode")),
        handoff=cast(Handoff, raw.get("handoff", "artifact")),
        cwd=_str_or_none(raw.get("cwd")),
        worktree=_worktree(raw.get("worktree")),
        env=_env(raw.get("env")),
        project_settings=bool(raw.get("project_settings", False)),
        success_check=SuccessCheck(
            exit_zero=bool(sc.get("exit_zero", False)),
            result_matches=_str_or_none(sc.get("result_matches")),
            verify=_verify(sc.get("verify")),
            output_equals=tuple(
                (str(k), json.dumps(v, sort_keys=True))
                for k, v in (sc.get("output_equals") or {}).items()
            ),
        ),
        retry=_retry(raw.get("retry")),
        feedback=None
        if fb is None
        else Feedback(
            rerun=str(fb.get("rerun", "")),
            max=int(fb.get("max", 0)),
            on_exhausted=fb.get("on_exhausted", "fail"),
            stop_on_no_progress=bool(fb.get("stop_on_no_progress", True)),
            findings=_str_or_none(fb.get("findings")),
        ),
        timeout=_duration_text(raw.get("timeout"), DEFAULT_TIMEOUT),
        budget_usd=None if budget is None else _float(budget),
        idle_timeout=_duration_text(raw.get("idle_timeout"), DEFAULT_IDLE_TIMEOUT),
        max_turns=_int_or_none(raw.get("max_turns")),
        budget_tokens=_int_or_none(raw.get("budget_tokens")),
        output_schema=_schema_text(raw.get("output_schema")),
        output_schema_path=_str_or_none(
            raw.get("output_schema") if isinstance(raw.get("output_schema"), str) else None
        ),
    )


def _schema_text(value: object) -> str | None:
    """An inline output_schema as JSON text, keys sorted (a file's path stays unread here)."""
    return json.dumps(value, sort_keys=True) if isinstance(value, dict) else None


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def graph_from_data(data: GraphData) -> Graph:
    """Build the model from data that already passed the JSON Schema."""
    budget = data.get("budget_usd")
    nodes: Iterable[NodeData] = data.get("nodes") or ()
    return Graph(
        name=str(data.get("name", "")),
        inputs=_inputs(data.get("inputs")),
        concurrency=int(data.get("concurrency", DEFAULT_CONCURRENCY)),
        on_fail=data.get("on_fail", "halt"),
        budget_usd=None if budget is None else _float(budget),
        pr_budget_usd=_usd(data.get("pr_budget_usd")),
        day_budget_usd=_usd(data.get("day_budget_usd")),
        max_hops=int(data.get("max_hops", DEFAULT_MAX_HOPS)),
        approvers=tuple(str(a) for a in data.get("approvers") or ()),
        secrets=tuple(str(s) for s in data.get("secrets") or ()),
        prices={
            str(m): {str(k): float(v) for k, v in (r or {}).items()}
            for m, r in (data.get("prices") or {}).items()
        },
        nodes=tuple(node_from_data(n) for n in nodes),
        data=data,
    )


def _usd(value: object) -> float | None:
    return None if value is None else _float(value)


def _float(value: object) -> float:
    """A schema-checked number as a float; an integer past a float's range is infinite (the
    validator refuses it as not finite)."""
    try:
        return float(value)  # type: ignore[arg-type]
    except OverflowError:
        return float("inf") if int(value) > 0 else float("-inf")  # type: ignore[call-overload]
