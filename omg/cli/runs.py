"""`omg run`, `omg resume` and `omg clean`: wiring a leg to git, progress and the report."""

from __future__ import annotations

import getpass
import math
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from omg.cli import exits
from omg.cli.progress import Progress
from omg.errors import StateError, UsageError
from omg.leg.decisions import Decision
from omg.leg.loop import LegOptions
from omg.leg.start import Environment, LegEnd, leg_mask, resume_run, start_run
from omg.state.events import EventFields
from omg.state.runid import check_run_id
from omg.state.store import RunDir

if TYPE_CHECKING:
    from omg.cli.views import View


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # a container user with no passwd entry and no $USER
        return "unknown"


def _warn(msg: str) -> None:
    print(msg, file=sys.stderr)


def _environment(
    runs_dir: Path, progress: Progress, rehearsed: Mapping[str, str] | None = None
) -> Environment:
    env = Environment(runs_dir=runs_dir, root=Path.cwd(), listeners=[progress], warn=_warn)
    if rehearsed is not None:
        env.parent_env, env.rehearsal = rehearsed, True
    return env


@contextmanager
def _rehearsing(script: Path | None) -> Iterator[dict[str, str] | None]:
    """The stub model for ``--rehearse SCRIPT`` (and the children's environment), else None."""
    if script is None:
        yield None
        return
    from omg.cli.rehearsal import rehearsal

    with rehearsal(script) as env:
        yield env


def _attach_git(
    env: Environment, run_id: str, *, commit: bool, push: str | None, base: str = "HEAD"
) -> None:
    if not commit:
        if push:
            raise UsageError("--push needs commits; drop --no-commit")
        return
    from omg.github.env import git_tokens
    from omg.leg.commits import attach

    tokens = git_tokens(os.environ)
    env.commits = attach(env.root, run_id, push=push, base=base, warn=_warn, tokens=tokens)
    if env.commits is None and push:
        raise UsageError(f"--push {push}: {env.root} is not inside a git repository")


def run(
    path: Path,
    inputs: Mapping[str, str],
    *,
    run_id: str | None,
    runs_dir: Path,
    concurrency: int | None,
    max_minutes: float | None,
    max_nodes: int | None,
    push: str | None,
    commit: bool,
    base: str,
    asked: View = "auto",
    rehearse: Path | None = None,
    as_json: bool = False,
) -> int:
    from omg.graph.load import load_graph, resolve_inputs
    from omg.leg.start import new_run_id

    if run_id is not None:
        check_run_id(run_id)  # before a path, a branch or a rehearsal directory is named
    graph = load_graph(path)
    resolve_inputs(graph, inputs)  # refuse bad inputs before anything is created
    rid = run_id if run_id is not None else new_run_id(graph, runs_dir)
    with _rehearsing(rehearse) as rehearsed, Progress() as progress:
        env = _environment(runs_dir, progress, rehearsed)
        _attach_git(env, rid, commit=commit, push=push, base=base)
        opts = LegOptions(concurrency, max_minutes, max_nodes)
        print(f"Running graph {graph.name!r} (run {rid})", file=sys.stderr)
        for use in graph.uses:
            print(use.disclosure(), file=sys.stderr)
        end = start_run(graph, path, inputs, env, opts, run_id=rid)
    return _report(end, runs_dir, asked, as_json)


def resume(
    run_id: str,
    *,
    runs_dir: Path,
    retry_failed: bool,
    approve: str | None,
    reject: str | None,
    reason: str,
    by: str | None,
    concurrency: int | None,
    max_minutes: float | None,
    max_nodes: int | None,
    fetch: str | None,
    push: str | None,
    commit: bool,
    asked: View = "auto",
    rehearse: Path | None = None,
    inputs: Mapping[str, str] | None = None,
    approve_spend: float | None = None,
    guidance: str | None = None,
    as_json: bool = False,
) -> int:
    from omg.leg.decisions import Guidance

    check_run_id(run_id)
    if fetch:
        from omg.github.env import git_tokens
        from omg.leg.commits import fetch_run

        tokens = git_tokens(os.environ)
        fetch_run(Path.cwd(), runs_dir / run_id, run_id, fetch, warn=_warn, tokens=tokens)
    decision = None
    gate = approve or reject
    if gate or guidance is not None:
        from omg.github.env import actor  # who decides: read only when someone does
    if gate:
        who = by or actor(os.environ) or _os_user()
        decision = Decision(gate, approve is not None, who, reason)
    words = None
    if guidance is not None:
        words = Guidance(guidance, by or actor(os.environ) or _os_user())

    opts = LegOptions(concurrency, max_minutes, max_nodes)

    with _rehearsing(rehearse) as rehearsed, Progress() as progress:
        env = _environment(runs_dir, progress, rehearsed)
        env.inputs = inputs or {}  # a run's secret inputs, given again (omg never records them)
        _attach_git(env, run_id, commit=commit, push=push)
        if env.commits is not None:
            env.commits.fetched_from = fetch  # a live lease there refuses this leg too
        print(f"Resuming run {run_id!r}", file=sys.stderr)
        stamp: EventFields = {}
        if approve_spend is not None:
            if not (math.isfinite(approve_spend) and approve_spend > 0):
                raise UsageError(f"--approve-spend {approve_spend} must be an amount > 0")
            who = by or actor(os.environ) or _os_user()
            stamp = {"approved_usd": approve_spend, "by": who}
        end = resume_run(
            run_id,
            env,
            opts,
            retry_failed=retry_failed,
            decision=decision,
            guidance=words,
            stamp=stamp,
        )
    return _report(end, runs_dir, asked, as_json)


def dry_run(path: Path, inputs: Mapping[str, str]) -> int:
    """Every invocation rendered, then the advisories `omg lint` gives for the same file."""
    from omg.graph.findings import ordered
    from omg.graph.load import check_file, load_graph
    from omg.leg.dryrun import render_plan

    graph, found = check_file(path)
    if graph is None:
        load_graph(path)  # raises the refusal that lists every error
        raise AssertionError("unreachable: an invalid graph is refused")
    mask = leg_mask(Environment(runs_dir=Path(), root=Path.cwd()), graph, inputs)
    for use in graph.uses:
        print(use.disclosure())
    # a secret input is not shown either
    print(mask.text(render_plan(graph, path, inputs, env=os.environ)))
    advisories = [f for f in ordered(found) if f.severity != "error" and f.code != "fragment-use"]
    if advisories:
        print("\nadvisories (as `omg lint` gives them):")
        print("\n".join(f.as_text() for f in advisories))
    return exits.PASSED


def dry_resume(runs_dir: Path, run_id: str) -> int:
    """The next leg's invocations as they would run now: from the run's snapshot and inputs,
    the passed nodes left out, the run budget shown as what is left of it."""
    from omg.graph.load import graph_from_snapshot
    from omg.leg.dryrun import render_plan
    from omg.state.store import load_run

    rundir = RunDir(runs_dir / check_run_id(run_id))
    if not rundir.exists():
        raise StateError(f"no run {run_id!r} in {runs_dir}; `omg status` lists the runs there")
    state, _ = load_run(rundir)
    graph = graph_from_snapshot(state["graph"], state["graph_source"])
    passed = frozenset(n for n, rec in state["nodes"].items() if rec.get("verdict") == "PASS")
    mask = leg_mask(Environment(runs_dir=runs_dir, root=Path.cwd()), graph, state["inputs"])
    source = Path(state["graph_source"])
    plan = render_plan(
        graph, source, state["inputs"], spent=state["cost_usd"], passed=passed, env=os.environ
    )
    print(f"Run {run_id!r}, leg {len(state['legs']) + 1}:")
    print(mask.text(plan))
    return exits.PASSED


def clean(run_id: str, *, remote: str | None) -> int:
    from omg.leg.commits import clean_run

    check_run_id(run_id)
    for note in clean_run(Path.cwd(), run_id, remote=remote):
        print(note)
    return exits.PASSED


def _report(end: LegEnd, runs_dir: Path, asked: View, as_json: bool) -> int:
    from omg.cli.outcome import report  # the ledger's tables: imported once the leg has ended

    return report(end, runs_dir, asked, as_json)
