"""PR comment commands: `/omg approve|reject|retry|status|approve-spend|review`, parsed from a
comment's first line."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from omg.github.markdown import code
from omg.words import excerpt, visible

Verb = Literal["approve", "reject", "retry", "status", "approve-spend", "review"]
VERBS: tuple[Verb, ...] = ("approve", "reject", "retry", "status", "approve-spend", "review")
#: The most one `/omg approve-spend` approves, in US dollars (a typo of zeros is refused).
MAX_APPROVE_USD = 10_000.0

USAGE = (
    "`/omg approve <gate> [@state] [reason]`, `/omg reject <gate> [@state] <reason>`, "
    "`/omg retry [guidance]`, `/omg status`, `/omg approve-spend <amount>` or "
    "`/omg review [@head]`"
)
_AMOUNT = re.compile(r"^\$?([0-9]+(?:\.[0-9]{1,2})?)$")  # ASCII digits: no lookalikes
_REF = re.compile(r"^@([0-9a-fA-F]{4,40})$")
#: How many characters of one word of the comment a reply quotes.
_QUOTED = 60


@dataclass(frozen=True)
class Command:
    """One command: the verb, the gate it names, the state ref it is bound to, and why."""

    verb: Verb
    gate: str = ""
    #: the short state commit shown in the sticky comment (review: the head it was written
    #: for); '' when not named
    ref: str = ""
    reason: str = ""
    text: str = ""  # the line as written (an excerpt past ``words.EXCERPT``), for the record
    amount: float = 0.0  # approve-spend: the dollars approved beyond the spend caps
    #: ``/omg retry <guidance>``: the words after ``retry`` (that line and the lines below it),
    #: given to the re-armed nodes as ``{{ guidance }}``
    guidance: str = ""


@dataclass(frozen=True)
class Malformed:
    """A line addressed to omg that says nothing omg can do; the reply explains (``problem``
    is Markdown whose words from the comment are code spans)."""

    text: str
    problem: str


def parse(body: str) -> Command | Malformed | None:
    """The command of a comment; None when its first non-blank line is not addressed to omg.

    The line is kept (and its words quoted) as an excerpt: a comment of any length is answered
    and recorded in a few hundred characters. A reason must show something: one of spaces,
    zero-width or bidi controls, fillers or bare combining marks is no reason."""
    lines = body.splitlines()
    first = next((i for i, ln in enumerate(lines) if ln.strip()), 0)
    whole = lines[first].strip() if lines else ""
    line = excerpt(whole)
    words = whole.split()
    if not words or words[0].lower() != "/omg":
        return None
    if len(words) == 1 or words[1].lower() not in VERBS:
        said = excerpt(words[1], _QUOTED) if len(words) > 1 else ""
        what = f"{code(said)} is not a command" if said else "no command given"
        return Malformed(line, f"{what}; omg understands {USAGE}")
    verb: Verb = words[1].lower()  # type: ignore[assignment]
    rest = words[2:]
    if verb == "status":
        return Command(verb, text=line)
    if verb == "review":  # ``@<head sha>`` binds it to the head its author looked at
        m = _REF.match(rest[0]) if rest else None
        return Command(verb, ref=m.group(1).lower() if m else "", text=line)
    if verb == "approve-spend":
        return _approve_spend(line, rest)
    if verb == "retry":
        said = whole.split(None, 2)[2] if len(words) > 2 else ""
        guidance = "\n".join([said, *lines[first + 1 :]]).strip()
        return Command(verb, text=line, guidance=guidance)
    if not rest:
        return Malformed(line, f"{code('/omg ' + verb)} needs the gate to decide: {USAGE}")
    gate, rest = rest[0], rest[1:]
    ref = ""
    if rest and (m := _REF.match(rest[0])):
        ref, rest = m.group(1).lower(), rest[1:]
    reason = " ".join(rest) if visible(" ".join(rest)) else ""
    if verb == "reject" and not reason:
        invisible = ", in words that show (what follows it is invisible)" if rest else ""
        return Malformed(
            line,
            f"{code('/omg reject ' + excerpt(gate, _QUOTED))} needs a reason after the gate"
            f"{invisible}: {USAGE}",
        )
    return Command(verb, gate=gate, ref=ref, reason=reason, text=line)


def _approve_spend(line: str, rest: list[str]) -> Command | Malformed:
    """``/omg approve-spend 5`` (or ``$5``, ``2.50``): dollars beyond the spend caps."""
    m = _AMOUNT.match(rest[0]) if len(rest) == 1 else None
    amount = float(m.group(1)) if m else 0.0
    if not (m and math.isfinite(amount) and 0 < amount <= MAX_APPROVE_USD):
        said = f"{code(excerpt(' '.join(rest), _QUOTED))} is not" if rest else "no amount is"
        return Malformed(
            line,
            f"{said} an amount of dollars: {code('/omg approve-spend <amount>')} approves up to "
            f"${MAX_APPROVE_USD:,.0f} more for this run, e.g. {code('/omg approve-spend 5')}",
        )
    return Command("approve-spend", text=line, amount=amount)
