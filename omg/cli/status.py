"""Run status: every run's derived status, one run's ledger, and the replay check."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from omg import strictjson
from omg.cli import ledger, machine
from omg.cli.next import next_step
from omg.cli.terminal import Paint
from omg.cli.views import View, per_node
from omg.errors import Hint, OmgError, StateError
from omg.graph.build import graph_from_data
from omg.ledgerrows import limits
from omg.state import State, diff, fold
from omg.state.kept import run_ledger
from omg.state.runid import check_run_id, is_run_id
from omg.state.store import RunDir, canonical_json, fold_run, load_run, open_record
from omg.state.verify import Damaged


def derive(state: State, rundir: RunDir) -> str:
    """running / paused at gate X / paused for leg budget / passed / failed / abandoned."""
    legs = state["legs"]
    if legs and legs[-1]["outcome"] is None:
        if rundir.probe_lock() == "held":
            return "running"
        from omg.git.repo import open_repo  # only here: pygit2 stays out of a plain status
        from omg.leg.lease import live_elsewhere

        where = live_elsewhere(open_repo(Path.cwd()), state["run_id"])
        return f"running elsewhere ({where})" if where else "abandoned"
    if state["status"] == "paused":
        if state["paused_at"]:
            return f"paused at gate {state['paused_at']}"
        reason = legs[-1].get("reason") if legs else None
        named = {"leg_budget": "leg budget", "limit": "a limit", "spend_cap": "a spend cap"}
        return f"paused for {named[reason]}" if reason in named else "paused"
    return str(state["status"])


def situation(state: State, derived: str) -> Hint | None:
    """Which step of the "what next" table a run with this derived status needs (None: done)."""
    rid, gate = state["run_id"], state["paused_at"]
    if gate and (derived == "abandoned" or derived.startswith("paused at gate")):
        return Hint("decide", rid, gate)
    if derived == "abandoned" or derived.startswith("paused"):
        return Hint("resume", rid)
    if derived == "failed":
        return Hint("retry_failed", rid)
    if derived.startswith("running"):
        return Hint("wait", rid)
    return None


def next_line(state: State, derived: str) -> str:
    hint = situation(state, derived)
    text = "nothing to do" if hint is None else next_step(hint)
    if derived == "abandoned":
        why = "pausing at its gate" if state["paused_at"] else "finishing (killed?)"
        return f"its last leg ended without {why}; nodes in flight then re-run — {text}"
    return text


def _load(rundir: RunDir, *, contents: bool = True) -> State:
    """The run as its whole record says (verified), caught up with a killed leg's events; the
    listing of every run checks its artifacts' sizes, not their contents."""
    return load_run(rundir, contents=contents)[0]


def show(runs_dir: Path, run_id: str | None, *, asked: View = "auto", as_json: bool = False) -> str:
    if run_id is not None:
        rundir = RunDir(runs_dir / check_run_id(run_id))
        if not rundir.exists():
            raise StateError(f"no run {run_id!r} in {runs_dir}; `omg status` lists the runs there")
        state = _load(rundir)
        derived = derive(state, rundir)
        graph = graph_from_data(state["graph"])
        by_node = per_node(state, asked)
        book = None if by_node and not as_json else run_ledger(rundir, limits(graph))
        if as_json:
            hint = situation(state, derived)
            return machine.dumps(machine.run(graph, state, (), derived, hint, book))
        table = ledger.render(graph, state, (), asked=asked, paint=Paint.to(sys.stdout), book=book)
        return (
            f"{table}\n\nstatus: {derived} "
            f"({len(state['legs'])} leg(s))\nnext: {next_line(state, derived)}"
        )
    paths = sorted(p for p in runs_dir.glob("*") if p.is_dir()) if runs_dir.is_dir() else []
    entries = [_entry(path) for path in paths]
    if as_json:
        return machine.dumps(machine.listing(entries, runs_dir=str(runs_dir)))
    return _table([_row(e) for e in entries]) or f"no runs in {runs_dir}"


def _table(body: list[tuple[str, str, str, str, str]]) -> str:
    """The listing's table ('' for no runs)."""
    if not body:
        return ""
    rows = [("RUN", "GRAPH", "STATUS", "LEGS", "COST"), *body]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def _row(e: machine.Doc) -> tuple[str, str, str, str, str]:
    """One run's line of the listing."""
    if e["status"] == "never_started":
        return (e["run_id"], "?", e["derived"], "0", "-")
    if e["error"] is not None:
        return (e["run_id"], "?", e["derived"], "?", "?")
    return (e["run_id"], e["graph"], e["derived"], str(e["legs"]), f"${e['cost_usd']:.4f}")


def _entry(path: Path) -> machine.Doc:
    """One run of the listing; a damaged run says so and never hides the others."""
    name = path.name
    if not is_run_id(name):
        return machine.unreadable(ascii(name), "not_a_run", "not a run (its name is not a run id)")
    rundir = RunDir(path)
    if not rundir.exists():  # a first leg killed before its first event: nothing to show
        return machine.unreadable(name, "never_started", "never started")
    try:
        state = _load(rundir, contents=False)
        derived = derive(state, rundir)
    except Damaged as exc:
        why = f"damaged: {exc.where} (`omg status {name}` says how)"
        return machine.unreadable(name, "damaged", why)
    except (OmgError, OSError) as exc:
        return machine.unreadable(name, "damaged", f"damaged: {str(exc)[:60]}")
    return machine.summary(name, state, derived)


def remote_derive(state: State) -> str:
    """A fetched run's status as its record says: running (in which workflow run), paused at
    which gate, waiting for its next leg, passed, failed, superseded."""
    legs = state["legs"]
    if legs and legs[-1]["outcome"] is None:
        carrier = legs[-1].get("ci", {}).get("workflow_run_id", "")
        return f"running in workflow run {carrier}" if carrier else "running (not in CI)"
    if state["status"] == "paused":
        if state["paused_at"]:
            return f"paused at gate {state['paused_at']}"
        return "waiting for its next leg"
    return str(state["status"])


def fetched(remote: str, run_id: str | None, *, asked: View = "auto", as_json: bool = False) -> str:
    """``status --fetch REMOTE [RUN]``: the remote's run branches fetched into
    ``refs/remotes/`` (nothing else local changes), then listed, or one run's ledger."""

    from omg.git.repo import open_repo
    from omg.github.env import git_tokens
    from omg.state.events import Event

    repo = open_repo(Path.cwd(), tokens=git_tokens(os.environ))
    if repo is None:
        raise StateError("`omg status --fetch` runs inside a git repository (it fetches refs)")
    if run_id is not None:
        check_run_id(run_id)
    runs = repo.fetch_runs(remote)
    if run_id is not None:
        if run_id not in runs:
            raise StateError(
                f"{remote} has no run {run_id!r}; `omg status --fetch {remote}` lists its runs"
            )
        ref = repo.remote_ref(remote, run_id)
        log = repo.read_run_log(run_id, ref=ref)
        try:
            events: list[Event] = [strictjson.line(ln) for ln in log.splitlines() if ln.strip()]
            state = fold(events)
            graph = graph_from_data(state["graph"])
        except (ValueError, KeyError, TypeError) as exc:
            raise StateError(
                f"run {run_id!r} on {remote} has a damaged record ({str(exc)[:80]}); "
                f"`git log {ref}` shows its commits"
            ) from None
        if as_json:
            doc = machine.run(
                graph, state, events, remote_derive(state), None, remote=remote, head=runs[run_id]
            )
            return machine.dumps(doc)
        paint = Paint.to(sys.stdout)
        table = ledger.render(graph, state, events, asked=asked, paint=paint, remote=remote)
        return (
            f"{table}\n\nstatus on {remote}: {remote_derive(state)} ({len(state['legs'])} "
            f"leg(s), at {runs[run_id][:12]})"
        )
    entries = []
    for rid, head in runs.items():
        try:
            text = repo.read_run_file(rid, "state.json", ref=repo.remote_ref(remote, rid))
            state = strictjson.loads(text)
            entries.append(
                machine.summary(rid, state, remote_derive(state), remote=remote, head=head)
            )
        except (OmgError, ValueError, KeyError, TypeError, AttributeError) as exc:
            why = f"damaged: {str(exc)[:60]}"
            entries.append(machine.unreadable(rid, "damaged", why, remote=remote, head=head))
    if as_json:
        return machine.dumps(machine.listing(entries, remote=remote))
    return _table([_row(e) for e in entries]) or f"no runs on {remote}"


def replay(runs_dir: Path, run_id: str, *, write: bool = False) -> tuple[str, int]:
    """Fold the event log from nothing and compare with state.json (exit 0 equal, 1 differ).

    state.json is a checkpoint: it must equal the fold of the events up to its seq; events past
    it (a leg's tail since its last checkpoint) are folded on whenever the run is read. Every
    event line is checked as it is folded: damaged events are refused, never folded into a
    state.json that would hide the damage."""
    rundir = RunDir(runs_dir / check_run_id(run_id))
    if not rundir.exists():
        raise StateError(f"no run {run_id!r} in {runs_dir}; `omg status` lists the runs there")
    if write:
        rundir.lock()
        try:
            rebuilt = fold_run(rundir)
            if os.path.lexists(rundir.state_path):  # a directory in its place is refused
                open_record(rundir.state_path, "move it aside, then run this again").close()
            rundir.write_state(rebuilt)
        finally:
            rundir.close()
        return f"rewrote {rundir.state_path} from {rundir.log_path}", 0
    full = fold_run(rundir)
    state = rundir.read_state()
    seq = state["seq"]
    rebuilt, past = full, 0
    if full["seq"] != seq:
        upto = []
        for ev in rundir.read_events():
            if ev["seq"] <= seq:
                upto.append(ev)
            else:
                past += 1
        rebuilt = fold(upto)
    if canonical_json(state) == canonical_json(rebuilt):
        tail = (
            f"; the {past} event(s) past it, since its last checkpoint, are folded on when the "
            "run is read (`omg replay --write` writes them)"
            if past
            else ""
        )
        return f"run {run_id!r}: state.json equals the fold of the events (seq {seq}){tail}", 0
    lines = diff(state, rebuilt)
    return f"run {run_id!r}: state.json differs from the fold of the events:\n  " + "\n  ".join(
        lines
    ), 1
