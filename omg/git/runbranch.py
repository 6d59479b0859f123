"""The run branch: a run directory committed as a tree, and restored from one."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Collection
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from omg.errors import GitError, MovedOn
from omg.git.edge import translated
from omg.git.names import head, run_ref

LOCK_FILE = "leg.lock"
#: The record check's verified point (``state/vouched.py``): a cache of this machine's.
VERIFIED_FILE = "verified.json"
#: The ledger kept with the verified point (``state/kept.py``): a cache of this machine's too.
KEPT_FILE = "ledger.json"


def skipped(name: str, *, top: bool) -> bool:
    """Files never committed nor restored: the leg lock, the verified point, the ledger kept
    with it and in-flight temp files."""
    return (top and name in (LOCK_FILE, VERIFIED_FILE, KEPT_FILE)) or ".tmp" in name


def commit(
    repo: pygit2.Repository,
    run_id: str,
    run_dir: Path,
    message: str,
    *,
    expect_parent: str | None,
    author: pygit2.Signature,
    committer: pygit2.Signature,
    seen: TreeCache | None = None,
    changed: Collection[str] | None = None,
) -> str:
    """Commit ``run_dir`` as the whole tree of the run branch; compare-and-swap on its head.

    With ``changed`` — the paths (relative, "/"-separated) written or removed since the head
    was committed from ``run_dir`` — the tree is the head's tree with those paths updated (a
    tree builder per changed directory, nothing scanned), so a commit costs what changed,
    not what the run holds. Without it the directory is scanned; ``seen`` remembers what
    earlier scans of this process hashed, so only files whose stamp changed are read again.
    """
    ref = run_ref(run_id)
    where = f"committing run {run_id} to {ref} in {repo.workdir}"
    if not run_dir.is_dir():
        raise GitError(f"{where} failed: run directory {run_dir} does not exist")
    current = head(repo, ref)
    if expect_parent is not None and current != expect_parent:
        raise moved_on(run_id, ref, current, expect_parent)
    with translated(where, "check the repository with `git fsck`, then resume the run"):
        if changed is not None and current is not None:
            base = repo[current].peel(pygit2.Commit).tree
            tree = updated_tree(repo, base, run_dir, changed)
        else:
            tree = _tree(repo, run_dir, top=True, seen=TreeCache() if seen is None else seen)
        if tree is None:
            tree = repo.TreeBuilder().write()
        if current is not None and repo[current].peel(pygit2.Commit).tree_id == tree:
            return current
        parents = [current] if current is not None else []
        try:
            # libgit2 checks parents[0] against the ref's tip and updates it under the ref lock,
            # so a writer that slipped in between our read and this call is caught, not overwritten.
            oid = repo.create_commit(ref, author, committer, message, tree, parents)
        except (pygit2.GitError, pygit2.AlreadyExistsError) as exc:
            now = head(repo, ref)
            if now != current:
                raise moved_on(run_id, ref, now, current) from exc
            raise
    return str(oid)


def updated_tree(
    repo: pygit2.Repository, base: pygit2.Tree, run_dir: Path, changed: Collection[str]
) -> pygit2.Oid | None:
    """``base`` with each of the ``changed`` paths made what ``run_dir`` holds there now: a
    file's bytes, or no entry when it is gone (or is no regular file) — the tree a scan of
    ``run_dir`` would give, when ``base`` was that of ``run_dir`` before those changes."""
    paths: list[tuple[str, ...]] = []
    for path in changed:
        parts = tuple(path.split("/"))
        if any(p in ("", ".", "..") for p in parts) or skipped(parts[-1], top=len(parts) == 1):
            continue
        paths.append(parts)
    return _updated(repo, base, run_dir, paths)


def _updated(
    repo: pygit2.Repository, tree: pygit2.Tree | None, directory: Path,
    paths: list[tuple[str, ...]],
) -> pygit2.Oid | None:  # fmt: skip
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    deeper: dict[str, list[tuple[str, ...]]] = {}
    for parts in paths:
        if len(parts) > 1:
            deeper.setdefault(parts[0], []).append(parts[1:])
            continue
        name = parts[0]
        blob = _file_blob(repo, directory / name)
        if blob is None:
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            builder.insert(name, *blob)
    for name, rest in deeper.items():
        entry = builder.get(name)
        sub = entry.peel(pygit2.Tree) if isinstance(entry, pygit2.Tree) else None
        where = directory / name
        real = where.is_dir() and not where.is_symlink()
        oid = _updated(repo, sub, where, rest) if real else None
        if oid is None:
            if entry is not None:
                builder.remove(name)
        else:
            builder.insert(name, oid, FileMode.TREE)
    return builder.write() if len(builder) else None


def _file_blob(repo: pygit2.Repository, path: Path) -> tuple[pygit2.Oid, int] | None:
    """A regular file's blob (written) and mode; None when ``path`` is gone or no such file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:  # gone, or a symbolic link: never followed, never committed
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None
        data = fh.read()
    exe = st.st_mode & stat.S_IXUSR
    return repo.create_blob(data), FileMode.BLOB_EXECUTABLE if exe else FileMode.BLOB


def dir_tree(repo: pygit2.Repository, run_dir: Path, seen: TreeCache) -> pygit2.Oid:
    """The tree ``commit`` would record for ``run_dir`` (its blobs written, nothing committed)."""
    return _tree(repo, run_dir, top=True, seen=seen) or repo.TreeBuilder().write()


def snapshot(
    repo: pygit2.Repository,
    ref: str,
    run_dir: Path,
    message: str,
    *,
    parents: list[str],
    author: pygit2.Signature,
    committer: pygit2.Signature,
    seen: TreeCache,
) -> str:
    """Commit ``run_dir`` with exactly ``parents`` and point the local ``ref`` at it.

    For a matrix job's record: its ref is its own on this machine, and the compare-and-swap
    that matters is the push (the parents include what the remote held, so it fast-forwards).
    """
    with translated(f"recording {run_dir} on {ref}", "check the repository with `git fsck`"):
        tree = _tree(repo, run_dir, top=True, seen=seen) or repo.TreeBuilder().write()
        oid = repo.create_commit(None, author, committer, message, tree, parents)
        repo.references.create(ref, oid, force=True)
    return str(oid)


def copy_changes(
    repo: pygit2.Repository, run_dir: Path, old: str, new: str, skip: frozenset[str]
) -> list[str]:
    """Bring the files commit ``new`` changed since ``old`` into ``run_dir`` (each atomically;
    deletions too), except the top-level names in ``skip``; the paths it touched."""
    a = repo[old].peel(pygit2.Commit).tree
    b = repo[new].peel(pygit2.Commit).tree
    touched: list[str] = []
    for delta in a.diff_to_tree(b).deltas:
        deleted = delta.status == pygit2.enums.DeltaStatus.DELETED
        path = (delta.old_file if deleted else delta.new_file).path
        parts = path.split("/")
        if (
            parts[0] in skip
            or any(p in ("", ".", "..") for p in parts)
            or skipped(parts[-1], top=len(parts) == 1)
        ):
            continue
        target = run_dir.joinpath(*parts)
        if deleted:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            blob = repo[delta.new_file.id].peel(pygit2.Blob)
            exe = delta.new_file.mode == FileMode.BLOB_EXECUTABLE
            _write_file(target, blob.data, 0o755 if exe else 0o644)
        touched.append(path)
    return touched


def set_branch(repo: pygit2.Repository, branch: str, sha: str) -> None:
    """Create ``refs/heads/<branch>`` at ``sha`` or fast-forward it there; never rewind it."""
    ref = f"refs/heads/{branch}"
    local = repo.references.get(ref)
    if local is None:
        repo.create_reference_direct(ref, sha, False, "omg: fold")
        return
    ours = str(local.target)
    if ours == sha or repo.descendant_of(ours, sha):
        return
    if not repo.descendant_of(sha, ours):
        raise GitError(
            f"{branch} is at {ours[:12]} here, which {sha[:12]} does not extend; "
            "omg never rewrites a lane's history"
        )
    local.set_target(sha, "omg: fold")


def adopt(repo: pygit2.Repository, run_id: str, theirs: str, remote: str) -> str:
    """Fast-forward the local run branch to ``theirs``; keep it when it is already ahead."""
    ref = run_ref(run_id)
    local = repo.references.get(ref)
    if local is None:
        repo.create_reference_direct(ref, theirs, False, f"omg: adopt {remote}")
        return theirs
    ours = str(local.target)
    if ours == theirs or repo.descendant_of(ours, theirs):
        return ours
    if not repo.descendant_of(theirs, ours):
        raise GitError(
            f"run {run_id} diverged: {ref} is at {ours[:12]} here and at {theirs[:12]} on "
            f"{remote}; two legs advanced it from the same state and omg never rewrites a "
            f"run's history. Keep this copy with `git branch -m omg/runs/{run_id} "
            f"kept/omg-run-{run_id}`, then resume with --fetch {remote}"
        )
    local.set_target(theirs, f"omg: fast-forward to {remote}")  # a CAS on the tip read above
    return theirs


def keep(
    repo: pygit2.Repository,
    run_id: str,
    run_dir: Path,
    theirs: str,
    *,
    author: pygit2.Signature,
    committer: pygit2.Signature,
    seen: TreeCache,
) -> str | None:
    """Set aside what this clone recorded of the run that ``theirs`` lacks — the local branch's
    commits and the events ``run_dir`` holds beyond them (committed first) — as ``kept/…``;
    its name, or None when ``theirs`` extends all of it (or it extends ``theirs``)."""
    ours = head(repo, run_ref(run_id))
    if ours is not None and repo.descendant_of(ours, theirs):
        return None  # ahead: adopting keeps this clone's branch as it is
    if (run_dir / "events.jsonl").is_file() or (run_dir / "events").is_dir():
        tree = dir_tree(repo, run_dir, seen)
        if tree not in {repo[c].peel(pygit2.Commit).tree_id for c in (ours, theirs) if c}:
            message = f"omg {run_id}: what this clone recorded beyond its run branch, kept"
            commit(repo, run_id, run_dir, message, expect_parent=ours, author=author,
                   committer=committer, seen=seen)  # fmt: skip
    return set_aside(repo, run_id, theirs)


def set_aside(repo: pygit2.Repository, run_id: str, theirs: str) -> str | None:
    """Move a local run branch that diverged from ``theirs`` to ``kept/…``; its new name.

    None when there is nothing to set aside (no local branch, or one ``theirs`` contains or
    extends): the local branch then adopts ``theirs`` as usual.
    """
    local = repo.references.get(run_ref(run_id))
    if local is None:
        return None
    ours = str(local.target)
    if ours == theirs or repo.descendant_of(ours, theirs) or repo.descendant_of(theirs, ours):
        return None
    kept = f"kept/omg-run-{run_id}-{ours[:7]}"
    local.rename(f"refs/heads/{kept}")
    return kept


def moved_on(run_id: str, ref: str, now: str | None, started: str | None) -> MovedOn:
    """The compare-and-swap failure: someone else advanced (or removed) the run branch."""
    at = now[:12] if now else "nowhere (the branch was deleted)"
    start = started[:12] if started else "an empty branch"
    return MovedOn(
        f"run {run_id} moved on: {ref} is at {at}, this leg started from {start}; "
        "another leg advanced it — fetch and resume again"
    )


#: A file or directory as stat() sees it: name, mode, size, mtime (ns) and inode.
Stamp = tuple[str, int, int, int, int]


class TreeCache:
    """Blob ids by file stamp, and each directory's last tree with the entries it was built from
    (so a directory that gained one file is updated by one insert, not rebuilt)."""

    def __init__(self) -> None:
        self.blobs: dict[str, tuple[Stamp, pygit2.Oid]] = {}
        self.trees: dict[str, tuple[dict[str, object], pygit2.Oid | None]] = {}


def _stamp(entry: os.DirEntry[str]) -> Stamp:
    st = entry.stat(follow_symlinks=False)
    return (entry.name, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)


def _tree(
    repo: pygit2.Repository, directory: Path, *, top: bool, seen: TreeCache
) -> pygit2.Oid | None:
    with os.scandir(directory) as it:
        # symlinks are never written by omg; following one could leak files
        entries = [e for e in it if not skipped(e.name, top=top) and not e.is_symlink()]
    now: dict[str, object] = {}  # name → a file's stamp, or a subtree's id
    for entry in entries:
        if entry.is_dir():
            sub = _tree(repo, Path(entry.path), top=False, seen=seen)
            if sub is not None:  # git keeps no empty directories
                now[entry.name] = sub
        elif entry.is_file():
            try:
                now[entry.name] = _stamp(entry)
            except FileNotFoundError:
                continue  # removed while we walked: it is not part of this snapshot
    key = str(directory)
    before, old = seen.trees.get(key, ({}, None))
    if old is not None and before == now:
        return old
    builder = repo.TreeBuilder(old) if old is not None else repo.TreeBuilder()
    for name in before.keys() - now.keys():
        builder.remove(name)
    for name, what in list(now.items()):
        if before.get(name) == what and old is not None:
            continue
        if isinstance(what, pygit2.Oid):
            builder.insert(name, what, FileMode.TREE)
            continue
        stamp: Stamp = what  # type: ignore[assignment]
        try:
            blob = _blob(repo, os.path.join(directory, name), stamp, seen)
        except FileNotFoundError:
            now.pop(name)
            if name in before and old is not None:
                builder.remove(name)
            continue
        exe = stamp[1] & stat.S_IXUSR
        builder.insert(name, blob, FileMode.BLOB_EXECUTABLE if exe else FileMode.BLOB)
    oid = builder.write() if len(builder) else None
    seen.trees[key] = (now, oid)
    return oid


def _blob(repo: pygit2.Repository, path: str, stamp: Stamp, seen: TreeCache) -> pygit2.Oid:
    # Raw bytes, never .gitattributes filters: the branch must hold exactly what omg wrote.
    # Hashing first makes an unchanged file cost a read and a lookup (create_blob_fromdisk
    # runs the attribute machinery and rewrites the object: ~100x slower per file); a file
    # whose stamp is unchanged since this process last hashed it is not read at all.
    known = seen.blobs.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    oid = pygit2.hashfile(path)
    if oid not in repo.odb:
        with open(path, "rb") as fh:
            oid = repo.create_blob(fh.read())
    seen.blobs[path] = (stamp, oid)
    return oid


def resolve(repo: pygit2.Repository, run_id: str, ref: str | None) -> pygit2.Commit | None:
    """The commit behind ``ref`` (default: the run branch), or None when it does not exist."""
    spec = ref if ref is not None else run_ref(run_id)
    try:
        obj = repo.revparse_single(spec)
    except (KeyError, pygit2.InvalidSpecError):
        return None
    try:
        return obj.peel(pygit2.Commit)
    except (pygit2.GitError, ValueError) as exc:
        raise GitError(f"{spec} in {repo.workdir} is not a commit; pass a run branch") from exc


def read_file(repo: pygit2.Repository, run_id: str, path: str, ref: str | None) -> str:
    """One file of a run branch as text; GitError when the branch or the file is missing."""
    found = resolve(repo, run_id, ref)
    where = ref or run_ref(run_id)
    if found is None:
        raise GitError(f"{where} does not exist in {repo.workdir}; fetch the run first")
    try:
        blob = found.tree[path]
    except KeyError:
        raise GitError(f"{where} has no {path} at {str(found.id)[:12]}") from None
    if not isinstance(blob, pygit2.Blob):
        raise GitError(f"{path} on {where} is a directory, not a file")
    return blob.data.decode("utf-8", errors="replace")


def read_log(repo: pygit2.Repository, run_id: str, ref: str | None) -> str:
    """events.jsonl of a run branch, then the chunks of its events/ in order, as text."""
    text = read_file(repo, run_id, "events.jsonl", ref)
    found = resolve(repo, run_id, ref)
    assert found is not None  # read_file found it
    try:
        chunks = found.tree["events"]
    except KeyError:
        return text
    if not isinstance(chunks, pygit2.Tree):
        raise GitError(f"events on {ref or run_ref(run_id)} is a file, not a folder of chunks")
    parts = [text]
    for entry in sorted(chunks, key=lambda e: e.name or ""):
        blob = repo[entry.id]
        if not isinstance(blob, pygit2.Blob):
            raise GitError(f"events/{entry.name} on {ref or run_ref(run_id)} is not a file")
        parts.append(blob.data.decode("utf-8", errors="replace"))
    return "".join(parts)


def restore(
    repo: pygit2.Repository, run_id: str, run_dir: Path, ref: str | None, *, prune: bool
) -> str | None:
    """Write a run branch's files into ``run_dir``, each atomically; the commit restored from."""
    found = resolve(repo, run_id, ref)
    if found is None:
        return None
    where = f"restoring run {run_id} from {ref or run_ref(run_id)} into {run_dir}"
    with translated(where, "free the disk or fix the directory's permissions, then retry"):
        kept: set[Path] = set()
        _write_tree(repo, found.tree, run_dir, kept, top=True)
        if prune:
            _prune(run_dir, kept, top=True)
    return str(found.id)


def _write_tree(
    repo: pygit2.Repository, tree: pygit2.Tree, into: Path, kept: set[Path], *, top: bool
) -> None:
    into.mkdir(parents=True, exist_ok=True)
    kept.add(into)
    for entry in tree:
        name = entry.name or ""
        if name in ("", ".", "..", ".git") or "/" in name or "\\" in name or "\0" in name:
            raise GitError(f"refusing tree entry {name!r} in {into}: not a plain file name")
        if skipped(name, top=top):
            continue
        target = into / name
        if entry.filemode == FileMode.TREE:
            _write_tree(repo, repo[entry.id].peel(pygit2.Tree), target, kept, top=False)
        elif entry.filemode in (FileMode.BLOB, FileMode.BLOB_EXECUTABLE):
            data = repo[entry.id].peel(pygit2.Blob).data
            _write_file(
                target, data, 0o755 if entry.filemode == FileMode.BLOB_EXECUTABLE else 0o644
            )
            kept.add(target)
        else:
            raise GitError(f"refusing {target}: a run branch holds only files and directories")


def _write_file(path: Path, data: bytes, mode: int) -> None:
    if path.is_file() and not path.is_symlink() and path.read_bytes() == data:
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _prune(directory: Path, kept: set[Path], *, top: bool) -> None:
    for entry in list(directory.iterdir()):
        if skipped(entry.name, top=top):
            continue
        if entry.is_dir() and not entry.is_symlink():
            _prune(entry, kept, top=False)
            if entry not in kept and not any(entry.iterdir()):
                entry.rmdir()
        elif entry not in kept:
            entry.unlink()
