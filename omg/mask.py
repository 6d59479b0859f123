"""The masker: every secret value omg knows, replaced by ``***`` in whatever omg writes.

Secrets are found by value, the way the GitHub Actions runner masks its logs: the value of
every environment variable whose name says token, key, secret, password or credential (the CI
token, the agent auth variables, the git token, a service's password…), plus the values a
graph marks secret. One masker is built per leg and handed down to the writers of the run
directory and of GitHub-bound text; nothing below asks for it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar
from urllib.parse import quote

from omg.secretname import is_secret_name

#: What a masked value is replaced by (the runner's own mark).
MASK = "***"
#: Values shorter than this are not masked: they are too common to tell from ordinary text
#: (a real token is far longer). Such a secret is still withheld from children and never
#: recorded as an input, but text that contains it is written as it is.
MIN_LENGTH = 8

#: The marks omg cuts text at (``process.tail``'s ``…`` and the capture's cut line): a secret
#: cut in two there leaves a piece the whole value no longer matches, so the piece at either
#: side of a mark is masked when it is at least ``MIN_PIECE`` long.
CUT = re.compile(r"\n\[… omg cut \d+ bytes of output here …\]\n|…")
MIN_PIECE = 4

#: What may stand between two characters of a secret split across lines.
_BREAK = r"(?:\r?\n)?"

T = TypeVar("T")


def _encodings(value: str) -> set[str]:
    """The forms a tool may print ``value`` in: as is, JSON- and URL-escaped, and base64'd at
    each of the three byte alignments (as inside a git ``Authorization: Basic`` header, where
    the token follows ``x-access-token:``) in the standard and URL-safe alphabets."""
    out = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    out.add(quote(value, safe=""))
    raw = value.encode()
    out |= {raw.hex(), raw.hex().upper()}  # od -tx1, xxd -p, printf %x …
    for shift in range(3):
        whole = (shift + len(raw)) // 3 * 4  # the characters that depend on whole groups only
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * shift + raw).decode()
            stable = text[4 if shift else 0 : whole]  # a shifted first group mixes in its prefix
            if len(stable) >= MIN_LENGTH:
                out.add(stable)
    return {v for v in out if len(v) >= MIN_LENGTH}


@dataclass(frozen=True)
class Masker:
    """The secret values of one leg; ``text``, ``data`` and ``record`` mask them."""

    values: frozenset[str] = frozenset()

    @classmethod
    def of(cls, values: Iterable[str]) -> Masker:
        return cls(frozenset(v for v in values if len(v) >= MIN_LENGTH))

    @classmethod
    def from_env(cls, env: Mapping[str, str], names: Iterable[str] = ()) -> Masker:
        """The values of ``env``'s secret-named variables and of those ``names`` list."""
        named = set(names)
        return cls.of(v for k, v in env.items() if is_secret_name(k) or k in named)

    def plus(self, other: Masker | Iterable[str]) -> Masker:
        """This masker and more values (another masker's, or plain strings)."""
        more = other.values if isinstance(other, Masker) else Masker.of(other).values
        return self if more <= self.values else Masker(self.values | more)

    def __bool__(self) -> bool:
        return bool(self.values)

    @cached_property
    def _needles(self) -> tuple[str, ...]:
        """Every encoding of every value, longest first (a token inside another is masked
        whole by the longer one)."""
        found: set[str] = set()
        for value in self.values:
            found |= _encodings(value)
        return tuple(sorted(found, key=lambda s: (-len(s), s)))

    @cached_property
    def _byte_needles(self) -> tuple[bytes, ...]:
        return tuple(n.encode() for n in self._needles)

    @cached_property
    def _split(self) -> re.Pattern[str] | None:
        """Every value with a line break allowed between any two of its characters (``fold``,
        a wrapped log line), longest first; None when no value is long enough."""
        forms = sorted(self.values, key=len, reverse=True)
        if not forms:
            return None
        return re.compile("|".join(_BREAK.join(map(re.escape, v)) for v in forms))

    @cached_property
    def _byte_split(self) -> re.Pattern[bytes] | None:
        split = self._split
        return None if split is None else re.compile(split.pattern.encode())

    def text(self, text: str) -> str:
        """``text`` with every secret (in any form it knows, or split across lines) replaced by
        ``***``, and the pieces of one that a cut mark left at its either side."""
        for needle in self._needles:
            if needle in text:
                text = text.replace(needle, MASK)
        if "\n" in text and self._split is not None:
            text = self._split.sub(MASK, text)
        if "…" in text and self.values:
            text = self._cut_pieces(text)
        return text

    @cached_property
    def _pieces(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Every head and every tail of every value (``MIN_PIECE`` long or more), longest first."""
        heads = {v[:n] for v in self.values for n in range(MIN_PIECE, len(v))}
        tails = {v[-n:] for v in self.values for n in range(MIN_PIECE, len(v))}
        return tuple(sorted(heads, key=len, reverse=True)), tuple(
            sorted(tails, key=len, reverse=True)
        )

    def _cut_pieces(self, text: str) -> str:
        heads, tails = self._pieces
        out, at = [], 0
        for m in CUT.finditer(text):
            before = text[at : m.start()]
            head = next((len(p) for p in heads if before.endswith(p)), 0)
            out.append(before[: len(before) - head] + (MASK if head else "") + m.group())
            at = m.end()
            tail = next((len(p) for p in tails if text.startswith(p, at)), 0)
            if tail:
                out.append(MASK)
                at += tail
        out.append(text[at:])
        return "".join(out)

    def data(self, data: bytes) -> bytes:
        """The same for bytes (a transcript, a file)."""
        mask = MASK.encode()
        for needle in self._byte_needles:
            if needle in data:
                data = data.replace(needle, mask)
        if b"\n" in data and self._byte_split is not None:
            data = self._byte_split.sub(mask, data)
        return data

    def record(self, value: T) -> T:
        """A JSON-shaped value with every string in it masked (keys too); the same object
        when nothing in it needed masking, so the common case costs one scan."""
        if not self.values or not self._holds(value):
            return value
        return self._walk(value)  # type: ignore[no-any-return]

    def _holds(self, value: Any) -> bool:
        flat = json.dumps(value, ensure_ascii=False, default=str)
        if any(n in flat for n in self._needles):
            return True
        lines = flat.replace("\\r", "\r").replace("\\n", "\n")  # as the strings hold them
        return "\n" in lines and self._split is not None and self._split.search(lines) is not None

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self._walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._walk(v) for v in value]
        return value


#: The masker that masks nothing (reading a run needs none).
NOTHING = Masker()
