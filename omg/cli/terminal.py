"""What a stream may be sent: colour only to a terminal while ``NO_COLOR`` is unset or empty
(https://no-color.org), cursor control only to a terminal that is not ``TERM=dumb``, and never
a control character from text omg did not write."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TextIO

from omg.words import inert as inert  # what a stream may be sent of text omg did not write

#: good: passed; bad: failed; wait: paused, retried, pending; note: started.
Tone = Literal["good", "bad", "wait", "note"]
_SGR = {"good": "32", "bad": "31", "wait": "33", "note": "36"}


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a closed or detached stream is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def may_redraw(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Whether a line may be redrawn in place (``\\r`` and erase-line): a terminal that is not
    ``TERM=dumb``. Never a file or a pipe, such as a CI log."""
    env = os.environ if env is None else env
    return is_terminal(stream) and env.get("TERM") != "dumb"


def may_colour(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Whether colour may be sent: a terminal, ``NO_COLOR`` unset or empty, not ``TERM=dumb``."""
    env = os.environ if env is None else env
    return may_redraw(stream, env) and not env.get("NO_COLOR")


@dataclass(frozen=True)
class Paint:
    """Colours text by tone when ``on``, else leaves it as it is."""

    on: bool = False

    @classmethod
    def to(cls, stream: TextIO, env: Mapping[str, str] | None = None) -> Paint:
        """The paint for ``stream``: colour when :func:`may_colour` says so."""
        return cls(may_colour(stream, env))

    def __call__(self, text: str, tone: Tone) -> str:
        if not self.on or not text:
            return text
        return f"\033[{_SGR[tone]}m{text}\033[0m"


#: The paint of a file or a pipe: none.
PLAIN = Paint()
