"""Feedback arcs: the load rules for a `feedback: {rerun, max}` declaration."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omg.graph.model import Graph


@dataclass(frozen=True)
class ArcProblem:
    """One broken rule: which node and field it is reported on, a stable code, the message."""

    node: str
    field: str
    code: str
    message: str


def loop_text(body: Iterable[str]) -> str:
    return " → ".join(body)


def listing(ids: Iterable[str], limit: int = 6) -> str:
    names = [f'"{i}"' for i in ids]
    more = f", … ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def closest(word: str, choices: Iterable[str]) -> str:
    """`` — did you mean "x"?`` for the closest choice, or nothing."""
    import difflib

    hit = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f' — did you mean "{hit[0]}"?' if hit else ""


def check_arcs(graph: Graph) -> Iterator[ArcProblem]:
    """Rules 1–4, 6 and 7 for every arc of the graph, in declaration order."""
    claimed: dict[str, str] = {}  # body node → the earlier declarer whose loop holds it
    for n in graph.nodes:
        fb = n.feedback
        if fb is None:
            continue
        if fb.max < 1:  # rule 2 (the schema refuses it first in files; snapshots come here)
            yield ArcProblem(
                n.id,
                "feedback.max",
                "feedback-max",
                f"feedback.max must be at least 1 (got {fb.max}) — a bounded loop "
                "is the whole contract, so there is no default",
            )
        if f"{n.id}.exhausted" in graph.by_id and fb.on_exhausted == "gate":
            yield ArcProblem(
                n.id,
                "feedback.on_exhausted",
                "exhausted-gate-name",
                f'on_exhausted: gate pauses at a gate named "{n.id}.exhausted", '
                "but a node already has that id; rename that node",
            )
        problems = list(check_arc(graph, n.id, fb.rerun, claimed))
        yield from problems
        body = graph.arcs[n.id]
        for nid in body:
            claimed.setdefault(nid, n.id)


def check_arc(
    graph: Graph, declarer: str, target: str, claimed: Mapping[str, str]
) -> Iterator[ArcProblem]:
    """Rules 1, 3, 4, 6 and 7 for one arc ``target → … → declarer``.

    ``claimed`` maps nodes already in another arc's body to that arc's declarer. The advisory
    that suggests a covering target runs this same check, so it never suggests a refused arc.
    """
    if target not in graph.by_id:
        yield ArcProblem(
            declarer,
            "feedback.rerun",
            "feedback-target",
            f'feedback.rerun names unknown node "{target}"{closest(target, graph.ids)}',
        )
        return
    if target == declarer:
        yield ArcProblem(
            declarer,
            "feedback.rerun",
            "feedback-target",
            "feedback.rerun names this node itself — a feedback arc re-runs an "
            "earlier node; to repeat this node alone, use retry: {max, on}",
        )
        return
    fb = graph.by_id[declarer].feedback
    body = graph.arcs[declarer] if fb and fb.rerun == target else graph.between(target, declarer)
    if not body:  # between() is empty exactly when target is not a proper ancestor
        ancestors = graph.ancestors(declarer)
        order = [i for i in graph.ids if i in ancestors]
        aim = (
            f"aim it at one of {listing(order)}"
            if order
            else f'"{declarer}" has no depends_on, so it cannot declare an arc'
        )
        yield ArcProblem(
            declarer,
            "feedback.rerun",
            "feedback-target",
            f'feedback.rerun "{target}" is not a proper depends_on-ancestor of '
            f'"{declarer}" — a feedback arc points strictly backward along an '
            f"existing depends_on path; {aim}",
        )
        return
    inside = set(body)
    loop = loop_text(body)
    for nid in body:  # rule 3: side-exit free
        if nid == declarer:
            continue
        for child in graph.children[nid]:
            if child not in inside:
                yield ArcProblem(
                    declarer,
                    "feedback",
                    "feedback-side-exit",
                    f'feedback body has a side exit: "{child}" depends on body node '
                    f'"{nid}" but is outside the loop {loop} — every round rewrites '
                    f'"{nid}", so "{child}" would read whichever round wrote last; '
                    f'make "{child}" depend on "{declarer}" instead, or bring it '
                    "into the loop",
                )
    for nid in body:  # rule 4: no gate
        if graph.by_id[nid].kind == "gate":
            yield ArcProblem(
                declarer,
                "feedback",
                "feedback-gate",
                f'feedback body {loop} contains gate "{nid}" — a later round would '
                "replay its recorded decision and approve work nobody saw; move "
                f'the gate after "{declarer}", or aim rerun: past it',
            )
    for nid in body:  # rule 6: an in-body session resumes an in-body parent
        node = graph.by_id[nid]
        parent = node.depends_on[0] if len(node.depends_on) == 1 else None
        if node.handoff == "session" and parent is not None and parent not in inside:
            yield ArcProblem(
                nid,
                "handoff",
                "feedback-session",
                f'handoff: session resumes parent "{parent}", which is outside the '
                f'loop of "{declarer}" ({loop}) — a later round would --resume a '
                "session an earlier round already continued; bring "
                f'"{parent}" into the loop (aim rerun at it) or use handoff: artifact',
            )
    shared = [nid for nid in body if nid in claimed]  # rule 7: disjoint bodies
    if shared:
        other = claimed[shared[0]]
        fb, ofb = graph.by_id[declarer].feedback, graph.by_id[other].feedback
        mine, theirs = (fb.max if fb else 1), (ofb.max if ofb else 1)
        yield ArcProblem(
            declarer,
            "feedback",
            "feedback-overlap",
            f"feedback bodies must be disjoint: this loop {loop} shares {listing(shared)} with "
            f'the loop of "{other}" ({loop_text(graph.arcs[other])})'
            " — "
            f"overlapping loops multiply spend as (1 + {theirs}) × (1 + {mine}) and "
            "give one node two owners; aim the arcs so their loops do not share "
            "nodes",
        )
