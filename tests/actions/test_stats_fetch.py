"""`omg stats --fetch REMOTE` on a laptop: the statistics of the runs CI left on the remote's run
branches — superseded, paused at a gate, waiting for a leg — with nothing local changed but
refs/remotes/, and Markdown fit for a step summary."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from gfm import read
from kit import omg_in_process

from .kit import Repo
from .test_commit_status import GATED_CHAIN
from .test_status_fetch import laptop_of, local_view, pr_runs

Make = Callable[[str], Repo]


def test_stats_fetch_counts_the_remotes_runs_and_changes_nothing_local(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GATED_CHAIN)
    pr_runs(gh)
    laptop, env = laptop_of(gh, tmp_path)
    before = local_view(laptop)
    local = omg_in_process("stats", "-f", "json", cwd=laptop, env=env)
    assert json.loads(local.stdout)["summary"]["runs"] == 0  # nothing fetched yet
    done = omg_in_process("stats", "--fetch", "origin", "-f", "json", cwd=laptop, env=env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["summary"]
    [graph] = summary["graphs"]
    outcomes = {k: n for k, n in graph["overall"]["outcomes"].items() if n}
    assert outcomes == {"superseded": 1, "waiting": 1}  # the old head's, and the one between legs
    [wait] = graph["overall"]["gate_wait"]["values"]  # the approval: pause to comment
    assert wait >= 0 and graph["overall"]["cost_per_pr"]["n"] == 1  # both runs, one PR
    assert summary["remote"] == "origin" and summary["damaged"] == []
    md = omg_in_process("stats", "--fetch", "origin", "-f", "markdown", cwd=laptop, env=env)
    page = read(md.stdout)
    assert page.tags.count("table") == 4 and "origin" in page.codes and "pr" in page.codes
    assert "_none_" in md.stdout  # no attempt failed: that table says so
    assert local_view(laptop) == before  # nothing local changed but the remote-tracking refs
