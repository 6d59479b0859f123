"""omg's loopback model-API proxy: the model keys stay in omg, agents get placeholders.

Each agent execution gets a placeholder key and the proxy's URL (``server``'s docstring says how).

- ``server``: ``ModelProxy``, on 127.0.0.1 only, a thread per client connection.
- ``exchange``: one request admitted or refused — Host, key, path, body, ceiling — sent on with
  omg's key, its answer streamed back as it arrives and its usage settled.
- ``upstream``: a model API, omg's key for it, a small keep-alive pool.
- ``executions``: each execution's placeholder, ceiling, running totals and refusals: its
  ``ExecutionRecord``.
- ``usage`` (pure): an answer's usage read from its stream or body, both APIs; claude's price
  table per model, from the pinned CLI's catalog, and the CLI's pricing rule live in
  ``runners/claude/prices``.
- ``headers`` (pure): the placeholder found, omg's key in its place, hop-by-hop headers dropped.
- ``answers`` (pure): refusals and failures in each API's error format, at statuses its CLI fails
  on at once.
"""

from typing import TYPE_CHECKING, Any

from omg.modelproxy.executions import ExecutionRecord, Grant, Refusal
from omg.modelproxy.upstream import ANTHROPIC, OPENAI, Upstream
from omg.modelproxy.usage import Usage

if TYPE_CHECKING:
    from omg.modelproxy.server import ModelProxy


def __getattr__(name: str) -> Any:
    """``ModelProxy`` imported when first asked for: the server (``http.server``) is only a
    leg with agent nodes' cost, not every command's that names the runtimes' key rules."""
    if name == "ModelProxy":
        from omg.modelproxy.server import ModelProxy

        return ModelProxy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ANTHROPIC",
    "OPENAI",
    "ExecutionRecord",
    "Grant",
    "ModelProxy",
    "Refusal",
    "Upstream",
    "Usage",
]
