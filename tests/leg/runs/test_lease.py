"""The lease: a live leg on another machine (or another checkout) is never taken for abandoned;
a dead or silent one is taken over; no lease can be made to block for ever."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pygit2
import pytest
from kit import omg_call

from omg.leg.lease import Claim, Holder, Times, decode, encode, lapses, standing
from omg.state.holder import Process, this_process

from .helpers import (
    bare_origin,
    child_env,
    clone_of,
    git_checkout,
    kill_group,
    log_lines,
    pid_alive,
    popen_omg,
    remote_state,
    wait_for,
)

NOW = 1_800_000_000.0
TIMES = Times()
ELSEWHERE = Process("ci-runner-7", "0123456789abcdef", 4242, 1)


def claim(renewed: float, expires: float, *, proc: Process = ELSEWHERE, **kw: Any) -> Claim:
    holder = Holder(proc, 3, "r@0123456789ab", "t0k3n")
    return Claim("c" * 40, kw.pop("holder", holder), renewed, expires, kw.pop("released", False))


def _gone(p: Process) -> bool | None:
    return False if p.machine == "this-machine" else None


def _running(p: Process) -> bool | None:
    return True if p.machine == "this-machine" else None


HERE = replace(ELSEWHERE, machine="this-machine")
CASES = [
    # (why, claim, liveness of this machine's processes, standing)
    ("no lease yet", None, _running, "free"),
    ("given back at the end of its leg", claim(NOW - 5, NOW - 5, released=True), _running,
     "released"),
    ("another machine, renewed a minute ago", claim(NOW - 60, NOW + 240), _running, "live"),
    ("another machine, expired within the skew margin", claim(NOW - 400, NOW - 100), _running,
     "live"),
    ("another machine, expired past the skew margin", claim(NOW - 500, NOW - 200), _running,
     "expired"),
    ("claims to last until 9999, renewed 10 minutes ago", claim(NOW - 600, 253_402_300_000.0),
     _running, "expired"),
    ("claims to last until 9999, renewed just now", claim(NOW - 1, 253_402_300_000.0),
     _running, "live"),
    ("renewed in the future", claim(NOW + 3600, NOW + 3900), _running, "future"),
    ("not a lease omg wrote: a lock that may be held", claim(0, 0, holder=None), _running,
     "damaged"),
    ("this machine, its process is gone", claim(NOW - 1, NOW + 299, proc=HERE), _gone, "dead"),
    ("this machine, its process runs", claim(NOW - 1, NOW + 299, proc=HERE), _running, "live"),
    ("this machine, runs but silent past expiry", claim(NOW - 900, NOW - 600, proc=HERE),
     _running, "expired"),
]  # fmt: skip


@pytest.mark.parametrize(("why", "found", "liveness", "want"), CASES, ids=[c[0] for c in CASES])
def test_when_a_lease_refuses_a_leg(why: str, found: Claim | None, liveness: Any, want: str):
    assert standing(found, NOW, TIMES, liveness) == want


def test_no_lease_blocks_longer_than_ttl_plus_skew_after_its_last_renewal() -> None:
    forever = claim(NOW, 1e300)
    assert lapses(forever) == NOW + TIMES.ttl_s + TIMES.skew_s
    assert standing(forever, lapses(forever) + 0.001, TIMES, _running) == "expired"


def test_a_hostile_lease_is_read_inert() -> None:
    me = this_process()
    good = encode("r", Holder(me, 2, "r@0123456789ab", "abc"), NOW, NOW + 300, False)
    assert decode("c", good, "r").holder == Holder(me, 2, "r@0123456789ab", "abc")
    rec = json.loads(good)
    rec["holder"]["host"] = "@octocat [click](https://evil.example) <img>"
    rec["holder"]["mark"] = "other-run@0123456789ab"  # never reaps another run's processes
    hostile = decode("c", json.dumps(rec).encode(), "r")
    assert hostile.holder is not None
    assert re.fullmatch(r"[A-Za-z0-9._?-]+", hostile.holder.proc.host)
    assert hostile.holder.mark == ""
    pid = f'"pid": {me.pid}'.encode()
    for broken in (b"", b"[]", b'{"schema": 1}', good.replace(b'"run_id": "r"', b'"run_id": "x"'),
                   good.replace(b'"pid": ', b'"pid": "x'), b"\xff" * 10,
                   good.replace(pid, b'"pid": 1e999'), good.replace(pid, b'"pid": NaN'),
                   good.replace(pid, b'"pid": ' + b"9" * 400), good.replace(pid, b'"pid": -1'),
                   b'{"holder": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"):  # fmt: skip
        damaged = decode("c", broken, "r")
        assert damaged.holder is None and damaged.damage, broken
        assert standing(damaged, NOW, TIMES, _running) == "damaged"  # never taken for free


# -- two checkouts of one run ------------------------------------------------------------------

LIVE = """\
name: live
nodes:
  - id: slow
    run: |
      echo start-$(basename $PWD) >> ../log.txt
      while [ ! -f ../go ]; do sleep 0.01; done
      echo end-$(basename $PWD) >> ../log.txt
  - id: after
    depends_on: [slow]
    run: echo after-$(basename $PWD) >> ../log.txt
"""


def omg_in(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a git checkout, committing (the ``cli`` fixture adds --no-commit), in this
    process (``kit.omg_call``); the legs that race or hold a lease while another asks are real
    processes (``popen_omg``)."""
    return omg_call(*args, cwd=cwd, env=child_env())


def _two_checkouts(tmp_path: Path, graph: str) -> tuple[Path, Path, Path]:
    a = git_checkout(tmp_path / "a", {"g.yaml": graph})
    bare = tmp_path / "origin.git"
    url = bare_origin(a, bare)
    return a, clone_of(url, tmp_path / "b"), bare


def _lease_on(bare: Path, run_id: str) -> Claim:
    repo = pygit2.Repository(str(bare))
    commit = repo.revparse_single(f"refs/omg/lease/{run_id}").peel(pygit2.Commit)
    return decode(str(commit.id), repo[commit.tree["lease.json"].id].data, run_id)


def test_a_second_checkout_refuses_while_the_first_legs_node_runs(tmp_path: Path) -> None:
    a, b, bare = _two_checkouts(tmp_path, LIVE)
    first = popen_omg(a, "run", "g.yaml", "--run-id", "r", "--push", "origin")
    try:
        wait_for(lambda: "start-a" in log_lines(tmp_path))
        for args in (("--push", "origin"), ()):  # taking the run, or only running it here
            res = omg_in(b, "resume", "--fetch", "origin", "r", *args)
            assert res.returncode == 3, res.stderr
            assert "Traceback" not in res.stderr
            said = " ".join(res.stderr.split())
            assert f"has a live leg elsewhere: leg 1 (pid {first.pid} in another checkout" in said
            assert "holds its lease on origin" in said and "valid until" in said
            assert "Wait for that leg to end, then run this command again" in said
        assert log_lines(tmp_path) == ["start-a"]
        shown = omg_in(b, "status")  # what b fetched: a leg runs it elsewhere, not abandoned
        assert shown.returncode == 0 and "abandoned" not in shown.stdout, shown.stdout
        assert "running elsewhere (leg 1 on host" in shown.stdout, shown.stdout
        assert "lease on origin until" in shown.stdout
    finally:
        (tmp_path / "go").touch()
        _, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert _lease_on(bare, "r").released
    done = omg_in(b, "resume", "--fetch", "origin", "r", "--push", "origin")
    assert done.returncode == 0 and "nothing to do" in done.stdout, done.stderr
    assert log_lines(tmp_path) == ["start-a", "end-a", "after-a"]  # each node once, all in a
    assert remote_state(bare, "r")["status"] == "passed"


ORPHANED = """\
name: orphaned
nodes:
  - id: work
    run: |
      alive() { s=$(cut -d" " -f3 /proc/$1/stat 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ]; }
      me=$(basename $PWD)
      for pid in $(cat ../pids 2>/dev/null); do alive $pid && echo overlap >> ../log.txt; done
      echo $$ >> ../pids; sleep 30 & echo $! >> ../pids
      echo start-$me >> ../log.txt
      while [ ! -f ../go ]; do sleep 0.01; done; echo end-$me >> ../log.txt
"""


def test_a_killed_leg_on_this_machine_is_taken_over_at_once_and_its_node_stopped(
    tmp_path: Path,
) -> None:
    a, b, bare = _two_checkouts(tmp_path, ORPHANED)
    first = popen_omg(a, "run", "g.yaml", "--run-id", "r", "--push", "origin")
    wait_for(lambda: "start-a" in log_lines(tmp_path))
    kill_group(first)  # the leg dies holding its lease; its node runs on in its own session
    orphans = [int(p) for p in (tmp_path / "pids").read_text().split()]
    assert all(pid_alive(p) for p in orphans)
    assert not _lease_on(bare, "r").released

    second = popen_omg(b, "resume", "--fetch", "origin", "r", "--push", "origin")
    wait_for(lambda: "start-b" in log_lines(tmp_path))
    assert not any(pid_alive(p) for p in orphans)
    (tmp_path / "go").touch()
    _, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    said = " ".join(err.split())
    assert f"leg 1 of run 'r' (pid {first.pid}" in said and "is gone" in said
    assert "this leg takes the run over" in said and "that leg left running" in said
    assert log_lines(tmp_path) == ["start-a", "start-b", "end-b"]  # never both at once
    state = remote_state(bare, "r")
    assert state["status"] == "passed" and [leg["outcome"] for leg in state["legs"]] == [
        None,
        "passed",
    ]


GATED = """\
name: gated
nodes:
  - id: first
    run: echo first-$(basename $PWD) >> ../log.txt
  - id: gate
    type: gate
    depends_on: [first]
  - id: post
    depends_on: [gate]
    run: echo post-$(basename $PWD) >> ../log.txt
"""


def _put_claim(checkout: Path, run_id: str, proc: Process, renewed: float, expires: float):
    """Write a lease on origin as a leg of another machine would have (or an attacker could)."""
    from omg.git import open_repo
    from omg.git.names import run_refspecs

    repo = open_repo(checkout, env={})
    assert repo is not None
    repo.fetch("origin", run_refspecs(run_id, "origin"))
    found = repo.lease("origin", run_id)
    data = encode(run_id, Holder(proc, 7, f"{run_id}@0123456789ab", "x"), renewed, expires, False)
    repo.put_lease("origin", run_id, data, "elsewhere", parent=found[0] if found else None)


@pytest.mark.parametrize(
    ("renewed", "expires", "taken"),
    [
        (-60, 240, False),
        (-3600, -3300, True),
        (-600, 253_402_300_000 - NOW, True),
        (3600, 3900, True),
    ],
    ids=["live", "silent-for-an-hour", "claims-until-9999", "renewed-in-the-future"],
)
def test_a_lease_of_another_machine_refuses_while_live_and_is_taken_over_when_not(
    tmp_path: Path, renewed: float, expires: float, taken: bool
) -> None:
    a, b, bare = _two_checkouts(tmp_path, GATED)
    assert omg_in(a, "run", "g.yaml", "--run-id", "r", "--push", "origin").returncode == 4
    now = time.time()
    _put_claim(b, "r", ELSEWHERE, now + renewed, now + expires)
    res = omg_in(b, "resume", "--fetch", "origin", "r", "--approve", "gate", "--push", "origin")
    said = " ".join(res.stderr.split())
    if not taken:
        assert res.returncode == 3, res.stderr
        assert "leg 7 (pid 4242 on host 'ci-runner-7') holds its lease on origin" in said
        assert log_lines(tmp_path) == ["first-a"]
        return
    assert res.returncode == 0, res.stderr
    assert log_lines(tmp_path) == ["first-a", "post-b"]
    assert _lease_on(bare, "r").released


def test_a_leg_renews_its_lease_and_one_that_lost_it_records_nothing_more(
    tmp_path: Path,
) -> None:
    """Cut off longer than its lease lasts, a leg is taken over; its next commit stops it."""
    from omg.errors import MovedOn
    from omg.git import open_repo
    from omg.git.names import run_refspecs
    from omg.graph.load import load_graph
    from omg.leg.commits import attach
    from omg.leg.loop import LegOptions
    from omg.leg.start import Environment, start_run

    a, b, bare = _two_checkouts(tmp_path, LIVE)
    env = Environment(runs_dir=a / ".omg" / "runs", root=a)
    env.commits = attach(a, "r", push="origin", base="HEAD", warn=lambda m: None, tokens=())
    assert env.commits is not None
    env.commits.lease_times = Times(ttl_s=30, renew_s=0.02, skew_s=1)
    graph = load_graph(a / "g.yaml")
    outcome: dict[str, BaseException] = {}

    def leg() -> None:
        with contextlib.chdir(a):
            try:
                start_run(graph, Path("g.yaml"), {}, env, LegOptions(1), run_id="r")
            except BaseException as exc:
                outcome["raised"] = exc

    thread = threading.Thread(target=leg)
    thread.start()
    try:  # the node waits for go: a failure must not leave it looping forever
        wait_for(lambda: "start-a" in log_lines(tmp_path))
        holding = env.commits.lease
        assert holding is not None
        wait_for(lambda: holding.renewals >= 2)  # renewed while the node runs
        before = _lease_on(bare, "r")
        assert before.holder is not None and before.holder.proc.pid == this_process().pid

        # another leg takes the run over (its lease had lapsed there): a compare-and-swap that a
        # renewal landing in between makes it try again, so renewals slow down to leave it room
        holding.times = Times(ttl_s=30, renew_s=0.3, skew_s=1)
        other = open_repo(b, env={})
        assert other is not None

        def taken_over() -> bool:
            other.fetch("origin", run_refspecs("r", "origin"))
            found = other.lease("origin", "r")
            assert found is not None
            holder = Holder(ELSEWHERE, 2, "r@0123456789ab", "y")
            data = encode("r", holder, time.time(), 1e10, False)
            try:
                other.put_lease("origin", "r", data, "taken over", parent=found[0])
            except MovedOn:  # renewed meanwhile
                return False
            return True

        wait_for(taken_over)
        wait_for(lambda: holding.lost is not None)
        pushed = remote_state(bare, "r")
        (tmp_path / "go").touch()
        thread.join(timeout=60)
        assert isinstance(outcome.get("raised"), MovedOn)
        assert "took over its lease on origin" in str(outcome["raised"])
        assert remote_state(bare, "r") == pushed  # the node's verdict never reached the remote
        assert _lease_on(bare, "r").holder == Holder(ELSEWHERE, 2, "r@0123456789ab", "y")
    finally:
        (tmp_path / "go").touch()
        thread.join(timeout=60)


def test_two_checkouts_racing_one_run_never_both_run_it(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Two legs decide the same gate at the same moment, over and over: one runs `post`."""
    held = 0
    outcomes: dict[str, int] = {}
    for n in range(4):
        root = tmp_path / f"race{n}"
        a, b, bare = _two_checkouts(root, GATED)
        c = clone_of(bare.as_uri(), root / "c")
        ran = omg_in(a, "run", "g.yaml", "--run-id", "r", "--push", "origin")
        assert ran.returncode == 4, ran.stderr
        args = ("resume", "--fetch", "origin", "r", "--approve", "gate", "--push", "origin")
        legs = [popen_omg(d, *args) for d in (b, c)]
        ends = [(p.wait(timeout=60), p.communicate()[1]) for p in legs]
        codes = sorted(code for code, _ in ends)
        assert all("Traceback" not in err for _, err in ends), ends
        assert codes == [0, 3], ends
        posts = [x for x in log_lines(root) if x.startswith("post-")]
        assert len(posts) == 1, "\n----\n".join([str(posts)] + [e for _, e in ends])
        state = remote_state(bare, "r")
        assert state["status"] == "passed" and len(state["legs"]) == 2
        loser = next(err for code, err in ends if code == 3)
        why = (
            "held"
            if "has a live leg" in loser
            else "lost the lease"
            if "took its lease" in loser
            else "moved on"
            if "moved on" in loser
            else "decided"
        )
        outcomes[why] = outcomes.get(why, 0) + 1
        held += 1
    print(f"\nraces held: {held} ({json.dumps(outcomes)})")
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        cache.set("omg/races_held", {"races": held, "losers": outcomes})


def _damage_lease(bare: Path, run_id: str, form: str) -> None:
    """Put a lease omg cannot read on the remote, on top of the one there (as a push could)."""
    from pygit2.enums import FileMode

    repo = pygit2.Repository(str(bare))
    ref = f"refs/omg/lease/{run_id}"
    last = repo.revparse_single(ref).peel(pygit2.Commit)
    good = repo[last.tree["lease.json"].id].data
    builder = repo.TreeBuilder()
    if form == "a directory":
        builder.insert("lease.json", last.tree.id, FileMode.TREE)
    else:
        deep = b'{"schema": 1, "run_id": "r", "holder": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
        data = re.sub(rb'"pid": [0-9]+', b'"pid": 1e999', good) if form == "pid 1e999" else deep
        builder.insert("lease.json", repo.create_blob(data), FileMode.BLOB)
    sig = pygit2.Signature("x", "x@example.com")
    repo.references.create(
        ref, repo.create_commit(None, sig, sig, "by hand", builder.write(), [last.id]), force=True
    )


@pytest.mark.parametrize("form", ["pid 1e999", "nested 50,000 deep", "a directory"])
def test_a_damaged_lease_refuses_every_leg_naming_its_ref_until_deleted_there(
    tmp_path: Path, form: str
) -> None:
    a, b, bare = _two_checkouts(tmp_path, GATED)
    assert omg_in(a, "run", "g.yaml", "--run-id", "r", "--push", "origin").returncode == 4
    _damage_lease(bare, "r", form)
    approve = ("--approve", "gate")
    for args in (("--push", "origin", *approve), approve):  # taking the run, or running it here
        res = omg_in(b, "resume", "--fetch", "origin", "r", *args)
        assert res.returncode == 3, res.stderr
        said = " ".join(res.stderr.split())
        assert "Traceback" not in said
        assert "its lease refs/omg/lease/r on origin is damaged" in said, said
        assert "nothing ran here" in said and "`git push origin :refs/omg/lease/r`" in said
    assert log_lines(tmp_path) == ["first-a"]
    assert omg_in(b, "status").returncode == 0  # the listing reads it without a crash

    pygit2.Repository(str(bare)).references.delete("refs/omg/lease/r")  # the repair it names
    res = omg_in(b, "resume", "--fetch", "origin", "r", "--push", "origin", *approve)
    assert res.returncode == 0, res.stderr
    assert log_lines(tmp_path) == ["first-a", "post-b"]
    assert _lease_on(bare, "r").released
