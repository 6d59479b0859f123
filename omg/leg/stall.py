"""A stalled loop: whether a feedback round changed nothing (findings or lanes), and what it
does instead of another round — pure."""

from __future__ import annotations

import re
from collections.abc import Mapping

from omg.graph.model import Node
from omg.kinds import EXHAUSTED_GATE_SUFFIX
from omg.replytext import finding_set
from omg.schedule import FeedbackDecision

#: Markdown decoration dropped before findings are compared: a line's heading, quote and list
#: marks, then every emphasis, code, strike and table character anywhere.
_LINE_MARKS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]*|[-*+][ \t]+|\d{1,9}[.)][ \t]+)+", re.M)
_INLINE_MARKS = re.compile(r"[*_`~|]")
_SPACE = re.compile(r"\s+")
#: The reason given when the findings repeat (the detail then quotes them as what repeated).
FINDINGS_REPEAT = (
    "the findings repeat the previous round's (the same set of findings, or the same text after "
    "normalising)"
)
REPEATED_LIMIT = 300  # characters of a stalled loop's findings quoted in its detail


def normalized(findings: str) -> str:
    """``findings`` as the no-progress rule compares them: Markdown decoration dropped (line
    marks ``#`` ``>`` ``-`` ``*`` ``+`` ``1.`` ``1)``, then ``*`` ``_`` `````` ``~`` ``|``),
    case folded, every run of whitespace one space, the ends trimmed."""
    text = _LINE_MARKS.sub("", findings)
    text = _INLINE_MARKS.sub("", text)
    return _SPACE.sub(" ", text.casefold()).strip()


def stalled(
    previous: str | None,
    findings: str,
    trees_then: Mapping[str, str] | None,
    trees_now: Mapping[str, str],
) -> str:
    """Why the round that just failed made no progress ("" when it did).

    ``previous`` is the declarer's findings of the round before (None: there was none);
    ``trees_then`` the trees of the re-run path's lanes when that round began (None: not
    recorded), ``trees_now`` the same lanes' trees now.
    """
    why = []
    if trees_then and trees_now and dict(trees_then) == dict(trees_now):
        lanes = ", ".join(sorted(trees_now))
        why.append(
            f"the re-run path left its lane{'s' if len(trees_now) > 1 else ''} ({lanes}) "
            "exactly as the previous round did (the same tree)"
        )
    if _repeated(previous, findings):
        why.append(FINDINGS_REPEAT)
    return ", and ".join(why)


def _repeated(previous: str | None, findings: str) -> bool:
    """Whether the findings repeat: as data when both rounds' are JSON (a structured reply's
    findings — the same set, whatever their order or the surrounding text), else as text."""
    if previous is None:
        return False
    then, now = finding_set(previous), finding_set(findings)
    if then is not None and now is not None:
        return bool(then) and then == now
    before = normalized(previous)
    return bool(before) and before == normalized(findings)


def escalation(node: Node, fired: FeedbackDecision, why: str, findings: str) -> FeedbackDecision:
    """What a stalled loop does instead of the round ``fired`` would begin: escalate as an
    exhausted loop does (its gate, or the declarer fails), saying why and what repeated."""
    fb = node.feedback
    assert fb is not None
    spent = fired.round - 1
    quoted = " ".join(findings.split())
    if len(quoted) > REPEATED_LIMIT:
        quoted = quoted[:REPEATED_LIMIT] + " …"
    label = "repeated" if FINDINGS_REPEAT in why else "its findings"
    detail = (
        f"no_progress: round {spent} of {fb.rerun} → {node.id} changed nothing — {why}; "
        f"the loop stops with {fb.max - spent} of {fb.max} round(s) unspent "
        f"(feedback.stop_on_no_progress: false spends them); {label}: {quoted or '(empty)'}"
    )
    gate = node.id + EXHAUSTED_GATE_SUFFIX if fb.on_exhausted == "gate" else None
    return FeedbackDecision("exhausted", spent, detail, gate)
