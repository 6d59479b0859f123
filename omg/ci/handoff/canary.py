"""The secrets a publish job looks for in a hand-off: their values (found in every form the
masker knows: as is, escaped, base64, hex, split across lines) and the SHA-256 of values it
does not hold (found where one stands as a whole word of token characters)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from omg.mask import Masker

#: The variable holding the SHA-256 digests (hex, one a line) of the model keys the run job
#: held: the publish job holds no key, yet refuses a hand-off that carries one.
DIGESTS = "OMG_SECRET_DIGESTS"
#: A run of the characters a token is written in: where a hashed secret is looked for.
_WORD = re.compile(rb"[A-Za-z0-9_\-.~+/=:]{8,512}")


@dataclass(frozen=True)
class Canaries:
    """Secret values and SHA-256 digests (hex) of secret values, to be found nowhere."""

    values: frozenset[str] = frozenset()
    digests: frozenset[str] = frozenset()
    _masker: Masker = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_masker", Masker.of(self.values))

    @classmethod
    def of(cls, values: Iterable[str] = (), digests: Iterable[str] = ()) -> Canaries:
        return cls(frozenset(values), frozenset(d.lower() for d in digests))

    def __bool__(self) -> bool:
        return bool(self._masker) or bool(self.digests)

    def found(self, data: bytes) -> bool:
        """Whether ``data`` holds one of the secrets."""
        if self._masker and self._masker.data(data) != data:
            return True
        if self.digests:
            for word in _WORD.findall(data):
                for piece in {word, word.strip(b"=:.,"), *word.split(b"="), *word.split(b":")}:
                    if hashlib.sha256(piece).hexdigest() in self.digests:
                        return True
        return False

    def mask(self, text: str) -> str:
        """``text`` with every secret value it holds masked (a refusal's words)."""
        return self._masker.text(text)
