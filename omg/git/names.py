"""The ref namespace omg owns: run branches, work branches, recorded worktree bases, the
records fan-out jobs publish, the notes recorded about a run off its branch and the lease a
leg holds on a run; the commit a ref points at, and where a run's checkouts live. The base
the other modules of omg.git build on: it imports none of them."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pygit2

from omg.dotomg import NAME
from omg.errors import GitError
from omg.nodefile import on_disk

RUNS = "refs/heads/omg/runs/"
BASES = "refs/omg/base/"
FANOUT = "refs/omg/fanout/"
NOTES = "refs/omg/notes/"
LEASES = "refs/omg/lease/"
SPEND = "refs/omg/spend/"
WAITS = "refs/omg/waits/"
HEADS = "refs/heads/"


def checked(kind: str, value: str) -> str:
    """``value`` if it can be one component of a ref name, else a GitError naming it."""
    if not value or "/" in value or not pygit2.reference_is_valid_name(f"{HEADS}x/{value}"):
        raise GitError(
            f"{kind} {value!r} cannot be part of a git branch name; "
            "use letters, digits, '.', '_' or '-'"
        )
    return value


def run_ref(run_id: str) -> str:
    """``refs/heads/omg/runs/<run_id>``: the branch a run's state is committed to."""
    return RUNS + checked("run id", run_id)


def remote_run_ref(tracking: str, run_id: str) -> str:
    """``refs/remotes/<tracking>/omg/runs/<run_id>``: the run branch as last seen on a remote."""
    return f"refs/remotes/{tracking}/{run_ref(run_id).removeprefix(HEADS)}"


def work_branch(run_id: str, name: str) -> str:
    """``omg/work/<run_id>/<name>``: the default branch of a managed worktree."""
    return f"omg/work/{checked('run id', run_id)}/{checked('worktree name', name)}"


def base_ref(run_id: str, name: str) -> str:
    """Where the commit a worktree branch started from is remembered (local only)."""
    return f"{BASES}{checked('run id', run_id)}/{checked('worktree name', name)}"


def worktree_id(run_id: str, name: str) -> str:
    """The name of the worktree's admin directory under ``.git/worktrees/``; unique per pair."""
    digest = hashlib.sha1(f"{run_id}\0{name}".encode()).hexdigest()[:8]
    return f"omg-{run_id}-{name}-{digest}"


def run_refspecs(run_id: str, remote: str) -> list[str]:
    """What a leg fetches (into remote-tracking refs): the run branch, its worktree lanes and
    its lease."""
    return [
        run_ref(run_id),
        f"{HEADS}omg/work/{checked('run id', run_id)}/*",
        f"{lease_ref(run_id)}:{lease_tracking(remote, run_id)}",
    ]


def spend_ref(scope: str) -> str:
    """``refs/omg/spend/<kind>/<key>``: a spend book (``pr/12``, ``day/2026-12-04``)."""
    kind, _, key = scope.partition("/")
    return f"{SPEND}{checked('spend scope', kind)}/{checked('spend scope', key)}"


def spend_tracking(tracking: str, scope: str) -> str:
    """``refs/remotes/<tracking>/omg-spend/<kind>/<key>``: the book as last fetched."""
    return f"refs/remotes/{tracking}/omg-spend/" + spend_ref(scope).removeprefix(SPEND)


def wait_ref(run_id: str) -> str:
    """``refs/omg/waits/<run_id>``: a run paused until a time (a limit, a day's cap), which
    the resume workflow's schedule looks for."""
    return WAITS + checked("run id", run_id)


def waits_tracking(tracking: str) -> str:
    """``refs/remotes/<tracking>/omg-waits/``: the waits as last fetched (a prefix)."""
    return f"refs/remotes/{tracking}/omg-waits/"


def lease_ref(run_id: str) -> str:
    """``refs/omg/lease/<run_id>``: which leg holds the run, until when (outside refs/heads)."""
    return LEASES + checked("run id", run_id)


def lease_tracking(tracking: str, run_id: str) -> str:
    """``refs/remotes/<tracking>/omg-lease/<run_id>``: the lease as last fetched."""
    return f"refs/remotes/{tracking}/omg-lease/{checked('run id', run_id)}"


def owned_refs(run_id: str) -> list[str]:
    """Glob patterns (relative to the refs' directory) of every ref only a leg of the run writes:
    its branch, lanes, lane bases, records and lease, and the remote-tracking copies of them."""
    rid = checked("run id", run_id).replace("[", "[[]")  # glob-safe: a ref name has no * or ?
    mine = [
        f"refs/heads/omg/runs/{rid}",
        f"refs/heads/omg/work/{rid}/*",
        f"refs/omg/base/{rid}/*",
        f"refs/omg/fanout/{rid}/*",
        f"refs/omg/lease/{rid}",
    ]
    tracked = [
        f"refs/remotes/*/omg/runs/{rid}",
        f"refs/remotes/*/omg/work/{rid}/*",
        f"refs/remotes/*/omg-fanout/{rid}/*",
        f"refs/remotes/*/omg-lease/{rid}",
    ]
    return mine + tracked


def fanout_ref(run_id: str, entry: str) -> str:
    """``refs/omg/fanout/<run_id>/<entry>``: where one matrix job publishes its entry's record."""
    return f"{FANOUT}{checked('run id', run_id)}/{checked('node id', on_disk(entry))}"


def fanout_tracking(tracking: str, run_id: str) -> str:
    """``refs/remotes/<tracking>/omg-fanout/<run_id>/``: the published records as last fetched."""
    return f"refs/remotes/{tracking}/omg-fanout/{checked('run id', run_id)}/"


def fanout_refspec(remote: str, run_id: str, entry: str | None = None) -> str:
    """What a fold fetches: every record published for the run (or one entry's, for its
    matrix job), into remote-tracking refs."""
    name = "*" if entry is None else checked("node id", on_disk(entry))
    return f"{FANOUT}{checked('run id', run_id)}/{name}:{fanout_tracking(remote, run_id)}{name}"


def notes_prefix(run_id: str) -> str:
    """``refs/omg/notes/<run_id>/``: where the notes about a run are kept."""
    return f"{NOTES}{checked('run id', run_id)}/"


def note_ref(run_id: str, note_id: str) -> str:
    """``refs/omg/notes/<run_id>/<note_id>``: one note about the run (a refused decision, a
    dispatch, a supersede), kept off the run branch so no leg running meanwhile loses a race."""
    return notes_prefix(run_id) + checked("note id", note_id)


def notes_tracking(tracking: str, run_id: str) -> str:
    """``refs/remotes/<tracking>/omg-notes/<run_id>/``: the run's notes as last fetched."""
    return f"refs/remotes/{tracking}/omg-notes/{checked('run id', run_id)}/"


def notes_refspec(remote: str, run_id: str) -> str:
    """What a leg fetches to fold the run's notes in: every note, into remote-tracking refs."""
    return f"{notes_prefix(run_id)}*:{notes_tracking(remote, run_id)}*"


def head(repo: pygit2.Repository, ref: str) -> str | None:
    """The commit a local ref points at, or None when the ref does not exist."""
    try:
        target = repo.references[ref].resolve().target
    except KeyError:
        return None
    return str(target)


def run_dir(root: Path, run_id: str) -> Path:
    """``.omg/worktrees/<run_id>/`` under the repository root."""
    return root / NAME / "worktrees" / checked("run id", run_id)


def common_dir(repo: pygit2.Repository) -> Path:
    """Where the refs live: the repository's git directory, or a worktree's common one."""
    git_dir = Path(repo.path)
    try:
        return (git_dir / (git_dir / "commondir").read_text().strip()).resolve()
    except OSError:
        return git_dir
