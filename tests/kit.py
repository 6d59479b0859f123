"""The test kit: one scrubbed environment, a graph run in this process, one fake runner, and
the real CLI (`omg run`) with a scripted claude for what only a process shows.

``run_graph`` and ``resume_graph`` call ``start_run`` / ``resume_run`` (omg.leg.start) the way
the CLI does, minus the process: no interpreter start-up, no argument parsing, no printing.
What only a process shows (exit codes, signals, output) stays with the real-CLI tests.
"""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omg.errors import OmgError
from omg.graph.placeholders import ShellText, render_shell
from omg.graph.shell.lexer import Spot
from omg.graph.shell.scan import spots
from omg.graph.tokens import Resolver, spans
from omg.leg.decisions import Decision
from omg.leg.loop import LegOptions
from omg.leg.start import Environment, LegEnd, resume_run, start_run
from omg.mask import Masker
from omg.modelproxy.executions import Pricer
from omg.runners.base import AgentRuntime, Invocation, Output, Step
from omg.runners.keys import HeldKey
from omg.runners.process import Spawner
from omg.runners.room import Room
from omg.spend import Spend

#: Variables no test child may inherit: CI settings, omg's own, and every model credential.
SCRUBBED_PREFIXES = ("GITHUB_", "OMG_", "RUNNER_", "ANTHROPIC_", "CLAUDE_")
SCRUBBED_NAMES = ("OPENAI_API_KEY", "CI")


def clean_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """``base`` (this process's environment) without CI settings, omg settings or model
    credentials, plus ``extra``: the one environment every omg child of a test starts from."""
    source = os.environ if base is None else base
    env = {
        k: v
        for k, v in source.items()
        if not k.startswith(SCRUBBED_PREFIXES) and k not in SCRUBBED_NAMES
    }
    env.update(extra)
    return env


def rooms_left(run_dir: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """The rooms of the run at ``run_dir`` still on this machine: none once its executions
    ended (``env``: omg's environment, whose TMPDIR holds them)."""
    from omg.runners.process import run_mark
    from omg.runners.room import Rooms

    base = Rooms.of_run(run_mark(run_dir), clean_env() if env is None else env).base
    return sorted(base.iterdir()) if base.is_dir() else []


def command_spots(command: str) -> list[Spot]:
    """Where each placeholder of a shell command stands, as the leg scans it."""
    return spots(command, spans(command))


def render_command(command: str, resolve: Resolver) -> ShellText:
    """A shell command rendered as the leg renders it: scanned, its placeholders made data."""
    return render_shell(command, spots, resolve)


def write_graph(where: Path, text: str, name: str = "graph.yaml") -> Path:
    """Write a graph file (dedented) and return its path."""
    where.mkdir(parents=True, exist_ok=True)
    path = where / name
    path.write_text(textwrap.dedent(text))
    return path


def headers(path: Path, key: str) -> list[str]:
    """The values of ``# key: value`` lines in a case file's leading comment block."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        head, _, value = line[1:].strip().partition(":")
        if head == key:
            out.append(value.strip())
    return out


def read_events(run_dir: Path) -> list[dict[str, Any]]:
    """events.jsonl, then the chunks in events/ (a run past its first 128 events)."""
    paths = [run_dir / "events.jsonl", *sorted((run_dir / "events").glob("*.jsonl"))]
    text = "".join(p.read_text() for p in paths if p.exists())
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def of(
    evs: Sequence[dict[str, Any]], event: str, node_id: str | None = None
) -> list[dict[str, Any]]:
    """The events of one type, optionally about one node, in file order."""
    return [
        e for e in evs if e["event"] == event and (node_id is None or e.get("node_id") == node_id)
    ]


# -- the real CLI, in a process of its own ---------------------------------------------

OmgRunner = Callable[..., subprocess.CompletedProcess[str]]


def events(run_dir: Path) -> list[dict[str, Any]]:
    return read_events(run_dir)


def started_order(evs: Sequence[dict[str, Any]]) -> list[str]:
    return [e["node_id"] for e in of(evs, "node_started")]


@dataclass
class Run:
    """A finished `omg run`: the process and its run directory."""

    proc: subprocess.CompletedProcess[str]
    dir: Path

    @property
    def code(self) -> int:
        return self.proc.returncode

    @property
    def out(self) -> str:
        return self.proc.stdout

    @property
    def err(self) -> str:
        return self.proc.stderr

    def events(self) -> list[dict[str, Any]]:
        return events(self.dir)

    def state(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.dir / "state.json").read_text())
        return loaded

    def artifact(self, node_id: str) -> str:
        """A passed node's output (an empty one has no file); FileNotFoundError otherwise."""
        path = self.dir / "artifacts" / f"{node_id}.out"
        if not path.exists() and self.state()["nodes"].get(node_id, {}).get("verdict") == "PASS":
            return ""
        return path.read_text()

    def explain(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


def omg_in_process(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The `omg` console entry point run in this process, from ``cwd``, with ``env`` as its whole
    environment for the call (restored after), its output captured: what the real CLI would
    exit with and print, without an interpreter's start-up."""
    from omg.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    saved_argv, saved_env = sys.argv, dict(os.environ)
    sys.argv = ["omg", *args]
    os.environ.clear()
    os.environ.update(clean_env() if env is None else env)
    code: int = 0
    try:
        with (
            contextlib.chdir(cwd),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            main()
    except SystemExit as exc:
        if isinstance(exc.code, str):
            err.write(exc.code + "\n")
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["omg", *args], code, out.getvalue(), err.getvalue())


def omg_call(
    *args: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    process: bool = False,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """`omg ARGS…` from ``cwd`` with ``env`` (default: ``clean_env()``): in this process
    (``omg_in_process``) unless ``process`` asks for a process of its own or ``env`` holds a
    secret — then the real CLI re-executes itself without it (omg.cli.scrub), which only a
    process of its own may do."""
    from omg.cli.scrub import holds_secrets

    environ = clean_env() if env is None else dict(env)
    if not process and not holds_secrets(environ):
        return omg_in_process(*args, cwd=cwd, env=environ)
    return subprocess.run(
        [sys.executable, "-m", "omg", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class OmgProcess:
    """`omg ARGS…` running in a process of its own, for what only a running process shows: legs
    that race each other, a SIGKILL at a random point. Like ``subprocess.Popen`` (``pid``,
    ``poll``, ``wait``, ``communicate``, ``kill``, ``send_signal``, ``returncode``), but the
    process is forked from a server that has already imported omg (multiprocessing's
    forkserver, one per test process), so it skips the interpreter's start-up and omg's
    imports — about 0.15 s of CPU each, hundreds of times a suite. The child gets ``env`` as
    its whole environment, ``cwd``, its own stdout and stderr (files, read at the end), no
    stdin, and with ``new_session`` a session and process group of its own; it then runs the
    console entry point, whose exit code is the process's. It is a child of the server, not of
    the test: a test about its own process tree, or the secret scrub's re-execution, starts
    `python -m omg` instead."""

    def __init__(
        self, args: Sequence[str], cwd: Path, env: Mapping[str, str], *, new_session: bool
    ) -> None:
        fd_out, self._out = tempfile.mkstemp(prefix="omg-out-")
        fd_err, self._err = tempfile.mkstemp(prefix="omg-err-")
        os.close(fd_out)
        os.close(fd_err)
        # its output files go with it, whether or not a test read them
        self._remove = weakref.finalize(self, _unlink, self._out, self._err)
        self.args = ["omg", *args]
        self._proc = _forkserver().Process(
            target=_omg_child,
            args=(list(args), str(cwd), dict(env), self._out, self._err, new_session),
        )
        self._proc.start()
        assert self._proc.pid is not None
        self.pid: int = self._proc.pid
        self.returncode: int | None = None
        self._output: tuple[str, str] | None = None

    def poll(self) -> int | None:
        if self.returncode is None and not self._proc.is_alive():
            self._proc.join()
            self.returncode = self._proc.exitcode
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._proc.join(timeout)
        code = self.poll()
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        self.wait(timeout)
        if self._output is None:
            self._output = (Path(self._out).read_text(), Path(self._err).read_text())
            self._remove()
        return self._output

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def _unlink(*paths: str) -> None:
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def spawn_omg(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, new_session: bool = False
) -> OmgProcess:
    """Start `omg ARGS…` from ``cwd`` with ``env`` (default: ``clean_env()``) in a process of
    its own and return it running (see ``OmgProcess``)."""
    return OmgProcess(args, cwd, clean_env() if env is None else env, new_session=new_session)


#: What the server imports once, so that no child has to: the kit (the child's code), the
#: libraries a leg loads, and the CLI's commands.
PRELOAD = [
    *("kit", "pygit2", "yaml", "jsonschema", "typer", "omg.cli.app", "omg.cli.runs"),
    *("omg.ci.job", "omg.cli.status", "omg.cli.plan", "omg.leg.start", "omg.git.repo"),
]
_SERVER: list[Any] = []
#: Set in the server's environment only: the kit, imported there first, builds the CLI's
#: command (``omg.cli.app.command``) before any child is forked, so none builds its own.
SERVER_MARK = "KIT_FORKSERVER"


def _forkserver() -> Any:
    """This test process's multiprocessing context, its server started with omg imported."""
    if not _SERVER:
        from multiprocessing import forkserver

        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(PRELOAD)
        # The server starts with a scrubbed environment (its children's environment blocks
        # are its own), and imports its preload before it learns this process's sys.path: the
        # kit's folder reaches it through PYTHONPATH.
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(
            clean_env(saved, PYTHONPATH=str(Path(__file__).parent), **{SERVER_MARK: "1"})
        )
        try:
            forkserver.ensure_running()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        _SERVER.append(ctx)
    return _SERVER[0]


def _omg_child(
    args: list[str], cwd: str, env: dict[str, str], out: str, err: str, new_session: bool
) -> None:
    """In the forked process: become `omg ARGS…` as the interpreter would have started it."""
    import pygit2

    from omg.__main__ import main
    from omg.cli.app import main as app
    from omg.cli.scrub import holds_secrets, undumpable

    if new_session:
        os.setsid()
    streams = ((0, os.devnull, os.O_RDONLY), (1, out, os.O_WRONLY), (2, err, os.O_WRONLY))
    for fd, path, flags in streams:
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    # libgit2 found the user's configuration from the server's HOME when it started
    home = env.get("HOME", "")
    pygit2.settings.search_path[pygit2.enums.ConfigLevel.GLOBAL] = home
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    pygit2.settings.search_path[pygit2.enums.ConfigLevel.XDG] = os.path.join(xdg, "git")
    sys.argv = ["omg", *args]
    if holds_secrets(env):
        # What `python -m omg` becomes once it has re-executed itself without its secrets
        # (omg.cli.scrub): they live in its memory only, and it is not dumpable. This
        # process's environment block is the server's, which never held them.
        undumpable()
        app()
    else:
        main()  # what `python -m omg` runs


def omg_run(
    omg: OmgRunner,
    graph: Path,
    *args: str,
    run_id: str = "r1",
    env: dict[str, str] | None = None,
    timeout: float = 120,
    process: bool = False,
) -> Run:
    """`omg run GRAPH --no-commit --runs-dir <dir>/runs --run-id ID ARGS…` in the graph's dir.

    In this process (``omg_in_process``) unless ``process`` asks for the real CLI in a process
    of its own (``omg``, with ``timeout``), or ``env`` holds secrets: then the CLI's first act
    is to re-execute itself without them (omg.cli.scrub), which only a process of its own may do.
    """
    from omg.cli.scrub import holds_secrets

    runs = graph.parent / "runs"
    argv = ("run", str(graph), "--no-commit", "--runs-dir", str(runs), "--run-id", run_id, *args)
    if process or holds_secrets(clean_env() if env is None else env):
        proc = omg(*argv, cwd=graph.parent, env=env, timeout=timeout)
    else:
        proc = omg_in_process(*argv, cwd=graph.parent, env=env)
    return Run(proc, runs / run_id)


# -- a scripted stand-in for the claude CLI ---------------------------------------------------

STUB = '''\
#!{python}
"""A scripted claude: pops the next reply from replies.json, records what it was given."""
import json, os, sys, time
from pathlib import Path

here = Path({here!r})
argv = sys.argv[1:]
if argv == ["--version"]:
    print("{version} (Claude Code stand-in)")
    sys.exit(0)
calls = here / "calls.jsonl"
n = sum(1 for _ in calls.open()) if calls.exists() else 0
prompt = sys.stdin.read()  # omg hands claude the prompt on stdin
with calls.open("a") as fh:
    fh.write(json.dumps({{"argv": argv, "prompt": prompt, "cwd": os.getcwd(),
                         "env": dict(os.environ)}}) + "\\n")
replies = json.loads((here / "replies.json").read_text())
reply = replies[min(n, len(replies) - 1)]
if reply.get("sleep"):
    time.sleep(reply["sleep"])
for name, text in reply.get("write", {{}}).items():  # an "edit" in the node's cwd
    Path(name).write_text(text)
sid = argv[argv.index("--session-id") + 1] if "--session-id" in argv else (
    argv[argv.index("--resume") + 1] if "--resume" in argv else "no-session")
# like the real CLI, a resumed (or forked) session reports the whole session's cost
books = here / "sessions.json"
spent = json.loads(books.read_text()) if books.exists() else {{}}
parent = argv[argv.index("--resume") + 1] if "--resume" in argv else None
total = reply.get("total", spent.get(parent, 0.0) + reply.get("cost", 0.01))
spent[sid] = total
books.write_text(json.dumps(spent))
envelope = {{
    "type": "result",
    "subtype": reply.get("subtype", "success"),
    "is_error": reply.get("is_error", False),
    "result": reply.get("result", "DONE"),
    "session_id": sid,
    "total_cost_usd": total,
    "usage": {{"input_tokens": 10, "output_tokens": 5}},
}}
for key in ("api_error_status", "terminal_reason"):  # how the CLI says an API call failed
    if key in reply:
        envelope[key] = reply[key]
if "structured" in reply:  # --json-schema: what the StructuredOutput tool was given
    envelope["structured_output"] = reply["structured"]
    envelope["result"] = json.dumps(reply["structured"])
print(json.dumps(envelope))
sys.exit(reply.get("exit", 0))
'''


class ScriptedClaude:
    """A `claude` executable that answers each call with the next scripted reply.

    A reply is a dict: ``result`` (text), ``cost`` (default 0.01), ``total`` (the session's
    cumulative cost to report instead of the parent's plus ``cost``), ``is_error``, ``subtype``,
    ``api_error_status``, ``terminal_reason``, ``exit``, ``sleep``, ``write`` ({file: text}
    written in its cwd, like an edit), ``structured`` (``--json-schema``'s structured_output).
    The last reply repeats once the script runs out.
    """

    def __init__(self, directory: Path, version: str = "2.1.332") -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.bin = self.dir / "claude"
        self.bin.write_text(STUB.format(python=sys.executable, here=str(self.dir), version=version))
        self.bin.chmod(0o755)
        self.replies([{"result": "DONE"}])

    def replies(self, replies: Sequence[dict[str, Any] | str]) -> None:
        items = [{"result": r} if isinstance(r, str) else dict(r) for r in replies]
        (self.dir / "replies.json").write_text(json.dumps(items))

    def calls(self) -> list[dict[str, Any]]:
        path = self.dir / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def prompts(self) -> list[str]:
        return [c["prompt"] for c in self.calls()]

    def env(self, **extra: str) -> dict[str, str]:
        """An environment for `omg` that points OMG_CLAUDE_BIN at this stub."""
        return clean_env(OMG_CLAUDE_BIN=str(self.bin), **extra)


# -- the fake runner ------------------------------------------------------------------------

Reply = Output | str | int | Callable[[Invocation], Output]


@dataclass
class FakeRunner:
    """An agent runtime that answers each execution of a node with its next scripted reply.

    ``replies`` maps a node id to its replies, in order (the last repeats): an ``Output``, a
    string (the reply text, exit 0), an int (an exit code, no text) or a function of the
    invocation. A node with no script replies ``DONE``. Every invocation is kept in ``calls``.
    Like claude it names each session itself; unlike it, it receives no variables unasked,
    keeps no transcript, and its room holds no configuration home.
    """

    replies: Mapping[str, Sequence[Reply]] = field(default_factory=dict)
    cost_usd: float = 0.0
    calls: list[Invocation] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    env_prefixes: tuple[str, ...] = ()
    names_sessions: bool = True
    transcript_home: str = ""
    pin_hint: str = ""
    room_env: tuple[str, ...] = ()

    def furnish(self, room: Room, env: Mapping[str, str]) -> dict[str, str]:
        return dict(env)

    def transcript(self, env: Mapping[str, str], cwd: Path, session: str) -> Path | None:
        return None

    def steps(self, transcript: Path) -> list[Step]:
        return []

    def rehearsal_env(self, parent: Mapping[str, str], url: str) -> dict[str, str]:
        return dict(parent)

    def rehearsal_tags(
        self, env: Mapping[str, str], node: str, round_: int, attempt: int
    ) -> dict[str, str]:
        return dict(env)

    def endpoint(self, url: str) -> dict[str, str]:
        return {}

    def hold_key(self, parent: Mapping[str, str]) -> HeldKey | None:
        return None  # no model key: omg's proxy holds nothing for it

    def keyless(self, env: Mapping[str, str]) -> dict[str, str]:
        return dict(env)

    def through_proxy(
        self, env: Mapping[str, str], held: HeldKey, url: str, placeholder: str
    ) -> dict[str, str]:
        return dict(env)

    def pricer(self, model: str | None, prices: Mapping[str, Mapping[str, float]]) -> Pricer:
        return lambda _: None

    def argv(self, inv: Invocation) -> list[str]:
        return ["fake-runner", inv.node.id]

    def run(self, inv: Invocation, spawn: Spawner) -> Output:
        with self._lock:
            n = sum(1 for c in self.calls if c.node.id == inv.node.id)
            self.calls.append(inv)
        script = list(self.replies.get(inv.node.id, ())) or ["DONE"]
        reply = script[min(n, len(script) - 1)]
        if callable(reply):
            return reply(inv)
        if isinstance(reply, Output):
            return reply
        if isinstance(reply, int):
            return Output(exit_code=reply, result="", spend=Spend(self.cost_usd))
        return Output(exit_code=0, result=reply, spend=Spend(self.cost_usd))

    def texts(self, node_id: str | None = None) -> list[str]:
        """The rendered prompt (or command) of every call, optionally of one node."""
        return [c.text for c in self.calls if node_id is None or c.node.id == node_id]


# -- a graph run in this process ------------------------------------------------------------


@dataclass(frozen=True)
class Ran:
    """One leg run in process: how it ended, or the OmgError it was refused with."""

    dir: Path
    end: LegEnd | None
    error: OmgError | None
    warnings: tuple[str, ...] = ()

    @property
    def outcome(self) -> str | None:
        """The leg's outcome (None: refused, or nothing to do)."""
        if self.end is None or self.end.result is None:
            return None
        return self.end.result.outcome

    def events(self) -> list[dict[str, Any]]:
        return read_events(self.dir)

    def state(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.dir / "state.json").read_text())
        return loaded

    def artifact(self, node_id: str) -> str:
        """A passed node's output (an empty one has no file); FileNotFoundError otherwise."""
        path = self.dir / "artifacts" / f"{node_id}.out"
        if not path.exists() and self.state()["nodes"].get(node_id, {}).get("verdict") == "PASS":
            return ""
        return path.read_text()

    def verdicts(self) -> dict[str, str]:
        return {nid: rec["verdict"] for nid, rec in self.state()["nodes"].items()}


def _environment(
    root: Path,
    runners: Mapping[str, AgentRuntime] | None,
    parent_env: Mapping[str, str] | None,
    inputs: Mapping[str, str] | None,
    warnings: list[str],
) -> Environment:
    env = clean_env() if parent_env is None else dict(parent_env)
    return Environment(
        runs_dir=root / "runs",
        root=root,
        parent_env=env,
        agents=None if runners is None else _with_defaults(runners),
        warn=warnings.append,
        mask=Masker.from_env(env),
        inputs=dict(inputs or {}),
    )


def _with_defaults(runners: Mapping[str, AgentRuntime]) -> dict[str, AgentRuntime]:
    from omg.runners.registry import agents

    return {**agents(), **runners}


def run_graph(
    root: Path,
    yaml: str,
    *,
    runners: Mapping[str, AgentRuntime] | None = None,
    inputs: Mapping[str, str] | None = None,
    run_id: str = "r1",
    concurrency: int | None = None,
    max_minutes: float | None = None,
    max_nodes: int | None = None,
    parent_env: Mapping[str, str] | None = None,
) -> Ran:
    """Write ``yaml`` to ``root``/graph.yaml and run its first leg in this process, as
    `omg run --no-commit --runs-dir root/runs --run-id RUN_ID` would; ``runners`` replace the
    default ones by kind (``{"claude": FakeRunner(...)}``); shell nodes run for real."""
    from omg.graph.load import load_graph

    warnings: list[str] = []
    path = write_graph(root, yaml)
    env = _environment(root, runners, parent_env, inputs, warnings)
    try:
        graph = load_graph(path)
        opts = LegOptions(concurrency, max_minutes, max_nodes)
        end = start_run(graph, path, dict(inputs or {}), env, opts, run_id=run_id)
    except OmgError as exc:
        return Ran(env.runs_dir / run_id, None, exc, tuple(warnings))
    return Ran(env.runs_dir / run_id, end, None, tuple(warnings))


def resume_graph(
    root: Path,
    run_id: str = "r1",
    *,
    runners: Mapping[str, AgentRuntime] | None = None,
    inputs: Mapping[str, str] | None = None,
    retry_failed: bool = False,
    decision: Decision | None = None,
    concurrency: int | None = None,
    max_minutes: float | None = None,
    max_nodes: int | None = None,
    parent_env: Mapping[str, str] | None = None,
) -> Ran:
    """The next leg of a run ``run_graph`` started under ``root``, as `omg resume` would."""
    warnings: list[str] = []
    env = _environment(root, runners, parent_env, inputs, warnings)

    opts = LegOptions(concurrency, max_minutes, max_nodes)
    try:
        end = resume_run(run_id, env, opts, retry_failed=retry_failed, decision=decision)
    except OmgError as exc:
        return Ran(env.runs_dir / run_id, None, exc, tuple(warnings))
    return Ran(env.runs_dir / run_id, end, None, tuple(warnings))


if os.environ.get(SERVER_MARK):  # imported by the fork server: see ``SERVER_MARK``
    from omg.cli.app import command

    command()
