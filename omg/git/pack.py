"""A git pack of a leg's new objects: built from what the tips reach down to what the other
side holds already, and read back entry by entry, bounded, without trusting anything in it.

The reader parses the pack format itself (header, each entry's type and size, zlib streams,
offset and ref deltas, the trailing SHA-1) rather than handing it to an indexer: every
object's id is computed from its bytes, a declared size past the bound is refused before a
byte is inflated, and no object may come twice or lean on one outside the pack (no thin pack).
"""

from __future__ import annotations

import hashlib
import tempfile
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import FileMode, SortMode

from omg.git.names import HEADS, run_ref

if TYPE_CHECKING:
    from omg.git.remote import GitToken

#: Pack entry types (git's pack format), and the names of the four kinds of object.
KINDS = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}
_OFS_DELTA, _REF_DELTA = 6, 7
#: Compressed bytes fed to zlib at a time.
_FEED = 1 << 16


class PackError(ValueError):
    """A pack that is not what a bundle writes: why, in words."""


@dataclass(frozen=True)
class PackObject:
    """One object of a pack: its id, kind (``KINDS``'s names) and its bytes."""

    oid: str
    kind: str
    data: bytes


def new_objects(repo: pygit2.Repository, tips: Iterable[str], haves: Iterable[str]) -> list[str]:
    """Every object the commits ``tips`` reach that the commits ``haves`` do not (as
    `git rev-list --objects TIPS --not HAVES` counts them: the trees and blobs of the boundary
    commits are taken as held), commits first in topological order, then trees and blobs in
    the order met. A missing object is a KeyError naming it."""
    commits = _walk(repo, tips, haves)
    mine = {c.id for c in commits}
    known: set[pygit2.Oid] = set()
    for c in commits:
        for parent in c.parent_ids:
            if parent not in mine and _is_commit(repo, str(parent)):
                _fresh(repo, repo[parent].peel(pygit2.Commit).tree_id, known, [])
    out = [str(c.id) for c in commits]
    seen: set[pygit2.Oid] = set(known)
    for c in commits:
        _fresh(repo, c.tree_id, seen, out)
    return out


def new_commits(repo: pygit2.Repository, tips: Iterable[str], haves: Iterable[str]) -> list[str]:
    """The commits ``tips`` reach that ``haves`` do not, oldest first."""
    return [str(c.id) for c in _walk(repo, tips, haves)]


def _walk(
    repo: pygit2.Repository, tips: Iterable[str], haves: Iterable[str]
) -> list[pygit2.Commit]:
    walker = repo.walk(None, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    for tip in sorted(set(tips)):
        walker.push(pygit2.Oid(hex=tip))
    for have in sorted(set(haves)):
        if _is_commit(repo, have):
            walker.hide(pygit2.Oid(hex=have))
    return list(walker)


def _is_commit(repo: pygit2.Repository, sha: str) -> bool:
    try:
        return isinstance(repo.get(sha), pygit2.Commit)
    except (ValueError, KeyError):
        return False


def _fresh(
    repo: pygit2.Repository, tree: pygit2.Oid, seen: set[pygit2.Oid], out: list[str]
) -> None:
    stack = [tree]
    while stack:
        oid = stack.pop()
        if oid in seen:
            continue
        seen.add(oid)
        out.append(str(oid))
        obj = repo[oid]
        if isinstance(obj, pygit2.Tree):
            entries = sorted(obj, key=lambda e: e.name or "", reverse=True)
            stack += [e.id for e in entries if e.filemode != FileMode.COMMIT and e.id not in seen]


def build(repo: pygit2.Repository, oids: Iterable[str]) -> bytes:
    """A pack of exactly the objects ``oids``, its bytes: one thread, objects added in the
    order given, so the same objects make the same pack."""
    builder = pygit2.PackBuilder(repo)
    builder.set_threads(1)
    for oid in oids:
        builder.add(pygit2.Oid(hex=oid))
    with tempfile.TemporaryDirectory(prefix="omg-pack-") as where:
        builder.write(where)
        (found,) = Path(where).glob("*.pack")
        return found.read_bytes()


def read(data: bytes, *, max_objects: int, max_object: int, max_total: int) -> list[PackObject]:
    """Every object of the pack ``data``, in pack order, each id computed from its bytes.
    PackError when the pack is damaged, holds an object twice or a delta on an object outside
    it, or passes a bound: ``max_objects`` entries, ``max_object`` bytes for one object (as
    declared, refused before inflating), ``max_total`` bytes for all of them."""
    view = memoryview(data)
    if len(data) < 32 or data[:4] != b"PACK":
        raise PackError("it is not a git pack (no PACK header)")
    if hashlib.sha1(view[:-20]).digest() != data[-20:]:
        raise PackError("its trailing checksum does not match its bytes: it was cut or edited")
    version, count = int.from_bytes(data[4:8], "big"), int.from_bytes(data[8:12], "big")
    if version not in (2, 3):
        raise PackError(f"it is a pack of version {version}, not 2 or 3")
    if count > max_objects:
        raise PackError(f"it holds {count:,} objects, more than the {max_objects:,} allowed")
    end = len(data) - 20
    pos, total = 12, 0
    at: dict[int, PackObject] = {}
    by_id: dict[str, PackObject] = {}
    out: list[PackObject] = []
    for n in range(count):
        start = pos
        kind, size, pos = _entry_header(data, pos, end)
        base: PackObject | None = None
        if kind == _OFS_DELTA:
            back, pos = _offset(data, pos, end)
            base = at.get(start - back)
            if base is None:
                raise PackError(f"entry {n + 1} is a delta on no earlier entry of the pack")
        elif kind == _REF_DELTA:
            if pos + 20 > end:
                raise PackError(f"entry {n + 1} is cut short")
            base = by_id.get(data[pos : pos + 20].hex())
            pos += 20
            if base is None:
                raise PackError(f"entry {n + 1} is a delta on an object the pack does not hold")
        elif kind not in KINDS:
            raise PackError(f"entry {n + 1} has type {kind}, which is no git object")
        if size > max_object:
            raise PackError(
                f"entry {n + 1} declares {size:,} bytes, more than the {max_object:,} one object "
                "may hold"
            )
        raw, pos = _inflate(view, pos, end, size, n + 1)
        if base is not None:
            try:
                name, body = base.kind, _patch(base.data, raw, max_object, n + 1)
            except IndexError:
                raise PackError(f"entry {n + 1} is a delta cut short") from None
        else:
            name, body = KINDS[kind], raw
        total += len(body)
        if total > max_total:
            raise PackError(f"its objects pass {max_total:,} bytes in all")
        oid = hashlib.sha1(f"{name} {len(body)}\0".encode() + body).hexdigest()
        if oid in by_id:
            raise PackError(f"it holds object {oid} twice")
        obj = PackObject(oid, name, body)
        at[start], by_id[oid] = obj, obj
        out.append(obj)
    if pos != end:
        raise PackError(f"{end - pos:,} bytes follow its last entry")
    return out


def _entry_header(data: bytes, pos: int, end: int) -> tuple[int, int, int]:
    if pos >= end:
        raise PackError("it is cut short: fewer entries than its header counts")
    byte = data[pos]
    kind, size, shift = (byte >> 4) & 7, byte & 15, 4
    pos += 1
    while byte & 0x80:
        if pos >= end or shift > 60:
            raise PackError("an entry's header is damaged")
        byte = data[pos]
        size |= (byte & 0x7F) << shift
        shift += 7
        pos += 1
    return kind, size, pos


def _offset(data: bytes, pos: int, end: int) -> tuple[int, int]:
    if pos >= end:
        raise PackError("a delta's base offset is cut short")
    byte = data[pos]
    value = byte & 0x7F
    pos += 1
    while byte & 0x80:
        if pos >= end or value > 1 << 56:
            raise PackError("a delta's base offset is damaged")
        byte = data[pos]
        value = ((value + 1) << 7) | (byte & 0x7F)
        pos += 1
    return value, pos


def _inflate(view: memoryview, pos: int, end: int, size: int, n: int) -> tuple[bytes, int]:
    """The ``size`` bytes of the zlib stream at ``pos``, and where the stream ends."""
    d = zlib.decompressobj()
    parts: list[bytes] = []
    got = 0
    while not d.eof:
        if pos >= end:
            raise PackError(f"entry {n}'s data is cut short")
        feed: bytes | memoryview = view[pos : min(pos + _FEED, end)]
        pos += len(feed)
        while feed and not d.eof:
            try:
                piece = d.decompress(feed, size - got + 1)
            except zlib.error as exc:
                raise PackError(f"entry {n}'s data is not a zlib stream ({exc})") from None
            got += len(piece)
            if got > size:
                raise PackError(f"entry {n} inflates past the {size:,} bytes it declares")
            parts.append(piece)
            feed = d.unconsumed_tail
    if got != size:
        raise PackError(f"entry {n} inflates to {got:,} bytes, not the {size:,} it declares")
    return b"".join(parts), pos - len(d.unused_data)


def _patch(base: bytes, delta: bytes, limit: int, n: int) -> bytes:
    """``base`` with git's binary ``delta`` applied (copy and insert instructions)."""
    src, pos = _varint(delta, 0, n)
    size, pos = _varint(delta, pos, n)
    if src != len(base) or size > limit:
        raise PackError(f"entry {n} is a delta that does not fit its base, or is too large")
    out = bytearray()
    while pos < len(delta):
        op = delta[pos]
        pos += 1
        if op & 0x80:
            offset = length = 0
            for i in range(4):
                if op & (1 << i):
                    offset |= delta[pos] << (8 * i)
                    pos += 1
            for i in range(3):
                if op & (1 << (4 + i)):
                    length |= delta[pos] << (8 * i)
                    pos += 1
            length = length or 0x10000
            if offset + length > len(base):
                raise PackError(f"entry {n} is a delta copying past its base")
            out += base[offset : offset + length]
        elif op:
            out += delta[pos : pos + op]
            pos += op
        else:
            raise PackError(f"entry {n} is a delta with a reserved instruction")
        if len(out) > size:
            break
    if len(out) != size:
        raise PackError(f"entry {n} is a delta that makes {len(out):,} bytes, not {size:,}")
    return bytes(out)


def _varint(data: bytes, pos: int, n: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 56:
            raise PackError(f"entry {n} is a damaged delta")
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        shift += 7
        pos += 1
        if not byte & 0x80:
            return value, pos


def pack_of(repo_path: Path, tips: Iterable[str], haves: Iterable[str]) -> tuple[bytes, int]:
    """The pack of what ``tips`` reach down to ``haves`` in the repository at ``repo_path``,
    and how many objects it holds."""
    repo = pygit2.Repository(str(repo_path))
    oids = new_objects(repo, tips, haves)
    return build(repo, oids), len(oids)


def run_refs(repo_path: Path, run_id: str) -> dict[str, str]:
    """The run's branch and its lanes' branches here, ref → commit, by name."""
    repo = pygit2.Repository(str(repo_path))
    mine, lanes = run_ref(run_id), f"{HEADS}omg/work/{run_id}/"
    out: dict[str, str] = {}
    for name in repo.references:
        if name == mine or (name.startswith(lanes) and "/" not in name.removeprefix(lanes)):
            out[name] = str(repo.references[name].resolve().target)
    return dict(sorted(out.items()))


def remote_run_refs(
    repo_path: Path, remote: str, run_id: str, tokens: Sequence[GitToken] = ()
) -> dict[str, str]:
    """The run's branch and its lanes' branches as ``remote`` holds them now, ref → commit
    (asked of the remote, not read from this repository's tracking refs)."""
    from omg.git import remote as remotes
    from omg.git.edge import translated

    repo = pygit2.Repository(str(repo_path))
    mine, lanes = run_ref(run_id), f"{HEADS}omg/work/{run_id}/"
    ep = remotes.endpoint(repo, remote)
    with translated(f"listing run {run_id}'s refs on {ep.shown}", "check the remote and token"):
        heads = ep.remote.list_heads(callbacks=remotes.Callbacks(repo, ep, tokens))
    out: dict[str, str] = {}
    for h in heads:
        name = h.name or ""
        if name == mine or (name.startswith(lanes) and "/" not in name.removeprefix(lanes)):
            out[name] = str(h.oid)
    return dict(sorted(out.items()))


def descends(repo_path: Path, new: str, old: str) -> bool:
    """Whether commit ``new`` descends from commit ``old`` (or is it) in the repository at
    ``repo_path``; False when either is not there."""
    repo = pygit2.Repository(str(repo_path))
    try:
        a, b = pygit2.Oid(hex=new), pygit2.Oid(hex=old)
    except ValueError:
        return False
    if a not in repo or b not in repo:
        return False
    return a == b or bool(repo.descendant_of(a, b))


def head_commit(repo_path: Path) -> str:
    """The commit the checkout at ``repo_path`` stands on."""
    return str(pygit2.Repository(str(repo_path)).head.target)
