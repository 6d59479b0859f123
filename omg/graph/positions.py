"""Where a value sits in a graph's data: its path (``("nodes", 2, "retry")``, written as JSON:
``$.nodes[2].retry``) and the line and column the YAML parser found it at. Imports no YAML, so
checking a run's snapshot, which has no file positions, never loads the parser."""

from __future__ import annotations

from dataclasses import dataclass, field

Path = tuple[str | int, ...]


def json_path(path: Path) -> str:
    """``("nodes", 2, "retry")`` → ``$.nodes[2].retry``."""
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


@dataclass
class Positions:
    """Where each value sits: JSON path → (line, column), both 1-based."""

    keys: dict[Path, tuple[int, int]] = field(default_factory=dict)
    #: path of a literal block scalar (``|``) → the line its text starts on.
    blocks: dict[Path, int] = field(default_factory=dict)
    #: path → (file, citation chain) for values spliced in from a fragment file; a path
    #: without one (nor an ancestor with one) is in the file that was parsed.
    origins: dict[Path, tuple[str, str]] = field(default_factory=dict)

    def origin(self, path: Path, file: str) -> tuple[str, str]:
        """(the file ``path`` was written in, the chain of ``use:`` lines that brought it)."""
        for end in range(len(path), -1, -1):
            hit = self.origins.get(path[:end])
            if hit is not None:
                return hit
        return file, ""

    def at(self, path: Path) -> tuple[int | None, int | None]:
        """The position of ``path``, or of its nearest ancestor that has one."""
        for end in range(len(path), -1, -1):
            hit = self.keys.get(path[:end])
            if hit is not None:
                return hit
        return None, None

    def line_in(self, path: Path, offset: int, text: str) -> int | None:
        """The line of character ``offset`` of the string at ``path`` (exact in ``|`` blocks)."""
        start = self.blocks.get(path)
        if start is not None:
            return start + text.count("\n", 0, offset)
        return self.at(path)[0]
