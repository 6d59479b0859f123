"""The process chokepoint: every child omg starts goes through ``spawn``, with ``child_env``."""

from __future__ import annotations

import collections
import contextlib
import hashlib
import os
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal


@dataclass(frozen=True)
class ProcResult:
    """What a finished (or killed) child left behind."""

    argv: tuple[str, ...]
    exit_code: int | None  # None when it was killed for its timeout or never started
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    spawn_error: str | None = None
    idle: bool = False  # killed by the watchdog: no output and no activity for idle_s
    gave_up: str | None = None  # stopped because ``give_up`` named a reason on a stdout line


@dataclass(frozen=True)
class SpawnRequest:
    """One child to run to completion: what it runs, where, with what, and when it is stopped."""

    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str]
    timeout_s: float
    #: Stop it once it prints nothing and ``activity()`` stays the same this long.
    idle_s: float | None = None
    stdin: str | None = None  # written to the child, then closed; without it stdin is closed
    merge_stderr: bool = False
    #: Kill every process that carries this child's mark once it ends, not only when stopped.
    reap: bool = False
    #: Shown each complete stdout line; a reason it returns stops the child.
    give_up: Callable[[str], str | None] | None = None
    activity: Callable[[], object] | None = None  # what counts as progress besides output


#: Runs one child to completion; tests inject their own to observe or script children.
Spawner = Callable[[SpawnRequest], ProcResult]


def python_child(
    spawn: Spawner, flags: tuple[str, ...], code: str, stdin: str, cwd: Path, timeout_s: float
) -> ProcResult:
    """Python ``code`` run by this interpreter in a child (``flags``: how isolated), fed
    ``stdin``, given no variables, stopped after ``timeout_s``: work the leg cannot interrupt
    in its own process (a regular expression, a schema check)."""
    argv = (sys.executable, *flags, "-c", code)
    return spawn(SpawnRequest(argv, cwd=cwd, env={}, timeout_s=timeout_s, stdin=stdin))


#: The variable every child carries, so what it starts (even in a session of its own) is found.
MARK = "_OMG_CHILD"  # not an OMG_ setting: a mark, meaningless to the child
#: The variable every child of a leg carries: which run directory (on this machine) it works
#: for, so a later leg of the run finds what a killed leg left running (``reap_run``).
RUN_MARK = "_OMG_RUN"
#: Seconds ``reap_run`` waits for the processes it killed to be gone.
REAP_WAIT_S = 5.0
#: Seconds a stopped child gets to end its own children before its group is killed.
GRACE_S = 3.0


def spawn(req: SpawnRequest) -> ProcResult:
    """Run ``req.argv`` in its own process group until it exits, ``timeout_s`` passes, or — with
    ``idle_s`` — it prints nothing and ``activity()`` stays the same for that long, or — with
    ``give_up`` — that function, shown each complete stdout line, returns a reason to stop.

    ``stdin`` is written to the child (then closed); without it stdin is closed. A child that is
    stopped gets SIGTERM first (so it can end its own children), then its group is killed after
    ``GRACE_S``; with ``reap`` every process that carries this child's mark is killed too once
    it ends — tools started in a session of their own never outlive the node. Output is
    decoded as UTF-8 with replacement, never raising.
    """
    argv, stdin, give_up = tuple(req.argv), req.stdin, req.give_up
    start = time.monotonic()
    token = secrets.token_hex(8)
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=req.cwd,
            env={**req.env, MARK: token},
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if req.merge_stderr else subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return ProcResult(argv, None, "", "", time.monotonic() - start, spawn_error=str(exc))
    if stdin is not None:
        threading.Thread(target=_feed, args=(proc, stdin), daemon=True).start()
    deadline = start + req.timeout_s
    watch = _Lines(give_up) if give_up is not None else None
    chunks, ended = _drain(proc, deadline, req.idle_s, req.activity, watch)
    reaped = _reaped(proc, deadline, req.reap) if ended == "eof" else None
    stopped = reaped is None
    if stopped:
        _stop(proc)
        more, _ = _drain(proc, time.monotonic() + 2, None, None)  # what it wrote before dying
        for fd in (1, 2):
            chunks[fd].add(more[fd].bytes())
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2)
    if req.reap or stopped:
        _kill_group(proc.pid)
        if reaped != "alone":  # a child that started nothing left nothing to find
            _kill_marked(token)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    out = chunks[1].bytes()
    err = chunks[2].bytes()
    code = None if stopped else proc.returncode
    return ProcResult(
        argv,
        code,
        _decode(out),
        _decode(err),
        time.monotonic() - start,
        timed_out=stopped and ended not in ("idle", "gave_up"),
        idle=ended == "idle",
        gave_up=watch.reason if watch is not None and ended == "gave_up" else None,
    )


def _feed(proc: subprocess.Popen[bytes], text: str) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.write(text.encode("utf-8"))
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child (an agent ends its tools on it), then the group's SIGKILL after a grace."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=GRACE_S)
    _kill_group(proc.pid)


def _kill_marked(token: str) -> None:
    """SIGKILL every process whose environment carries this child's mark (Linux /proc)."""
    for pid in _carrying(MARK, token):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _carrying(name: str, value: str) -> list[int]:
    """The processes whose environment holds exactly ``name=value`` (Linux /proc; else none)."""
    needle = f"\0{name}={value}\0".encode()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    found = []
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            environ = b"\0" + _read_all(f"/proc/{pid}/environ")
        except OSError:
            continue
        if needle in (environ if environ.endswith(b"\0") else environ + b"\0"):
            found.append(pid)
    return found


def _read_all(path: str) -> bytes:
    """A small file's bytes in the fewest system calls (``open()`` adds a buffer, an fstat, a
    seek and a terminal check: it counts when every process's environment is read per node)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        parts = []
        while part := os.read(fd, 1 << 16):
            parts.append(part)
        return b"".join(parts)
    finally:
        os.close(fd)


def run_mark(run_dir: Path) -> str:
    """``<run-id>@<hash of the run directory's path>``: what a leg's children carry as
    ``RUN_MARK``; two checkouts of one run on one machine carry different marks."""
    where = hashlib.sha1(str(run_dir.resolve()).encode()).hexdigest()[:12]
    return f"{run_dir.name}@{where}"


def reap_run(mark: str) -> int:
    """SIGKILL every process carrying ``RUN_MARK=mark`` — what a killed leg of the run left
    running — and wait (at most ``REAP_WAIT_S``) until they are gone; how many there were.

    Only the leg holding the run's lock calls this: any leg that started them is dead.
    """
    pids = _carrying(RUN_MARK, mark)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + REAP_WAIT_S
    while time.monotonic() < deadline and _carrying(RUN_MARK, mark):
        time.sleep(0.01)  # a killed process keeps its environ until it is gone (or a zombie)
    return len(pids)


class Marked:
    """A spawner whose every child carries ``RUN_MARK=mark``, around the leg's own spawner."""

    def __init__(self, inner: Spawner, mark: str) -> None:
        self.inner = inner
        self.mark = mark

    def __call__(self, req: SpawnRequest) -> ProcResult:
        return self.inner(replace(req, env={**req.env, RUN_MARK: self.mark}))


#: Bytes of a child's stdout (and of its stderr) kept in memory: the first and last halves
#: (the tail to within one 64 KiB read).
#: A node may print any amount; omg's memory stays bounded, and what it keeps says what it cut.
CAPTURE_LIMIT = 8 << 20


class _Capture:
    """The head and tail of one stream, at most ``CAPTURE_LIMIT`` bytes, and how much was cut."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.cut = 0

    def add(self, data: bytes) -> None:
        half = CAPTURE_LIMIT // 2
        room = half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail.append(data)
        self.tail_size += len(data)
        while self.tail_size - len(self.tail[0]) >= half:  # drop whole chunks, oldest first
            self.cut += len(self.tail[0])
            self.tail_size -= len(self.tail.popleft())

    def bytes(self) -> bytes:
        tail = b"".join(self.tail)
        if not self.cut:
            return bytes(self.head) + tail
        marker = f"\n[… omg cut {self.cut} bytes of output here …]\n".encode()
        return bytes(self.head) + marker + tail


class _Lines:
    """Splits stdout into lines for a ``give_up`` predicate and keeps the first reason it gave."""

    def __init__(self, give_up: Callable[[str], str | None]) -> None:
        self.give_up = give_up
        self.partial = b""
        self.reason: str | None = None

    def feed(self, data: bytes) -> bool:
        """True once a line gave a reason to stop."""
        *lines, self.partial = (self.partial + data).split(b"\n")
        if len(self.partial) > CAPTURE_LIMIT:  # one endless line: nothing more to judge by
            self.partial = b""
        for line in lines:
            if self.reason is None:
                self.reason = self.give_up(_decode(line))
        return self.reason is not None


def _drain(
    proc: subprocess.Popen[bytes],
    deadline: float,
    idle_s: float | None,
    activity: Callable[[], object] | None,
    watch: _Lines | None = None,
) -> tuple[dict[int, _Capture], str]:
    """Read stdout/stderr until EOF, ``deadline``, ``idle_s`` without output or a change in
    ``activity()``, or a stdout line ``watch`` gives up on: (captures by fd number,
    "eof" | "deadline" | "idle" | "gave_up")."""
    fds = {s.fileno(): n for n, s in ((1, proc.stdout), (2, proc.stderr)) if s is not None}
    chunks: dict[int, _Capture] = {1: _Capture(), 2: _Capture()}
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN | select.POLLHUP)
    pidfd = _pidfd(proc)  # the child's exit, even while something it started holds the pipes
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    exited: float | None = None
    last = time.monotonic()
    seen = activity() if activity is not None else None
    try:
        while fds:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                return chunks, "deadline"
            if exited is not None and now - exited >= EXIT_DRAIN_S:
                return chunks, "eof"  # the child is gone; what holds its pipes is reaped later
            wait = left if idle_s is None else min(left, max(0.0, last + idle_s - now), 1.0)
            if exited is not None:
                wait = min(wait, EXIT_DRAIN_S)
            events = poller.poll(wait * 1000)
            for fd, _ in events:
                if fd == pidfd:
                    poller.unregister(fd)
                    exited = time.monotonic()
                    continue
                data = os.read(fd, 1 << 16)
                if data:
                    chunks[fds[fd]].add(data)
                    last = time.monotonic()
                    if watch is not None and fds[fd] == 1 and watch.feed(data):
                        return chunks, "gave_up"
                else:
                    poller.unregister(fd)
                    del fds[fd]
            if idle_s is not None and not events:
                if activity is not None:
                    now_seen = activity()
                    if now_seen != seen:
                        seen, last = now_seen, time.monotonic()
                if time.monotonic() - last >= idle_s:
                    return chunks, "idle"
        return chunks, "eof"
    finally:
        if pidfd is not None:
            os.close(pidfd)


#: Seconds to keep reading a child's pipes after it exited (what it wrote last).
EXIT_DRAIN_S = 0.5


def _pidfd(proc: subprocess.Popen[bytes]) -> int | None:
    try:
        return os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return None


def _last_pid() -> int | None:
    """The process id omg's pid namespace gave out last (Linux; None where it cannot be read).

    While a child is unreaped its id stays taken, so if it is still the last one given out, no
    process or thread was started on the machine since the child: none of it carries the
    child's mark. Only a process privileged to set ``ns_last_pid`` could make it seem so,
    and such a process escapes the mark anyway (it can clear its own environment)."""
    try:
        return int(_read_all("/proc/sys/kernel/ns_last_pid"))
    except (OSError, ValueError):
        return None


def _reaped(
    proc: subprocess.Popen[bytes], deadline: float, ask: bool
) -> Literal["alone", "exited"] | None:
    """Wait for exit without polling (a pidfd on Linux); None if the deadline passed first, else
    "alone" when ``ask`` (a child whose mark is then looked for) and no process was started
    after the child (read before it is reaped)."""
    left = max(0.0, deadline - time.monotonic())
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=left)
            return "exited"
        except subprocess.TimeoutExpired:
            return None
    try:
        ready, _, _ = select.select([pidfd], [], [], left)
    finally:
        os.close(pidfd)
    if not ready:
        return None
    alone = ask and _last_pid() == proc.pid  # its pid is still held: it is not reaped yet
    proc.wait()
    return "alone" if alone else "exited"


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


#: Characters of a child's output quoted in a one-line detail.
TAIL = 240


def tail(text: str, limit: int = TAIL, mark: str = "…") -> str:
    """The last ``limit`` characters of ``text``, stripped, led by ``mark`` when cut."""
    text = text.strip()
    return text if len(text) <= limit else mark + text[-limit:]


#: Always passed through when set (HOME and TMPDIR then move into the execution's room:
#: ``runners/room``).
BASE = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "TERM")
# Secrets (GITHUB_TOKEN, a model's API key) reach a shell node or verify command only when its
# ``env:`` names them: this is an allow-list.


def child_env(
    parent: Mapping[str, str],
    declared: Iterable[tuple[str, str | None]] = (),
    *,
    prefixes: tuple[str, ...] = (),
) -> dict[str, str]:
    """The environment for one child.

    ``parent`` is omg's environment as it holds it in memory (its block in ``/proc`` holds no
    secret: ``cli/scrub``). ``declared`` is the node's ``env:``: a name with None passes the
    parent's value through, a name with a value sets it. ``prefixes`` (a runtime's
    ``env_prefixes``: its model endpoint and auth variables) pass every variable they start.
    """
    env = {k: parent[k] for k in BASE if k in parent}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    if prefixes:
        for k, v in parent.items():
            if k.startswith(prefixes):
                env[k] = v
    for name, value in declared:
        if value is not None:
            env[name] = value
        elif name in parent:
            env[name] = parent[name]
    return env
