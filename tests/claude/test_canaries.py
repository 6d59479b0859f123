"""No secret is written or pushed, and none is readable from omg's /proc files: canaries in
every secret omg holds, nodes (the real claude CLI among them) that print their environment,
read omg's environ and cmdline, fail and hand findings back — then every file of the run, every
object on the run branch (here and on the remote), every output and command line is searched."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml
from canaries import PLANTED, Search, canary, plant

from omg.stubmodel import StubModel, load

from .conftest import Env, git_repo
from .test_sessions import omg

GRAPH = """\
name: canaries
on_fail: continue
secrets: [DEPLOY_URL]
inputs:
  deploy_key: {secret: true, required: true, description: the key the deploy uses}
nodes:
  - id: peek      # given nothing: what can it read of omg?
    env: {OUT: "%(out)s"}
    run: |
      cat /proc/$PPID/environ > "$OUT/peek-environ" 2> "$OUT/peek-environ.err" || true
      cat /proc/$PPID/cmdline > "$OUT/peek-cmdline"
      for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f"; echo; done > "$OUT/cmdlines" 2>&1
      env; tr '\\0' '\\n' < /proc/$PPID/environ || true
  - id: loud      # given every secret: prints them, raw and as git's Basic auth
    depends_on: [peek]
    env: [GITHUB_TOKEN, ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, OMG_GIT_TOKEN,
          MY_SERVICE_PASSWORD, DEPLOY_URL]
    run: |
      env
      echo "deploying with {{ inputs.deploy_key }}"
      printf 'x-access-token:%%s' "$GITHUB_TOKEN" | base64 -w0; echo
  - id: impl
    depends_on: [peek]
    run: echo implementing
  - id: review    # hands the secrets back to its loop, in its reply and its verify evidence
    depends_on: [impl]
    env: [MY_SERVICE_PASSWORD, GITHUB_TOKEN]
    run: 'echo "findings: password $MY_SERVICE_PASSWORD, key {{ inputs.deploy_key }}"'
    success_check:
      exit_zero: true
      verify:
        command: 'echo "verify saw $GITHUB_TOKEN"; test -f reviewed || { touch reviewed; exit 1; }'
    feedback: {rerun: impl, max: 1}
  - id: broken    # fails with a secret in its error
    depends_on: [peek]
    env: [MY_SERVICE_PASSWORD, CLAUDE_CODE_OAUTH_TOKEN]
    run: 'echo "fatal: $CLAUDE_CODE_OAUTH_TOKEN refused for $MY_SERVICE_PASSWORD" >&2; exit 1'
  - id: agent     # the real CLI: its Bash tool reads omg's environ, its reply quotes secrets
    depends_on: [peek]
    env: {OUT: "%(out)s"}
    prompt: "Deploy with the key {{ inputs.deploy_key }}, then report what you saw."
    allowed_tools: [Bash]
  - id: ship
    type: gate
    depends_on: [loud, review, agent]
    description: Ship it?
  - id: after     # a later leg: the secret input must be given again, and is
    depends_on: [ship]
    env: {OUT: "%(out)s"}
    run: |
      echo "{{ inputs.deploy_key }}" > "$OUT/after-key"
      echo "shipped with {{ inputs.deploy_key }}"
"""

#: The agent's Bash tool reads the environ of claude's parent: omg.
PEEK_OMG = (
    "env; omg=$(awk '{print $4}' /proc/$PPID/stat); "
    'cat /proc/$omg/environ > "$OUT/agent-omg-environ" 2>&1; '
    "tr '\\0' '\\n' < /proc/$omg/environ; tr '\\0' ' ' < /proc/$omg/cmdline"
)


def test_no_canary_reaches_a_file_a_commit_an_output_or_a_command_line(
    tmp_path: Path, env: Env
) -> None:
    planted = plant(*PLANTED)
    key = canary("input")
    seen = tmp_path / "seen"  # what nodes read, raw: outside every writer of omg's
    seen.mkdir()
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    work = git_repo(tmp_path / "work")
    subprocess.run(["git", "remote", "add", "origin", str(origin)], cwd=work, check=True)
    (work / "g.yaml").write_text(GRAPH % {"out": seen})
    quoted = " ".join(f"{n}={v}" for n, v in planted.items())
    script = {
        "rules": [
            {
                "name": "the agent looks around, then quotes its environment",
                "when": {"prompt": "Deploy with the key"},
                "turns": [
                    {"tool": "Bash", "input": {"command": PEEK_OMG}},
                    {"text": f"DONE. I saw {quoted} and the key {key}"},
                ],
            }
        ]
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(script))
    outputs: list[tuple[str, subprocess.CompletedProcess[str]]] = []

    with StubModel(load(tmp_path / "s.yaml")).serve() as stub:
        base = env(
            **planted, ANTHROPIC_BASE_URL=stub.url, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1"
        )
        given = {**base, "OMG_INPUTS": f"deploy_key={key}\n"}
        first = omg(work, given, "run", "g.yaml", "--run-id", "c", "--push", "origin")
        outputs.append(("omg run", first))
        assert first.returncode == 4, first.stderr  # paused at the gate
        refused = omg(work, base, "resume", "c", "--approve", "ship", "--push", "origin")
        outputs.append(("omg resume (no input)", refused))
        assert refused.returncode == 3 and "deploy_key" in refused.stderr, refused.stderr
        second = omg(work, given, "resume", "c", "--approve", "ship", "--push", "origin")
        outputs.append(("omg resume", second))
        assert second.returncode == 1, second.stderr  # `broken` failed; the rest went on
        for args in (("status", "c"), ("status", "c", "--node", "agent"), ("replay", "c")):
            outputs.append((f"omg {' '.join(args)}", omg(work, base, *args)))
        assert outputs[-1][1].returncode == 0, outputs[-1][1].stdout  # state = fold(events)

    # the run did what it was asked: secrets reached the nodes that name them, and the
    # secret input the later leg, though the record never held it
    run = work / ".omg" / "runs" / "c"
    assert (seen / "after-key").read_text().strip() == key
    assert "***" in (run / "artifacts" / "loud.out").read_text()
    assert "***" in (run / "feedback" / "review.out").read_text()
    assert "***" in (run / "failed" / "broken.out").read_text()
    assert "DONE. I saw GITHUB_TOKEN=*** " in (run / "artifacts" / "agent.out").read_text()
    assert list((run / "sessions").glob("*.jsonl"))
    # a node given nothing read omg's environ (root may; a user is refused) and found nothing
    environ = (seen / "peek-environ").read_bytes()
    assert b"PATH=" in environ or "Permission denied" in (seen / "peek-environ.err").read_text()

    search = Search({**planted, "deploy_key input": key})
    search.tree(work / ".omg", ".omg/")
    search.git(work / ".git", "local")
    search.git(origin, "origin")
    for label, proc in outputs:
        search.text(f"{label} stdout", proc.stdout)
        search.text(f"{label} stderr", proc.stderr)
    search.files(p for p in seen.iterdir() if p.name != "after-key")  # what nodes read of omg
    search.cmdlines()
    searched = [p for p in search.places if not p.startswith("/proc")]  # and every cmdline
    assert len(searched) > 100 and sum("origin" in p for p in searched) > 30, searched
    assert not search.leaks, search.report()
