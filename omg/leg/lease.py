"""The lease: which leg holds a run across machines, recorded on the remote.

A leg with ``--push`` takes the run's lease (``refs/omg/lease/<run-id>``) before it runs
anything, renews it from a background thread while it runs and gives it back when it ends. A
leg that finds a live lease held by another refuses (exit 3); one that finds it given back,
expired, or held by a dead process of this machine takes it over. Taking and renewing are
compare-and-swaps on that ref, so two legs never both hold it.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, TypedDict

from omg import strictjson
from omg.errors import GitError, Held, Hint, MovedOn, StateError, Unreadable
from omg.git.lease import FILE
from omg.git.names import lease_ref, lease_tracking
from omg.kinds import Warn
from omg.runners.process import reap_run
from omg.state.holder import Process, alive, this_process

if TYPE_CHECKING:
    from omg.git.repo import RunRepo

Clock = Callable[[], float]

SCHEMA = 1


@dataclass(frozen=True)
class Times:
    """How long a lease lasts. See DESIGN.md ("A live leg is never taken for abandoned").

    ``ttl_s``: a lease lasts this long after each renewal (4 missed renewals in a row).
    ``renew_s``: how often the live leg renews it.
    ``skew_s``: what another machine adds before it takes an expired lease over, for clocks
    that disagree; a lease claiming to outlast its renewal by more than ``ttl_s``, or renewed
    more than ``skew_s`` in the reader's future, is not believed, so none blocks for ever.
    """

    ttl_s: float = 300.0
    renew_s: float = 60.0
    skew_s: float = 120.0


@dataclass(frozen=True)
class Holder:
    """Who holds a lease: the process, its leg, the mark its children carry, a fresh token."""

    proc: Process
    leg: int
    mark: str
    token: str


@dataclass(frozen=True)
class Claim:
    """A lease as read from the remote (``holder`` None: not a lease this omg can read, and
    ``damage`` says why)."""

    commit: str
    holder: Holder | None
    renewed: float
    expires: float
    released: bool
    damage: str = ""


#: How a lease stands for a leg that wants the run: "live" and "damaged" refuse it.
Standing = Literal["free", "released", "expired", "dead", "future", "damaged", "live"]


def standing(
    claim: Claim | None,
    now: float,
    times: Times = Times(),
    is_alive: Callable[[Process], bool | None] = alive,
) -> Standing:
    """Whether a leg may take the lease ``claim`` at ``now`` (its own clock), and why."""
    if claim is None:
        return "free"
    if claim.holder is None:
        return "damaged"  # a lock omg cannot read may be held: never taken for free
    if claim.renewed > now + times.skew_s:
        return "future"  # renewed in the future: not believed, so none blocks for ever
    if claim.released:
        return "released"
    if now > lapses(claim, times):
        return "expired"
    if is_alive(claim.holder.proc) is False:
        return "dead"  # this machine, and that process is gone: no need to wait
    return "live"


def lapses(claim: Claim, times: Times = Times()) -> float:
    """When another machine may take the lease over: its expiry (at most ``ttl_s`` after its
    renewal) plus ``skew_s``."""
    return min(claim.expires, claim.renewed + times.ttl_s) + times.skew_s


class HolderRecord(TypedDict):
    """``lease.json``'s holder: the process, its leg, its children's mark, its token."""

    host: str
    machine: str
    pid: int
    started: int
    leg: int
    mark: str
    token: str


class LeaseRecord(TypedDict):
    """``lease.json``: who holds the run, since when renewed, until when, or released."""

    schema: int
    run_id: str
    holder: HolderRecord
    renewed_at: str
    expires_at: str
    released: bool


def encode(run_id: str, holder: Holder, renewed: float, expires: float, released: bool) -> bytes:
    """``lease.json``: sorted keys, one line."""
    record: LeaseRecord = {
        "schema": SCHEMA,
        "run_id": run_id,
        "holder": {
            "host": holder.proc.host,
            "machine": holder.proc.machine,
            "pid": holder.proc.pid,
            "started": holder.proc.started,
            "leg": holder.leg,
            "mark": holder.mark,
            "token": holder.token,
        },
        "renewed_at": _iso(renewed),
        "expires_at": _iso(expires),
        "released": released,
    }
    return (json.dumps(record, sort_keys=True) + "\n").encode()


_NAME = re.compile(r"[^A-Za-z0-9._-]")


def decode(commit: str, data: bytes, run_id: str) -> Claim:
    """The claim in ``lease.json`` as read from a remote: anything but a well-formed lease of
    this run has no holder, and says why. Names are made inert (they reach messages and
    comments)."""
    try:
        rec = strictjson.loads(data)
        h = rec["holder"]
        if rec["schema"] != SCHEMA:
            raise ValueError(f"its schema is not {SCHEMA} (another omg version wrote it?)")
        if rec["run_id"] != run_id:
            raise ValueError(f"the lease of run {_NAME.sub('?', str(rec['run_id']))[:100]!r}")
        proc = Process(
            _NAME.sub("?", str(h["host"]))[:64],
            _NAME.sub("?", str(h["machine"]))[:64],
            _whole(h["pid"], "pid", 1, (1 << 31) - 1),
            _whole(h["started"], "started", 0, strictjson.MAX_INT),
        )
        mark = str(h["mark"])
        holder = Holder(
            proc,
            _whole(h["leg"], "leg", 1, strictjson.MAX_INT),
            mark if re.fullmatch(rf"{re.escape(run_id)}@[0-9a-f]{{12}}", mark) else "",
            _NAME.sub("?", str(h["token"]))[:64],
        )
        renewed, expires = _time(rec["renewed_at"]), _time(rec["expires_at"])
        return Claim(commit, holder, renewed, expires, rec["released"] is True)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        why = f"no {exc} field" if isinstance(exc, KeyError) else str(exc) or type(exc).__name__
        return Claim(
            commit, None, 0.0, 0.0, False, damage=f"{FILE} is not a lease omg wrote: {why}"
        )


def claim_on(repo: RunRepo, remote: str, run_id: str) -> Claim | None:
    """The lease as last fetched from ``remote`` (``commits.run_refspecs`` fetches it)."""
    try:
        found = repo.lease(remote, run_id)
    except Unreadable as exc:
        return Claim(exc.commit, None, 0.0, 0.0, False, damage=f"it {exc.problem}")
    return None if found is None else decode(found[0], found[1], run_id)


def live_elsewhere(repo: RunRepo | None, run_id: str, now: float | None = None) -> str:
    """Where a live leg of ``run_id`` holds its lease, as last fetched from any remote of
    ``repo`` ('' when none does, or there is no repository): a run whose last leg is open and
    whose local lock is free is running on another machine, not abandoned, while that lease
    lives."""
    if repo is None:
        return ""
    at = time.time() if now is None else now
    for remote in repo.remote_names():
        claim = claim_on(repo, remote, run_id)
        if claim is not None and claim.holder is not None and standing(claim, at) == "live":
            h = claim.holder
            return f"leg {h.leg} on host {h.proc.host!r}, lease on {remote} until " + _shown(
                claim.expires
            )
    return ""


def damaged(run_id: str, claim: Claim, remote: str) -> StateError:
    """Exit 3: the lease cannot be read, so no leg may take the run until a person repairs it."""
    ref = lease_ref(run_id)
    return StateError(
        f"run {run_id!r}: its lease {ref} on {remote} is damaged ({claim.damage[:200]}). A "
        "lease is a lock and this one cannot say whether a leg holds the run, so nothing ran "
        "here. Once no leg of the run is running (its workflow runs have ended), delete the "
        f"lease with `git push {remote} :{ref}` and run this command again: the next leg takes "
        "a fresh one"
    )


def refusal(run_id: str, claim: Claim, remote: str, times: Times = Times()) -> Held:
    """Exit 3: who holds the run, until when, and what to do."""
    assert claim.holder is not None
    h = claim.holder
    where = (
        "in another checkout on this machine"
        if alive(h.proc) is not None
        else f"on host {h.proc.host!r}"
    )
    return Held(
        f"run {run_id!r} has a live leg elsewhere: leg {h.leg} (pid {h.proc.pid} {where}) "
        f"holds its lease on {remote}, renewed {_shown(claim.renewed)} and valid until "
        f"{_shown(claim.expires)}. Nothing ran here. Wait for that leg to end, then run this "
        f"command again; if that leg died, its lease lapses at {_shown(lapses(claim, times))} "
        f"(its expiry plus {times.skew_s:g} s for clocks that disagree) and this command then "
        "takes the run over",
        hint=Hint("wait", run_id),
    )


class LegLease:
    """The lease this leg holds, renewed every ``renew_s`` by a thread until ``release``.

    ``lost`` says who took it when a renewal finds another holder (this leg was cut off from
    the remote for longer than the lease lasts); the leg's next commit then stops the leg.
    """

    def __init__(
        self,
        repo: RunRepo,
        remote: str,
        run_id: str,
        holder: Holder,
        commit: str,
        *,
        times: Times,
        clock: Clock,
        warn: Warn,
    ) -> None:
        self.repo, self.remote, self.run_id = repo, remote, run_id
        self.holder, self.commit = holder, commit
        self.times, self.clock, self.warn = times, clock, warn
        self.expires = clock() + times.ttl_s
        self.lost: str | None = None
        self.renewals = 0
        self._failing = False
        self._given_back = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._renewing, name="omg-lease", daemon=True)

    @classmethod
    def take(
        cls,
        repo: RunRepo,
        remote: str,
        run_id: str,
        *,
        leg: int,
        mark: str,
        warn: Warn,
        times: Times = Times(),
        clock: Clock = time.time,
        me: Process | None = None,
    ) -> LegLease:
        """Take the run's lease (fetched already) and start renewing it; Held while a live leg
        holds it, MovedOn when another leg took it in the same instant."""
        claim = claim_on(repo, remote, run_id)
        now = clock()
        why = standing(claim, now, times)
        refuse(run_id, claim, why, remote, times)
        if claim is not None and claim.holder is not None and why in ("expired", "dead"):
            h = claim.holder
            warn(
                f"omg: leg {h.leg} of run {run_id!r} (pid {h.proc.pid} on {h.proc.host!r}) "
                f"held its lease until {_shown(claim.expires)} and is "
                f"{'gone' if why == 'dead' else 'silent since'}; this leg takes the run over"
            )
            if why == "dead" and h.mark:
                reaped = reap_run(h.mark)  # what it left running on this machine
                if reaped:
                    warn(f"omg: stopped {reaped} process(es) that leg left running")
        holder = Holder(me or this_process(), leg, mark, secrets.token_hex(8))
        data = encode(run_id, holder, now, now + times.ttl_s, False)
        try:
            commit = repo.put_lease(
                remote, run_id, data, f"omg {run_id} leg {leg}: lease taken",
                parent=claim.commit if claim is not None else None,
            )  # fmt: skip
        except MovedOn:
            raise MovedOn(
                f"run {run_id!r}: another leg took its lease on {remote} in the same instant; "
                "nothing ran here, and that leg continues the run"
            ) from None
        lease = cls(repo, remote, run_id, holder, commit, times=times, clock=clock, warn=warn)
        lease._thread.start()
        return lease

    def renew(self) -> None:
        """One renewal: the lease again, valid ``ttl_s`` from now, on top of the last one."""
        now = self.clock()
        data = encode(self.run_id, self.holder, now, now + self.times.ttl_s, False)
        try:
            self.commit = self.repo.put_lease(
                self.remote, self.run_id, data,
                f"omg {self.run_id} leg {self.holder.leg}: lease renewed", parent=self.commit,
            )  # fmt: skip
        except MovedOn:
            self.lost = self._taken_by()
            self._stop.set()
            return
        except GitError as exc:
            if not self._failing:
                self.warn(
                    f"omg: warning: could not renew the lease of run {self.run_id!r} ({exc}); "
                    f"retrying every {self.times.renew_s:g} s — it lapses at "
                    f"{_shown(self.expires)} unless a renewal lands"
                )
            self._failing = True
            return
        self._failing = False
        self.expires = now + self.times.ttl_s
        self.renewals += 1

    def hand_back(self) -> str | None:
        """Stop renewing and commit the lease given back, here only, for the leg's last push
        to carry after the run branch (so a stranger sees it given back only once the leg's
        work is on the remote); the ref to push, None when the lease was lost."""
        self._stop_renewing()
        if self.lost is not None:
            return None
        now = self.clock()
        data = encode(self.run_id, self.holder, now, now, True)
        self.repo.write_lease(
            self.run_id, data,
            f"omg {self.run_id} leg {self.holder.leg}: lease given back", parent=self.commit,
        )  # fmt: skip
        return lease_ref(self.run_id)

    def handed_back(self) -> None:
        """The push carrying ``hand_back``'s commit landed: ``release`` has nothing to do."""
        self._given_back = True

    def release(self) -> None:
        """Stop renewing and give the lease back (so the next leg need not wait for it)."""
        self._stop_renewing()
        if self.lost is not None or self._given_back:
            return
        now = self.clock()
        data = encode(self.run_id, self.holder, now, now, True)
        try:
            self.repo.put_lease(
                self.remote, self.run_id, data,
                f"omg {self.run_id} leg {self.holder.leg}: lease given back", parent=self.commit,
            )  # fmt: skip
        except GitError as exc:
            self.warn(
                f"omg: warning: the lease of run {self.run_id!r} was not given back ({exc}); "
                f"it lapses by itself at {_shown(self.expires + self.times.skew_s)}"
            )

    def _stop_renewing(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _renewing(self) -> None:
        while not self._stop.wait(self.times.renew_s):
            self.renew()

    def _taken_by(self) -> str:
        try:
            spec = f"{lease_ref(self.run_id)}:{lease_tracking(self.remote, self.run_id)}"
            self.repo.fetch(self.remote, [spec])
            claim = claim_on(self.repo, self.remote, self.run_id)
        except GitError:
            claim = None
        who = "another leg"
        if claim is not None and claim.holder is not None:
            h = claim.holder
            who = f"leg {h.leg} (pid {h.proc.pid} on {h.proc.host!r})"
        return (
            f"run {self.run_id!r}: {who} took over its lease on {self.remote} (this leg could "
            f"not renew it in time); this leg stops and records nothing more"
        )


def check(repo: RunRepo, remote: str, run_id: str, times: Times = Times()) -> None:
    """For a leg that fetched the run but will not push: refuse while a live leg holds it, as
    running its nodes here too would run them twice."""
    claim = claim_on(repo, remote, run_id)
    refuse(run_id, claim, standing(claim, time.time(), times), remote, times)


def refuse(run_id: str, claim: Claim | None, why: Standing, remote: str, times: Times) -> None:
    """Raise when the lease's standing ``why`` refuses a leg: a live holder (Held) or a lease
    omg cannot read (a StateError: a person repairs it)."""
    if claim is not None and why == "live":
        raise refusal(run_id, claim, remote, times)
    if claim is not None and why == "damaged":
        raise damaged(run_id, claim, remote)


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _whole(value: object, name: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"its {name} is not a whole number from {low} to {high}")
    return value


def _time(text: object) -> float:
    try:
        if isinstance(text, str):
            return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        pass  # its words are not repeated: what a lease says reaches messages only made inert
    raise ValueError("its renewed_at or expires_at is no time")


def _shown(t: float) -> str:
    try:
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return "a time out of range"
