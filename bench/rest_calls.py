"""GitHub REST calls per leg, in the workflow simulation of tests/actions: one PR run leg by
leg (opened → paused at its gate → approved by comment → dispatched legs → passed), printing
after each leg the commit status omg/<graph> and the sticky comment, and the REST calls the
leg made by endpoint; then the calls of a leg of N nodes with every settle published, and the
bound for a 45-minute leg of 30 nodes against GITHUB_TOKEN's 1,000 requests an hour.

    python bench/rest_calls.py [--quick] [--nodes N] [--quiet]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).parent))

from actions.kit import TOKEN, Job, Repo  # noqa: E402
from actions.stand_in import StandIn  # noqa: E402
from common import machine  # noqa: E402
from githttp import serving  # noqa: E402

from omg.ci.pace import INTERVAL  # noqa: E402
from omg.github.client import endpoint  # noqa: E402

GATED = """\
name: pr
nodes:
  - {id: build, run: echo built}
  - {id: ok, type: gate, depends_on: [build], description: Ship it?}
  - {id: a, depends_on: [ok], run: echo a}
  - {id: b, depends_on: [a], run: echo b}
  - {id: c, depends_on: [b], run: echo c}
"""


def chain(n: int) -> str:
    lines = ["name: pr", "nodes:", "  - {id: n0, run: 'true'}"]
    lines += [f"  - {{id: n{i}, depends_on: [n{i - 1}], run: 'true'}}" for i in range(1, n)]
    return "\n".join(lines) + "\n"


def calls(api: StandIn, since: int) -> Counter[str]:
    return Counter(f"{r.method} {endpoint(r.path, api.repo)}" for r in api.requests[since:])


def pr_sequence(root: Path, quiet: bool) -> list[dict[str, object]]:
    api = StandIn(permissions={"octocat": "write"})
    server = api.start()
    out: list[dict[str, object]] = []
    try:
        with serving(root / "github", TOKEN) as git:
            gh = Repo(root, api, GATED, git, in_process=True)
            head = gh.push_pr(2, {"code.txt": "v1\n"})

            def leg(label: str, run: Callable[[], Job]) -> Job:
                since = len(api.requests)
                job = run()
                st = api.status(head, "omg/pr") or {}
                [sticky] = [c["body"] for c in api.comments_on(2) if "omg:sticky" in c["body"]]
                by = calls(api, since)
                out.append(
                    {
                        "leg": label,
                        "status": f"{st.get('state')}: {st.get('description')}",
                        "calls": sum(by.values()),
                        "by_endpoint": dict(sorted(by.items())),
                    }
                )
                if not quiet:
                    print(f"\n## {label} → {job.outputs.get('status')}")
                    print(f"status omg/pr: {st.get('state')} — {st.get('description')}")
                    print(f"REST calls: {sum(by.values())}")
                    for what, n in sorted(by.items()):
                        print(f"  {n:3d}  {what}")
                    print("sticky comment:\n" + sticky.split("```mermaid")[0].rstrip())
                return job

            one = {"OMG_MAX_NODES": "1"}
            opened = leg("PR opened", lambda: gh.run("pull_request", gh.pr_event("opened", 2)))
            ref7 = opened.outputs["state-ref"][:7]
            cmt = gh.comment_event(2, f"/omg approve ok @{ref7}", "octocat", "MEMBER")
            last = leg(
                "comment /omg approve",
                lambda: gh.run("issue_comment", cmt, actor="octocat", extra=one),
            )
            n = 0
            while last.outputs["next"] == "dispatch":
                n += 1
                wf = api.runs[-1]
                last = leg(
                    f"dispatched leg {n}",
                    lambda wf=wf: gh.run(
                        "workflow_dispatch",
                        gh.dispatch_event(wf["inputs"]),
                        extra=one,
                        run_id=wf["id"],
                    ),
                )
    finally:
        server.shutdown()
    return out


def every_settle(root: Path, nodes: int) -> Counter[str]:
    api = StandIn()
    server = api.start()
    try:
        with serving(root / "github", TOKEN) as git:
            gh = Repo(root, api, chain(nodes), git, in_process=True)
            gh.push_pr(2, {"code.txt": "v1\n"})
            job = gh.run(
                "pull_request", gh.pr_event("opened", 2), extra={"OMG_PROGRESS_SECONDS": "0"}
            )
            assert job.outputs["status"] == "passed", job.stderr
            return calls(api, 0)
    finally:
        server.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--nodes", type=int, default=30)
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    nodes = 4 if a.quick else a.nodes
    with tempfile.TemporaryDirectory() as tmp:
        legs = pr_sequence(Path(tmp) / "pr", a.quiet)
        measured = every_settle(Path(tmp) / "chain", nodes)
    total = sum(measured.values())
    # a leg of `nodes` shell nodes with no throttle publishes once per settle: per update
    per_update = (total - 5) / nodes  # 5 fixed: status at start and end, comment find + post/edit
    # the 45-minute bound: changes shown are agent starts + settles (2 per node), and no two
    # updates within INTERVAL: updates ≤ min(2 × 30, 45 min / 20 s)
    updates = min(2 * 30, math.floor(45 * 60 / INTERVAL))
    bound = 5 + 1 + updates * 2  # fixed calls, the first update's GET, 2 per update
    print(f"\nleg of {nodes} nodes, every settle published: {total} REST calls", dict(measured))
    print(
        f"45-minute leg of 30 nodes, {INTERVAL:.0f} s throttle: ≤ {updates} updates, "
        f"≤ {bound} REST calls ({bound / 1000:.0%} of GITHUB_TOKEN's 1,000 an hour)"
    )
    print(
        json.dumps(
            {
                "bench": "rest_calls",
                "machine": machine(),
                "results": {
                    "legs": legs,
                    "every_settle": {"nodes": nodes, "calls": total, "per_update": per_update},
                    "leg_45min_30nodes": {"updates": updates, "calls": bound},
                },
            }
        )
    )


if __name__ == "__main__":
    main()
