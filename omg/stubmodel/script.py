"""The stub-model script: YAML rules saying what the stand-in model answers, and the matcher."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from omg.errors import GraphError

Condition = Literal["node", "round", "attempt", "prompt", "call", "runtime", "correction"]


@dataclass(frozen=True)
class Turn:
    """One assistant message: text, or a tool call (the CLI runs the tool and asks again)."""

    text: str = ""
    tool: str = ""
    input: Mapping[str, object] = field(default_factory=dict)  # the tool input, as written
    usage: Mapping[str, int | str] = field(default_factory=dict)  # counts; speed, region
    structured: str | None = None  # a structured reply, as JSON text


@dataclass(frozen=True)
class Failure:
    """An API error answer: HTTP status, Anthropic error type and message, Retry-After."""

    status: int
    message: str = ""
    retry_after: float | None = None
    #: A subscription's usage limit (``session``: the five-hour window the CLI calls the
    #: session limit; ``weekly``): sent as the ``anthropic-ratelimit-unified-*`` headers.
    limit: str | None = None
    resets_in: float | None = None  # seconds from the answer to the limit's reset


@dataclass(frozen=True)
class Rule:
    name: str
    node: str | None = None
    round: int | None = None
    attempt: int | None = None
    prompt: re.Pattern[str] | None = None
    call: tuple[int, ...] = ()
    turns: tuple[Turn, ...] = ()
    error: Failure | None = None
    hang_s: float = 0.0  # wait this long before answering (a stuck API, for watchdogs)
    empty: bool = False  # answer with no content at all
    runtime: str | None = None  # only requests of this runtime's API (claude, codex)
    correction: bool | None = None  # only (True) or never (False) a correction turn's session


@dataclass(frozen=True)
class Request:
    """What the stand-in knows of one request: the node facts omg sent as headers, the prompt,
    how many assistant turns the conversation already holds, and the node's call count."""

    node: str
    round: int | None
    attempt: int | None
    prompt: str
    turn: int
    call: int
    runtime: str = ""  # the runtime whose API asked (the Messages or the Responses API)
    correction: bool = False  # the session omg asked to correct a reply (output_schema)


@dataclass(frozen=True)
class Script:
    rules: tuple[Rule, ...]
    source: str = ""

    def match(self, req: Request) -> Rule | None:
        return next((r for r in self.rules if not misses(r, req)), None)

    def closest(self, req: Request) -> tuple[Rule, list[str]] | None:
        """The rule that fails on the fewest conditions, and what it wanted."""
        if not self.rules:
            return None
        best = min(self.rules, key=lambda r: len(misses(r, req)))
        return best, misses(best, req)


def misses(rule: Rule, req: Request) -> list[str]:
    """The conditions of ``rule`` that ``req`` does not meet, worded for a person."""
    out = []
    if rule.node is not None and rule.node != req.node:
        out.append(f"node {rule.node!r} (this is {req.node or 'no node'!r})")
    if rule.round is not None and rule.round != req.round:
        out.append(f"round {rule.round} (this is round {req.round})")
    if rule.attempt is not None and rule.attempt != req.attempt:
        out.append(f"attempt {rule.attempt} (this is attempt {req.attempt})")
    if rule.prompt is not None and not rule.prompt.search(req.prompt):
        out.append(f"a prompt matching /{rule.prompt.pattern}/")
    if rule.call and req.call not in rule.call:
        out.append(f"call {', '.join(map(str, rule.call))} (this is call {req.call})")
    if rule.runtime is not None and rule.runtime != req.runtime:
        out.append(f"runtime {rule.runtime} (this is {req.runtime})")
    if rule.correction is not None and rule.correction != req.correction:
        said = "a correction turn" if rule.correction else "no correction turn"
        out.append(f"{said} (this is {'one' if req.correction else 'none'})")
    return out


def describe(req: Request) -> str:
    facts = [f"node {req.node!r}" if req.node else "no node header"]
    if req.round is not None:
        facts.append(f"round {req.round}")
    if req.attempt is not None:
        facts.append(f"attempt {req.attempt}")
    facts.append(f"call {req.call}, turn {req.turn}")
    return ", ".join(facts)


def unmatched_text(script: Script, req: Request) -> str:
    """The default answer: says that no rule matched, and which one came closest."""
    text = f"omg stub-model: no rule of {script.source or 'the script'} matched ({describe(req)})"
    near = script.closest(req)
    if near is not None:
        rule, wanted = near
        text += f"; the closest is rule {rule.name!r}, which wants " + " and ".join(wanted)
    return text + "."


def build(data: Any, source: str) -> Script:
    """A Script from data that passed the schema (``load`` checks it first)."""
    rules = []
    for i, raw in enumerate(data.get("rules") or []):
        when = raw.get("when") or {}
        call = when.get("call")
        calls = tuple(call) if isinstance(call, list) else ((call,) if call is not None else ())
        err = raw.get("error")
        turns = tuple(
            Turn(
                text=str(t.get("text", "")),
                tool=str(t.get("tool", "")),
                input=dict(t.get("input") or {}),
                usage=dict(t.get("usage") or {}),
                structured=json.dumps(t["structured"]) if "structured" in t else None,
            )
            for t in raw.get("turns") or []
        )
        if "reply" in raw:
            turns += (Turn(text=str(raw["reply"])),)
        if "structured" in raw:
            turns += (Turn(structured=json.dumps(raw["structured"])),)
        prompt = when.get("prompt")
        try:
            pattern = re.compile(prompt) if prompt is not None else None
        except re.error as exc:
            raise GraphError(
                f"{source}: rule {i + 1} ({raw.get('name', '')}): when.prompt {prompt!r} is not "
                f"a regular expression ({exc}); fix the pattern"
            ) from None
        rules.append(
            Rule(
                name=str(raw.get("name") or f"rule {i + 1}"),
                node=when.get("node"),
                round=when.get("round"),
                attempt=when.get("attempt"),
                prompt=pattern,
                call=calls,
                turns=turns,
                error=None
                if err is None
                else Failure(
                    int(err["status"]),
                    str(err.get("message", "")),
                    err.get("retry_after"),
                    err.get("limit"),
                    err.get("resets_in"),
                ),
                hang_s=float(raw.get("hang", 0)),
                empty=bool(raw.get("empty", False)),
                runtime=when.get("runtime"),
                correction=when.get("correction"),
            )
        )
    return Script(tuple(rules), source)


def load(path: Path) -> Script:
    """Read and check a script file; a GraphError names the file, the line and the fix (the
    same findings `omg lint` reports for it)."""
    from omg.graph.scriptcheck import script_findings
    from omg.graph.yamlpos import parse

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise GraphError(f"cannot read the stub-model script {path}: {exc.strerror}") from None
    parsed = parse(text)
    errors = script_findings(parsed, str(path))
    if errors:
        first = errors[0]
        at = f"{path}:{first.line}" if first.line else str(path)
        fix = "" if first.code == "yaml" else "; see schemas/stub-model.schema.json"
        raise GraphError(f"{at}: {first.message}{fix}")
    return build(parsed.data, str(path))


__all__: Sequence[str] = ("Failure", "Request", "Rule", "Script", "Turn", "load", "unmatched_text")
