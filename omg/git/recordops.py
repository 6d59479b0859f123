"""A run repository's one-file records, each a commit on a ref of its own: the lease, the
fan-out entries' records, notes, the spend books and the waits."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from omg.errors import MovedOn, Unreadable
from omg.git import lease as leases
from omg.git import notes, onefile, runbranch
from omg.git import remote as remotes
from omg.git.edge import FIX, translated
from omg.git.identity import signature
from omg.git.names import (
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
    spend_ref,
    spend_tracking,
    wait_ref,
    waits_tracking,
)
from omg.nodefile import from_disk

if TYPE_CHECKING:
    from omg.git.handle import Handle
else:
    Handle = object  # RunRepo derives from Handle itself: the operations need not import it


class RecordOps(Handle):
    """The records beside the run branch, each update a compare-and-swap."""

    # -- the lease ----------------------------------------------------------------------
    def lease(self, remote: str, run_id: str) -> tuple[str, bytes] | None:
        """After a fetch of the run: (commit, ``lease.json``) of the remote's lease, or None."""
        with self._lock, translated(f"reading {remote}'s lease of run {run_id}", FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            return onefile.read(
                self._repo, lease_tracking(tracking, run_id), leases.FILE, leases.LIMIT
            )

    def put_lease(
        self, remote: str, run_id: str, data: bytes, message: str, *, parent: str | None
    ) -> str:
        """Commit ``data`` as the run's lease on top of ``parent`` (the remote's lease as read)
        and push it: a compare-and-swap, MovedOn when another leg wrote the lease first."""
        sha = self.write_lease(run_id, data, message, parent=parent)
        with self._lock, translated(f"writing the lease of run {run_id}", FIX):
            ref = lease_ref(run_id)
            remotes.push(self._repo, remote, [f"{ref}:{ref}"], self._tokens)
            return sha

    def write_lease(self, run_id: str, data: bytes, message: str, *, parent: str | None) -> str:
        """Commit ``data`` as the run's lease on top of ``parent``, here only: the local
        ``refs/omg/lease/<run-id>`` a later push carries (a compare-and-swap there)."""
        with self._lock, translated(f"writing the lease of run {run_id}", FIX):
            return onefile.write(
                self._repo, lease_ref(run_id), leases.FILE, data, message, parent=parent,
                author=signature(self._repo, self._env, "AUTHOR"),
                committer=signature(self._repo, self._env, "COMMITTER"),
            )  # fmt: skip

    # -- fan-out records ----------------------------------------------------------------
    def record_entry(
        self,
        run_id: str,
        entry: str,
        run_dir: Path,
        message: str,
        *,
        parents: list[str],
        ref: str | None = None,
    ) -> str:
        """Commit ``run_dir`` as matrix entry ``entry``'s record (``refs/omg/fanout/…``, local,
        unless ``ref`` names another), with exactly ``parents``: the wave's base first, then its
        lanes' heads, then what the remote held for the entry (so the push is a
        compare-and-swap on that ref)."""
        with self._lock, translated(f"recording entry {entry} of run {run_id}", FIX):
            self._ignore_omg(run_dir)
            return runbranch.snapshot(
                self._repo, ref or fanout_ref(run_id, entry), run_dir, message, parents=parents,
                author=signature(self._repo, self._env, "AUTHOR"),
                committer=signature(self._repo, self._env, "COMMITTER"),
                seen=self._seen,
            )  # fmt: skip

    def fetch_records(self, remote: str, run_id: str, entry: str | None = None) -> dict[str, str]:
        """Every record the remote holds for the run now (or only ``entry``'s): entry → commit,
        fetched here."""
        with self._lock, translated(f"fetching the fan-out records of run {run_id}", FIX):
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

    def drop_records(self, remote: str, run_id: str, entries: Sequence[str]) -> None:
        """Delete entries' records on the remote (the fold took them in, or found them stale)."""
        if entries:
            self.push(remote, [f":{fanout_ref(run_id, e)}" for e in entries])

    # -- notes ----------------------------------------------------------------------------
    def record_note(self, run_id: str, note_id: str, data: bytes, message: str) -> str:
        """Commit ``data`` as note ``note_id`` of the run at ``refs/omg/notes/<run>/<id>``
        (local; push it without force, so a note with that id is written once)."""
        with self._lock, translated(f"recording note {note_id} of run {run_id}", FIX):
            return notes.write(
                self._repo, note_ref(run_id, note_id), data, message,
                author=signature(self._repo, self._env, "AUTHOR"),
                committer=signature(self._repo, self._env, "COMMITTER"),
            )  # fmt: skip

    def fetch_notes(self, remote: str, run_id: str) -> dict[str, str]:
        """Every note the remote holds for the run now: note id → commit, fetched here."""
        with self._lock, translated(f"fetching the notes of run {run_id}", FIX):
            prefix = notes_tracking(remotes.tracking_name(self._repo, remote), run_id)
            for name in [r for r in self._repo.references if r.startswith(prefix)]:
                self._repo.references.delete(name)  # what was dropped there is gone here too
            remotes.fetch(self._repo, remote, [notes_refspec(remote, run_id)], self._tokens)
            return self._refs_under(prefix)

    def local_notes(self, run_id: str) -> dict[str, str]:
        """The notes recorded here (a run with no remote): note id → commit."""
        with self._lock, translated(f"reading the notes of run {run_id}", FIX):
            return self._refs_under(notes_prefix(run_id))

    def read_note(self, sha: str) -> bytes:
        """What note commit ``sha`` holds."""
        with self._lock, translated(f"reading note {sha[:12]}", FIX):
            return notes.read(self._repo, sha)

    def drop_notes(self, remote: str | None, run_id: str, ids: Sequence[str]) -> None:
        """Delete notes a leg folded into the run branch (here, and on ``remote`` if given)."""
        if not ids:
            return
        with self._lock, translated(f"dropping the folded notes of run {run_id}", FIX):
            for nid in ids:
                ref = self._repo.references.get(note_ref(run_id, nid))
                if ref is not None:
                    ref.delete()
        if remote is not None:
            self.push(remote, [f":{note_ref(run_id, nid)}" for nid in ids])

    # -- spend books and waits (one-file records, each update a compare-and-swap) -------
    def book(self, remote: str | None, scope: str) -> tuple[str, bytes] | None:
        """(commit, ``spend.json``) of the spend book of ``scope`` — fetched from ``remote``
        now, or this repository's own without one; None when there is none yet."""
        ref = spend_ref(scope)
        with self._lock, translated(f"reading the spend book {ref}", FIX):
            if remote is None:
                return onefile.read(self._repo, ref, "spend.json")
            tracking = spend_tracking(remotes.tracking_name(self._repo, remote), scope)
            stale = self._repo.references.get(tracking)
            if stale is not None:
                stale.delete()  # a book deleted there is not read from an old copy here
            remotes.fetch(self._repo, remote, [f"{ref}:{tracking}"], self._tokens)
            return onefile.read(self._repo, tracking, "spend.json")

    def take_book(self, remote: str, scope: str) -> str | None:
        """The spend book of ``scope`` as ``remote`` holds it made this repository's own (none
        there: none here), for a leg that reads the remote's books and writes none there; its
        commit (None: no book)."""
        got = self.book(remote, scope)  # Unreadable when the remote's book is damaged
        ref = spend_ref(scope)
        with self._lock, translated(f"taking the spend book {ref} from {remote}", FIX):
            if got is not None:
                self._repo.references.create(ref, got[0], force=True)
                return got[0]
            if self._repo.references.get(ref) is not None:
                self._repo.references.delete(ref)
            return None

    def put_book(
        self, remote: str | None, scope: str, data: bytes, message: str, *, parent: str | None
    ) -> str:
        """Write the book of ``scope`` as a child of ``parent`` (the commit read): pushed to
        ``remote``, or swapped in here; its new commit; MovedOn when another leg wrote it
        first."""
        ref = spend_ref(scope)
        with self._lock, translated(f"writing the spend book {ref}", FIX):
            author = signature(self._repo, self._env, "AUTHOR")
            committer = signature(self._repo, self._env, "COMMITTER")
            new = onefile.write(
                self._repo, None, "spend.json", data, message, parent=parent,
                author=author, committer=committer,
            )  # fmt: skip
            if remote is None:
                if not onefile.swap_local(self._repo, ref, new, parent):
                    raise MovedOn(f"the spend book {ref} moved while this leg wrote it")
                return str(new)
            self._repo.references.create(ref, new, force=True)  # ours: the push is the swap
            remotes.push(self._repo, remote, [f"{ref}:{ref}"], self._tokens)
            return str(new)

    def put_wait(self, remote: str, run_id: str, data: bytes, message: str) -> None:
        """Record on ``remote`` that run ``run_id`` waits (``wait.json``), for the schedule."""
        ref = wait_ref(run_id)
        with self._lock, translated(f"recording the wait of run {run_id}", FIX):
            tracking = waits_tracking(remotes.tracking_name(self._repo, remote)) + run_id
            remotes.fetch(self._repo, remote, [f"{ref}:{tracking}"], self._tokens)
            parent = head(self._repo, tracking)
            author = signature(self._repo, self._env, "AUTHOR")
            committer = signature(self._repo, self._env, "COMMITTER")
            onefile.write(
                self._repo, ref, "wait.json", data, message, parent=parent,
                author=author, committer=committer,
            )  # fmt: skip
            remotes.push(self._repo, remote, [f"{ref}:{ref}"], self._tokens)

    def waits(self, remote: str) -> dict[str, bytes | Unreadable]:
        """Every wait ``remote`` holds now: run id → ``wait.json``, or why it holds none omg
        can read."""
        with self._lock, translated("fetching the runs that wait", FIX):
            prefix = waits_tracking(remotes.tracking_name(self._repo, remote))
            for name in [r for r in self._repo.references if r.startswith(prefix)]:
                self._repo.references.delete(name)  # a wait that is over is gone here too
            spec = f"{wait_ref('x')[:-1]}*:{prefix}*"
            remotes.fetch(self._repo, remote, [spec], self._tokens)
            out: dict[str, bytes | Unreadable] = {}
            for rid in self._refs_under(prefix):
                try:
                    got = onefile.read(self._repo, prefix + rid, "wait.json")
                except Unreadable as exc:
                    out[rid] = exc
                    continue
                out[rid] = got[1] if got is not None else b""
            return out

    def drop_wait(self, remote: str, run_id: str) -> None:
        """The run waits no more: its wait is deleted on ``remote`` (when it holds one)."""
        ref = wait_ref(run_id)
        with self._lock, translated(f"clearing the wait of run {run_id}", FIX):
            tracking = waits_tracking(remotes.tracking_name(self._repo, remote)) + run_id
            remotes.fetch(self._repo, remote, [f"{ref}:{tracking}"], self._tokens)
            if head(self._repo, tracking) is None:
                return
            remotes.push(self._repo, remote, [f":{ref}"], self._tokens)
            self._repo.references.delete(tracking)
