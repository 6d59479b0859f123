"""The local workspace: where a node runs when its run does not live in git."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from omg.dotomg import NAME, ensure_ignored
from omg.graph.model import Node
from omg.state.events import EventFields


class LocalWorkspace:
    """Runs nodes in the invocation directory, a ``cwd:`` under it, or a plain lane directory.

    Outside a git repository a ``worktree:`` is a directory under ``.omg/worktrees/<run>/``
    shared by the nodes naming it, so graphs with lanes still run (without isolation).
    """

    def __init__(self, root: Path, run_id: str) -> None:
        self.root = root
        self.run_id = run_id

    def settle(self, node: Node, verdict: str, round_: int) -> EventFields:
        return {}

    def lane_trees(self, nodes: Iterable[Node]) -> dict[str, str]:
        """Without git a lane has no tree to compare: none."""
        return {}

    def cwd_for(self, node: Node, rendered_cwd: str | None, branch: str | None) -> Path:
        if node.worktree is not None:
            ensure_ignored(self.root / NAME)
            path = self.root / NAME / "worktrees" / self.run_id / node.worktree.name
            path.mkdir(parents=True, exist_ok=True)
            return path
        if rendered_cwd is None:
            return self.root
        path = Path(rendered_cwd)
        path = path if path.is_absolute() else self.root / path
        if not path.is_dir():
            raise OSError(
                f'cwd "{rendered_cwd}" of node "{node.id}" is not a directory ({path}); '
                "create it or fix the node's cwd:"
            )
        return path
