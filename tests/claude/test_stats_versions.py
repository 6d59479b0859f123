"""Is the loop worth it? Two versions of the shipped review loop, run for real — the claude CLI
against the rehearsal's scripted model, worktree, suite and feedback rounds — and then
compared: the second version's prompt makes the implementer check its greeting, so the review
ships it in round 0. `omg stats --compare` shows both versions' convergence and cost side by
side, and a run's page renders in headless Chromium."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from kit import omg_in_process
from pages.browser import load, png_size

from .conftest import ROOT, Env

TASK = "add hello.sh printing 'hello, world'"
FRAGMENT = Path("graphs") / "fragments" / "implement-review.yaml"
#: What the second version asks of the implementer, and the rules its rehearsal answers with.
CHECKED = "Before you answer, check the greeting against the task word for word."
RIGHT_AT_ONCE = [
    {
        "name": "impl, asked to check the greeting, gets it right at once",
        "when": {"node": "change/impl", "round": 0, "prompt": "word for word"},
        "turns": [
            {"tool": "Write", "input": {"file_path": "hello.sh",
                                        "content": "#!/bin/sh\necho 'hello, world'\n"}},
            {"tool": "Write", "input": {"file_path": "test_hello.sh", "content": (
                "#!/bin/sh\n[ \"$(sh hello.sh)\" = \"hello, world\" ] || exit 1\necho ok\n")}},
            {"tool": "Write", "input": {"file_path": "Makefile",
                                        "content": "test:\n\tsh test_hello.sh\n"}},
            {"text": "DONE\nhello.sh prints the greeting, checked word for word."},
        ],
    },
    {
        "name": "review ships a greeting checked word for word",
        "when": {"node": "change/review", "round": 0, "prompt": "checked word for word"},
        "turns": [{"text": "SHIP IT\nhello.sh prints exactly the greeting and make test passes.",
                   "structured": {"verdict": "ship", "findings": []}}],
    },
]  # fmt: skip


def run(repo: Path, env: dict[str, str], rid: str, script: Path) -> None:
    done = omg_in_process(
        "run", str(repo / "graphs" / "review-loop.yaml"), "-i", f"task={TASK}", "--run-id", rid,
        "--rehearse", str(script), cwd=repo, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout


def test_two_versions_of_the_review_loop_compared_and_a_run_seen(
    repo: Path, env: Env, tmp_path: Path
) -> None:
    (repo / "graphs" / "fragments").mkdir(parents=True)
    shutil.copy(ROOT / "graphs" / "review-loop.yaml", repo / "graphs")
    shutil.copy(ROOT / FRAGMENT, repo / FRAGMENT)
    shipped = yaml.safe_load((ROOT / "graphs" / "rehearsals" / "review-loop.yaml").read_text())
    script = tmp_path / "rehearsal.yaml"
    script.write_text(yaml.safe_dump({"rules": RIGHT_AT_ONCE + shipped["rules"]}))
    for rid in ("first-1", "first-2"):
        run(repo, env(), rid, script)
    text = (repo / FRAGMENT).read_text()
    anchor = "      Reply with DONE on the first line"
    (repo / FRAGMENT).write_text(text.replace(anchor, f"      {CHECKED}\n\n{anchor}", 1))
    for rid in ("second-1", "second-2"):
        run(repo, env(), rid, script)

    listed = omg_in_process("stats", "--format", "json", cwd=repo, env=env())
    assert listed.returncode == 0, listed.stderr
    [graph] = json.loads(listed.stdout)["summary"]["graphs"]
    first, second = graph["versions"]  # oldest first
    assert first["graph_sha256"] == second["graph_sha256"]  # the graph file is the same…
    assert first["fragments"] != second["fragments"]  # …its fragment's prompt is not
    assert first["round_counts"] == {"1": 2} and second["round_counts"] == {"0": 2}
    assert first["executions"]["total"] == 14 and second["executions"]["total"] == 8
    assert second["cost"]["total"] < first["cost"]["total"]
    assert first["rehearsed"] == second["rehearsed"] == 2

    side = omg_in_process(
        "stats", "--compare", first["version"], second["version"][:6],
        "--html", str(tmp_path / "stats.html"), cwd=repo, env=env(),
    )  # fmt: skip
    assert side.returncode == 0, side.stderr
    rows = {ln.split("  ")[1].strip(): ln for ln in side.stdout.splitlines() if ln.startswith("  ")}
    rounds = rows["feedback rounds until convergence"]
    assert "n=2: median 1 [1–1]; mean 1 (95%: 1–1)" in rounds
    assert "n=2: median 0 [0–0]; mean 0 (95%: 0–0)" in rounds
    assert rounds.rstrip().endswith("no")  # 1 round against 0, every time: beyond noise
    assert "n=2: median $0.0" in rows["cost per run"]
    assert rows["loops by rounds"].split()[-3:] == ["1×2", "0×2", "-"]

    page = tmp_path / "second-1.html"
    shown = omg_in_process("report", "second-1", "--html", str(page), cwd=repo, env=env())
    assert shown.returncode == 0, shown.stderr
    found = load(page, tmp_path / "chromium")
    assert found.errors == []
    assert found.dom.count('<g class="node"') == 4 and found.dom.count('<g class="exec"') == 4
    assert "SHIP IT hello.sh prints exactly the greeting" in found.dom  # from its transcript
    assert png_size(found.png) == (found.width, found.height)
    (tmp_path / "second-1.png").write_bytes(found.png)
    plots = load(tmp_path / "stats.html", tmp_path / "chromium-stats")
    assert plots.errors == [] and '<section id="compare">' in plots.dom
    (tmp_path / "stats.png").write_bytes(plots.png)
