"""Remotes: push and fetch over file, HTTPS (token in memory only) and SSH, never forcing."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import pygit2
from pygit2.enums import CredentialType, FetchPrune, FileMode

from omg.errors import GitError, MovedOn, OmgError
from omg.git.edge import describe, redact
from omg.git.names import FANOUT, HEADS, NOTES, RUNS, WAITS

TOKEN_USER = "x-access-token"
_SHA = re.compile(r"[0-9a-f]{40}")
_LOOPBACK = ("127.0.0.1", "::1", "localhost")
# receive-pack's words for "the ref is no longer where this push assumed"
_LOST_RACE = (
    "non-fast-forward",
    "fetch first",
    "stale info",
    "failed to lock",
    "cannot lock ref",
    "failed to update ref",  # receive-pack: the ref moved between advertisement and update
)


@dataclass(frozen=True)
class Endpoint:
    """A remote as omg talks to it: the pygit2 handle, its tracking namespace, its shown name."""

    remote: pygit2.Remote
    url: str
    tracking: str  # refs/remotes/<tracking>/...
    shown: str  # for messages: the remote's name, or its URL without credentials
    arg: str  # as the caller named it


def is_url(remote: str) -> bool:
    """A URL or a filesystem path rather than the name of a configured remote."""
    head = remote.split(":", 1)[0]
    return "://" in remote or remote.startswith(("/", ".", "~")) or "@" in head


def tracking_name(repo: pygit2.Repository, remote: str) -> str:
    """The ``refs/remotes/<name>/`` namespace: the remote's name, or ``omg-<hash>`` for a URL."""
    if remote in _names(repo):
        return remote
    if not is_url(remote):
        raise _unknown(repo, remote)
    return "omg-" + hashlib.sha1(_url(remote).encode()).hexdigest()[:10]


def endpoint(repo: pygit2.Repository, remote: str) -> Endpoint:
    """Open a configured remote by name, or an anonymous one for a URL or a path."""
    if remote in _names(repo):
        handle = repo.remotes[remote]
        url = handle.push_url or handle.url or remote
        return Endpoint(handle, url, remote, f"remote {remote!r} ({redact(url)})", remote)
    if not is_url(remote):
        raise _unknown(repo, remote)
    url = _url(remote)
    anonymous = repo.remotes.create_anonymous(url)
    return Endpoint(anonymous, url, tracking_name(repo, remote), redact(url), redact(remote))


#: A token git may offer: (the variable it came from, its value, the one host it may go to;
#: None: any host). omg.github picks them from the environment; git only offers them.
GitToken = tuple[str, str, str | None]


def token_for(url: str, tokens: Sequence[GitToken]) -> tuple[str, str] | None:
    """(variable, token) to offer ``url``, or None; never over plain HTTP except to loopback.

    The first token whose host is ``url``'s (or any host) wins, so a token bound to the GitHub
    server never reaches a stray remote.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http"):
        return None
    if parts.scheme == "http" and parts.hostname not in _LOOPBACK:
        return None
    for variable, value, host in tokens:
        if host is None or parts.hostname == host:
            return variable, value
    return None


class Callbacks(pygit2.RemoteCallbacks):
    """Credentials from memory, a fast-forward check per ref, and the server's per-ref verdicts."""

    def __init__(self, repo: pygit2.Repository, ep: Endpoint, tokens: Sequence[GitToken]) -> None:
        super().__init__()
        self._repo = repo
        self._ep = ep
        self._token = token_for(ep.url, tokens)
        self._offered: set[CredentialType] = set()
        self.rejected: list[tuple[str, str]] = []

    def credentials(
        self, url: str, username_from_url: str | None, allowed_types: CredentialType
    ) -> pygit2.UserPass | pygit2.Username | pygit2.KeypairFromAgent:
        for kind in (CredentialType.USERPASS_PLAINTEXT, CredentialType.SSH_KEY,
                     CredentialType.USERNAME):  # fmt: skip
            if allowed_types & kind:
                break
        else:
            raise GitError(f"{self._ep.shown} asks for a kind of login omg cannot give")
        if kind in self._offered:  # libgit2 asks again only when the last answer was refused
            raise GitError(self._refused(kind))
        self._offered.add(kind)
        if kind == CredentialType.USERPASS_PLAINTEXT:
            if self._token is None:
                raise GitError(
                    f"{self._ep.shown} asks for a login and no token is available: set "
                    "GITHUB_TOKEN (sent only to the GITHUB_SERVER_URL host, github.com by "
                    "default) or OMG_GIT_TOKEN; omg hands it to git in memory only"
                )
            return pygit2.UserPass(TOKEN_USER, self._token[1])
        user = username_from_url or "git"
        if kind == CredentialType.SSH_KEY:
            return pygit2.KeypairFromAgent(user)
        return pygit2.Username(user)

    def _refused(self, kind: CredentialType) -> str:
        if kind == CredentialType.USERPASS_PLAINTEXT and self._token is not None:
            return (
                f"{self._ep.shown} refused the token in {self._token[0]}: check that it is "
                "valid and may write to the repository (contents: write)"
            )
        return f"{self._ep.shown} refused the SSH key from the agent: add a key with ssh-add"

    def push_negotiation(self, updates: list[pygit2.remotes.PushUpdate]) -> None:
        for update in updates:  # src: the remote's current tip; dst: what we would set
            theirs, ours = update.src, update.dst
            zero = pygit2.Oid(hex="0" * 40)
            if theirs == ours or zero in (theirs, ours):  # a new ref, or a record's deletion
                continue
            if theirs not in self._repo or not self._repo.descendant_of(ours, theirs):
                raise advanced(update.dst_refname, self._ep, str(theirs))

    def push_update_reference(self, refname: str, message: str | None) -> None:
        if message:
            self.rejected.append((refname, message))


def advanced(ref: str, ep: Endpoint, theirs: str | None) -> MovedOn:
    """The push lost a race: the remote ref holds commits this leg does not have."""
    at = f" (it is now at {theirs[:12]})" if theirs else ""
    run = ref.removeprefix(RUNS) if ref.startswith(RUNS) else "RUN_ID"
    return MovedOn(
        f"push of {ref} to {ep.shown} was rejected: another leg advanced the run{at}. "
        f"omg never force-pushes; continue from what it recorded with "
        f"`omg resume --fetch {ep.arg} {run} --push {ep.arg}` (this clone's own record of the "
        "run is kept as a kept/ branch)"
    )


def push(
    repo: pygit2.Repository,
    remote: str,
    refspecs: list[str],
    tokens: Sequence[GitToken],
) -> None:
    """Push ``refspecs`` without force; a lost race or any rejection is a GitError.

    Each ref moves only if the remote still holds a commit the pushed one extends, checked
    where it is updated (receive-pack does so for a server; for a remote on this machine,
    ``_push_local``): a compare-and-swap, so of two legs pushing from one state one loses.
    """
    ep = endpoint(repo, remote)
    specs = [_push_spec(spec) for spec in refspecs]
    path = _local_path(ep.url)
    if path is None:
        _send(repo, ep, specs, tokens)
    else:
        _push_local(repo, ep, path, specs)
    for spec in specs:
        src, dst = spec.split(":")
        if src and dst.startswith(HEADS):  # mirror what the remote now holds, as `git push` does
            oid = repo.revparse_single(src).id
            tracking = f"refs/remotes/{ep.tracking}/{dst.removeprefix(HEADS)}"
            repo.create_reference_direct(tracking, oid, True, "omg: push")


def _send(
    repo: pygit2.Repository, ep: Endpoint, specs: list[str], tokens: Sequence[GitToken]
) -> None:
    """One libgit2 push of ``specs`` (full ``src:dst``), its failures and rejections as errors."""
    callbacks = Callbacks(repo, ep, tokens)
    try:
        ep.remote.push(specs, callbacks=callbacks, proxy=True)
    except OmgError:
        raise
    except pygit2.GitError as exc:
        text = describe(exc)
        if "non-fastforwardable" in text or "not present locally" in text:
            raise advanced(", ".join(s.split(":")[1] for s in specs), ep, None) from exc
        raise GitError(
            f"pushing {', '.join(specs)} to {ep.shown} failed: {redact(text)}; check the "
            "remote URL, the network and that the token may write to the repository"
        ) from exc
    for ref, why in callbacks.rejected:
        if any(word in why for word in _LOST_RACE):
            raise advanced(ref, ep, None)
        raise GitError(f"{ep.shown} refused {ref}: {why}; fix what it names, then resume the run")


def _push_local(repo: pygit2.Repository, ep: Endpoint, path: str, specs: list[str]) -> None:
    """A push to a repository on this machine, done here: libgit2 would write such a remote's
    refs by force once its own check passed (so two pushers that both checked would both land)
    and trips over refs others delete meanwhile. The objects the remote lacks are copied into
    it, each after what it refers to, then each ref moves by compare-and-swap, as receive-pack
    moves it."""
    there = pygit2.Repository(path)
    for spec in specs:
        src, dst = spec.split(":")
        if not src:  # a fan-out record the fold has taken in
            with contextlib.suppress(KeyError):
                there.references.delete(dst)
            continue
        new = repo.revparse_single(src).id
        _carry(repo, there, new)
        _swap(there, dst, new, ep)


def _carry(repo: pygit2.Repository, there: pygit2.Repository, top: pygit2.Oid) -> None:
    """Copy every object ``top`` reaches that ``there`` lacks, children before parents, so an
    object there always comes with everything it refers to (a copy cut short leaves no hole)."""
    stack: list[tuple[pygit2.Oid, bool]] = [(top, False)]
    done: set[pygit2.Oid] = set()
    while stack:
        oid, expanded = stack.pop()
        if oid in done or oid in there.odb:
            continue
        if expanded:
            kind, data = repo.odb.read(oid)
            there.odb.write(kind, data)
            done.add(oid)
            continue
        stack.append((oid, True))
        obj = repo[oid]
        if isinstance(obj, pygit2.Commit):
            stack += [(obj.tree_id, False)] + [(p, False) for p in obj.parent_ids]
        elif isinstance(obj, pygit2.Tree):
            stack += [(e.id, False) for e in obj if e.filemode != FileMode.COMMIT]
        elif isinstance(obj, pygit2.Tag):
            stack.append((obj.target, False))


def _swap(there: pygit2.Repository, dst: str, new: pygit2.Oid, ep: Endpoint) -> None:
    """Move ``dst`` in the remote repository ``there`` to ``new`` if it is new or ``new``
    extends what it holds — checked again under the ref's lock (``set_target`` refuses a ref
    that moved since it was read)."""
    current = there.references.get(dst)
    try:
        if current is None:
            there.references.create(dst, new)  # not forced: fails if another created it first
            return
        old = current.resolve().target
        if old == new:
            return
        if not there.descendant_of(new, old):
            raise advanced(dst, ep, str(old))
        current.set_target(new, "omg: push")
    except (pygit2.AlreadyExistsError, pygit2.GitError) as exc:
        raise advanced(dst, ep, None) from exc  # it moved (or was created) since it was read
    except OSError as exc:
        if "lock" not in str(exc):
            raise
        raise advanced(dst, ep, None) from exc  # another pusher holds its lock this instant


def _local_path(url: str) -> str | None:
    """The directory of a remote on this machine (a path or a file:// URL), else None."""
    if url.startswith("file://"):
        return unquote(urlsplit(url).path)
    return url if url.startswith("/") else None


def fetch(
    repo: pygit2.Repository,
    remote: str,
    refspecs: list[str],
    tokens: Sequence[GitToken],
    *,
    prune: bool = False,
) -> None:
    """Fetch ``refspecs`` into ``refs/remotes/<remote>/``; local branches are never written.
    With ``prune`` a remote-tracking ref the refspecs map whose ref is gone there goes too."""
    ep = endpoint(repo, remote)
    specs = [_fetch_spec(spec, remote, ep.tracking) for spec in refspecs]
    try:
        ep.remote.fetch(
            specs, message="omg: fetch", callbacks=Callbacks(repo, ep, tokens),
            prune=FetchPrune.PRUNE if prune else FetchPrune.NO_PRUNE, proxy=True,
        )  # fmt: skip
    except OmgError:
        raise
    except pygit2.GitError as exc:
        raise GitError(
            f"fetching {', '.join(specs)} from {ep.shown} failed: {redact(describe(exc))}; "
            "check the remote URL, the network and that the token may read the repository"
        ) from exc


def _push_spec(spec: str) -> str:
    if spec.startswith("+"):
        raise GitError(f"refusing to push {spec!r}: omg never force-pushes")
    src, _, dst = spec.partition(":")
    if not src and dst.startswith((FANOUT, NOTES, WAITS)):
        return f":{dst}"  # a fan-out record taken in (or stale), a note, a wait that is over
    if not src:
        raise GitError(f"refusing to push {spec!r}: omg never deletes remote branches")
    return f"{_full(src)}:{_full(dst or src)}"


def _fetch_spec(spec: str, remote: str, tracking: str) -> str:
    src, sep, dst = spec.removeprefix("+").partition(":")
    src = _full(src)
    if not sep:
        dst = f"refs/remotes/{tracking}/{src.removeprefix(HEADS)}"
    elif dst.startswith(f"refs/remotes/{remote}/"):
        dst = f"refs/remotes/{tracking}/" + dst.removeprefix(f"refs/remotes/{remote}/")
    if not dst.startswith("refs/remotes/"):
        raise GitError(
            f"refusing to fetch into {dst!r}: omg fetches only into refs/remotes/ and never "
            "overwrites a local branch"
        )
    return f"+{src}:{dst}"  # remote-tracking refs mirror the remote, as git's default refspec


def _full(ref: str) -> str:
    if ref.startswith("refs/") or _SHA.fullmatch(ref):  # a commit's id is fetched as itself
        return ref
    return HEADS + ref


def _names(repo: pygit2.Repository) -> list[str]:
    return [name for name in repo.remotes.names() if name]


def _url(remote: str) -> str:
    if "://" in remote or ("@" in remote.split(":", 1)[0] and ":" in remote):
        return remote
    return os.path.abspath(os.path.expanduser(remote))


def _unknown(repo: pygit2.Repository, remote: str) -> GitError:
    known = ", ".join(_names(repo)) or "none"
    return GitError(
        f"no remote named {remote!r} in {repo.workdir} (configured: {known}); add it with "
        f"`git remote add {remote} URL`, or pass a URL or a path"
    )
