"""The executions the proxy serves: each one's placeholder key, ceiling, running totals and
refusals, from its registration until it finishes (and its record after)."""

from __future__ import annotations

import hashlib
import math
import secrets
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from omg.modelproxy.usage import Usage

#: Why the proxy refused a request. Of an execution: it finished, it reached its dollar or
#: token ceiling, its ceiling could not be read, its key was sent to the other API, a path the
#: proxy does not forward, a request it will not forward (too large, a background response).
#: Of no execution (a stray): a key omg gave no running execution, no key, a foreign Host.
Why = Literal[
    "finished", "budget", "tokens", "ceiling", "upstream", "path", "request", "unknown", "host"
]
#: The refusals that mean an execution reached its budget (the leg's ``budget_exceeded``).
OVER_BUDGET: frozenset[Why] = frozenset({"budget", "tokens"})
#: What an answer's usage costs in dollars, None when it cannot be priced.
Pricer = Callable[[Usage], "float | None"]
#: The most an execution may spend, in dollars: a figure, or asked before each request (its
#: own budget, what is left of the run's, a spend cap's room — the least of them); None: none.
Ceiling = float | Callable[[], "float | None"] | None
#: Seconds ``finish`` waits for the answers still passing to settle.
SETTLE_WAIT_S = 5.0
#: How many refusals a record keeps word for word (they are all counted).
KEPT = 20
#: Requests one execution may have in flight at once; more wait for a slot, so a burst of
#: parallel requests overshoots a ceiling by at most this many answers.
IN_FLIGHT = 8


class Refusal(TypedDict):
    """One refused request: why, and the message the agent's CLI was given."""

    why: Why
    message: str


class ExecutionRecord(TypedDict):
    """What the proxy saw of one execution: what the leg records and classifies by."""

    label: str
    upstream: str
    requests: int  # forwarded to the model API
    models: list[str]  # the models its answers named, in the order first named
    usage: dict[str, int]  # summed over every answer
    cost_usd: float  # the priced answers' cost
    unpriced: int  # billable answers whose cost is unknown (no usage read, or no price)
    refused: int  # requests refused, all told
    refusals: list[Refusal]  # the first KEPT of them
    budget_exceeded: bool  # a request was refused for the ceiling in dollars or tokens
    finished: bool


@dataclass(frozen=True)
class Grant:
    """What one execution is given: the placeholder key its CLI presents, and the proxy's
    URL for its model API. The placeholder opens nothing once the execution finished."""

    label: str
    upstream: str
    base_url: str
    placeholder: str = field(repr=False)


@dataclass(eq=False)
class Execution:
    """One execution: its limits and running totals (changed only under the book's lock)."""

    label: str
    upstream: str
    pricer: Pricer
    ceiling: Ceiling
    ceiling_tokens: int | None
    slots: threading.BoundedSemaphore
    requests: int = 0
    models: list[str] = field(default_factory=list)
    usage: Counter[str] = field(default_factory=Counter)
    tokens: int = 0  # every token its answers processed (Usage.tokens)
    in_flight: int = 0  # requests forwarded and not settled yet
    cost_usd: float = 0.0
    unpriced: int = 0
    refused: int = 0
    refusals: list[Refusal] = field(default_factory=list)
    finished: bool = False

    def record(self) -> ExecutionRecord:
        return {
            "label": self.label,
            "upstream": self.upstream,
            "requests": self.requests,
            "models": list(self.models),
            "usage": dict(self.usage),
            "cost_usd": self.cost_usd,
            "unpriced": self.unpriced,
            "refused": self.refused,
            "refusals": [Refusal(why=r["why"], message=r["message"]) for r in self.refusals],
            "budget_exceeded": any(r["why"] in OVER_BUDGET for r in self.refusals),
            "finished": self.finished,
        }


def _digest(key: str) -> bytes:
    """What the book keys an execution by: a digest of its placeholder, so looking a presented
    key up compares digests, never the secret's bytes one by one."""
    return hashlib.sha256(key.encode("utf-8", "replace")).digest()


def _usd(value: float) -> str:
    return f"${value:.4f}"


class Executions:
    """Every execution registered with one proxy, running or finished, and the strays."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._by_key: dict[bytes, Execution] = {}
        self.strays: Counter[Why] = Counter()

    def register(
        self,
        label: str,
        upstream: str,
        base_url: str,
        pricer: Pricer,
        ceiling: Ceiling = None,
        ceiling_tokens: int | None = None,
        in_flight: int = IN_FLIGHT,
    ) -> Grant:
        """A new execution, running from now on, and the grant its CLI is given."""
        placeholder = "omg-" + secrets.token_urlsafe(32)
        ex = Execution(
            label, upstream, pricer, ceiling, ceiling_tokens, threading.BoundedSemaphore(in_flight)
        )
        with self._lock:
            self._by_key[_digest(placeholder)] = ex
        return Grant(label, upstream, base_url, placeholder)

    def find(self, presented: str) -> Execution | None:
        """The execution a presented key is the placeholder of (running or finished)."""
        return self._by_key.get(_digest(presented))

    def of(self, grant: Grant) -> Execution:
        found = self.find(grant.placeholder)
        if found is None:
            raise KeyError(f"no execution {grant.label!r} was registered with this proxy")
        return found

    def finish(self, grant: Grant, wait_s: float = SETTLE_WAIT_S) -> ExecutionRecord:
        """The execution ends: its placeholder opens nothing from now on. Its record, once
        the answers still passing settled (at most ``wait_s`` later: its CLI has exited, so
        they end as soon as the proxy sees their client gone)."""
        ex = self.of(grant)
        with self._lock:
            ex.finished = True
            self._lock.wait_for(lambda: ex.in_flight == 0, timeout=wait_s)
            return ex.record()

    def record(self, grant: Grant) -> ExecutionRecord:
        ex = self.of(grant)
        with self._lock:
            return ex.record()

    def refuse(self, ex: Execution | None, why: Why, message: str) -> Refusal:
        """A refusal, recorded on its execution (or counted as a stray)."""
        refusal = Refusal(why=why, message=message)
        with self._lock:
            if ex is None:
                self.strays[why] += 1
            else:
                ex.refused += 1
                if len(ex.refusals) < KEPT:
                    ex.refusals.append(refusal)
        return refusal

    def check(self, ex: Execution) -> Refusal | None:
        """Whether the execution may send one more request now; a refusal, recorded, if not."""
        if ex.finished:
            return self.refuse(
                ex, "finished", "omg: this key belongs to an execution that has finished; "
                "omg's proxy no longer forwards its requests",
            )  # fmt: skip
        with self._lock:
            spent, tokens = ex.cost_usd, ex.tokens
        if ex.ceiling_tokens is not None and tokens >= ex.ceiling_tokens:
            return self.refuse(
                ex, "tokens", f"omg: this execution has used {tokens} tokens, its ceiling is "
                f"{ex.ceiling_tokens}; omg refused its next request",
            )  # fmt: skip
        try:
            ceiling = ex.ceiling() if callable(ex.ceiling) else ex.ceiling
        except Exception as exc:  # omg's own callable: never let it open the way
            return self.refuse(
                ex, "ceiling", f"omg: the spend ceiling could not be read "
                f"({type(exc).__name__}); omg refused the request",
            )  # fmt: skip
        if ceiling is not None and not spent < ceiling:
            shown = _usd(ceiling) if math.isfinite(ceiling) else str(ceiling)
            return self.refuse(
                ex, "budget", f"omg: this execution has spent {_usd(spent)} of the {shown} it "
                "may spend (its budget_usd, the run's budget or a spend cap); omg refused its "
                "next request",
            )  # fmt: skip
        return None

    def begin(self, ex: Execution) -> None:
        """A request of the execution is forwarded; ``settle`` ends it."""
        with self._lock:
            ex.in_flight += 1

    def settle(self, ex: Execution, usage: Usage | None, billable: bool) -> None:
        """One forwarded request's answer: counted, its usage added and priced (a billable
        answer without usage, or one its pricer cannot price, is counted unpriced)."""
        dollars: float | None = None
        if usage is not None:
            try:
                dollars = ex.pricer(usage)
            except Exception:  # omg's own callable: an answer it cannot price is unpriced
                dollars = None
        with self._lock:
            ex.in_flight -= 1
            self._lock.notify_all()
            ex.requests += 1
            if usage is not None:
                if usage.model and usage.model not in ex.models:
                    ex.models.append(usage.model)
                ex.usage.update(usage.counts)
                ex.tokens += usage.tokens()
            if dollars is not None and math.isfinite(dollars) and dollars >= 0:
                ex.cost_usd += dollars
            elif usage is not None or billable:
                ex.unpriced += 1
