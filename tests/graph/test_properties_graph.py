"""Properties of the loader: DAGs are accepted, back edges refused, no input makes it raise."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omg.graph.findings import Finding
from omg.graph.load import check_data, check_file

IDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,6}", fullmatch=True)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def dags(draw: st.DrawFn) -> dict[str, Any]:
    """A graph whose depends_on only points to earlier-generated nodes, declared in any order."""
    ids = draw(st.lists(IDS, min_size=1, max_size=12, unique=True))
    nodes = []
    for i, nid in enumerate(ids):
        parents = draw(st.lists(st.sampled_from(ids[:i]), unique=True)) if i else []
        kind = draw(st.sampled_from(["agent", "shell", "gate"]))
        node: dict[str, Any] = {"id": nid}
        if parents:
            node["depends_on"] = parents
        if kind == "gate":
            node["type"] = "gate"
        else:
            quoted = " ".join(f"{{{{ artifacts.{p} }}}}" for p in parents[:2])
            node["prompt" if kind == "agent" else "run"] = f"work on {quoted}"
            if kind == "agent":
                node["allowed_tools"] = []
        nodes.append(node)
    order = draw(st.permutations(nodes))
    return {"name": "prop", "nodes": list(order)}


def errors(found: list[Finding]) -> list[Finding]:
    return [f for f in found if f.severity == "error"]


def ancestry(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(ancestor, descendant) pairs along depends_on."""
    parents = {n["id"]: n.get("depends_on", []) for n in data["nodes"]}
    pairs = []
    for nid in parents:
        stack, seen = list(parents[nid]), set()
        while stack:
            p = stack.pop()
            if p not in seen:
                seen.add(p)
                stack.extend(parents[p])
        pairs += [(a, nid) for a in sorted(seen)]
    return pairs


@FAST
@given(dags())
def test_property_every_random_dag_validates_without_errors(data: dict[str, Any]) -> None:
    graph, found = check_data(data, "prop.yaml")
    assert not errors(found), [f.message for f in errors(found)]
    assert graph is not None and len(graph.topo_order) == len(data["nodes"])


@FAST
@given(dags(), st.data())
def test_property_a_back_edge_is_always_refused_as_a_cycle(
    data: dict[str, Any], pick: st.DataObject
) -> None:
    pairs = ancestry(data)
    if not pairs:
        return
    up, down = pick.draw(st.sampled_from(pairs))
    node = next(n for n in data["nodes"] if n["id"] == up)
    node["depends_on"] = [*node.get("depends_on", []), down]
    graph, found = check_data(data, "prop.yaml")
    cycles = [f for f in found if f.code == "cycle"]
    assert graph is None and cycles
    assert all("→" in f.message for f in cycles)
    assert any(up in f.message and down in f.message for f in cycles)


SCHEMA_WORDS = [
    "name",
    "version",
    "inputs",
    "concurrency",
    "on_fail",
    "budget_usd",
    "max_hops",
    "nodes",
    "id",
    "depends_on",
    "type",
    "prompt",
    "run",
    "runtime",
    "handoff",
    "worktree",
    "env",
    "cwd",
    "success_check",
    "verify",
    "command",
    "timeout",
    "retry",
    "max",
    "on",
    "backoff",
    "feedback",
    "rerun",
    "on_exhausted",
    "allowed_tools",
    "gate",
    "{{ feedback.a }}",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.sampled_from(SCHEMA_WORDS),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(SCHEMA_WORDS), inner, max_size=5)
    ),
    max_leaves=25,
)


@FAST
@given(st.dictionaries(st.sampled_from(SCHEMA_WORDS), VALUES, max_size=8))
def test_property_graph_shaped_garbage_gets_findings_never_a_traceback(
    data: dict[str, Any],
) -> None:
    graph, found = check_data(data, "prop.yaml")
    assert graph is not None or errors(found)
    assert all(isinstance(f, Finding) and f.message for f in found)


def _check_bytes(raw: bytes) -> tuple[Any, list[Finding]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.yaml"
        path.write_bytes(raw)
        return check_file(path)


@FAST
@given(st.binary(max_size=300))
def test_property_arbitrary_bytes_get_findings_never_a_traceback(raw: bytes) -> None:
    graph, found = _check_bytes(raw)
    assert graph is None and errors(found)


@FAST
@given(st.text(max_size=300))
def test_property_arbitrary_text_gets_findings_never_a_traceback(text: str) -> None:
    graph, found = _check_bytes(text.encode("utf-8", "surrogatepass"))
    assert graph is None and errors(found)


@FAST
@given(VALUES)
def test_property_any_yaml_document_gets_findings_never_a_traceback(value: Any) -> None:
    raw = yaml.safe_dump({"name": "x", "nodes": [value]}, allow_unicode=True).encode()
    graph, found = _check_bytes(raw)
    assert all(isinstance(f, Finding) for f in found)
    assert graph is not None or errors(found)
