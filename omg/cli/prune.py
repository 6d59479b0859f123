"""`omg prune`: remove the refs of settled runs past an age (run branches, lanes, notes, fan-out
records, leases, waits, lane bases) and the spend books no cap reads any more, in this
repository or on a remote; never a run that may still move, nor work held on no other branch."""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from omg import prune as rules
from omg.cli import exits
from omg.errors import GitHubError, StateError
from omg.git.prune import Found, Refs

RUNS, LANES, BASES = "refs/heads/omg/runs/", "refs/heads/omg/work/", "refs/omg/base/"
FANOUT, NOTES, LEASES = "refs/omg/fanout/", "refs/omg/notes/", "refs/omg/lease/"
WAITS, SPEND = "refs/omg/waits/", "refs/omg/spend/"
PrState = Literal["open", "closed", "unknown"]


@dataclass
class _Gathered:
    """One run's refs as found: its branch, its lanes, the rest."""

    branch: Found | None = None
    lane: list[Found] = field(default_factory=list)
    others: list[Found] = field(default_factory=list)


def _shown(state: Any) -> tuple[str, str]:
    """(status, how people say it) from a run's state.json as parsed."""
    legs = state["legs"]
    if legs and legs[-1].get("outcome") is None:
        return "running", "running (its last leg has not ended)"
    status = str(state["status"])
    if status != "paused":
        return status, status
    if state.get("paused_at"):
        return status, f"paused at gate {state['paused_at']}"
    reason = legs[-1].get("reason") if legs else None
    named = {"limit": "waiting for a limit", "spend_cap": "paused at a spend cap"}
    return status, named.get(str(reason), "waiting for its next leg")


def _run(refs: Refs, rid: str, got: _Gathered, now: float) -> rules.Run:
    """The run as its refs say: its record's status (superseded when a note says so), and
    whether a leg holds its lease now."""
    from omg.leg.lease import decode, standing

    status, shown = "absent", "no run branch"
    if got.branch is not None:
        data = refs.read(got.branch.sha, "state.json")
        try:
            status, shown = _shown(json.loads(data or b""))
        except (ValueError, KeyError, TypeError, AttributeError, IndexError):
            status, shown = "unreadable", "its state.json cannot be read"
    live = False
    for f in got.others:
        if f.name.startswith(LEASES):
            claim = decode(f.sha, refs.read(f.sha, "lease.json") or b"", rid)
            live = live or standing(claim, now) == "live"
        elif f.name.startswith(NOTES) and status == "paused":
            try:  # a supersede noted while the run was paused, not folded in yet
                note = json.loads(refs.read(f.sha, "note.json") or b"")
                if note.get("event") == "run_superseded":
                    status, shown = "superseded", "superseded (noted)"
            except (ValueError, AttributeError):
                pass
    bases = {f.name.removeprefix(BASES): f for f in got.others if f.name.startswith(BASES)}
    lanes = tuple(
        rules.Lane(_ref(f), base=_maybe(bases.pop(f.name.removeprefix(LANES), None)))
        for f in got.lane
    )
    others = tuple(_ref(f) for f in got.others if not f.name.startswith(BASES))
    others += tuple(_ref(f) for f in bases.values())  # a base whose lane is gone
    branch = _ref(got.branch) if got.branch is not None else None
    return rules.Run(rid, branch, status, shown, live, lanes, others)


def _ref(f: Found) -> rules.Ref:
    return rules.Ref(f.name, f.sha, f.time)


def _maybe(f: Found | None) -> rules.Ref | None:
    return None if f is None else _ref(f)


def _gather(found: list[Found]) -> tuple[dict[str, _Gathered], list[Found]]:
    """omg's refs by run id, and the spend books."""
    runs: dict[str, _Gathered] = defaultdict(_Gathered)
    books = []
    for f in found:
        if f.name.startswith(SPEND):
            books.append(f)
            continue
        for prefix in (RUNS, LANES, BASES, FANOUT, NOTES, LEASES, WAITS):
            if f.name.startswith(prefix):
                rid = f.name.removeprefix(prefix).split("/", 1)[0]
                got = runs[rid]
                if prefix == RUNS:
                    got.branch = f
                elif prefix == LANES:
                    got.lane.append(f)
                else:
                    got.others.append(f)
    return dict(sorted(runs.items())), books


class _PullStates:
    """Whether each pull request is open, asked of GitHub once each (unknown without a token)."""

    def __init__(self, warn: list[str]) -> None:
        from omg.github.client import GitHub
        from omg.github.env import api_access

        access = api_access(os.environ)
        self.api = GitHub(*access) if access is not None else None
        self.known: dict[int, PrState] = {}
        self.warn = warn

    def __call__(self, number: int) -> PrState:
        if self.api is None:
            return "unknown"
        if number not in self.known:
            try:
                got = self.api.pull_state(number)
                self.known[number] = got if got in ("open", "closed") else "unknown"  # type: ignore[assignment]
            except GitHubError as exc:
                self.warn.append(f"could not ask GitHub about pull request #{number}: {exc}")
                self.known[number] = "unknown"
        return self.known[number]


def _book(f: Found, pulls: _PullStates) -> rules.Book | None:
    kind, _, key = f.name.removeprefix(SPEND).partition("/")
    if kind in ("pr", "rehearsal-pr"):
        state: PrState = pulls(int(key)) if key.isdigit() and len(key) < 10 else "unknown"
        return rules.Book(_ref(f), "pr", key, state)
    if kind in ("day", "rehearsal-day"):
        return rules.Book(_ref(f), "day", key)
    return None  # not a book omg writes: left alone


def _kept_as(run: rules.Run, why: str) -> str:
    """The group a kept run is counted in, for the closing line."""
    if run.live_lease:
        return "held by a live leg"
    if "last changed" in why:
        return "younger than the age"
    if run.status == "failed":
        return "failed (--keep-failed)"
    return run.status


def _judge(
    refs: Refs, policy: rules.Policy, gathered: dict[str, _Gathered], remote: str | None
) -> tuple[list[rules.Verdict], dict[str, int]]:
    """Every run's verdicts, and how many runs were kept, by group."""
    holders = refs.holders()
    checked_out = refs.checked_out() if remote is None else {}
    verdicts: list[rules.Verdict] = []
    kept: dict[str, int] = defaultdict(int)
    for rid, got in gathered.items():
        run = _run(refs, rid, got, policy.now)
        why_not = rules.run_settled(run, policy)
        if why_not is not None:
            kept[_kept_as(run, why_not)] += 1
        else:  # only a run whose refs may go has its lanes looked for on other branches
            lanes = tuple(
                replace(
                    ln,
                    held_by=refs.held_by(ln.ref.sha, holders),
                    checked_out=checked_out.get(ln.ref.name, ""),
                )
                for ln in run.lanes
            )
            run = replace(run, lanes=lanes)
        verdicts += rules.decide_run(run, policy)
    return verdicts, kept


def prune(
    remote: str | None,
    older_than: str,
    *,
    keep_failed: bool = False,
    dry_run: bool = False,
) -> int:
    """Judge every run and book, remove what may go (unless ``dry_run``), and print each ref
    removed, each lane kept from a run that went, and what was kept by group."""
    from omg.github.env import git_tokens

    policy = rules.Policy(time.time(), rules.age(older_than), keep_failed)
    refs = Refs.open(Path.cwd(), remote, git_tokens(os.environ))
    if refs is None:
        raise StateError("`omg prune` runs inside a git repository (it removes refs)")
    refs.fetch()
    found = refs.found()
    gathered, book_refs = _gather(found)
    verdicts, kept = _judge(refs, policy, gathered, remote)
    notes: list[str] = []
    pulls = _PullStates(notes)
    books = [b for b in (_book(f, pulls) for f in book_refs) if b is not None]
    verdicts += [rules.decide_book(b, policy) for b in books]
    unknown = sum(1 for b in books if b.kind == "pr" and b.pr_state == "unknown")
    if unknown and pulls.api is None:
        notes.append(
            f"kept {unknown} pull request spend book(s): without GITHUB_TOKEN and "
            "GITHUB_REPOSITORY omg cannot ask GitHub which pull requests are closed"
        )
    going = [v for v in verdicts if v.remove]
    moved: list[Found] = []
    if not dry_run:
        by_name = {f.name: f for f in found}
        _, moved = refs.remove([by_name[v.ref.name] for v in going])
    stayed = {f.name for f in moved}
    verb = "would remove" if dry_run else "removed"
    for v in going:
        if v.ref.name not in stayed:
            print(f"{verb} {v.ref.name}  ({v.why})")
    went = {v.run_id for v in going if v.run_id}
    for v in verdicts:
        if not v.remove and v.run_id in went:  # a lane left behind by a run that went
            print(f"kept {v.ref.name}: {v.why}")
    for f in moved:
        print(f"kept {f.name}: it moved since it was judged; prune again to judge it anew")
    for line in notes:
        print(line)
    where = f"on {remote}" if remote is not None else "here"
    groups = ", ".join(f"{n} {why}" for why, n in sorted(kept.items()))
    books_gone = sum(1 for v in going if not v.run_id and v.ref.name not in stayed)
    print(
        f"{verb} {len(going) - len(moved)} ref(s) {where}: {len(went)} run(s), "
        f"{books_gone} spend book(s); kept {sum(kept.values())} run(s)"
        + (f" ({groups})" if groups else "")
    )
    return exits.PASSED
