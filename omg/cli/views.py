"""Which ledger a person asked for: every execution, one row per node, or by the run's length;
typer-free and table-free, so `omg run`'s fast path reads it before its first node."""

from __future__ import annotations

from typing import Literal

from omg.errors import UsageError
from omg.state import State

#: A run whose record holds more events than this shows one row per node unless every execution
#: is asked for (``--executions``): a table of tens of thousands of rows is read by no one, and
#: folding them costs a look at the run more than everything else it does.
LONG_RUN_EVENTS = 10_000
#: Which ledger a person asked for: ``auto`` (per execution; per node for a long run), or one.
View = Literal["auto", "node", "execution"]


def view(by_node: bool, executions: bool) -> View:
    """The view the two flags ask for; both at once is refused."""
    if by_node and executions:
        raise UsageError("--by-node and --executions each pick the ledger's rows: give one")
    return "node" if by_node else "execution" if executions else "auto"


def per_node(state: State, asked: View) -> bool:
    """Whether the ledger of ``state`` shows one row per node."""
    return asked == "node" or (asked == "auto" and int(state["seq"]) > LONG_RUN_EVENTS)
