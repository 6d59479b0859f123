"""The shell runtime: a node's `run:` command under `sh -c`."""

from __future__ import annotations

from omg.runners.base import Invocation, Output, is_env_failure
from omg.runners.process import Spawner, SpawnRequest, tail


class ShellRunner:
    """Runs ``sh -c <command>``; the result text is stdout and stderr, interleaved.

    It receives nothing unasked (only what a node's ``env:`` names). It is a Runner and no
    agent runtime: it keeps no session or transcript, and is rehearsed as it is (a rehearsal
    stands in for models, not for commands); its room holds only the HOME and TMPDIR every
    execution gets.
    """

    env_prefixes: tuple[str, ...] = ()

    def argv(self, inv: Invocation) -> list[str]:
        return ["sh", "-c", inv.text]

    def run(self, inv: Invocation, spawn: Spawner) -> Output:
        res = spawn(
            SpawnRequest(
                tuple(self.argv(inv)),
                cwd=inv.cwd,
                env=inv.env,
                timeout_s=inv.timeout_s,
                merge_stderr=True,
                reap=True,  # nothing the command starts (`sleep 30 &`) outlives the node
            )
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
