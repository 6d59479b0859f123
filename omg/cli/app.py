"""The typer app: a thin dispatch table, each command one function, and the one error handler.

Commands import their modules lazily so `omg lint` (a pre-commit hook) starts fast.
"""

from __future__ import annotations

import math
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, NoReturn, cast

# Plain help and errors: typer's rich extras cost ~150 ms at every start (a pre-commit hook's
# budget); set before typer is imported, it reaches no child (child environments are
# allow-lists).
os.environ.setdefault("TYPER_USE_RICH", "0")

import typer

from omg.cli import complete, exits
from omg.cli.next import next_step
from omg.errors import OmgError, UsageError

if TYPE_CHECKING:
    from omg.cli.job import OnSchedule
    from omg.leg.caps import SpendCaps

app = typer.Typer(
    name="omg",
    help="Run graphs of agent sessions and shell checks inside git, one leg at a time.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

RunsDir = Annotated[Path, typer.Option("--runs-dir", help="Where run directories live.")]
DEFAULT_RUNS = Path(".omg/runs")
Concurrency = Annotated[
    int | None,
    typer.Option("--concurrency", "-c", min=1, help="Parallel nodes (default: the graph's)."),
]
MaxMinutes = Annotated[
    float | None,
    typer.Option(
        "--max-minutes",
        envvar="OMG_MAX_MINUTES",
        min=0,
        help="Leg time budget: start no node whose timeout would not fit.",
    ),
]
MaxNodes = Annotated[
    int | None,
    typer.Option(
        "--max-nodes", envvar="OMG_MAX_NODES", min=0, help="At most N node executions this leg."
    ),
]
ByNode = Annotated[
    bool, typer.Option("--by-node", help="Ledger: one row per node instead of per execution.")
]
FetchRuns = Annotated[
    str | None,
    typer.Option(
        "--fetch",
        metavar="REMOTE",
        help="The runs on REMOTE's run branches (fetched into refs/remotes/ only).",
    ),
]
NoCommit = Annotated[bool, typer.Option("--no-commit", help="Do not commit the run to git.")]
Push = Annotated[
    str | None,
    typer.Option(
        "--push",
        metavar="REMOTE",
        help="Push the run branch at the leg's start, pause, end or failure, and every "
        "OMG_PUSH_EVERY seconds (default 5) as nodes settle.",
    ),
]
Rehearse = Annotated[
    Path | None,
    typer.Option(
        "--rehearse",
        metavar="SCRIPT",
        help="Answer agent nodes from a stub-model script: real CLI, no API, nothing spent.",
    ),
]


OutputFormat = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="text|json",
        help="json: one JSON document (schemas/status.schema.json).",
    ),
]


def _exit(code: int) -> NoReturn:
    raise typer.Exit(code)


OutcomeFormat = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="text|json",
        help="json: all else on stderr, the leg's outcome as one JSON line on stdout.",
    ),
]


#: Set by `run` / `resume --format json`: a refusal then ends stdout with its outcome line too.
_OUTCOME: dict[str, str | None] = {}


def _outcome_format(value: str, dry_run: bool, run_id: str | None) -> bool:
    """Whether run/resume end with their outcome as a JSON line (not with --dry-run)."""
    as_json = _json_format(value)
    if as_json and dry_run:
        raise UsageError("--format json reports how a leg ended; --dry-run runs no leg")
    if as_json:
        _OUTCOME["run_id"] = run_id
    return as_json


def _json_format(value: str) -> bool:
    """Whether ``--format`` asks for JSON; a usage error names the two it takes."""
    if value not in ("text", "json"):
        raise UsageError(f"--format {value!r} is not one of text, json")
    return value == "json"


def _version(value: bool) -> None:
    if value:
        from omg.cli.version import describe

        print(describe())
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_version,
            help="Print omg's version (and the commit it was installed from) and exit.",
        ),
    ] = False,
) -> None:
    """Run graphs of agent sessions and shell checks inside git, one leg at a time."""


@app.command()
def lint(
    paths: Annotated[list[Path], typer.Argument(help="Graph files or directories of *.yaml.")],
    format: Annotated[str, typer.Option("--format", "-f", help="text | json | github")] = "text",
    strict: Annotated[bool, typer.Option("--strict", help="Fail on advisories too.")] = False,
) -> None:
    """Check graph files: schema, semantic rules and advisories."""
    from omg.cli.lint import lint_paths
    from omg.cli.terminal import Paint

    if format not in ("text", "json", "github"):
        raise UsageError(f"--format {format!r} is not one of text, json, github")
    fmt = cast(Literal["text", "json", "github"], format)
    out, code = lint_paths(paths, fmt, strict, Paint.to(sys.stdout))
    if out:
        print(out)
    _exit(code)


@app.command("init")
def init_command(
    path: Annotated[Path, typer.Argument(help="The repository (default: here).")] = Path("."),
    uses: Annotated[
        str | None,
        typer.Option(
            "--uses",
            metavar="OWNER/REPO@COMMIT",
            help="The omg action to pin (default: the commit omg was installed from).",
        ),
    ] = None,
    show: Annotated[
        str | None,
        typer.Option(
            "--show", metavar="FILE", help="Print what omg would write at FILE, to compare."
        ),
    ] = None,
) -> None:
    """Write the omg workflows and a starter graph; never over a file that differs."""
    from omg.cli.init import init

    out, code = init(path, uses, show)
    print(out)
    _exit(code)


@app.command()
def graph(
    path: Annotated[Path, typer.Argument(help="A graph file.")],
    full: Annotated[
        bool, typer.Option("--full", help="Every node and edge, past what Mermaid draws.")
    ] = False,
) -> None:
    """Print the graph as a Mermaid flowchart."""
    from omg.cli.graphview import show

    show(path, full=full)


def _parse_inputs(pairs: list[str]) -> dict[str, str]:
    """``-i`` values after the lines of ``OMG_INPUTS`` (the way to give a secret input: a
    command line is readable by every process on the machine, the environment is not)."""
    lines = os.environ.get("OMG_INPUTS", "").splitlines()
    given = [(f"OMG_INPUTS line {n}", ln) for n, ln in enumerate(lines, 1) if ln.strip()]
    out = {}
    for where, pair in [*given, *((f"input {p!r}", p) for p in pairs)]:
        name, sep, value = pair.partition("=")
        if not sep or not name:  # a line of OMG_INPUTS is not shown: it may hold a secret
            raise UsageError(f"{where} must look like name=value")
        out[name] = value
    return out


@app.command()
def run(
    path: Annotated[Path, typer.Argument(help="The graph file to run.")],
    input: Annotated[list[str] | None, typer.Option("--input", "-i", help="name=value")] = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Name the run.")] = None,
    runs_dir: RunsDir = DEFAULT_RUNS,
    concurrency: Concurrency = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Render, run nothing.")] = False,
    max_minutes: MaxMinutes = None,
    max_nodes: MaxNodes = None,
    push: Push = None,
    no_commit: NoCommit = False,
    base: Annotated[str, typer.Option("--base", help="Worktree base ref.")] = "HEAD",
    by_node: ByNode = False,
    rehearse: Rehearse = None,
    format: OutcomeFormat = "text",
) -> None:
    """Start a run: its first leg."""
    from omg.cli import runs as commands

    as_json = _outcome_format(format, dry_run, run_id)
    inputs = _parse_inputs(input or [])
    if dry_run:
        if run_id is not None:  # refused as the run would refuse it, not silently ignored
            from omg.state.runid import check_run_id

            check_run_id(run_id)
        _exit(commands.dry_run(path, inputs))
    _exit(
        commands.run(
            path,
            inputs,
            run_id=run_id,
            runs_dir=runs_dir,
            concurrency=concurrency,
            max_minutes=max_minutes,
            max_nodes=max_nodes,
            push=push,
            commit=not no_commit,
            base=base,
            by_node=by_node,
            rehearse=rehearse,
            as_json=as_json,
        )
    )


@app.command()
def resume(
    run_id: Annotated[
        str, typer.Argument(help="The run to continue.", autocompletion=complete.runs)
    ],
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Re-run failed nodes; re-arm exhausted loops.")
    ] = False,
    approve: Annotated[
        str | None, typer.Option("--approve", metavar="GATE", autocompletion=complete.gates)
    ] = None,
    reject: Annotated[
        str | None, typer.Option("--reject", metavar="GATE", autocompletion=complete.gates)
    ] = None,
    reason: Annotated[str, typer.Option("--reason", help="Why (required with --reject).")] = "",
    by: Annotated[str | None, typer.Option("--by", help="Who decides (default: you).")] = None,
    guidance: Annotated[
        str | None,
        typer.Option(
            "--guidance",
            metavar="TEXT",
            help="With --retry-failed: words for the re-armed nodes, as {{ guidance }}.",
        ),
    ] = None,
    runs_dir: RunsDir = DEFAULT_RUNS,
    concurrency: Concurrency = None,
    max_minutes: MaxMinutes = None,
    max_nodes: MaxNodes = None,
    fetch: Annotated[
        str | None, typer.Option("--fetch", metavar="REMOTE", help="Fetch the run branch first.")
    ] = None,
    push: Push = None,
    no_commit: NoCommit = False,
    by_node: ByNode = False,
    rehearse: Rehearse = None,
    input: Annotated[
        list[str] | None,
        typer.Option("--input", "-i", help="name=value: the run's secret inputs, again."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Render the next leg's invocations, run nothing.")
    ] = False,
    approve_spend: Annotated[
        float | None,
        typer.Option(
            "--approve-spend",
            metavar="USD",
            help="Let this run spend USD more beyond the spend caps (pr/day_budget_usd).",
        ),
    ] = None,
    format: OutcomeFormat = "text",
) -> None:
    """Run the next leg of a run."""
    from omg.cli import runs as commands

    as_json = _outcome_format(format, dry_run, run_id)
    if dry_run:
        _exit(commands.dry_resume(runs_dir, run_id))

    if approve and reject:
        raise UsageError("--approve and --reject are mutually exclusive; decide one gate per leg")
    for option, text in (("--guidance", guidance), ("--reason", reason), ("--by", by)):
        _utf8(option, text or "")
    if reject and not _visible(reason):
        raise UsageError("--reject needs --reason TEXT: a rejection is recorded with why, in "
                         "words that show")  # fmt: skip
    if (approve or reject) and retry_failed:
        raise UsageError("--retry-failed cannot be combined with a gate decision")
    if guidance is not None and not retry_failed:
        raise UsageError("--guidance goes with --retry-failed: the words are for re-armed nodes")
    _exit(
        commands.resume(
            run_id,
            runs_dir=runs_dir,
            retry_failed=retry_failed,
            approve=approve,
            reject=reject,
            reason=reason,
            by=by,
            guidance=guidance,
            concurrency=concurrency,
            max_minutes=max_minutes,
            max_nodes=max_nodes,
            fetch=fetch,
            push=push,
            commit=not no_commit,
            by_node=by_node,
            rehearse=rehearse,
            inputs=_parse_inputs(input or []),
            approve_spend=approve_spend,
            as_json=as_json,
        )
    )


@app.command()
def status(
    run_id: Annotated[
        str | None, typer.Argument(help="One run in detail.", autocompletion=complete.runs)
    ] = None,
    runs_dir: RunsDir = DEFAULT_RUNS,
    by_node: ByNode = False,
    node: Annotated[
        str | None,
        typer.Option(
            "--node",
            help="One node in detail: its executions and its agent transcripts.",
            autocompletion=complete.nodes,
        ),
    ] = None,
    fetch: FetchRuns = None,
    format: OutputFormat = "text",
) -> None:
    """List runs, or show one run's ledger or one of its nodes."""
    as_json = _json_format(format)
    if fetch is not None:
        from omg.cli import status as st

        print(st.fetched(fetch, run_id, by_node=by_node, as_json=as_json))
        return
    if node is not None:
        from omg.cli.nodeview import node_json, show_node

        if run_id is None:
            raise UsageError("--node needs the run: `omg status RUN_ID --node ID`")
        print((node_json if as_json else show_node)(runs_dir, run_id, node))
        return
    from omg.cli import status as st

    print(st.show(runs_dir, run_id, by_node=by_node, as_json=as_json))


@app.command("log")
def log_command(
    run_id: Annotated[
        str, typer.Argument(help="The run whose events to print.", autocompletion=complete.runs)
    ],
    runs_dir: RunsDir = DEFAULT_RUNS,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing until the running leg ends.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Each event as the JSON line recorded (for jq).")
    ] = False,
    node: Annotated[
        list[str] | None,
        typer.Option(
            "--node", help="Only this node's events (repeatable).", autocompletion=complete.nodes
        ),
    ] = None,
    event: Annotated[
        list[str] | None, typer.Option("--event", help="Only events of this kind (repeatable).")
    ] = None,
) -> None:
    """Print a run's whole event log (every chunk), verified first."""
    from omg.cli.log import show

    _exit(
        show(runs_dir, run_id, follow=follow, as_json=as_json, nodes=node or [], events=event or [])
    )


@app.command()
def replay(
    run_id: Annotated[str, typer.Argument(help="The run to check.", autocompletion=complete.runs)],
    runs_dir: RunsDir = DEFAULT_RUNS,
    write: Annotated[
        bool, typer.Option("--write", help="Rewrite state.json from the events.")
    ] = False,
) -> None:
    """Rebuild state.json from events.jsonl and compare field by field."""
    from omg.cli import status as st

    out, code = st.replay(runs_dir, run_id, write=write)
    print(out)
    _exit(code)


@app.command()
def clean(
    run_id: Annotated[
        str, typer.Argument(help="The run whose worktrees to remove.", autocompletion=complete.runs)
    ],
    remote: Annotated[str | None, typer.Option("--remote", help="Keep branches not on it.")] = None,
) -> None:
    """Remove a run's worktrees; never a branch holding unpushed commits."""
    from omg.cli import runs as commands

    _exit(commands.clean(run_id, remote=remote))


@app.command("prune")
def prune_command(
    remote: Annotated[
        str | None,
        typer.Option(
            "--remote", metavar="REMOTE", help="Prune REMOTE's refs (default: this clone's)."
        ),
    ] = None,
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than",
            metavar="AGE",
            help="Only what last changed longer ago than AGE: 30d, 12h, 2w; 0d: any age.",
        ),
    ] = "30d",
    keep_failed: Annotated[
        bool, typer.Option("--keep-failed", help="Keep failed runs whatever their age.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would be removed; remove nothing.")
    ] = False,
) -> None:
    """Remove settled runs' branches, lanes and notes past an age, and stale spend books."""
    from omg.cli.prune import prune

    _exit(prune(remote, older_than, keep_failed=keep_failed, dry_run=dry_run))


@app.command("leg")
def leg_command(
    graph: Annotated[
        Path | None,
        typer.Option("--graph", envvar="OMG_GRAPH", help="The graph file (PR events need it)."),
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option("--run-id", envvar="OMG_RUN_ID", help="The run (default: from the event)."),
    ] = None,
    max_minutes: MaxMinutes = None,
    max_nodes: MaxNodes = None,
    push: Annotated[
        str,
        typer.Option("--push", envvar="OMG_PUSH", metavar="REMOTE", help="Where run branches go."),
    ] = "origin",
    dispatch_workflow: Annotated[
        str | None,
        typer.Option(
            "--dispatch-workflow",
            envvar="OMG_DISPATCH_WORKFLOW",
            help="Workflow file the next leg is dispatched to (default: this one).",
        ),
    ] = None,
    input: Annotated[
        list[str] | None,
        typer.Option("--input", "-i", help="name=value for a new run (OMG_INPUTS: one a line)."),
    ] = None,
    node: Annotated[
        str | None,
        typer.Option("--node", envvar="OMG_NODE", help="Fan-out: run this matrix entry alone."),
    ] = None,
    fold: Annotated[
        bool,
        typer.Option("--fold", envvar="OMG_FOLD", help="Fan-out: fold the wave's records in."),
    ] = False,
    base: Annotated[
        str | None,
        typer.Option(
            "--base", envvar="OMG_BASE", help="Fan-out: the commit the wave was planned at."
        ),
    ] = None,
    max_jobs: Annotated[
        int | None,
        typer.Option(
            "--max-jobs", envvar="OMG_MAX_JOBS", min=1, max=256, help="Fan-out: jobs a wave."
        ),
    ] = None,
    pr_budget_usd: Annotated[
        float | None,
        typer.Option(
            "--pr-budget-usd",
            envvar="OMG_PR_BUDGET_USD",
            help="Spend cap over all runs of one pull request (replaces the graph's).",
        ),
    ] = None,
    day_budget_usd: Annotated[
        float | None,
        typer.Option(
            "--day-budget-usd",
            envvar="OMG_DAY_BUDGET_USD",
            help="Spend cap over all runs of the repository in one UTC day (replaces the graph's).",
        ),
    ] = None,
    limit_wait: Annotated[
        float | None,
        typer.Option(
            "--limit-wait",
            envvar="OMG_LIMIT_WAIT",
            min=0,
            max=86400,
            help="Seconds a run paused for a provider's limit waits before a scheduled leg "
            "tries again (default: 1800 for a usage limit, 300 for a rate limit).",
        ),
    ] = None,
    on_schedule: Annotated[
        str,
        typer.Option(
            "--on-schedule",
            envvar="OMG_ON_SCHEDULE",
            metavar="start|continue",
            help="On a schedule event: start today's run of the graph, or (the default) "
            "continue the runs whose wait for a limit or a day's cap is over.",
        ),
    ] = "continue",
    runs_dir: RunsDir = DEFAULT_RUNS,
) -> None:
    """One GitHub Actions job: read the event, run one leg, report."""
    for name in sorted(os.environ):  # the action's inputs: text, or a clear refusal
        if name.startswith("OMG_"):
            _utf8(name, os.environ[name])
    from omg.cli import leg as job
    from omg.cli.job import LegArgs
    from omg.leg.loop import LegOptions

    inputs = _parse_inputs(input or [])
    limits = LegOptions(
        max_minutes=max_minutes,
        max_nodes=max_nodes,
        limit_wait_s=limit_wait,
        caps=_caps(pr_budget_usd, day_budget_usd),
    )
    args = LegArgs(
        graph, run_id or None, limits, push, runs_dir, inputs, dispatch_workflow,
        node=node or None, fold=fold, base=base or None, max_jobs=max_jobs,
        on_schedule=_on_schedule(on_schedule),
    )  # fmt: skip
    if node or fold:
        from omg.cli.fanout import fanout

        _exit(fanout(args, os.environ))
    _exit(job.leg(args, os.environ))


def _utf8(option: str, text: str) -> None:
    """Refuse an option's (or variable's) value that is not valid UTF-8 — bytes the shell
    passed as they were, which no record or prompt can hold — naming it and what is wrong."""
    from omg.words import undecodable

    bad = undecodable(text)
    if bad:
        raise UsageError(f"{option} is not valid UTF-8 ({bad}); give it as UTF-8 text")


def _visible(text: str) -> bool:
    from omg.words import visible

    return visible(text)


def _on_schedule(value: str) -> OnSchedule:
    """The --on-schedule choice, refused by name when it is neither."""
    if value == "start":
        return "start"
    if value == "continue":
        return "continue"
    raise UsageError(
        f"--on-schedule {value!r} must be start (today's run of the graph) or continue (the "
        "runs whose wait is over)"
    )


def _caps(pr_usd: float | None, day_usd: float | None) -> SpendCaps | None:
    """The spend caps given to `omg leg` (the action's inputs), each a finite amount > 0."""
    from omg.leg.caps import SpendCaps

    for flag, value in (("--pr-budget-usd", pr_usd), ("--day-budget-usd", day_usd)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise UsageError(f"{flag} {value} must be an amount of dollars > 0")
    caps = SpendCaps(pr_usd, day_usd)
    return caps if caps else None


@app.command("plan")
def plan_command(
    run_id: Annotated[str, typer.Argument(help="The run to plan.", autocompletion=complete.runs)],
    matrix: Annotated[
        bool, typer.Option("--matrix", help="As a GitHub strategy.matrix (the only form).")
    ] = False,
    max_jobs: Annotated[
        int | None,
        typer.Option(
            "--max-jobs", envvar="OMG_MAX_JOBS", min=1, max=256, help="At most this many jobs."
        ),
    ] = None,
    fetch: Annotated[
        str | None,
        typer.Option("--fetch", metavar="REMOTE", help="Fetch the run from REMOTE first."),
    ] = None,
    start: Annotated[
        Path | None,
        typer.Option("--start", metavar="GRAPH", help="With --fetch: start the run if absent."),
    ] = None,
    input: Annotated[
        list[str] | None,
        typer.Option("--input", "-i", help="name=value for a started run (OMG_INPUTS too)."),
    ] = None,
    runs_dir: RunsDir = DEFAULT_RUNS,
) -> None:
    """Print the nodes that may run now on machines of their own, as a job matrix."""
    if not matrix:
        raise UsageError("omg plan prints a job matrix: `omg plan RUN_ID --matrix`")
    if start is not None and fetch is None:
        raise UsageError("--start records the run's first leg on a remote: add --fetch REMOTE")
    from omg.cli.plan import Source
    from omg.cli.plan import matrix as planned

    source = Source(fetch, start, _parse_inputs(input or []))
    text, notes = planned(runs_dir, run_id, max_jobs, source)
    print(text)  # stdout is the JSON alone, for jq or a step's output
    for note in notes:
        print(f"omg plan: {note}", file=sys.stderr)


@app.command("stub-model")
def stub_model(
    script: Annotated[Path, typer.Argument(help="The script: rules saying what to answer.")],
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="0: any free port.")] = 0,
) -> None:
    """Serve a scripted stand-in model on loopback (Messages API: claude; Responses: codex)."""
    from omg.cli import rehearse

    _exit(rehearse.serve(script, port))


@app.command("stats")
def stats_command(
    fetch: FetchRuns = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", metavar="DATE", help="Runs started then or later: 2026-12-01, or 7d, 12h."
        ),
    ] = None,
    graph: Annotated[
        str | None, typer.Option("--graph", metavar="NAME", help="Only this graph's runs.")
    ] = None,
    format: Annotated[str, typer.Option("--format", "-f", help="text | json | markdown")] = "text",
    compare: Annotated[
        tuple[str, str] | None,
        typer.Option("--compare", metavar="A B", help="Two graph versions side by side."),
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", metavar="FILE", help="Also write a page of plots.")
    ] = None,
) -> None:
    """Outcomes, loops, cost and waits over every run, per graph version."""
    from omg.cli import stats as st

    if format not in ("text", "json", "markdown"):
        raise UsageError(f"--format {format!r} is not one of text, json, markdown")
    summary = st.gather(fetch, since, graph)
    fmt = cast(Literal["text", "json", "markdown"], format)
    print(st.render(summary, fmt, compare), end="" if fmt == "markdown" else "\n")
    if html is not None:
        print(st.write_page(summary, compare, html), file=sys.stderr)


@app.command("report")
def report_command(
    run_id: Annotated[str, typer.Argument(help="The run to show.")],
    html: Annotated[Path, typer.Option("--html", metavar="FILE", help="The page to write.")],
    runs_dir: RunsDir = DEFAULT_RUNS,
    artifact: Annotated[
        str | None,
        typer.Option(
            "--artifact",
            metavar="NAME",
            help="In GitHub Actions: the artifact the page is uploaded as, named in the summary.",
        ),
    ] = None,
) -> None:
    """Write one run's page: its graph, timeline, loops and ledger, in one HTML file."""
    from omg.cli import runpage

    print(runpage.write_page(runs_dir, run_id, html, artifact))


def main() -> None:
    """Console entry point: one error handler for every command."""
    _OUTCOME.clear()
    try:
        app(prog_name="omg")  # `python -m omg` too: completion's variable is _OMG_COMPLETE
    except OmgError as exc:
        if _OUTCOME:  # run/resume --format json: the refusal is their outcome line
            from omg.cli import machine

            error = _masked(str(exc))
            line = machine.refusal(_OUTCOME["run_id"], exits.BY_REFUSAL[exc.kind], error)
            print(machine.dumps(line))
        hint = f"; {next_step(exc.hint)}" if exc.hint is not None else ""
        print(_masked(f"omg: {exc}{hint}"), file=sys.stderr)
        sys.exit(exits.BY_REFUSAL[exc.kind])
    except KeyboardInterrupt:
        print("omg: interrupted", file=sys.stderr)
        sys.exit(exits.INTERRUPTED)
    except Exception:
        print(
            "omg: unexpected error — this is a bug in omg; please report it with the "
            "traceback below",
            file=sys.stderr,
        )
        print(_masked(traceback.format_exc()), end="", file=sys.stderr)
        sys.exit(exits.BUG)


def _masked(text: str) -> str:
    """An error as a job log may show it: omg's own secrets masked (an error can quote one)."""
    from omg.mask import Masker

    return Masker.from_env(os.environ).text(text)
