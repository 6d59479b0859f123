"""omg's loopback model-API proxy: the model keys stay in omg, agents get placeholders."""

from omg.modelproxy.executions import ExecutionRecord, Grant, Refusal
from omg.modelproxy.server import ModelProxy
from omg.modelproxy.upstream import ANTHROPIC, OPENAI, Upstream
from omg.modelproxy.usage import Usage

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
