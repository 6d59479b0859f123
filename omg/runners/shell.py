"""The shell runtime: a node's `run:` command under `sh -c`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from omg.runners.base import Invocation, Output, Step, is_env_failure
from omg.runners.process import Spawner, tail
from omg.runners.room import Room


class ShellRunner:
    """Runs ``sh -c <command>``; the result text is stdout and stderr, interleaved.

    It receives nothing unasked (only what a node's ``env:`` names), keeps no transcript, and
    is rehearsed as it is: a rehearsal stands in for models, not for commands. Its room holds
    only the HOME and TMPDIR every execution gets.
    """

    names_sessions = True  # (a shell node has no session; agent fakes built on it do)
    env_prefixes: tuple[str, ...] = ()
    transcript_home = ""
    pin_hint = ""
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

    def argv(self, inv: Invocation) -> list[str]:
        return ["sh", "-c", inv.text]

    def run(self, inv: Invocation, spawn: Spawner) -> Output:
        res = spawn(
            self.argv(inv),
            cwd=inv.cwd,
            env=inv.env,
            timeout_s=inv.timeout_s,
            merge_stderr=True,
            reap=True,  # nothing the command starts (`sleep 30 &`) outlives the node
        )
        if res.spawn_error is not None:
            return Output(
                None,
                "",
                error="run_error",
                detail=f"could not start sh: {res.spawn_error}",
                duration_s=res.duration_s,
            )
        if res.timed_out:
            return Output(
                None,
                res.stdout,
                error="timeout",
                detail=f"timed out after {inv.timeout_s:g}s (node timeout); process group killed",
                duration_s=res.duration_s,
            )
        if res.exit_code not in (0, None) and is_env_failure(res.exit_code, res.stdout):
            return Output(
                res.exit_code,
                res.stdout,
                error="run_error",
                detail=f"environment failure: exit {res.exit_code}: "
                f"{tail(res.stdout)} — install the missing command or fix PATH; "
                "this never fires a feedback loop",
                duration_s=res.duration_s,
            )
        return Output(res.exit_code, res.stdout, duration_s=res.duration_s)
