"""No secret reaches GitHub: canaries in every secret of a workflow job (its GITHUB_TOKEN, the
agent auth, a service password, a variable the graph marks secret, a secret
input), nodes — the real claude CLI among them — that print them and fail with them, then the
step summary, GITHUB_OUTPUT, annotations, every request sent to the API, every comment, every
object on origin and every file of the jobs' checkouts is searched."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml
from canaries import PLANTED, Search, canary, plant

from omg.stubmodel import StubModel, load

from .kit import TOKEN, Job, Repo

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / "node_modules" / ".bin" / "claude"

GRAPH = """\
name: pr
on_fail: continue
secrets: [DEPLOY_URL]
inputs:
  deploy_key: {secret: true, required: true}
nodes:
  - id: loud
    env: [GITHUB_TOKEN, ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, MY_SERVICE_PASSWORD,
          DEPLOY_URL]
    run: |
      env; echo "deploying with {{ inputs.deploy_key }}"
      printf 'x-access-token:%s' "$GITHUB_TOKEN" | base64 -w0; echo
  - id: broken
    env: [MY_SERVICE_PASSWORD, GITHUB_TOKEN, DEPLOY_URL]
    run: 'echo "$GITHUB_TOKEN refused at $DEPLOY_URL for $MY_SERVICE_PASSWORD" >&2; exit 1'
  - id: agent
    prompt: "Review with the key {{ inputs.deploy_key }}."
    success_check: {result_matches: '^SHIP IT'}
  - id: ship
    type: gate
    depends_on: [loud]
    description: Ship it?
  - id: after
    depends_on: [ship]
    run: 'echo "shipped with {{ inputs.deploy_key }}"'
"""

Make = Callable[[str], Repo]


def test_no_canary_reaches_github(github: Make, tmp_path: Path) -> None:
    assert CLAUDE.exists(), f"{CLAUDE} is missing: run `npm ci` in the checkout"
    # GITHUB_TOKEN is origin's password over HTTP; OMG_GIT_TOKEN would replace it there, so its
    # canary is planted in tests/claude/test_canaries.py, which pushes to a path
    others = [n for n in PLANTED if n not in ("GITHUB_TOKEN", "OMG_GIT_TOKEN")]
    planted = {**plant(*others), "GITHUB_TOKEN": TOKEN}
    key = canary("input")
    quoted = " ".join(f"{n}={v}" for n, v in planted.items())
    script = tmp_path / "s.yaml"
    rule = {"name": "the agent quotes its environment", "reply": f"{key} NO. {quoted}"}
    script.write_text(yaml.safe_dump({"rules": [rule]}))
    gh = github(GRAPH)
    gh.push_pr(2, {"code.txt": "v1\n"})
    jobs: list[Job] = []
    with StubModel(load(script)).serve() as stub:
        extra = {
            **{k: v for k, v in planted.items() if k != "GITHUB_TOKEN"},
            "OMG_INPUTS": f"deploy_key={key}",
            "OMG_CLAUDE_BIN": str(CLAUDE),
            "ANTHROPIC_BASE_URL": stub.url,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        jobs.append(gh.run("pull_request", gh.pr_event("opened", 2), extra=extra, process=True))
        assert jobs[0].outputs.get("status") == "paused", jobs[0].stderr + jobs[0].stdout
        ref = jobs[0].outputs["state-ref"][:7]
        approve = gh.comment_event(2, f"/omg approve ship @{ref}", "Codertocat", "OWNER")
        jobs.append(gh.run("issue_comment", approve, extra=extra, process=True))
    assert jobs[1].rc == 1 and jobs[1].outputs["status"] == "failed", jobs[1].stderr
    rid = jobs[0].outputs["run-id"]
    # the failures and the secrets were there to leak: the comment names them, masked
    state = gh.run_state(rid)
    assert state["nodes"]["after"]["verdict"] == "PASS"
    assert {state["nodes"][n]["verdict"] for n in ("broken", "agent")} == {"FAIL"}
    assert gh.run_file(rid, "artifacts/after.out") == "shipped with ***\n"
    assert state["inputs"] == {"deploy_key": "***"}
    sticky = [c["body"] for c in gh.api.comments_on(2) if "omg:sticky" in c["body"]]
    assert sticky and "***" in sticky[0] and "broken" in sticky[0]
    assert any("***" in a for j in jobs for a in j.annotations)

    search = Search({**planted, "deploy_key input": key})
    for n, job in enumerate(jobs, 1):
        search.text(f"job {n} step summary", job.summary)
        search.bytes(f"job {n} GITHUB_OUTPUT", Path(job.env["GITHUB_OUTPUT"]).read_bytes())
        search.text(f"job {n} stdout (annotations)", job.stdout)
        search.text(f"job {n} stderr", job.stderr)
        search.tree(job.clone / ".omg", f"job {n} checkout .omg/")
        search.git(job.clone / ".git", f"job {n} clone")
    for c in gh.api.comments:
        search.text(f"comment {c['id']}", c["body"])
    for r in gh.api.requests:
        search.text(f"request body {r.method} {r.path}", json.dumps(r.body))
    search.git(gh.origin, "origin")
    search.cmdlines()
    searched = [p for p in search.places if not p.startswith("/proc")]  # and every cmdline
    assert len(searched) > 100 and sum("origin" in p for p in searched) > 30, searched
    assert not search.leaks, search.report()
