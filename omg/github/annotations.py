"""Workflow commands: GitHub's `::error file=…::message` lines, escaped by its rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

#: GitHub shows at most 10 error and 10 warning annotations per step; more are dropped.
ANNOTATION_CAP = 10
Level = Literal["error", "warning", "notice"]


def escape_data(value: str) -> str:
    """GitHub workflow-command message escaping."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """GitHub workflow-command property escaping (data escaping plus ``:`` and ``,``)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def workflow_command(level: Level, message: str, props: Mapping[str, str | int]) -> str:
    """``::level k=v,…::message`` with every property and the message escaped."""
    shown = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items())
    return (
        f"::{level} {shown}::{escape_data(message)}"
        if shown
        else f"::{level}::{escape_data(message)}"
    )
