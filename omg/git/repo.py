"""The run repository: the one object the engine holds to keep a run in git."""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Literal

import pygit2

from omg.dotomg import NAME, ensure_ignored
from omg.errors import GitError, MovedOn, Unreadable
from omg.git import books, locks, notes, runbranch, runscan, worktrees
from omg.git import lease as leases
from omg.git import remote as remotes
from omg.git.edge import translated
from omg.git.identity import signature
from omg.git.names import (
    HEADS,
    LEASES,
    base_ref,
    fanout_ref,
    fanout_refspec,
    fanout_tracking,
    head,
    lease_ref,
    lease_tracking,
    note_ref,
    notes_prefix,
    notes_refspec,
    notes_tracking,
    remote_run_ref,
    run_ref,
    spend_ref,
    spend_tracking,
    wait_ref,
    waits_tracking,
)
from omg.git.remote import GitToken
from omg.git.treefiles import TreeFiles
from omg.git.worktrees import Checkout
from omg.nodefile import from_disk

_FIX = "check the repository with `git status` and `git fsck`, then resume"
#: How a local run branch stands to its remote copy.
Relation = Literal["same", "ahead", "behind", "diverged"]


def open_repo(
    start: Path, *, env: Mapping[str, str] | None = None, tokens: Sequence[GitToken] = ()
) -> RunRepo | None:
    """The repository enclosing ``start`` (with a working tree), or None outside one.

    ``env`` supplies the commit identity (``GIT_AUTHOR_*``/``GIT_COMMITTER_*``); it defaults
    to ``os.environ``. ``tokens`` are what push and fetch may offer an HTTPS remote, each
    bound to its host (``omg.github.git_tokens`` picks them from a workflow's environment).
    """
    with translated(f"opening the git repository around {start}", _FIX):
        found = pygit2.discover_repository(str(start))
        if found is None:
            return None
        repo = pygit2.Repository(found)
    if repo.is_bare or repo.workdir is None:
        return None
    return RunRepo(repo, os.environ if env is None else env, tokens)


class RunRepo:
    """A git repository holding runs: run branches, remotes and managed worktrees.

    Every method leaves the user's HEAD, index and working tree alone, and raises only
    GitError. Calls are serialised, so the engine may share one RunRepo across threads.
    """

    def __init__(
        self, repo: pygit2.Repository, env: Mapping[str, str], tokens: Sequence[GitToken]
    ) -> None:
        self._repo = repo
        self._env = env
        self._tokens = tokens
        self._seen = runbranch.TreeCache()  # what this process's commits already hashed
        self._lock = threading.RLock()
        self.root = Path(repo.workdir or ".").resolve()

    def __repr__(self) -> str:
        return f"RunRepo({str(self.root)!r})"

    # -- run branch ---------------------------------------------------------------------

    def run_branch(self, run_id: str) -> str:
        """``omg/runs/<run_id>``: the branch the run's directory is committed to."""
        return run_ref(run_id).removeprefix(HEADS)

    def run_head(self, run_id: str) -> str | None:
        """The commit the local run branch is at, or None when it does not exist."""
        with self._lock, translated(f"reading omg/runs/{run_id} in {self.root}", _FIX):
            return head(self._repo, run_ref(run_id))

    def branch_head(self, branch: str) -> str | None:
        """The commit local ``branch`` (e.g. a lane's) is at, or None when it does not exist."""
        with self._lock, translated(f"reading {branch} in {self.root}", _FIX):
            return head(self._repo, HEADS + branch)

    def has_commit(self, sha: str) -> bool:
        """Whether the object database holds commit ``sha`` (a shallow clone may not)."""
        with self._lock, translated(f"looking up {sha[:12]} in {self.root}", _FIX):
            try:
                return isinstance(self._repo.get(sha), pygit2.Commit)
            except (ValueError, KeyError):
                return False

    def run_log(self, run_id: str, limit: int = 50) -> list[str]:
        """The run branch's commits, newest first, along first parents (at most ``limit``)."""
        with self._lock, translated(f"reading the history of omg/runs/{run_id}", _FIX):
            found = runbranch.resolve(self._repo, run_id, None)
            out: list[str] = []
            while found is not None and len(out) < limit:
                out.append(str(found.id))
                found = found.parents[0] if found.parents else None
            return out

    def commit_run_dir(
        self,
        run_id: str,
        run_dir: Path,
        message: str,
        *,
        expect_parent: str | None,
        changed: Collection[str] | None = None,
    ) -> str:
        """Commit ``run_dir`` as the run branch's whole tree; return the branch head.

        ``leg.lock`` and ``*.tmp*`` files are left out. An unchanged tree commits nothing.
        With ``expect_parent`` (a full sha) the branch must still be there (compare-and-swap).
        With ``changed`` (the paths written or removed since the branch's head was committed
        from this directory) the tree is the head's with those paths updated: no directory is
        scanned; without it, the directory is scanned whole.
        """
        with self._lock, translated(f"committing run {run_id} in {self.root}", _FIX):
            self._ignore_omg(run_dir)
            return runbranch.commit(
                self._repo, run_id, run_dir, message, expect_parent=expect_parent,
                author=signature(self._repo, self._env, "AUTHOR"),
                committer=signature(self._repo, self._env, "COMMITTER"),
                seen=self._seen, changed=changed,
            )  # fmt: skip

    def restore_run_dir(
        self, run_id: str, run_dir: Path, *, ref: str | None = None, prune: bool = False
    ) -> str | None:
        """Write the run branch's (or ``ref``'s) files into ``run_dir``; the commit, or None.

        Each file is replaced atomically; unchanged files are not rewritten. With ``prune``
        files the commit does not hold are removed, so the directory mirrors it exactly.
        """
        with self._lock, translated(f"restoring run {run_id} into {run_dir}", _FIX):
            self._ignore_omg(run_dir)
            return runbranch.restore(self._repo, run_id, run_dir, ref, prune=prune)

    def read_run_file(self, run_id: str, path: str, *, ref: str | None = None) -> str:
        """One file of the run branch (or ``ref``) as text, e.g. ``state.json``."""
        with self._lock, translated(f"reading {path} of run {run_id}", _FIX):
            return runbranch.read_file(self._repo, run_id, path, ref)

    def read_run_log(self, run_id: str, *, ref: str | None = None) -> str:
        """The event log of the run branch (or ``ref``) as text: events.jsonl, then the chunks
        of events/ in order."""
        with self._lock, translated(f"reading the event log of run {run_id}", _FIX):
            return runbranch.read_log(self._repo, run_id, ref)

    def run_records(self, remote: str | None = None) -> list[runscan.RunBlobs]:
        """Every run's state.json and event log as its branch holds them — the local run
        branches, or ``remote``'s as last fetched — read from the trees; nothing is written."""
        with self._lock, translated("reading the run branches", _FIX):
            heads = runscan.local_heads(self._repo) if remote is None else self.remote_runs(remote)
            return list(runscan.read_all(self._repo, heads))

    def _ignore_omg(self, run_dir: Path) -> None:
        if run_dir.resolve().is_relative_to(self.root / ".omg"):
            ensure_ignored(self.root / NAME)  # a run dir must never show in `git status`

    # -- remotes ------------------------------------------------------------------------

    def push(self, remote: str, refspecs: list[str]) -> None:
        """Push refspecs (``ref`` or ``src:dst``) to a remote name, URL or path; never forcing.

        A lost race (the remote ref moved on) raises GitError saying another leg advanced it.
        """
        with self._lock, translated(f"pushing to {remote}", _FIX):
            remotes.push(self._repo, remote, refspecs, self._tokens)

    def fetch(self, remote: str, refspecs: list[str]) -> None:
        """Fetch refspecs into ``refs/remotes/<remote>/``; local branches are never written."""
        with self._lock, translated(f"fetching from {remote}", _FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            for src in (spec.partition(":")[0] for spec in refspecs):
                if src.startswith(LEASES):  # a lease deleted there is read from no old copy
                    stale = self._repo.references.get(
                        lease_tracking(tracking, src.removeprefix(LEASES))
                    )
                    if stale is not None:
                        stale.delete()
            remotes.fetch(self._repo, remote, refspecs, self._tokens)

    def fetch_commit(self, remote: str, sha: str, ref: str) -> bool:
        """Whether commit ``sha`` is here, fetched when it is not: by its id (GitHub serves any
        commit its refs reach), else by ``ref``, which holds it. False when neither brings it."""
        if self.has_commit(sha):
            return True
        for spec in (f"{sha}:refs/remotes/{remote}/commits/{sha}", ref):
            try:
                self.fetch(remote, [spec])
            except GitError:
                continue
            if self.has_commit(sha):
                return True
        return False

    def files_at(self, sha: str) -> TreeFiles:
        """Commit ``sha``'s tree as files (a graph loaded from it reads nothing on disk)."""
        with self._lock, translated(f"reading commit {sha[:12]} in {self.root}", _FIX):
            return TreeFiles(self._repo, sha)

    def fetch_runs(self, remote: str) -> dict[str, str]:
        """Fetch every run branch of ``remote`` into ``refs/remotes/`` (no local branch is
        written); then its run branches as this repository holds them, id → commit."""
        self.fetch(remote, [f"{HEADS}omg/runs/*"])
        return self.remote_runs(remote)

    def remote_run_head(self, remote: str, run_id: str) -> str | None:
        """After a fetch or push: ``refs/remotes/<remote>/omg/runs/<run_id>``, or None.

        For a URL or path remote the namespace is ``omg-<hash of the URL>`` instead.
        """
        with self._lock, translated(f"reading {remote}'s omg/runs/{run_id}", _FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            return head(self._repo, remote_run_ref(tracking, run_id))

    def remote_runs(self, remote: str) -> dict[str, str]:
        """After a fetch: every run branch of ``remote`` this repository holds, id → commit."""
        with self._lock, translated(f"listing {remote}'s run branches", _FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            prefix = remote_run_ref(tracking, "x")[:-1]
            return {
                name.removeprefix(prefix): str(self._repo.references[name].target)
                for name in sorted(self._repo.references)
                if name.startswith(prefix) and "/" not in name.removeprefix(prefix)
            }

    def remote_ref(self, remote: str, run_id: str) -> str:
        """The remote-tracking ref of ``remote``'s run branch ``run_id`` (fetched or not)."""
        with self._lock, translated(f"naming {remote}'s omg/runs/{run_id}", _FIX):
            return remote_run_ref(remotes.tracking_name(self._repo, remote), run_id)

    def adopt_remote_run(self, remote: str, run_id: str) -> str:
        """Fast-forward the local run branch to the fetched remote one; return its head.

        A local branch ahead of the remote is kept as it is. Diverged histories raise
        GitError: omg never rewrites a run's history.
        """
        with self._lock, translated(f"adopting {remote}'s omg/runs/{run_id}", _FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            theirs = head(self._repo, remote_run_ref(tracking, run_id))
            if theirs is None:
                raise GitError(f"{remote} has no omg/runs/{run_id} here; fetch it first")
            return runbranch.adopt(self._repo, run_id, theirs, remote)

    def relation(self, ours: str | None, theirs: str) -> Relation:
        """How the local run branch at ``ours`` stands to the remote's at ``theirs``: the same,
        ahead (it extends theirs: unpushed commits), behind, or diverged (each has commits the
        other lacks)."""
        with self._lock, translated(f"comparing {theirs[:12]} in {self.root}", _FIX):
            if ours == theirs:
                return "same"
            if ours is None or self._repo.descendant_of(theirs, ours):
                return "behind"
            if self._repo.descendant_of(ours, theirs):
                return "ahead"
            return "diverged"

    def keep_unpublished(self, remote: str, run_id: str, run_dir: Path) -> str | None:
        """Before the remote's run branch is adopted over a local copy it does not extend: what
        this clone recorded that the remote lacks — its run branch's own commits and any events
        the run directory holds beyond them — moved to ``kept/omg-run-<id>-<sha7>``; the name,
        or None when there was nothing to keep."""
        with self._lock, translated(f"keeping the local record of run {run_id}", _FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            theirs = head(self._repo, remote_run_ref(tracking, run_id))
            if theirs is None:
                return None
            self._ignore_omg(run_dir)
            return runbranch.keep(
                self._repo, run_id, run_dir, theirs,
                author=signature(self._repo, self._env, "AUTHOR"),
                committer=signature(self._repo, self._env, "COMMITTER"),
                seen=self._seen,
            )  # fmt: skip

    def clear_stale_locks(self, run_id: str) -> list[str]:
        """Remove the lock files a killed git write left on the run's own refs (and its lanes'
        index locks); the paths removed. Only for the leg holding the run's leg lock."""
        with self._lock, translated(f"clearing stale locks of run {run_id}", _FIX):
            return locks.clear_stale(self._repo, self.root, run_id)

    # -- the lease ----------------------------------------------------------------------

    def remote_names(self) -> list[str]:
        """The remotes this repository names (``origin``, …)."""
        with self._lock, translated("listing the repository's remotes", _FIX):
            return [name for name in self._repo.remotes.names() if name]

    def lease(self, remote: str, run_id: str) -> tuple[str, bytes] | None:
        """After a fetch of the run: (commit, ``lease.json``) of the remote's lease, or None."""
        with self._lock, translated(f"reading {remote}'s lease of run {run_id}", _FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            return leases.read(self._repo, lease_tracking(tracking, run_id))

    def put_lease(
        self, remote: str, run_id: str, data: bytes, message: str, *, parent: str | None
    ) -> str:
        """Commit ``data`` as the run's lease on top of ``parent`` (the remote's lease as read)
        and push it: a compare-and-swap, MovedOn when another leg wrote the lease first."""
        sha = self.write_lease(run_id, data, message, parent=parent)
        with self._lock, translated(f"writing the lease of run {run_id}", _FIX):
            ref = lease_ref(run_id)
            remotes.push(self._repo, remote, [f"{ref}:{ref}"], self._tokens)
            return sha

    def write_lease(self, run_id: str, data: bytes, message: str, *, parent: str | None) -> str:
        """Commit ``data`` as the run's lease on top of ``parent``, here only: the local
        ``refs/omg/lease/<run-id>`` a later push carries (a compare-and-swap there)."""
        with self._lock, translated(f"writing the lease of run {run_id}", _FIX):
            return leases.write(
                self._repo, lease_ref(run_id), data, message, parent=parent,
                author=signature(self._repo, self._env, "AUTHOR"),
                committer=signature(self._repo, self._env, "COMMITTER"),
            )  # fmt: skip

    # -- fan-out records ----------------------------------------------------------------

    def record_entry(
        self, run_id: str, entry: str, run_dir: Path, message: str, *, parents: list[str]
    ) -> str:
        """Commit ``run_dir`` as matrix entry ``entry``'s record (``refs/omg/fanout/…``, local),
        with exactly ``parents``: the wave's base first, then its lanes' heads, then what the
        remote held for the entry (so the push is a compare-and-swap on that ref)."""
        with self._lock, translated(f"recording entry {entry} of run {run_id}", _FIX):
            self._ignore_omg(run_dir)
            return runbranch.snapshot(
                self._repo, fanout_ref(run_id, entry), run_dir, message, parents=parents,
                author=signature(self._repo, self._env, "AUTHOR"),
                committer=signature(self._repo, self._env, "COMMITTER"),
                seen=self._seen,
            )  # fmt: skip

    def fetch_records(self, remote: str, run_id: str, entry: str | None = None) -> dict[str, str]:
        """Every record the remote holds for the run now (or only ``entry``'s): entry → commit,
        fetched here."""
        with self._lock, translated(f"fetching the fan-out records of run {run_id}", _FIX):
            prefix = fanout_tracking(remotes.tracking_name(self._repo, remote), run_id)
            for name in [r for r in self._repo.references if r.startswith(prefix)]:
                self._repo.references.delete(name)  # what was deleted there is gone here too
            spec = fanout_refspec(remote, run_id, entry)
            remotes.fetch(self._repo, remote, [spec], self._tokens)
            return {
                from_disk(name.removeprefix(prefix)): str(self._repo.references[name].target)
                for name in self._repo.references
                if name.startswith(prefix)
            }

    def parents(self, sha: str) -> list[str]:
        """The parents of commit ``sha``, first parent first."""
        with self._lock, translated(f"reading commit {sha[:12]}", _FIX):
            return [str(p) for p in self._repo[sha].peel(pygit2.Commit).parent_ids]

    def drop_records(self, remote: str, run_id: str, entries: Sequence[str]) -> None:
        """Delete entries' records on the remote (the fold took them in, or found them stale)."""
        if entries:
            self.push(remote, [f":{fanout_ref(run_id, e)}" for e in entries])

    def copy_changes(self, run_dir: Path, old: str, new: str, *, skip: frozenset[str]) -> list[str]:
        """Into ``run_dir``: the files commit ``new`` changed since ``old`` (not ``skip``)."""
        with self._lock, translated(f"taking in {new[:12]} into {run_dir}", _FIX):
            return runbranch.copy_changes(self._repo, run_dir, old, new, skip)

    def set_branch(self, branch: str, sha: str) -> None:
        """Create or fast-forward local ``branch`` to ``sha`` (a lane a matrix job advanced)."""
        with self._lock, translated(f"moving {branch} to {sha[:12]}", _FIX):
            runbranch.set_branch(self._repo, branch, sha)

    # -- notes ----------------------------------------------------------------------------

    def record_note(self, run_id: str, note_id: str, data: bytes, message: str) -> str:
        """Commit ``data`` as note ``note_id`` of the run at ``refs/omg/notes/<run>/<id>``
        (local; push it without force, so a note with that id is written once)."""
        with self._lock, translated(f"recording note {note_id} of run {run_id}", _FIX):
            return notes.write(
                self._repo, note_ref(run_id, note_id), data, message,
                author=signature(self._repo, self._env, "AUTHOR"),
                committer=signature(self._repo, self._env, "COMMITTER"),
            )  # fmt: skip

    def fetch_notes(self, remote: str, run_id: str) -> dict[str, str]:
        """Every note the remote holds for the run now: note id → commit, fetched here."""
        with self._lock, translated(f"fetching the notes of run {run_id}", _FIX):
            prefix = notes_tracking(remotes.tracking_name(self._repo, remote), run_id)
            for name in [r for r in self._repo.references if r.startswith(prefix)]:
                self._repo.references.delete(name)  # what was dropped there is gone here too
            remotes.fetch(self._repo, remote, [notes_refspec(remote, run_id)], self._tokens)
            return self._refs_under(prefix)

    def local_notes(self, run_id: str) -> dict[str, str]:
        """The notes recorded here (a run with no remote): note id → commit."""
        with self._lock, translated(f"reading the notes of run {run_id}", _FIX):
            return self._refs_under(notes_prefix(run_id))

    def read_note(self, sha: str) -> bytes:
        """What note commit ``sha`` holds."""
        with self._lock, translated(f"reading note {sha[:12]}", _FIX):
            return notes.read(self._repo, sha)

    def drop_notes(self, remote: str | None, run_id: str, ids: Sequence[str]) -> None:
        """Delete notes a leg folded into the run branch (here, and on ``remote`` if given)."""
        if not ids:
            return
        with self._lock, translated(f"dropping the folded notes of run {run_id}", _FIX):
            for nid in ids:
                ref = self._repo.references.get(note_ref(run_id, nid))
                if ref is not None:
                    ref.delete()
        if remote is not None:
            self.push(remote, [f":{note_ref(run_id, nid)}" for nid in ids])

    def _refs_under(self, prefix: str) -> dict[str, str]:
        return {
            name.removeprefix(prefix): str(self._repo.references[name].target)
            for name in self._repo.references
            if name.startswith(prefix)
        }

    # -- spend books and waits (one-file records, each update a compare-and-swap) -------

    def book(self, remote: str | None, scope: str) -> tuple[str, bytes] | None:
        """(commit, ``spend.json``) of the spend book of ``scope`` — fetched from ``remote``
        now, or this repository's own without one; None when there is none yet."""
        ref = spend_ref(scope)
        with self._lock, translated(f"reading the spend book {ref}", _FIX):
            if remote is None:
                return books.read(self._repo, ref, "spend.json")
            tracking = spend_tracking(remotes.tracking_name(self._repo, remote), scope)
            stale = self._repo.references.get(tracking)
            if stale is not None:
                stale.delete()  # a book deleted there is not read from an old copy here
            remotes.fetch(self._repo, remote, [f"{ref}:{tracking}"], self._tokens)
            return books.read(self._repo, tracking, "spend.json")

    def put_book(
        self, remote: str | None, scope: str, data: bytes, message: str, *, parent: str | None
    ) -> None:
        """Write the book of ``scope`` as a child of ``parent`` (the commit read): pushed to
        ``remote``, or swapped in here; MovedOn when another leg wrote it first."""
        ref = spend_ref(scope)
        with self._lock, translated(f"writing the spend book {ref}", _FIX):
            author = signature(self._repo, self._env, "AUTHOR")
            committer = signature(self._repo, self._env, "COMMITTER")
            new = books.write(
                self._repo, None, "spend.json", data, message, parent=parent,
                author=author, committer=committer,
            )  # fmt: skip
            if remote is None:
                if not books.swap_local(self._repo, ref, new, parent):
                    raise MovedOn(f"the spend book {ref} moved while this leg wrote it")
                return
            self._repo.references.create(ref, new, force=True)  # ours: the push is the swap
            remotes.push(self._repo, remote, [f"{ref}:{ref}"], self._tokens)

    def put_wait(self, remote: str, run_id: str, data: bytes, message: str) -> None:
        """Record on ``remote`` that run ``run_id`` waits (``wait.json``), for the schedule."""
        ref = wait_ref(run_id)
        with self._lock, translated(f"recording the wait of run {run_id}", _FIX):
            tracking = waits_tracking(remotes.tracking_name(self._repo, remote)) + run_id
            remotes.fetch(self._repo, remote, [f"{ref}:{tracking}"], self._tokens)
            parent = head(self._repo, tracking)
            author = signature(self._repo, self._env, "AUTHOR")
            committer = signature(self._repo, self._env, "COMMITTER")
            books.write(
                self._repo, ref, "wait.json", data, message, parent=parent,
                author=author, committer=committer,
            )  # fmt: skip
            remotes.push(self._repo, remote, [f"{ref}:{ref}"], self._tokens)

    def waits(self, remote: str) -> dict[str, bytes | Unreadable]:
        """Every wait ``remote`` holds now: run id → ``wait.json``, or why it holds none omg
        can read."""
        with self._lock, translated("fetching the runs that wait", _FIX):
            prefix = waits_tracking(remotes.tracking_name(self._repo, remote))
            for name in [r for r in self._repo.references if r.startswith(prefix)]:
                self._repo.references.delete(name)  # a wait that is over is gone here too
            spec = f"{wait_ref('x')[:-1]}*:{prefix}*"
            remotes.fetch(self._repo, remote, [spec], self._tokens)
            out: dict[str, bytes | Unreadable] = {}
            for rid in self._refs_under(prefix):
                try:
                    got = books.read(self._repo, prefix + rid, "wait.json")
                except Unreadable as exc:
                    out[rid] = exc
                    continue
                out[rid] = got[1] if got is not None else b""
            return out

    def drop_wait(self, remote: str, run_id: str) -> None:
        """The run waits no more: its wait is deleted on ``remote`` (when it holds one)."""
        ref = wait_ref(run_id)
        with self._lock, translated(f"clearing the wait of run {run_id}", _FIX):
            tracking = waits_tracking(remotes.tracking_name(self._repo, remote)) + run_id
            remotes.fetch(self._repo, remote, [f"{ref}:{tracking}"], self._tokens)
            if head(self._repo, tracking) is None:
                return
            remotes.push(self._repo, remote, [f":{ref}"], self._tokens)
            self._repo.references.delete(tracking)

    # -- worktrees ----------------------------------------------------------------------

    def acquire_worktree(
        self, run_id: str, name: str, *, base: str = "HEAD", branch: str | None = None
    ) -> Checkout:
        """The checkout at ``.omg/worktrees/<run_id>/<name>``, reused, re-attached or created.

        Its branch is ``omg/work/<run_id>/<name>``, or ``branch`` (created from ``base`` when
        it does not exist yet).
        """
        with self._lock, translated(f"preparing worktree {name!r} of run {run_id}", _FIX):
            return worktrees.acquire(self._repo, self.root, run_id, name, base, branch)

    def lane_base(self, run_id: str, name: str) -> str | None:
        """Where the run's lane ``name`` started in this clone (``refs/omg/base/…``), or None."""
        with self._lock, translated(f"reading where lane {name!r} of run {run_id} started", _FIX):
            return head(self._repo, base_ref(run_id, name))

    def commit_worktree(self, wt: Checkout, message: str) -> str | None:
        """Commit every change in the worktree on its branch; None when nothing changed."""
        with self._lock, translated(f"committing worktree {wt.name!r} at {wt.path}", _FIX):
            return worktrees.commit(
                wt, self._repo, message,
                signature(self._repo, self._env, "AUTHOR"),
                signature(self._repo, self._env, "COMMITTER"),
            )  # fmt: skip

    def worktree_head(self, wt: Checkout) -> str:
        """The commit the worktree is at."""
        with self._lock, translated(f"reading worktree {wt.name!r} at {wt.path}", _FIX):
            return worktrees.worktree_head(wt, self._repo)

    def worktree_tree(self, wt: Checkout) -> str:
        """The tree the worktree's HEAD commit holds (two commits, one content: one tree)."""
        with self._lock, translated(f"reading worktree {wt.name!r} at {wt.path}", _FIX):
            return worktrees.worktree_tree(wt, self._repo)

    def restore_worktree(
        self, run_id: str, name: str, commit: str, *, branch: str | None = None
    ) -> Checkout:
        """Bring the worktree and its branch exactly to ``commit`` (e.g. in a fresh clone)."""
        with self._lock, translated(f"restoring worktree {name!r} of run {run_id}", _FIX):
            sig = signature(self._repo, self._env, "COMMITTER")
            return worktrees.restore(self._repo, self.root, run_id, name, commit, branch, sig)

    def clean(self, run_id: str, *, remote: str | None = None) -> list[str]:
        """Remove the run's worktrees, keeping any with changes and any branch with unique work.

        With ``remote``, a branch is deleted only when the remote-tracking copy holds its
        head; without, only when it has no commits beyond its base. Returns notes for humans.
        """
        with self._lock, translated(f"cleaning the worktrees of run {run_id}", _FIX):
            tracking = remotes.tracking_name(self._repo, remote) if remote else None
            return worktrees.clean(self._repo, self.root, run_id, tracking)
