"""Pure: the verdict tokens a prompt demands of the reply, as people write them — "Start your
reply with SHIP IT", "answer with `yes` or `no`", "Reply APPROVED only", "VERDICT: PASS"."""

from __future__ import annotations

import re

#: A sentence that asks something of the reply: quoted upper-case tokens in it are verdicts.
_ASKS = re.compile(
    r"\b(?:reply|respond|answer|end|finish|conclude|start|begin|output|print|say|write|return|"
    r"verdict|decision|state)\w*\b",
    re.IGNORECASE,
)
#: A demand the token follows at once. ``strong`` ones are about the reply itself, so a
#: lower-case quoted word after them (`yes`) is a verdict too; "Start with `pytest`" is not.
_DEMAND = re.compile(
    r"\b(?:"
    r"(?P<strong>(?:start|begin|end|finish|conclude|open|close)\s+(?:your|the)\s+"
    r"(?:reply|answer|response|review|message|output|verdict)\s+with"
    r"|(?:reply|respond|answer)(?:\s+only)?(?:\s+with)?|say|(?:the|your)\s+verdict"
    r"|(?:your|the)\s+(?:reply|answer|response)\s+(?:must|should|shall)\s+(?:be|start\s+with)"
    r"|(?:first|last|final)\s+line(?:\s+of\s+(?:your|the)\s+(?:reply|answer|response))?"
    r"\s+(?:is|reads|says|(?:must|should|shall)\s+(?:be|read|say)))"
    r"|(?:start|begin|end|finish|conclude)\s+with|output|print|write|return|state|verdict"
    r")\b\s*:?",
    re.IGNORECASE,
)
#: Words between a demand and its token: "reply with exactly the word DONE".
_FILLER = re.compile(
    r"(?:\s*(?:only|exactly|just|precisely|either|one\s+of|the\s+(?:single\s+)?"
    r"(?:word|words|line|phrase|token|verdict)|a\s+(?:single\s+)?(?:line|word)"
    r"(?:\s+(?:reading|saying))?)\b\s*:?)*\s*",
    re.IGNORECASE,
)
#: Between two tokens of a list: "APPROVED or CHANGES_REQUESTED", "PASS/FAIL".
_JOIN = re.compile(r"\s*(?:,\s*(?:or\s+|and\s+)?|/|\s(?:or|and)\s+(?:else\s+)?)\s*", re.I)
_WORD = r"[A-Z][A-Z0-9_-]*[A-Z0-9]"
#: An upper-case verdict: a word, up to three ("SHIP IT"), or a ``VERDICT: PASS`` pair.
_CAPS = re.compile(rf"{_WORD}(?::[ ]?{_WORD})?(?:[ ](?!(?:OR|AND)\b){_WORD}){{0,2}}(?![\w'’]|\.\w)")
_PAIR = re.compile(rf"\b{_WORD}:[ ]?{_WORD}\b")
_QUOTED = re.compile(r"(?:\*\*|[`\"'“‘*])([^`\"'“”‘’*\n]{1,40}?)(?:\*\*|[`\"'”’*])")
_LOWER = re.compile(r"[A-Za-z][a-z0-9_-]*")
#: Verdicts clear enough to count wherever a demanding sentence names them.
_PLAIN = re.compile(r"\b(?:SHIP IT|LGTM)\b")
#: Upper-case words that are formats, names or emphasis, never a verdict ("reply in JSON").
_NOT_VERDICTS = frozenset(
    {
        "JSON",
        "YAML",
        "YML",
        "CSV",
        "TSV",
        "HTML",
        "XML",
        "TOML",
        "SQL",
        "MD",
        "PDF",
        "API",
        "APIS",
        "URL",
        "URLS",
        "HTTP",
        "HTTPS",
        "README",
        "LICENSE",
        "CHANGELOG",
        "CLI",
        "PR",
        "PRS",
        "ID",
        "IDS",
        "UUID",
        "SHA",
        "EOF",
        "TODO",
        "FIXME",
        "NOTE",
        "UTF-8",
        "ASCII",
        "CI",
        "OS",
        "UI",
        "AI",
        "LLM",
        "IMPORTANT",
        "NOT",
        "NEVER",
        "ALWAYS",
        "MUST",
        "ONLY",
        "EXACTLY",
    }
)
#: Sentences end at a line break, or at . ! ? ; followed by a space (README.md stays whole).
_SENTENCES = re.compile(r"\n|[.!?;](?=\s|$)")


def verdict_tokens(prompt: str) -> list[str]:
    """The verdict tokens a prompt demands, in order, each once."""
    found: list[str] = []
    for sentence in _SENTENCES.split(prompt):
        if not _ASKS.search(sentence):
            continue
        for _, token in sorted(_demanded(sentence) | _anywhere(sentence)):
            if token not in found:
                found.append(token)
    return found


def _demanded(sentence: str) -> set[tuple[int, str]]:
    """The tokens that follow a demand at once, a list of them joined by "or", "," or "/"."""
    out: set[tuple[int, str]] = set()
    for demand in _DEMAND.finditer(sentence):
        if demand.group(0).strip(" :").isupper():  # VERDICT in "VERDICT: PASS" is the token's
            continue
        pos = _FILLER.match(sentence, demand.end())
        at = demand.end() if pos is None else pos.end()
        while (hit := _token_at(sentence, at, strong=bool(demand.group("strong")))) is not None:
            token, end = hit
            out.add((at, token))
            join = _JOIN.match(sentence, end)
            if join is None:
                break
            at = join.end()
    return out


def _token_at(sentence: str, at: int, *, strong: bool) -> tuple[str, int] | None:
    """The verdict token that starts at ``at`` and where it ends, or None."""
    quoted = _QUOTED.match(sentence, at)
    if quoted is not None:
        inner = quoted.group(1).strip()
        caps = _CAPS.fullmatch(inner)
        if caps is not None or (strong and _LOWER.fullmatch(inner)):
            return (inner, quoted.end()) if _verdict(inner) else None
        return None
    bare = _CAPS.match(sentence, at)
    if bare is None or not _verdict(bare.group(0)):
        return None
    return bare.group(0), bare.end()


def _anywhere(sentence: str) -> set[tuple[int, str]]:
    """Quoted upper-case tokens, ``VERDICT: PASS`` pairs and SHIP IT / LGTM anywhere in a
    sentence that asks something of the reply."""
    out: set[tuple[int, str]] = set()
    for m in _QUOTED.finditer(sentence):
        inner = m.group(1).strip()
        if _CAPS.fullmatch(inner) and _verdict(inner):
            out.add((m.start(), inner))
    for pattern in (_PAIR, _PLAIN):
        out |= {(m.start(), m.group(0)) for m in pattern.finditer(sentence) if _verdict(m[0])}
    return out


def _verdict(token: str) -> bool:
    first = re.split(r"[\s:]", token, maxsplit=1)[0]
    return first.upper() not in _NOT_VERDICTS
