"""The stub model: a loopback stand-in for the Anthropic Messages API and the OpenAI Responses
API, answering from a script."""

from omg.stubmodel.script import Script, load
from omg.stubmodel.server import StubModel

__all__ = ["Script", "StubModel", "load"]
