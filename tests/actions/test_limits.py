"""What GitHub limits and breaks: API faults without duplicate side effects, the summary and
annotation caps, and the workflow token kept out of everything a leg writes."""

from __future__ import annotations

from collections.abc import Callable

import pygit2

from .kit import TOKEN, Repo
from .stand_in import Fault

GATED = """\
name: pr
nodes:
  - id: build
    run: echo built
  - id: ok
    type: gate
    depends_on: [build]
"""

Make = Callable[[str], Repo]


def test_api_faults_are_retried_without_posting_twice(github: Make) -> None:
    gh = github(GATED)
    gh.push_pr(2, {"code.txt": "v1\n"})
    gh.api.faults = [
        Fault("GET", "/issues/2/comments", "429"),
        Fault("POST", "/issues/2/comments", "502-after"),  # posted, then the answer is lost
    ]
    job = gh.run("pull_request", gh.pr_event("opened", 2))
    assert job.rc == 0, job.stderr
    assert "rate limited (429)" in job.stderr and "HTTP 502" in job.stderr
    assert len(gh.api.comments_on(2)) == 1
    gh.api.faults = [
        Fault("GET", "/collaborators/octocat/permission", "403-limit"),
        Fault("PATCH", "/issues/comments/", "502"),
    ]
    comment = gh.comment_event(2, "/omg approve ok", "octocat", "MEMBER")
    job = gh.run("issue_comment", comment)
    assert job.rc == 0 and job.outputs["status"] == "passed", job.stderr
    assert "rate limited (403)" in job.stderr
    stickies = [c for c in gh.api.comments_on(2) if "omg:sticky" in c["body"]]
    assert len(stickies) == 1 and "passed" in stickies[0]["body"]


def test_a_post_that_keeps_failing_stops_the_step_with_a_clear_error(github: Make) -> None:
    gh = github(GATED)
    gh.push_pr(2, {"code.txt": "v1\n"})
    gh.api.faults = [Fault("POST", "/issues/2/comments", "502", times=10)]
    job = gh.run("pull_request", gh.pr_event("opened", 2))
    assert job.rc != 0 and "Traceback" not in job.stderr
    assert "kept failing (HTTP 502)" in job.stderr and "githubstatus" in job.stderr
    assert job.stderr.count("HTTP 502; retrying in 0s") == 3  # the job's OMG_API_BACKOFF
    assert job.outputs["status"] == "paused"  # outputs are written whatever the API did
    assert gh.run_state(job.outputs["run-id"])["paused_at"] == "ok"  # the work is recorded


def big_graph(n: int, failing: int, huge_output_mb: int) -> str:
    lines = ["name: pr", "on_fail: continue", "nodes:"]
    lines += [
        "  - id: loud",
        f"    run: head -c {huge_output_mb * 1024 * 1024} /dev/zero | tr '\\0' 'x'; exit 1",
    ]
    lines += [f"  - id: bad{i}\n    run: echo broken {i} >&2; exit 1" for i in range(failing)]
    lines += [f"  - id: n{i}\n    run: echo {i}" for i in range(n - failing - 1)]
    return "\n".join(lines) + "\n"


def test_summary_and_annotations_stay_under_githubs_caps_for_2000_nodes(github: Make) -> None:
    gh = github(big_graph(2000, failing=24, huge_output_mb=3))
    gh.push_pr(2, {"code.txt": "v1\n"})
    job = gh.run("pull_request", gh.pr_event("opened", 2), extra={"OMG_MAX_NODES": "60"})
    assert job.rc == 0, job.stderr
    assert job.outputs["status"] == "continuing"
    assert len(job.summary.encode()) < 1024 * 1024
    errors = [a for a in job.annotations if a.startswith("::error")]
    warnings = [a for a in job.annotations if a.startswith("::warning")]
    assert len(errors) == 10 and len(warnings) <= 10
    assert "25 failed node(s)" in job.summary and "15 are listed only here" in job.summary
    assert "too many for a diagram" in job.summary
    body = next(c["body"] for c in gh.api.comments_on(2) if "omg:sticky" in c["body"])
    assert len(body) < 65_536


def every_text_in(repo: pygit2.Repository) -> list[bytes]:
    """Commit messages and blobs of every ref: what anyone cloning the repository can read."""
    out: list[bytes] = []
    for name in repo.references:
        for commit in repo.walk(repo.references[name].target):
            out.append(commit.message.encode())
            stack = [commit.tree]
            while stack:
                for entry in stack.pop():
                    obj = repo[entry.id]
                    if isinstance(obj, pygit2.Tree):
                        stack.append(obj)
                    else:
                        out.append(obj.peel(pygit2.Blob).data)
    return out


def test_the_token_never_reaches_run_files_commits_logs_or_the_summary(github: Make) -> None:
    gh = github(GATED.replace("echo built", "env | sort; echo built"))
    gh.push_pr(2, {"code.txt": "v1\n"})
    jobs = [gh.run("pull_request", gh.pr_event("opened", 2), process=True)]
    comment = gh.comment_event(2, "/omg approve ok", "octocat", "MEMBER")
    jobs.append(gh.run("issue_comment", comment, process=True))
    assert jobs[-1].outputs["status"] == "passed", jobs[-1].stderr
    texts = every_text_in(pygit2.Repository(str(gh.origin)))
    assert texts and not [t for t in texts if TOKEN.encode() in t]
    for job in jobs:
        written = [job.stdout, job.stderr, job.summary, *job.outputs.values()]
        assert not [w for w in written if TOKEN in w]
        run_files = [p for p in (job.clone / ".omg").rglob("*") if p.is_file()]
        assert run_files and not [p for p in run_files if TOKEN.encode() in p.read_bytes()]
    assert not [c for c in gh.api.comments if TOKEN in c["body"]]
    # the shell node saw no GITHUB_TOKEN: secrets reach nodes only when the graph passes them
    seen = gh.run_file(jobs[0].outputs["run-id"], "artifacts/build.out")
    assert "PATH=" in seen and "GITHUB_TOKEN" not in seen
