"""Crash safety: a SIGKILLed leg loses only the nodes in flight; nothing passed ever runs again."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kit import omg_in_process

from omg.state.kept import LEDGER
from omg.state.vouched import VERIFIED

from .conftest import Cli
from .helpers import (
    RUNS,
    child_env,
    comparable,
    events,
    kill_group,
    launches,
    log_lines,
    of_kind,
    popen_omg,
    run_path,
    state,
    wait_for,
    write_graph,
)


def passed_nodes(evs: list[dict[str, Any]]) -> set[str]:
    return {e["node_id"] for e in of_kind(evs, "node_passed")}


# -- a deterministic kill -------------------------------------------------------------------

HANGING = """\
name: hang
concurrency: 2
nodes:
  - id: fast
    run: echo fast >> log.txt
  - id: slow
    run: 'echo slow >> log.txt; while [ ! -f go ]; do sleep 0.01; done'
  - id: after
    depends_on: [fast, slow]
    run: echo after >> log.txt
"""


def test_a_killed_leg_reads_abandoned_and_resume_reruns_only_what_was_in_flight(
    cli: Cli, tmp_path: Path
) -> None:
    write_graph(tmp_path, HANGING)
    rd = run_path(tmp_path, "r")
    proc = popen_omg(tmp_path, "run", "g.yaml", "--run-id", "r", "--no-commit")
    wait_for(lambda: "fast" in passed_nodes(events(rd)) and "slow" in log_lines(tmp_path))
    kill_group(proc)
    (tmp_path / "go").touch()  # lets the orphaned `slow` child exit

    def record() -> dict[str, bytes]:  # the run's files, the check's caches aside
        caches = (VERIFIED, LEDGER)  # verified.json, and the ledger kept with it
        files = (p for p in rd.iterdir() if p.is_file() and p.name not in caches)
        return {p.name: p.read_bytes() for p in files}

    before = record()
    listing = cli("status")
    assert "abandoned" in listing.stdout
    detail = cli("status", "r")
    assert "abandoned" in detail.stdout and "omg resume r" in detail.stdout
    # Deriving liveness repaired nothing: the run directory is byte-for-byte what the kill left.
    assert record() == before
    assert state(rd)["legs"][-1]["outcome"] is None

    res = cli("resume", "r")
    assert res.returncode == 0, res.stderr
    evs = events(rd)
    assert launches(evs, leg=2) == [("slow", 0), ("after", 0)]
    log = log_lines(tmp_path)
    assert log.count("fast") == 1 and log.count("slow") == 2 and log.count("after") == 1
    st_ = state(rd)
    assert st_["status"] == "passed"
    assert [leg["outcome"] for leg in st_["legs"]] == [None, "passed"]
    assert "passed" in cli("status").stdout


# -- every kill point, simulated exhaustively ------------------------------------------------

PREFIX_GRAPH = """\
name: prefix
on_fail: continue
concurrency: 2
nodes:
  - id: a
    run: echo a >> log.txt
  - id: b
    depends_on: [a]
    run: echo b >> log.txt
  - id: c
    depends_on: [a]
    run: echo c >> log.txt
  - id: bad
    depends_on: [a]
    run: 'echo bad >> log.txt; exit 1'
  - id: d
    depends_on: [b, c]
    run: echo d >> log.txt
  - id: pruned
    depends_on: [bad]
    run: echo pruned >> log.txt
"""


def _start_in_process(root: Path, rid: str) -> dict[str, Any]:
    from omg.graph.load import load_graph
    from omg.leg.loop import LegOptions
    from omg.leg.start import Environment, start_run

    graph = load_graph(root / "g.yaml")
    env = Environment(runs_dir=root / RUNS, root=root)
    with contextlib.chdir(root):  # as the CLI runs it: the graph path relative to the cwd
        end = start_run(graph, Path("g.yaml"), {}, env, LegOptions(graph.concurrency), run_id=rid)
    return end.state


def _resume_in_process(root: Path, rid: str) -> Any:
    from omg.leg.loop import LegOptions
    from omg.leg.start import Environment, resume_run

    env = Environment(runs_dir=root / RUNS, root=root)
    return resume_run(rid, env, LegOptions()).result


@pytest.mark.parametrize(
    "lag", [0, 1, None], ids=["state-current", "state-one-write-behind", "state-lost"]
)
def test_every_prefix_of_the_stream_resumes_to_the_same_state(
    tmp_path: Path, lag: int | None, run_dir_check: Callable[[Path], dict]
) -> None:
    """A SIGKILL can stop a leg after any event, with state.json current or one write behind
    (killed between the fsync'd append and the snapshot rename), or lost: model every point."""
    from omg.state import fold
    from omg.state.store import canonical_json

    base = tmp_path / "baseline"
    write_graph(base, PREFIX_GRAPH)
    baseline = _start_in_process(base, "r")
    full = events(run_path(base, "r"))
    assert full[-1]["event"] == "run_finished"
    for k in range(1, len(full)):  # cut before the final run_finished at the latest
        root = tmp_path / f"cut{k}"
        write_graph(root, PREFIX_GRAPH)
        rd = run_path(root, "r")
        rd.mkdir(parents=True)
        prefix = full[:k]
        (rd / "events.jsonl").write_text(
            "".join(json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n" for e in prefix)
        )
        snap = prefix[: len(prefix) - lag] if lag is not None else []
        if snap:
            (rd / "state.json").write_text(canonical_json(fold(snap)))
        done_before = passed_nodes(prefix)
        result = _resume_in_process(root, "r")
        assert result is not None, f"cut after event {k}: the open leg was not closed"
        final = run_dir_check(rd)
        assert comparable(final) == comparable(baseline), f"cut after event {k}"
        relaunched = {n for n, _ in launches(events(rd), leg=2)}
        assert not relaunched & done_before, f"cut after event {k}: passed nodes ran again"
        assert final["legs"][0]["outcome"] is None and final["legs"][-1]["outcome"] == "failed"


DECIDED = {
    "gate": """\
name: decided
nodes:
  - id: a
    run: echo a >> log.txt
  - id: gate
    type: gate
    depends_on: [a]
  - id: b
    depends_on: [gate]
    run: echo b >> log.txt
""",
    "gate.exhausted": """\
name: decided
nodes:
  - id: a
    run: echo a >> log.txt
  - id: gate
    depends_on: [a]
    run: 'false'
    feedback: {rerun: a, max: 1, on_exhausted: gate}
  - id: b
    depends_on: [gate]
    run: echo b >> log.txt
""",
}


@pytest.mark.parametrize("gate", list(DECIDED))
@pytest.mark.parametrize("approve", [True, False], ids=["approve", "reject"])
def test_a_decision_recorded_by_a_killed_leg_is_not_asked_again(
    tmp_path: Path, gate: str, approve: bool, run_dir_check: Callable[[Path], dict]
) -> None:
    """Killed right after gate_approved/gate_rejected, before the gate's verdict event: the
    decision is on record, so the next leg applies it instead of pausing to ask again."""
    from omg.leg.decisions import Decision
    from omg.leg.start import Environment, resume_run
    from omg.state import fold
    from omg.state.store import canonical_json

    write_graph(tmp_path, DECIDED[gate])
    _start_in_process(tmp_path, "r")
    rd = run_path(tmp_path, "r")
    env = Environment(runs_dir=tmp_path / RUNS, root=tmp_path)
    from omg.leg.loop import LegOptions

    resume_run(
        "r",
        env,
        LegOptions(1),
        decision=Decision(gate, approve, "ann", "because"),
    )
    full = events(rd)
    cut = next(i for i, e in enumerate(full) if e["event"] in ("gate_approved", "gate_rejected"))
    prefix = full[: cut + 1]
    (rd / "events.jsonl").write_text(
        "".join(json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n" for e in prefix)
    )
    (rd / "state.json").write_text(canonical_json(fold(prefix)))
    result = _resume_in_process(tmp_path, "r")
    assert result is not None and result.outcome == ("passed" if approve else "failed")
    evs = events(rd)
    assert not of_kind(evs, "gate_paused", leg=3), "a recorded decision was asked again"
    target = gate.split(".")[0]
    verdicts = of_kind(evs, "node_passed", "node_failed", leg=3)
    assert verdicts[0]["node_id"] == target
    assert verdicts[0]["event"] == ("node_passed" if approve else "node_failed")
    st_ = run_dir_check(rd)
    assert st_["gates"][gate]["by"] == "ann"
    assert ("b" in st_["nodes"]) is approve


# -- SIGKILL at random points (property) ----------------------------------------------------


@dataclass(frozen=True)
class Dag:
    nodes: tuple[tuple[str, tuple[str, ...], int, bool], ...]  # id, parents, sleep ms, fails
    concurrency: int
    lane: bool = False  # odd nodes share `worktree: lane` (a real worktree in git), writing there

    def yaml(self) -> str:
        fails = any(f for *_, f in self.nodes)
        lines = ["name: random", f"concurrency: {self.concurrency}"]
        lines += ["on_fail: continue"] if fails else []
        lines.append("nodes:")
        for i, (nid, parents, ms, fail) in enumerate(self.nodes):
            in_lane = self.lane and i % 2 == 1
            log = f"{LANE_TO_ROOT}log.txt" if in_lane else "log.txt"
            wrote = f"echo {nid} > {nid}.txt; " if in_lane else ""
            cmd = f"sleep 0.{ms:03d}; {wrote}echo {nid} >> {log}" + ("; exit 1" if fail else "")
            lines += [f"  - id: {nid}", f"    run: '{cmd}'"]
            lines += ["    worktree: lane"] if in_lane else []
            if parents:
                lines.append(f"    depends_on: [{', '.join(parents)}]")
        return "\n".join(lines) + "\n"


#: From a lane (``.omg/worktrees/<run>/lane``, in git or not) back to the run's root.
LANE_TO_ROOT = "../../../../"


def lane_files(root: Path) -> dict[str, str]:
    """What the nodes wrote into the lane: ``n*.txt`` by name."""
    lane = root / ".omg" / "worktrees" / "r" / "lane"
    return {p.name: p.read_text() for p in sorted(lane.glob("n*.txt"))}


@st.composite
def dags(draw: st.DrawFn) -> Dag:
    n = draw(st.integers(2, 6))
    nodes = []
    for i in range(n):
        parents = draw(st.lists(st.integers(0, i - 1), unique=True, max_size=2)) if i else []
        ms = draw(st.integers(0, 20))
        fail = draw(st.integers(0, 7)) == 0
        nodes.append((f"n{i}", tuple(f"n{p}" for p in sorted(parents)), ms, fail))
    return Dag(tuple(nodes), draw(st.integers(1, 3)), draw(st.booleans()))


@dataclass(frozen=True)
class Kill:
    """Where to SIGKILL a leg: once it has appended ``at`` × (the events a whole run of this graph
    writes) new events, plus ``jitter`` seconds; ``at`` = 0 kills ``jitter`` seconds after the
    process started — during start-up, the lock, or the first event."""

    at: float
    jitter: float
    #: in git: "commit" counts commits of the run branch instead of events (and then kills at
    #: a tenth of the jitter): right after a commit lands, its push and the lease's are next
    aim: str = "event"


def _plan(rnd: random.Random) -> list[Kill]:
    """One or two kills. Drawn from a true-random source, not from hypothesis: its draws lean
    towards the simplest values (0.0) and repeat, which would bunch the kills; the timing of a
    kill is not reproducible anyway, so there is nothing to shrink."""
    return [
        Kill(
            0.0 if rnd.random() < 0.12 else rnd.random(),
            rnd.choice([0.0, 0.0, 0.0005, 0.002, 0.005, 0.01, 0.3]),
            rnd.choice(["event", "commit"]),
        )
        for _ in range(rnd.choice([1, 1, 2]))
    ]


def _count_events(rd: Path) -> int:
    return _dir_log(rd).count(b"\n")


def _dir_log(rd: Path) -> bytes:
    """The run directory's event log as one stream: events.jsonl, then its chunks."""
    paths = [rd / "events.jsonl", *sorted((rd / "events").glob("*.jsonl"))]
    return b"".join(p.read_bytes() for p in paths if p.exists())


def _tree_log(repo: Any, tree: Any) -> bytes:
    """A commit's event log as one stream: events.jsonl, then the chunks of events/."""
    out = repo[tree["events.jsonl"].id].data
    if "events" in tree:
        chunks = repo[tree["events"].id]
        out += b"".join(repo[e.id].data for e in sorted(chunks, key=lambda e: e.name))
    return bytes(out)


#: Where a leg runs: a plain directory (no git), a git checkout committing its run branch, or
#: one pushing it (and its lease) to a bare remote over smart HTTP, as GitHub serves it.
Mode = Literal["outside-git", "in-git", "push"]
MODES: tuple[Mode, ...] = ("outside-git", "in-git", "push")
#: Examples per mode: git legs cost more (commits, a remote), the kills are as varied.
EXAMPLES = {"outside-git": 30, "in-git": 12, "push": 10}
TOKEN = "ghs_kill-test-token-0123456789"
RUN_REF = "refs/heads/omg/runs/r"
SIMULATED_LOCK = b"0" * 40 + b"\n"


@dataclass
class Place:
    """One example's checkout (and remote), and how its next leg is started."""

    mode: Mode
    root: Path
    bare: Path | None = None
    legs: int = 0

    @property
    def git(self) -> bool:
        return self.mode != "outside-git"

    def env(self) -> dict[str, str]:
        return child_env(OMG_GIT_TOKEN=TOKEN) if self.mode == "push" else child_env()

    def next_leg(self, rd: Path) -> tuple[str, ...]:
        self.legs += 1
        tail: tuple[str, ...] = ()
        if self.mode == "outside-git":
            tail = ("--no-commit",)
        elif self.mode == "push":
            tail = ("--push", "origin")
        if not (rd / "events.jsonl").exists():
            return ("run", "g.yaml", "--run-id", "r", *tail)
        if self.bare is not None and self.legs % 2 and _ref(self.bare, RUN_REF) is not None:
            tail = ("--fetch", "origin", *tail)  # as a later CI job resumes it
        return ("resume", "r", *tail)


@contextlib.contextmanager
def _place(mode: Mode, root: Path, graph: str) -> Iterator[Place]:
    from githttp import serving

    from .helpers import git_checkout

    if mode == "outside-git":
        write_graph(root, graph)
        yield Place(mode, root)
        return
    git_checkout(root, {"g.yaml": graph})
    if mode == "in-git":
        yield Place(mode, root)
        return
    with serving(root.parent / "server", TOKEN) as srv:
        import pygit2

        assert srv.server is not None
        srv.server.handle_error = lambda *_: None  # type: ignore[method-assign]  # a killed client
        pygit2.Repository(str(root)).remotes.create("origin", srv.url)
        yield Place(mode, root, srv.bare)


def _settled(rd: Path) -> bool:
    evs = events(rd)
    return bool(evs) and evs[-1]["event"] == "run_finished"


def _ref(git_dir: Path, ref: str) -> str | None:
    import pygit2

    try:
        return str(pygit2.Repository(str(git_dir)).references[ref].target)
    except (KeyError, pygit2.GitError):
        return None


def _commits(root: Path) -> int:
    """Commits the run branch has moved through here (its reflog, one line a move)."""
    log = root / ".git" / "logs" / "refs" / "heads" / "omg" / "runs" / "r"
    return log.read_bytes().count(b"\n") if log.exists() else 0


def _lease_standing(bare: Path) -> str | None:
    """How the remote's lease of run r stands for a leg starting now (None: no lease yet)."""
    import pygit2

    from omg.leg.lease import decode, standing

    repo = pygit2.Repository(str(bare))
    try:
        lease = repo.revparse_single("refs/omg/lease/r").peel(pygit2.Commit)
    except KeyError:
        return None
    return standing(decode(str(lease.id), repo[lease.tree["lease.json"].id].data, "r"), time.time())


def _git_invariants(place: Place, rd: Path) -> dict[str, bool]:
    """After a kill: every commit of the run branch holds a state.json that is the fold of the
    events it holds up to its seq (a checkpoint; a pushed commit's is level with its events),
    the branch holds a prefix of the directory's events, and the remote's branch is the local
    one or behind it (never beside it). Where the kill landed, in git terms."""
    import pygit2

    from omg.state import fold
    from omg.state.store import canonical_json

    repo = pygit2.Repository(str(place.root))
    head = _ref(place.root, RUN_REF)
    landed = {
        "stale_lock": any(  # left by the kill itself, not simulated below
            lock.read_bytes() != SIMULATED_LOCK for lock in (place.root / ".git").rglob("*.lock")
        ),
        "events_past_commit": False,
        "ahead_of_remote": False,
    }
    if head is None:
        return landed
    commit = repo[head].peel(pygit2.Commit)
    theirs = _ref(place.bare, RUN_REF) if place.bare is not None else None
    while True:
        tree = commit.tree
        committed = _tree_log(repo, tree).decode()
        evs = [json.loads(line) for line in committed.splitlines()]
        snap = repo[tree["state.json"].id].data.decode()
        upto = [e for e in evs if e["seq"] <= json.loads(snap)["seq"]]
        assert snap == canonical_json(fold(upto)), commit.id
        if str(commit.id) == theirs:
            assert snap == canonical_json(fold(evs)), f"pushed {commit.id} lags its events"
        if not commit.parents:
            break
        commit = commit.parents[0]
    on_branch = _tree_log(repo, repo[head].peel(pygit2.Commit).tree)
    here = _dir_log(rd)
    assert here.startswith(on_branch), "the run branch holds events the directory lost"
    landed["events_past_commit"] = here != on_branch
    if place.bare is not None:
        theirs = _ref(place.bare, RUN_REF)
        if theirs is not None and theirs != head:
            assert repo.descendant_of(head, theirs), "the remote's run branch left this one's"
            landed["ahead_of_remote"] = True
    return landed


@pytest.mark.parametrize("mode", MODES)
def test_sigkill_at_random_points_never_reruns_a_passed_node(
    tmp_path: Path,
    request: pytest.FixtureRequest,
    run_dir_check: Callable[[Path], dict],
    mode: Mode,
) -> None:
    """Random graphs, SIGKILLed at random points of their legs — after so many events, or just
    after a commit of the run branch (in its push, its lease's, the next node's launch) — then
    resumed until done. After every kill: no event recorded is lost, the run branch agrees
    with itself and its remote, and (at the end) no node that had passed ran again."""
    from omg.cli import status

    points: list[dict[str, Any]] = []
    lanes: list[int | None] = []  # per example: None without a lane, else lane commits set aside
    examples = [0]

    @settings(
        max_examples=EXAMPLES[mode],
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(dag=dags(), rnd=st.randoms(use_true_random=True))
    def prop(dag: Dag, rnd: random.Random) -> None:
        plan = _plan(rnd)
        examples[0] += 1
        case = tmp_path / f"case{examples[0]}"
        base = case / "baseline"
        write_graph(base, dag.yaml())
        baseline = _start_in_process(base, "r")
        with _place(mode, case / "killed", dag.yaml()) as place:
            lanes.append(
                _kill_and_resume(place, plan, base, baseline, points, run_dir_check, status)
            )
        shutil.rmtree(case)

    prop()
    mid = [p for p in points if p["landed"] == "mid-leg"]
    summary = {
        "mode": mode,
        "examples": examples[0],
        "kills": len(points),
        "mid_leg": len(mid),
        "mid_leg_with_nodes_in_flight": sum(p["in_flight"] > 0 for p in mid),
        "distinct_mid_leg_points": len({(p["position"], p["last"]) for p in mid}),
        "before_first_event": sum(p["landed"] == "before any event" for p in points),
        "after_leg_end": sum(p["landed"] in ("after exit", "after run_finished") for p in points),
    }
    summary["examples_with_a_lane"] = sum(n is not None for n in lanes)
    if mode != "outside-git":
        summary["lanes_set_aside"] = sum(n or 0 for n in lanes)
        summary["right_after_a_commit"] = sum(p["aim"] == "commit" for p in points)
        keys = ["events_past_commit", "stale_lock", "simulated_ref_lock"]
        keys += ["ahead_of_remote", "lease_left_by_a_killed_leg"] if mode == "push" else []
        for key in keys:
            summary[key] = sum(bool(p.get(key)) for p in points)
    # The count, for whoever needs the number: printed (-s), in the pytest cache
    # (.pytest_cache/v/omg/kill_points[_<mode>]), and a line in $OMG_KILL_REPORT when it names
    # a file.
    print(f"\nSIGKILL property: {json.dumps(summary)}")
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        cache.set("omg/kill_points" + ("" if mode == "outside-git" else f"_{mode}"), summary)
    if os.environ.get("OMG_KILL_REPORT"):
        with Path(os.environ["OMG_KILL_REPORT"]).open("a") as fh:
            fh.write(json.dumps(summary) + "\n")
    assert len(mid) >= EXAMPLES[mode] // 3, summary  # kills must land inside legs


def _kill_and_resume(
    place: Place,
    plan: list[Kill],
    baseline_root: Path,
    baseline: dict[str, Any],
    points: list[dict[str, Any]],
    run_dir_check: Callable[[Path], dict],
    status: Any,
) -> int | None:
    """Kill and resume one example's legs, checking every invariant; the lane commits set aside
    (None: the graph has no lane)."""
    from omg.state.store import RunDir, load_run

    root = place.root
    rd = run_path(root, "r")
    full = events(run_path(baseline_root, "r"))  # what a whole run of this graph records
    guarded: list[tuple[int, set[str], dict[str, int]]] = []  # (leg, passed, log counts)
    recorded: list[bytes] = []  # the event stream after each kill: never shortened after
    pushed: list[str] = []  # the remote's run-branch head after each kill: never left

    for k in plan:
        if _settled(rd):
            break
        known = _count_events(rd)
        aim = k.aim if place.git else "event"
        # 1 … len(full) - 1 new events: at most up to the event before a whole run's last.
        target = known + 1 + int(k.at * (len(full) - 2)) if k.at else 0
        # or a commit of this leg: after run_started, one per settled node, one at its end
        goal = _commits(root) + 1 + int(k.at * len(of_kind(full, "node_passed", "node_failed")))
        proc = popen_omg(root, *place.next_leg(rd), env=place.env())
        end = time.monotonic() + 30
        while target:
            if proc.poll() is not None:
                break
            if aim == "event" and _count_events(rd) >= target:
                break
            if aim == "commit" and _commits(root) >= goal:
                break
            assert time.monotonic() < end, "the leg stalled"
            time.sleep(0.0005)
        if k.jitter:
            time.sleep(k.jitter if aim == "event" else k.jitter / 10)
        exited = proc.poll() is not None
        kill_group(proc)
        evs = events(rd)
        new = evs[known:]
        open_leg = bool(new) and new[-1]["event"] != "run_finished"
        landed = (
            "after exit"
            if exited
            else "before any event"
            if not new
            else "mid-leg"
            if open_leg
            else "after run_finished"
        )
        point: dict[str, Any] = {
            "landed": landed,
            "aim": aim,
            "position": len(new),
            "last": new[-1]["event"] if new else None,
            "in_flight": len(of_kind(new, "node_started"))
            - len(of_kind(new, "node_passed", "node_failed")),
        }
        if place.git and (rd / "events.jsonl").exists():
            point.update(_git_invariants(place, rd))
            ref = root / ".git" / RUN_REF
            if ref.exists() and k.jitter in (0.0005, 0.002):  # about one kill in three
                # What a kill inside libgit2's ref update leaves (its window is microseconds
                # wide, so SIGKILL alone almost never hits it): the half-done `<ref>.lock`.
                ref.with_name(ref.name + ".lock").write_bytes(SIMULATED_LOCK)
                point["simulated_ref_lock"] = True
        if place.bare is not None and open_leg:
            point["lease_left_by_a_killed_leg"] = _lease_standing(place.bare) == "dead"
        points.append(point)
        if open_leg:  # what `omg status` derives — and nothing is appended to say it
            # A child forked in the instant of the kill shares the lock until its exec.
            wait_for(
                lambda: status.derive(load_run(RunDir(rd))[0], RunDir(rd)) == "abandoned",
                timeout=5,
            )
        if evs:
            counts = {n: log_lines(root).count(n) for n in passed_nodes(evs)}
            guarded.append((evs[-1]["leg"], passed_nodes(evs), counts))
            recorded.append(_dir_log(rd))
        if place.bare is not None:
            pushed += filter(None, [_ref(place.bare, RUN_REF)])

    # Then `omg resume` until the run settles (at least once). Only a kill needs a process of
    # its own: the legs that finish the run are the CLI's entry point called in this process
    # (kit.omg_in_process: the same arguments, environment, exit code and output), which
    # spares each example one or more interpreter start-ups.
    for _ in range(6):
        res = omg_in_process(*place.next_leg(rd), cwd=root, env=place.env())
        assert "Traceback" not in res.stderr, res.stderr
        if _settled(rd):
            # 3: a run that failed (and halted) asks for --retry-failed instead.
            assert res.returncode in (0, 1, 3), res.stderr
            break
    assert _settled(rd), f"the run never settled; the last resume said: {res.stderr}"
    final = run_dir_check(rd)
    got, want = comparable(final), comparable(baseline)
    lanes = got.pop("worktrees")  # in git: the lane's branch and commit, which differ by nature
    assert want.pop("worktrees") == {} and got == want
    assert lane_files(root) == lane_files(baseline_root)
    if lanes:
        import pygit2

        tree = pygit2.Repository(str(root))[lanes["lane"]["commit"]].peel(pygit2.Commit).tree
        held = {e.name: tree[e.name].data.decode() for e in tree if e.name.startswith("n")}
        assert held == lane_files(root), "the lane's files are not what its run recorded"
    stream = _dir_log(rd)
    for before in recorded:
        assert stream.startswith(before), "an event recorded before a kill was lost"
    evs = events(rd)
    log = log_lines(root)
    for leg, passed, counts in guarded:
        later = {n for e in evs if e["leg"] > leg for n, _ in launches([e])}
        assert not later & passed, f"{later & passed} passed before a kill, then re-ran"
        for nid, count in counts.items():
            assert log.count(nid) == count, f"{nid} passed before a kill, then ran again"
    if place.git:
        assert not _git_invariants(place, rd)["events_past_commit"], "the end is not committed"
    if place.bare is not None:
        import pygit2

        head = _ref(place.bare, RUN_REF)
        assert head == _ref(root, RUN_REF), "the final leg left work unpushed"
        remote = pygit2.Repository(str(place.bare))
        for earlier in pushed:
            assert earlier == head or remote.descendant_of(head, earlier), "remote rewritten"
        tree = remote[head].peel(pygit2.Commit).tree
        assert _tree_log(remote, tree) == stream
        assert _lease_standing(place.bare) != "live", "a lease outlived every leg"
    if not any(node.get("worktree") for node in baseline["graph"]["nodes"]):
        return None
    if not place.git:
        return 0
    import pygit2

    kept = [r for r in pygit2.Repository(str(root)).references if "/kept/omg-work-r-" in r]
    return len(kept)
