"""Managed worktrees: one checkout per (run, name), acquired idempotently, cleaned without loss;
and ``WorktreeOps``, a run repository's operations on them under its lock."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import RepositoryOpenFlag, ResetMode

from omg.dotomg import NAME, ensure_ignored
from omg.errors import GitError
from omg.git import remote as remotes
from omg.git.edge import FIX, translated
from omg.git.identity import BOT_EMAIL, BOT_NAME, signature
from omg.git.names import BASES, HEADS, base_ref, checked, head, run_dir, work_branch, worktree_id
from omg.git.unfinished import clear as clear_unfinished
from omg.git.unfinished import remove


@dataclass(frozen=True)
class Checkout:
    """A managed checkout: its name in the graph, where it lives, and the branch it is on."""

    name: str
    path: Path
    branch: str


def acquire(
    repo: pygit2.Repository, root: Path, run_id: str, name: str, base: str, branch: str | None
) -> Checkout:
    """Reuse the managed checkout, else re-attach its retained branch, else create it at base."""
    path = run_dir(root, run_id) / checked("worktree name", name)
    wanted = branch or work_branch(run_id, name)
    ensure_ignored(root / NAME)
    clear_unfinished(repo, path, worktree_id(run_id, name), wanted)
    if path.exists() or path.is_symlink():
        return Checkout(name, path, _branch_of(open_checkout(repo, path), path))
    ref = HEADS + wanted
    if head(repo, ref) is None:
        start = _commit(repo, base, f"base {base!r} of worktree {name!r}")
        # where it started first: a kill between the two leaves a base the next leg restores
        # the lane from, never a branch without one (which `clean` could not judge)
        repo.references.create(base_ref(run_id, name), start.id, force=True)
        repo.create_reference_direct(ref, start.id, False, f"omg: worktree {name} from {base}")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        repo.add_worktree(worktree_id(run_id, name), str(path), repo.references[ref])
    except pygit2.GitError as exc:
        if "already checked out" in str(exc):
            raise GitError(
                f"branch {wanted} is checked out elsewhere (another worktree or the main "
                f"checkout), so worktree {name!r} cannot use it; switch that checkout away "
                f"(e.g. `git switch --detach`) and resume"
            ) from exc
        raise
    return Checkout(name, path, wanted)


def open_checkout(repo: pygit2.Repository, path: Path) -> pygit2.Repository:
    """Open the checkout at ``path`` after proving it is a worktree of ``repo``."""
    foreign = GitError(
        f"{path} exists but is not a worktree of {repo.workdir}; move it away and resume"
    )
    try:
        checkout = pygit2.Repository(str(path), flags=RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError:
        raise foreign from None
    admin = Path(checkout.path or "")
    commondir = admin / "commondir"
    common = (admin / commondir.read_text().strip()) if commondir.is_file() else admin
    same_repo = common.resolve() == Path(repo.path or "").resolve()
    if not same_repo or Path(checkout.workdir or "").resolve() != path.resolve():
        raise foreign
    return checkout


def _branch_of(checkout: pygit2.Repository, path: Path) -> str:
    if checkout.head_is_detached or checkout.head_is_unborn:
        raise GitError(
            f"worktree at {path} is not on a branch, so its commits would belong to none; "
            f"check its branch out again (`git -C {path} switch <branch>`) and resume"
        )
    return checkout.head.shorthand


def commit(
    wt: Checkout,
    repo: pygit2.Repository,
    message: str,
    author: pygit2.Signature,
    committer: pygit2.Signature,
) -> str | None:
    """Stage everything (as ``git add -A``) in the worktree and commit it on its branch."""
    checkout = open_checkout(repo, wt.path)
    if _branch_of(checkout, wt.path) != wt.branch:
        raise GitError(
            f"worktree {wt.name!r} at {wt.path} moved to branch {checkout.head.shorthand}, "
            f"omg expects {wt.branch}; switch it back and resume"
        )
    index = checkout.index
    index.read(force=False)
    index.add_all()
    tree = index.write_tree()
    parent = checkout.head.peel(pygit2.Commit)
    if parent.tree_id == tree:
        return None
    index.write()
    return str(checkout.create_commit("HEAD", author, committer, message, tree, [parent.id]))


def worktree_head(wt: Checkout, repo: pygit2.Repository) -> str:
    """The commit the worktree's HEAD is at."""
    return str(open_checkout(repo, wt.path).head.peel(pygit2.Commit).id)


def worktree_tree(wt: Checkout, repo: pygit2.Repository) -> str:
    """The tree of the commit the worktree's HEAD is at."""
    return str(open_checkout(repo, wt.path).head.peel(pygit2.Commit).tree_id)


def restore(
    repo: pygit2.Repository,
    root: Path,
    run_id: str,
    name: str,
    at: str,
    branch: str | None,
    sig: pygit2.Signature | None = None,
) -> Checkout:
    """Bring the worktree and its branch exactly to ``at``; only ever fast-forwarding a branch
    of the user's. A lane of omg's own that holds more is set aside (committed as ``sig``)."""
    wanted = branch or work_branch(run_id, name)
    ref = HEADS + wanted
    target = _commit(repo, at, f"recorded commit of worktree {name!r}")
    # before the lane is judged: a checkout a kill left half made holds nothing to set aside
    path = run_dir(root, run_id) / checked("worktree name", name)
    clear_unfinished(repo, path, worktree_id(run_id, name), wanted)
    current = head(repo, ref)
    if current is None:
        repo.references.create(base_ref(run_id, name), target.id, force=True)
        repo.create_reference_direct(ref, target.id, False, f"omg: restore worktree {name}")
    elif current != str(target.id) and not repo.descendant_of(target.id, current):
        if branch is not None:  # a branch of the user's: never moved back by omg
            raise GitError(
                f"branch {wanted} is at {current[:12]}, which run {run_id} never recorded (it "
                f"recorded {str(target.id)[:12]}); omg will not drop those commits. Keep them "
                f"with `git branch -m {wanted} {wanted}-kept` or drop them with "
                f"`git branch -D {wanted}`, then resume"
            )
        _set_aside(repo, root, run_id, name, target, sig or pygit2.Signature(BOT_NAME, BOT_EMAIL))
    wt = acquire(repo, root, run_id, name, str(target.id), branch)
    checkout = open_checkout(repo, wt.path)
    if wt.branch != wanted:
        raise GitError(
            f"worktree at {wt.path} is on {wt.branch}, not {wanted}; remove it and resume"
        )
    if checkout.head.target != target.id:
        if _dirty(checkout):
            raise GitError(
                f"worktree {name!r} at {wt.path} has uncommitted changes; commit or remove "
                "them, then resume"
            )
        # clean and only ever forward (checked above), so a hard reset loses nothing
        checkout.reset(target.id, ResetMode.HARD)
    return wt


def _set_aside(
    repo: pygit2.Repository, root: Path, run_id: str, name: str, target: pygit2.Commit,
    sig: pygit2.Signature,
) -> None:  # fmt: skip
    """A lane of omg's own holds work its run never recorded (executions killed between their
    lane commit and their event, or before their commit, or a leg that lost the run): keep it
    — uncommitted files committed first — as ``kept/omg-work-<run>-<name>-<sha7>``, and bring
    the lane back to what the run recorded."""
    path = run_dir(root, run_id) / name
    ref = HEADS + work_branch(run_id, name)
    checkout = open_checkout(repo, path) if path.is_dir() and any(path.iterdir()) else None
    if checkout is not None and _dirty(checkout):
        wt = Checkout(name, path, work_branch(run_id, name))
        commit(wt, repo, f"omg {run_id}: what unsettled executions left in lane {name}", sig, sig)
    current = head(repo, ref)
    assert current is not None
    kept = f"{HEADS}kept/omg-work-{run_id}-{name}-{current[:7]}"
    if head(repo, kept) != current:
        repo.create_reference_direct(kept, current, True, "omg: work the run never recorded")
    if checkout is not None:
        checkout.reset(target.id, ResetMode.HARD)  # moves the branch it is on, and its files
    else:
        repo.references[ref].set_target(target.id, "omg: back to what the run recorded")


def clean(repo: pygit2.Repository, root: Path, run_id: str, tracking: str | None) -> list[str]:
    """Remove the run's worktrees; delete only branches that provably hold no unique work."""
    notes: list[str] = []
    lanes = run_dir(root, run_id)
    prefix = f"omg/work/{run_id}/"
    names: set[str] = set()
    for entry in lanes.iterdir() if lanes.is_dir() else ():
        if not entry.name.startswith("."):
            names.add(entry.name)
        elif entry.name.endswith(".unfinished"):  # a checkout being cleared when a kill struck
            remove(entry)
    names |= {b.removeprefix(prefix) for b in repo.branches.local if b.startswith(prefix)}
    bases = f"{BASES}{run_id}/"
    names |= {r.removeprefix(bases) for r in repo.references if r.startswith(bases)}
    for name in sorted(names):
        path = lanes / name
        branch: str | None = work_branch(run_id, name)
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
        if path.exists():
            try:
                checkout = open_checkout(repo, path)
            except GitError as exc:
                notes.append(f"kept {path}: {exc}")
                continue
            branch = None if checkout.head_is_detached else checkout.head.shorthand
            if branch is None or _dirty(checkout):
                notes.append(
                    f"worktree {name!r} kept at {path}: it has uncommitted changes or no "
                    f"branch; inspect it, then remove it with `git worktree remove --force {path}`"
                )
                continue
            shutil.rmtree(path)
            notes.append(f"worktree {name!r} removed ({path})")
        _prune_stale(repo, worktree_id(run_id, name))
        if branch is not None:
            notes.extend(_drop_branch(repo, run_id, name, branch, tracking))
    for leftover in (lanes, lanes.parent):
        if leftover.is_dir() and not any(leftover.iterdir()):
            leftover.rmdir()
    return notes


def _drop_branch(
    repo: pygit2.Repository, run_id: str, name: str, branch: str, tracking: str | None
) -> list[str]:
    if not branch.startswith(f"omg/work/{run_id}/"):
        return [f"branch {branch} kept: omg did not create it"]
    tip = head(repo, HEADS + branch)
    base = head(repo, base_ref(run_id, name))
    if tip is None:
        if base is not None:  # the branch went away by other means; forget where it started
            repo.references.delete(base_ref(run_id, name))
        return []
    remote_tip = head(repo, f"refs/remotes/{tracking}/{branch}") if tracking else None
    on_remote = remote_tip is not None and (
        remote_tip == tip or repo.descendant_of(remote_tip, tip)
    )
    if tip != base and not on_remote:
        if tracking:
            where = f"commits not on remote {tracking!r}"
        else:
            where = "commits beyond its base" if base else "commits from an unrecorded base"
        return [
            f"branch {branch} kept at {tip[:12]}: it carries {where} (push, merge or "
            f"cherry-pick it, or delete it with `git branch -D {branch}`)"
        ]
    repo.references.delete(HEADS + branch)
    if base is not None:
        repo.references.delete(base_ref(run_id, name))
    why = f"its commits are on {tracking!r}" if on_remote and tip != base else "no new commits"
    return [f"branch {branch} deleted ({why})"]


def _dirty(checkout: pygit2.Repository) -> bool:
    return bool(checkout.status(untracked_files="all", ignored=False))


def _prune_stale(repo: pygit2.Repository, wid: str) -> None:
    if wid not in repo.list_worktrees():
        return
    registered = repo.lookup_worktree(wid)
    if registered.is_prunable:  # its directory is gone; the admin entry would block a re-add
        registered.prune(True)


def _commit(repo: pygit2.Repository, rev: str, what: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, pygit2.InvalidSpecError, pygit2.GitError, ValueError):
        raise GitError(
            f"{what} is {rev!r}, which is not a commit in {repo.workdir}; fetch it (for a run: "
            "its refs/heads/omg/work/<run>/* branches) and resume"
        ) from None


if TYPE_CHECKING:
    from omg.git.handle import Handle
else:
    Handle = object  # RunRepo derives from Handle itself: the operations need not import it


class WorktreeOps(Handle):
    """A run repository's managed worktrees: the functions above, under its lock."""

    def acquire_worktree(
        self, run_id: str, name: str, *, base: str = "HEAD", branch: str | None = None
    ) -> Checkout:
        """The checkout at ``.omg/worktrees/<run_id>/<name>``, reused, re-attached or created.

        Its branch is ``omg/work/<run_id>/<name>``, or ``branch`` (created from ``base`` when
        it does not exist yet).
        """
        with self._lock, translated(f"preparing worktree {name!r} of run {run_id}", FIX):
            return acquire(self._repo, self.root, run_id, name, base, branch)

    def lane_base(self, run_id: str, name: str) -> str | None:
        """Where the run's lane ``name`` started in this clone (``refs/omg/base/…``), or None."""
        with self._lock, translated(f"reading where lane {name!r} of run {run_id} started", FIX):
            return head(self._repo, base_ref(run_id, name))

    def commit_worktree(self, wt: Checkout, message: str) -> str | None:
        """Commit every change in the worktree on its branch; None when nothing changed."""
        with self._lock, translated(f"committing worktree {wt.name!r} at {wt.path}", FIX):
            return commit(
                wt, self._repo, message,
                signature(self._repo, self._env, "AUTHOR"),
                signature(self._repo, self._env, "COMMITTER"),
            )  # fmt: skip

    def worktree_head(self, wt: Checkout) -> str:
        """The commit the worktree is at."""
        with self._lock, translated(f"reading worktree {wt.name!r} at {wt.path}", FIX):
            return worktree_head(wt, self._repo)

    def worktree_tree(self, wt: Checkout) -> str:
        """The tree the worktree's HEAD commit holds (two commits, one content: one tree)."""
        with self._lock, translated(f"reading worktree {wt.name!r} at {wt.path}", FIX):
            return worktree_tree(wt, self._repo)

    def restore_worktree(
        self, run_id: str, name: str, commit: str, *, branch: str | None = None
    ) -> Checkout:
        """Bring the worktree and its branch exactly to ``commit`` (e.g. in a fresh clone)."""
        with self._lock, translated(f"restoring worktree {name!r} of run {run_id}", FIX):
            sig = signature(self._repo, self._env, "COMMITTER")
            return restore(self._repo, self.root, run_id, name, commit, branch, sig)

    def clean(self, run_id: str, *, remote: str | None = None) -> list[str]:
        """Remove the run's worktrees, keeping any with changes and any branch with unique work.

        With ``remote``, a branch is deleted only when the remote-tracking copy holds its
        head; without, only when it has no commits beyond its base. Returns notes for humans.
        """
        with self._lock, translated(f"cleaning the worktrees of run {run_id}", FIX):
            tracking = remotes.tracking_name(self._repo, remote) if remote else None
            return clean(self._repo, self.root, run_id, tracking)
