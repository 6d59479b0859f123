"""A pull request's graph: loaded from the commit the PR targets (its base), never from the PR,
and the PR's own change to it (the graph file, its fragments) linted and described — reported,
never run: the change applies once merged."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from omg.errors import GraphError, StateError, UsageError
from omg.git.treefiles import TreeFiles
from omg.graph.findings import Finding
from omg.graph.load import check_file
from omg.graph.model import Graph
from omg.records import GraphChangeRecord, PullRequestRecord

if TYPE_CHECKING:
    from omg.git.repo import RunRepo

#: The lint lines of a PR's changed graph a run keeps (the counts are whole).
MAX_FINDINGS = 20
#: The characters of one lint line it keeps.
MAX_LINE = 300
#: The changed files it names.
MAX_FILES = 20


@dataclass(frozen=True)
class Base:
    """The pull request's two commits, as its event names them."""

    number: int
    head_sha: str
    base_sha: str
    base_ref: str


@dataclass(frozen=True)
class PrGraph:
    """The graph that judges a pull request, and what the PR changes of it."""

    source: Path  # the graph file, from the repository's root
    base: Base
    graph: Graph | None  # the base's graph; None: the base has no such file (the PR adds it)
    findings: list[Finding]  # the base graph's advisories
    sha256: str  # of the base's graph file
    change: GraphChangeRecord | None  # None: the PR changes nothing the graph is made of
    head_name: str = ""  # the PR's graph's name, when the base has none and the PR's is valid

    def record(self) -> PullRequestRecord:
        """What a run started on the pull request records of it (its leg 1's snapshot)."""
        b = self.base
        rec: PullRequestRecord = {
            "number": b.number,
            "head_sha": b.head_sha,
            "base_ref": b.base_ref,
            "base_sha": b.base_sha,
        }
        if self.change is not None:
            rec["graph_change"] = self.change
        return rec


def in_repo(repo: RunRepo, path: Path, cwd: Path) -> Path:
    """``path`` (as the job names it, from ``cwd``) from the repository's root."""
    full = Path(os.path.normpath(cwd / path))
    try:
        return full.relative_to(repo.root)
    except ValueError:
        raise UsageError(
            f"the graph {path} is outside the repository {repo.root}; name a graph file in it"
        ) from None


def commits(repo: RunRepo, remote: str, pr: Base) -> None:
    """Both commits here (fetched by id when the checkout lacks them), or StateError: a PR run
    never falls back to another commit for either."""
    wanted = (
        ("base", pr.base_sha, f"refs/heads/{pr.base_ref}"),
        ("head", pr.head_sha, f"refs/pull/{pr.number}/head"),
    )
    for what, sha, ref in wanted:
        if not repo.fetch_commit(remote, sha, ref):
            raise StateError(
                f"the {what} commit {sha[:12]} of PR #{pr.number} cannot be fetched from "
                f"{remote} (nor {ref}); nothing ran — push again, or re-run the job once the "
                "commit is there"
            )


def load(repo: RunRepo, remote: str, pr: Base, path: Path) -> PrGraph:
    """The base's graph at ``path`` (from the repository's root) and the PR's change to it.
    GraphError when the base's graph is invalid (or neither commit has the file)."""
    commits(repo, remote, pr)
    base, head = repo.files_at(pr.base_sha), repo.files_at(pr.head_sha)
    at = f"{pr.base_ref or 'the base'} @{pr.base_sha[:7]}"
    ours, found = check_file(path, base)
    theirs, lint = check_file(path, head)
    if base.kind(path, path.parent, Path()) == "missing":
        if head.kind(path, path.parent, Path()) == "missing":
            raise GraphError(
                f"{path} is neither in the base ({at}) nor in the head of PR #{pr.number}; "
                "name the graph file of the action's `graph` input as the repository has it"
            )
        name = theirs.name if theirs is not None else ""
        return PrGraph(path, pr, None, [], "", _record([str(path)], lint), name)
    if ours is None:
        errors = [f.as_text() for f in found if f.severity == "error"]
        raise GraphError(
            "\n".join(errors) + f"\n{len(errors)} error(s) in {path} at {at}, the graph of the "
            f"branch PR #{pr.number} targets, which judges it; fix the graph there (`omg lint "
            f"{path}`)"
        )
    changed = _changed(path, ours, theirs, base, head)
    change = _record(changed, lint) if changed or theirs is None else None
    if head.kind(path, path.parent, Path()) == "missing":  # removed: nothing of it to lint
        gone = f"{path}: the pull request removes this graph file"
        change = {"files": [str(path)], "errors": 0, "warnings": 0, "findings": [gone]}
    digest = hashlib.sha256(base.read(path, base.size(path))).hexdigest()
    advice = [f for f in found if f.severity != "error"]
    return PrGraph(path, pr, ours, advice, digest, change)


def _changed(
    path: Path, ours: Graph, theirs: Graph | None, base: TreeFiles, head: TreeFiles
) -> list[str]:
    """The files either graph is made of (the graph file, the fragments each spliced in)
    whose bytes differ between base and head."""
    used = {str(path), *_spliced(ours), *(_spliced(theirs) if theirs is not None else ())}
    return [f for f in sorted(used) if base.blob_id(Path(f)) != head.blob_id(Path(f))]


def _spliced(graph: Graph) -> list[str]:
    sources = graph.data.get("resolved_from")
    return [str(k) for k in sources] if isinstance(sources, dict) else []


def _record(files: list[str], lint: list[Finding]) -> GraphChangeRecord:
    shown = sorted(  # the errors first, each kind in the file's order
        (f for f in lint if f.severity in ("error", "warning")), key=lambda f: f.severity != "error"
    )
    lines = [_cut(f.as_text()) for f in shown[:MAX_FINDINGS]]
    return {
        "files": [_cut(f) for f in files[:MAX_FILES]],
        "errors": sum(1 for f in shown if f.severity == "error"),
        "warnings": sum(1 for f in shown if f.severity == "warning"),
        "findings": lines,
    }


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "…"
