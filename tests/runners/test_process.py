"""The process chokepoint keeps a bounded capture of what a child prints, saying what it cut,
stops a child as soon as a line it printed gives a reason to, and leaves nothing a reaped child
started running — looking through every process only when the child may have started one."""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from omg.runners.claude.stream import AuthRetries
from omg.runners.process import (
    CAPTURE_LIMIT,
    RUN_MARK,
    Marked,
    ProcResult,
    SpawnRequest,
    _reaped,
    spawn,
)

PATH = {"PATH": "/usr/bin:/bin"}


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed and awaiting its reaper, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_child_that_prints_more_than_the_limit_keeps_its_head_and_tail(tmp_path: Path) -> None:
    script = f"echo FIRST; head -c {3 * CAPTURE_LIMIT} /dev/zero | tr '\\0' x; echo; echo LAST"
    res = spawn(SpawnRequest(("sh", "-c", script), tmp_path, {"PATH": "/usr/bin:/bin"}, 60))
    assert res.exit_code == 0
    assert len(res.stdout) <= CAPTURE_LIMIT + (1 << 16) + 200  # within one read of the cap
    assert res.stdout.startswith("FIRST\n") and res.stdout.endswith("LAST\n")
    assert "[… omg cut " in res.stdout


def test_a_child_under_the_limit_is_kept_whole(tmp_path: Path) -> None:
    res = spawn(SpawnRequest(("sh", "-c", "printf 'a%.0s' $(seq 1000)"), tmp_path, {}, 10))
    assert res.stdout == "a" * 1000


def test_a_line_the_watch_gives_up_on_stops_the_child_at_once(tmp_path: Path) -> None:
    script = "echo one; printf 'fat'; sleep 0.2; echo 'al two'; sleep 30; echo never"
    res = spawn(SpawnRequest(
        ("sh", "-c", script), tmp_path, {"PATH": "/usr/bin:/bin"}, 60,
        give_up=lambda line: f"saw {line!r}" if "fatal" in line else None,
    ))  # fmt: skip
    assert res.gave_up == "saw 'fatal two'"  # a line split across two reads is judged whole
    assert not res.timed_out and res.exit_code is None
    assert "never" not in res.stdout


def retry_line(status: int) -> str:
    return json.dumps({"type": "system", "subtype": "api_retry", "error_status": status})


def test_the_credentials_are_given_up_on_at_the_second_refusal() -> None:
    watch = AuthRetries()
    assert watch(retry_line(529)) is None  # an outage is waited out
    assert watch('{"type":"assistant"}') is None
    assert watch(retry_line(401)) is None
    assert watch(retry_line(403)) == "the API refused the credentials 2 times (HTTP 403)"


def test_a_marked_spawner_passes_the_whole_request_on_adding_only_the_run_mark(
    tmp_path: Path,
) -> None:
    seen: list[SpawnRequest] = []

    def inner(req: SpawnRequest) -> ProcResult:
        seen.append(req)
        return ProcResult(req.argv, 0, "", "", 0.0)

    req = SpawnRequest(
        ("sh", "-c", "true"), tmp_path, {"PATH": "/bin"}, 5, idle_s=2, stdin="in",
        merge_stderr=True, reap=True, give_up=lambda line: None, activity=lambda: 1,
    )  # fmt: skip
    Marked(inner, "r1@abc")(req)
    assert seen == [replace(req, env={"PATH": "/bin", RUN_MARK: "r1@abc"})]


def test_a_process_a_reaped_child_started_in_a_session_of_its_own_is_killed(
    tmp_path: Path,
) -> None:
    script = "setsid sleep 30 >/dev/null 2>&1 & echo $!"
    res = spawn(SpawnRequest(("sh", "-c", script), tmp_path, PATH, 10, reap=True))
    assert res.exit_code == 0
    pid = int(res.stdout)
    deadline = time.monotonic() + 5
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not running(pid)  # outside the child's group: found by the mark it carries


def test_a_child_that_started_a_process_is_never_reaped_alone(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        ["sh", "-c", "sleep 0.2 & true"], cwd=tmp_path, env=PATH, start_new_session=True
    )
    assert _reaped(proc, time.monotonic() + 10, True) == "exited"  # so its mark is looked for


@pytest.mark.skipif(
    not os.access("/proc/sys/kernel/ns_last_pid", os.R_OK),
    reason="the kernel does not tell the last pid it gave out here (not Linux, or a sandbox)",
)
def test_a_child_that_starts_nothing_is_reaped_alone_when_nothing_else_started(
    tmp_path: Path,
) -> None:
    # other work on the machine may start processes meanwhile: one quiet moment is enough
    seen = set()
    for _ in range(200):
        proc = subprocess.Popen(["true"], cwd=tmp_path, env=PATH, start_new_session=True)
        seen.add(_reaped(proc, time.monotonic() + 10, True))
        if "alone" in seen:
            break
    assert "alone" in seen


def test_a_child_whose_mark_is_not_looked_for_is_never_asked_whether_it_was_alone(
    tmp_path: Path,
) -> None:
    proc = subprocess.Popen(["true"], cwd=tmp_path, env=PATH, start_new_session=True)
    assert _reaped(proc, time.monotonic() + 10, False) == "exited"
