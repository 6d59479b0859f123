"""The leg's model keys: omg's loopback proxy holds them, and each agent attempt gets a
placeholder and the proxy's URL instead, is held to its ceiling, and has its record read back.

A leg whose graph has agent nodes starts one ``ModelProxy`` (``open_keys``) holding the key
each runtime's CLI would have been given (``AgentRuntime.hold_key``: a key variable, and the
API a base-URL variable names — the stub model in a rehearsal); from then on no child of the
leg sees a real key (``keyless``), a shell node that names one in its ``env:`` included. Each
attempt is registered (``LegKeys.open``) with a ceiling asked before every request — the least
of the node's ``budget_usd``, what is left of the run's budget less what the leg's other
running executions have spent so far, and its spend cap's room when it was admitted — and its
CLI is pointed at the proxy (``through_proxy``). When it ends its placeholder opens nothing
more and the proxy's record goes on its Output (``settled``): a request refused for the
ceiling is its failure cause, and spend the CLI did not report is priced from the record.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from omg.errors import UsageError
from omg.runners.base import AgentRuntime, Invocation, Output
from omg.runners.keys import HeldKey
from omg.spend import ProxyRecord

if TYPE_CHECKING:
    from omg.modelproxy.executions import ExecutionRecord, Grant
    from omg.modelproxy.server import ModelProxy

#: The names of this machine: a key for a model API there (a stub) needs no root check.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
#: A cost the proxy counted beyond the CLI's own report by more than this is the one recorded
#: (closer than this, the CLI's own figure stands: the two price the same answers).
SLACK_USD = 1e-9


@dataclass
class LegKeys:
    """The leg's proxy, the keys it holds by runtime, and the attempts running through it."""

    proxy: ModelProxy
    held: Mapping[str, HeldKey]  # runtime name → the key omg holds for its CLI
    running: set[Grant] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def holds(self, runtime: str) -> bool:
        return runtime in self.held

    def open(
        self,
        runtime: str,
        label: str,
        agent: AgentRuntime,
        model: str | None,
        prices: Mapping[str, Mapping[str, float]],
        own: float | None,
        run_left: Callable[[], float | None],
        room: float | None,
    ) -> Grant:
        """A new attempt of ``runtime``'s CLI, registered with its ceiling: the least of
        ``own`` (its budget_usd), ``run_left()`` less what the other running attempts spent,
        and ``room`` (its spend cap's, at admission)."""
        mine: list[Grant] = []

        def ceiling() -> float | None:
            left = run_left()
            if left is not None:
                left = left - self.others(mine[0])
            return least(own, left, room)

        grant = self.proxy.register(
            runtime, label=label, pricer=agent.pricer(model, prices), ceiling=ceiling
        )
        mine.append(grant)
        with self._lock:
            self.running.add(grant)
        return grant

    def run(
        self,
        agent: AgentRuntime,
        inv: Invocation,
        run: Callable[[Invocation], Output],
        run_left: Callable[[], float | None],
        room: float | None,
    ) -> Output:
        """One attempt of ``inv`` (an agent node's) through the proxy: registered, its CLI
        given the placeholder and the proxy's URL, ``run``, finished, its record read."""
        node = inv.node
        grant = self.open(
            node.runtime, node.id, agent, node.model, inv.prices, node.budget_usd, run_left, room
        )
        held = self.held[node.runtime]
        env = agent.through_proxy(inv.env, held, grant.base_url, grant.placeholder)
        try:
            out = run(replace(inv, env=env))
        finally:
            rec = self.finish(grant)
        return settled(out, rec, node.id)

    def others(self, grant: Grant) -> float:
        """What the leg's other running attempts have spent so far (not recorded yet)."""
        with self._lock:
            others = [g for g in self.running if g is not grant]
        return sum(self.proxy.record(g)["cost_usd"] for g in others)

    def finish(self, grant: Grant) -> ProxyRecord:
        """The attempt ended: its placeholder is refused from now on; its record."""
        try:
            return proxy_record(self.proxy.finish(grant))
        finally:
            with self._lock:
                self.running.discard(grant)

    def close(self) -> None:
        self.proxy.close()

    def remote(self) -> bool:
        """Whether a key it holds opens a model API off this machine (not a loopback stub)."""
        hosts = (urlsplit(k.upstream.url).hostname or "" for k in self.held.values())
        return any(h not in LOOPBACK_HOSTS for h in hosts)


def least(*limits: float | None) -> float | None:
    """The smallest of the limits that are set (None: none is)."""
    found = [x for x in limits if x is not None and not math.isnan(x)]
    return max(0.0, min(found)) if found else None


def keyless(
    parent: Mapping[str, str], rules: Iterable[Callable[[Mapping[str, str]], dict[str, str]]]
) -> dict[str, str]:
    """``parent`` without any runtime's model key, by each runtime's key rule (its runner's
    ``keyless``, or ``registry.key_rules`` when no runner is made): what every child of the
    leg is made from."""
    rest = dict(parent)
    for rule in rules:
        rest = rule(rest)
    return rest


def open_keys(parent: Mapping[str, str], agents: Mapping[str, AgentRuntime]) -> LegKeys | None:
    """The leg's proxy, started, holding each runtime's key in ``parent`` (None: no runtime
    has one). A key variable or base URL that cannot be used is a UsageError naming it
    (never the key)."""
    held: dict[str, HeldKey] = {}
    for name, agent in agents.items():
        try:
            key = agent.hold_key(parent)
        except ValueError as exc:
            raise UsageError(
                f"the model key for {name} cannot be held by omg's proxy: {exc}; set the "
                "variable to the key alone and the base URL to an http(s) URL"
            ) from None
        if key is not None:
            held[name] = key
    if not held:
        return None
    from omg.modelproxy.server import ModelProxy  # only a leg with agent keys starts one

    proxy = ModelProxy({name: key.upstream for name, key in held.items()}).start()
    return LegKeys(proxy, held)


def proxy_record(rec: ExecutionRecord) -> ProxyRecord:
    """The proxy's record of one attempt, as its event carries it."""
    return {
        "requests": rec["requests"],
        "models": list(rec["models"]),
        "usage": dict(rec["usage"]),
        "cost_usd": rec["cost_usd"],
        "unpriced": rec["unpriced"],
        "refused": rec["refused"],
        "refusals": [{"why": r["why"], "message": r["message"]} for r in rec["refusals"]],
        "budget_exceeded": rec["budget_exceeded"],
    }


def settled(out: Output, rec: ProxyRecord, node_id: str) -> Output:
    """``out`` with the proxy's record on it: a request refused for the execution's ceiling
    makes ``budget_exceeded`` its cause (whatever the CLI made of the refusal), an unreadable
    ceiling a ``run_error``; spend the proxy priced beyond what the CLI reported is recorded."""
    out = replace(out, proxy=rec)
    spend = out.spend
    counted = rec["unpriced"] == 0 and rec["requests"] > 0
    if counted and (spend.cost_unknown or rec["cost_usd"] > spend.cost_usd + SLACK_USD):
        spend = replace(spend, cost_usd=rec["cost_usd"], cost_unknown=False)
    if not spend.usage and rec["usage"]:
        spend = spend.with_usage(rec["usage"])
    out = replace(out, spend=spend)
    said = {r["why"]: r["message"] for r in reversed(rec["refusals"])}
    for why in ("budget", "tokens"):
        if why in said:
            detail = (
                f'node "{node_id}" was stopped by omg\'s model proxy, which refused its next '
                f"request: {said[why]} (${rec['cost_usd']:.4f} spent in "
                f"{rec['requests']} request(s))"
            )
            return replace(out, error="budget_exceeded", detail=detail, limit=None)
    if "ceiling" in said:
        return replace(out, error="run_error", detail=f'node "{node_id}": {said["ceiling"]}')
    return out
