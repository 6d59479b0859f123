"""`omg run`, `omg resume` and `omg clean`: wiring a leg to git, progress and the report."""

from __future__ import annotations

import getpass
import math
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from omg.cli import exits, ledger
from omg.cli.next import next_block
from omg.cli.progress import Progress
from omg.cli.terminal import Paint
from omg.errors import Hint, StateError, UsageError
from omg.graph.model import Graph
from omg.kinds import EXHAUSTED_GATE_SUFFIX
from omg.leg.caps import describe_cap
from omg.leg.decisions import Decision
from omg.leg.loop import LegOptions
from omg.leg.start import Environment, LegEnd, leg_mask, resume_run, start_run
from omg.leg.wait import describe as describe_wait
from omg.state import NO_RECORD, State
from omg.state.events import EventFields
from omg.state.runid import check_run_id
from omg.state.store import RunDir


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


def _report(end: LegEnd, runs_dir: Path, by_node: bool, as_json: bool = False) -> int:
    """The ledger and how the leg ended, for people; with ``as_json`` all of it on stderr and
    the outcome as one JSON line on stdout, the last line there (schemas/status.schema.json)."""
    code, hint, step = _told(end, runs_dir, by_node, sys.stderr if as_json else sys.stdout)
    if as_json:
        from omg.cli import machine

        r = end.result
        doc = machine.outcome(
            end.state, r.outcome if r else None, r.reason if r else None, hint, code,
            next_step=step,
        )  # fmt: skip
        print(machine.dumps(doc))
    return code


def _told(
    end: LegEnd, runs_dir: Path, by_node: bool, out: TextIO
) -> tuple[int, Hint | None, str | None]:
    """Print the leg's end to ``out``: (exit code, the next step's hint, its name when no
    hint words it)."""
    run_id, result, state, graph = end.run_id, end.result, end.state, end.graph
    # the fold keeps each node's CLI version: the whole history is not read for them
    from omg.runners.registry import pin_hint

    for runtime in sorted({n.runtime for n in graph.nodes if n.kind == "agent"}):
        ran = [
            r
            for nid, r in state["nodes"].items()
            if nid in graph.by_id and graph.by_id[nid].runtime == runtime
        ]
        versions = sorted({str(r["cli_version"]) for r in ran if r.get("cli_version")})
        if len(versions) > 1:
            _, how = pin_hint(runtime)
            _warn(
                f"warning: run {run_id!r} ran its agent nodes with {runtime} "
                f"{', '.join(versions)}; pin one version ({how}) so legs behave alike"
            )
    print(file=out)
    events = () if by_node else RunDir(runs_dir / run_id).read_events()
    print(ledger.render(graph, state, events, by_node=by_node, paint=Paint.to(out)), file=out)
    if result is None:
        print(f"\nrun {run_id!r}: nothing to do — {state['status']}", file=out)
        code = {"failed": exits.FAILED, "paused": exits.PAUSED}.get(state["status"], exits.PASSED)
        return code, _standing(state), None
    print(file=out)
    hint: Hint | None = None
    step = None
    if result.outcome == "passed":
        print(f"run {run_id!r} passed.", file=out)
    elif result.outcome == "failed":
        hint = Hint("retry_failed", run_id)
        print(f"run {run_id!r} failed ({result.detail}). {next_block(hint)}", file=out)
    elif result.reason == "gate":
        gate = result.paused_at or ""
        hint = Hint("decide", run_id, gate)
        asks = _gate_question(graph, state, gate)
        print(f"Paused at gate {gate!r}: {asks}\n{next_block(hint)}", file=out)
    elif result.reason == "limit":
        hint = Hint("resume", run_id)
        wait = state["legs"][-1].get("wait")
        said = describe_wait(wait) if wait is not None else result.detail
        block = next_block(hint)
        print(
            f"run {run_id!r} {said}.\nNothing failed; once the limit has reset: {block}", file=out
        )
    elif result.reason == "spend_cap":
        capped = state["legs"][-1].get("capped")
        said = describe_cap(capped) if capped is not None else result.detail
        step = "approve_spend"
        print(
            f"run {run_id!r} {said}.\nNothing failed; here, approve more spend with:\n"
            f"  omg resume {run_id} --approve-spend USD",
            file=out,
        )
    else:
        hint = Hint("resume", run_id)
        block = next_block(hint)
        print(f"run {run_id!r} paused for its leg budget ({result.detail}). {block}", file=out)
    return exits.BY_OUTCOME[result.outcome], hint, step


def _standing(state: State) -> Hint | None:
    """What a run no leg could advance needs next (the outcome line's ``next``)."""
    rid, gate = state["run_id"], state["paused_at"]
    if state["status"] == "failed":
        return Hint("retry_failed", rid)
    if state["status"] == "paused":
        return Hint("decide", rid, gate) if gate else Hint("resume", rid)
    return None


def _gate_question(graph: Graph, state: State, gate: str) -> str:
    """What the gate asks: its description, or an exhausted loop's last verdict."""
    if gate in graph.by_id:
        return graph.node(gate).description or "(no description)"
    declarer = gate.removesuffix(EXHAUSTED_GATE_SUFFIX)
    detail = state["nodes"].get(declarer, NO_RECORD).get("detail", "")
    return f"accept {declarer!r} as it is? {detail}".strip()


def _attach_git(
    env: Environment, run_id: str, *, commit: bool, push: str | None, base: str = "HEAD"
) -> None:
    if not commit:
        if push:
            raise UsageError("--push needs commits; drop --no-commit")
        return
    from omg.github import git_tokens
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
    by_node: bool = False,
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
    return _report(end, runs_dir, by_node, as_json)


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
    by_node: bool = False,
    rehearse: Path | None = None,
    inputs: Mapping[str, str] | None = None,
    approve_spend: float | None = None,
    guidance: str | None = None,
    as_json: bool = False,
) -> int:
    from omg.github import actor
    from omg.leg.decisions import Guidance

    check_run_id(run_id)
    if fetch:
        from omg.github import git_tokens
        from omg.leg.commits import fetch_run

        tokens = git_tokens(os.environ)
        fetch_run(Path.cwd(), runs_dir / run_id, run_id, fetch, warn=_warn, tokens=tokens)
    decision = None
    gate = approve or reject
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
    return _report(end, runs_dir, by_node, as_json)


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
