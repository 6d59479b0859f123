"""The refs `omg prune` judges and removes: omg's own refs in this repository or on a remote,
each with its commit and that commit's time, the branches that may hold a lane's work, and
removal that only takes a ref still pointing where it was judged (a compare-and-swap)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

from omg.errors import GitError, OmgError
from omg.git import remote as remotes
from omg.git.edge import describe, redact, translated
from omg.git.names import HEADS
from omg.git.remote import GitToken

#: omg's namespaces: where each lives, and the remote-tracking folder omg's fetches mirror it
#: into (refs/remotes/<tracking>/<folder>); lane bases are this clone's alone.
SPACES: tuple[tuple[str, str | None], ...] = (
    ("refs/heads/omg/runs/", "omg/runs/"),
    ("refs/heads/omg/work/", "omg/work/"),
    ("refs/omg/base/", None),
    ("refs/omg/fanout/", "omg-fanout/"),
    ("refs/omg/notes/", "omg-notes/"),
    ("refs/omg/lease/", "omg-lease/"),
    ("refs/omg/waits/", "omg-waits/"),
    ("refs/omg/spend/", "omg-spend/"),
)
#: Branches that are omg's own (never a holder of a lane's work: they may go too).
OWN_BRANCHES = ("refs/heads/omg/runs/", "refs/heads/omg/work/")
#: Bytes of a record read at most (state.json, note.json, lease.json).
LIMIT = 16 << 20
_FIX = "check the repository with `git status` and `git fsck`, then prune again"
_ZERO = pygit2.Oid(hex="0" * 40)


@dataclass(frozen=True)
class Found:
    """One of omg's refs: its name where it lives (the remote's, for a remote), the name this
    repository reads it by, its commit and that commit's time (epoch seconds)."""

    name: str
    local: str
    sha: str
    time: float


class _Moved(GitError):
    """A ref on the remote moved since it was judged: the push deleting it was not sent."""


class _Guarded(remotes.Callbacks):
    """A push of deletions that goes only if every ref is still where it was judged."""

    def __init__(
        self,
        repo: pygit2.Repository,
        ep: remotes.Endpoint,
        tokens: Sequence[GitToken],
        expected: dict[str, str],
    ) -> None:
        super().__init__(repo, ep, tokens)
        self.expected = expected

    def push_negotiation(self, updates: list[pygit2.remotes.PushUpdate]) -> None:
        # src: what the remote holds now (its advertisement); receive-pack then deletes a ref
        # only while it still holds that value, so together this is a compare-and-swap
        moved = [
            u.dst_refname
            for u in updates
            if u.dst == _ZERO and str(u.src) != self.expected.get(u.dst_refname)
        ]
        if moved:
            raise _Moved(f"{', '.join(moved)} moved since it was judged")


class Refs:
    """omg's refs in one repository (``remote`` None) or on one of its remotes."""

    def __init__(
        self, repo: pygit2.Repository, remote: str | None, tokens: Sequence[GitToken] = ()
    ) -> None:
        self._repo = repo
        self.remote = remote
        self._tokens = tokens
        self.tracking = remotes.tracking_name(repo, remote) if remote is not None else None

    @classmethod
    def open(cls, start: Path, remote: str | None, tokens: Sequence[GitToken] = ()) -> Refs | None:
        """The repository around ``start`` (None outside one)."""
        with translated(f"opening the git repository around {start}", _FIX):
            found = pygit2.discover_repository(str(start))
            if found is None:
                return None
            return cls(pygit2.Repository(found), remote, tokens)

    def _mirror(self, prefix: str) -> str | None:
        """Where this repository holds the remote's refs under ``prefix`` (None: nowhere)."""
        folder = dict(SPACES).get(prefix)
        if self.tracking is None:
            return prefix
        return None if folder is None else f"refs/remotes/{self.tracking}/{folder}"

    def fetch(self) -> None:
        """Mirror the remote's omg refs and branches into refs/remotes/ (a ref gone there goes
        here too), so the judging reads what the remote holds now."""
        if self.remote is None:
            return
        specs = [f"{HEADS}*:refs/remotes/{self.tracking}/*"]
        specs += [f"{p}*:{self._mirror(p)}*" for p, f in SPACES if f and not p.startswith(HEADS)]
        with translated(f"fetching omg's refs from {self.remote}", _FIX):
            remotes.fetch(self._repo, self.remote, specs, self._tokens, prune=True)

    def found(self) -> list[Found]:
        """Every ref of omg's namespaces, sorted by name."""
        out: list[Found] = []
        with translated("listing omg's refs", _FIX):
            names = sorted(self._repo.references)
            for prefix, _ in SPACES:
                mirror = self._mirror(prefix)
                if mirror is None:
                    continue
                for local in (n for n in names if n.startswith(mirror)):
                    got = self._commit(local)
                    if got is not None:
                        name = prefix + local.removeprefix(mirror)
                        out.append(Found(name, local, str(got.id), float(got.commit_time)))
        return sorted(out, key=lambda f: f.name)

    def _commit(self, ref: str) -> pygit2.Commit | None:
        try:
            return self._repo.references[ref].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            return None  # a ref omg did not write (a tag, a tree): not judged, never removed

    def read(self, sha: str, name: str) -> bytes | None:
        """File ``name`` of commit ``sha`` (None: no such file, or one past LIMIT)."""
        try:
            entry = self._repo[sha].peel(pygit2.Commit).tree[name]
            blob = self._repo[entry.id]
        except (KeyError, ValueError, pygit2.GitError):
            return None
        if not isinstance(blob, pygit2.Blob) or blob.size > LIMIT:
            return None
        return bytes(blob.data)

    def holders(self) -> dict[str, str]:
        """The branches kept whatever a prune decides — every branch but omg's run and lane
        branches, and tags (here: this clone's, and its remote-tracking ones) — name → commit."""
        if self.tracking is not None:
            mirror = f"refs/remotes/{self.tracking}/"
            wanted = [(n, HEADS + n.removeprefix(mirror)) for n in self._repo.references
                      if n.startswith(mirror)]  # fmt: skip
        else:
            wanted = [(n, n) for n in self._repo.references
                      if n.startswith((HEADS, "refs/tags/", "refs/remotes/"))]  # fmt: skip
        out = {}
        for local, name in sorted(wanted):
            if name.startswith(OWN_BRANCHES) or "/omg/runs/" in name or "/omg/work/" in name:
                continue
            got = self._commit(local)
            if got is not None and not name.endswith("/HEAD"):
                out[name.removeprefix(HEADS)] = str(got.id)
        return out

    def held_by(self, sha: str, holders: dict[str, str]) -> str:
        """The first of ``holders`` whose history holds commit ``sha`` ('' none)."""
        with translated(f"looking for {sha[:12]} on the kept branches", _FIX):
            for name, tip in holders.items():
                if tip == sha or self._repo.descendant_of(tip, sha):
                    return name
        return ""

    def checked_out(self) -> dict[str, str]:
        """Branches checked out in a worktree of this repository: ref → its path."""
        out = {}
        for name in self._repo.list_worktrees():
            with contextlib.suppress(pygit2.GitError, KeyError, ValueError, OSError):
                path = self._repo.lookup_worktree(name).path
                head = pygit2.Repository(path).references["HEAD"]
                if head.type == pygit2.enums.ReferenceType.SYMBOLIC:
                    out[str(head.target)] = str(path)
        return out

    def remove(self, judged: Sequence[Found]) -> tuple[list[Found], list[Found]]:
        """Delete each ref that still points where it was judged: (removed, moved since)."""
        if not judged:
            return [], []
        stray = [f.name for f in judged if not f.name.startswith(tuple(p for p, _ in SPACES))]
        if stray:  # never a ref outside omg's namespaces, whatever a caller judged
            raise GitError(f"refusing to remove {', '.join(stray)}: not one of omg's refs")
        if self.remote is None:
            return self._remove_here(self._repo, judged)
        ep = remotes.endpoint(self._repo, self.remote)
        path = remotes._local_path(ep.url)
        if path is not None:
            with translated(f"removing refs from {ep.shown}", _FIX):
                done, moved = self._remove_here(pygit2.Repository(path), judged)
        else:
            done, moved = self._push_removals(ep, judged)
        for f in done:  # the mirror follows, as after git push --delete
            with contextlib.suppress(KeyError, pygit2.GitError):
                self._repo.references.delete(f.local)
        return done, moved

    @staticmethod
    def _remove_here(
        repo: pygit2.Repository, judged: Sequence[Found]
    ) -> tuple[list[Found], list[Found]]:
        done, moved = [], []
        for f in judged:
            ref = repo.references.get(f.name)
            if ref is None:
                continue  # gone already
            if str(ref.target) != f.sha:
                moved.append(f)
                continue
            try:
                ref.delete()  # libgit2 refuses when the ref changed since it was looked up
            except (pygit2.GitError, OSError):
                moved.append(f)
                continue
            done.append(f)
        return done, moved

    def _push_removals(
        self, ep: remotes.Endpoint, judged: Sequence[Found]
    ) -> tuple[list[Found], list[Found]]:
        """One push of every deletion, sent only when the remote still holds each judged value
        (checked at negotiation; receive-pack checks it again under the ref's lock). When one
        moved, the refs are listed again and the push retried without the ones that moved."""
        pending, moved = list(judged), []
        for _ in range(2):
            now = self._listed(ep)
            moved += [f for f in pending if now.get(f.name) not in (None, f.sha)]
            pending = [f for f in pending if now.get(f.name) == f.sha]
            if not pending:
                return [], moved
            ep = remotes.endpoint(self._repo, self.remote or ep.arg)  # fresh: the listing spent it
            callbacks = _Guarded(self._repo, ep, self._tokens, {f.name: f.sha for f in pending})
            try:
                ep.remote.push([f":{f.name}" for f in pending], callbacks=callbacks, proxy=True)
            except _Moved:
                continue
            except OmgError:
                raise
            except pygit2.GitError as exc:
                raise GitError(
                    f"removing refs from {ep.shown} failed: {redact(describe(exc))}; check "
                    "that the token may write to the repository (contents: write)"
                ) from exc
            refused = {ref for ref, _ in callbacks.rejected}
            moved += [f for f in pending if f.name in refused]
            return [f for f in pending if f.name not in refused], moved
        return [], moved + pending

    def _listed(self, ep: remotes.Endpoint) -> dict[str, str]:
        """What the remote holds now: ref → commit."""
        ep = remotes.endpoint(self._repo, self.remote or ep.arg)
        with translated(f"listing the refs of {ep.shown}", _FIX):
            heads = ep.remote.list_heads(callbacks=remotes.Callbacks(self._repo, ep, self._tokens))
            own = tuple(p for p, _ in SPACES)
            return {h.name: str(h.oid) for h in heads if h.name and h.name.startswith(own)}
