"""What a CI job's code loads: every module is start-up paid by every job, so a job loads what its
own work needs — the hand-off code only a job handing off or folding a wave, jsonschema only a
job reading a hand-off's manifest back."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: (modules imported, the packages none of them may load)
CASES = [
    (["omg.ci.job", "omg.ci.context", "omg.cli.jobs"], ["omg.ci.handoff", "jsonschema"]),
    (["omg.ci.handoff", "omg.ci.publisher", "omg.ci.runjob"], ["jsonschema"]),
]


@pytest.mark.parametrize(("modules", "absent"), CASES, ids=lambda x: ",".join(x))
def test_a_jobs_modules_load_nothing_only_another_kind_of_job_uses(
    modules: list[str], absent: list[str]
) -> None:
    code = (
        f"import sys, json\nfor m in {modules!r}: __import__(m)\n"
        "print(json.dumps(list(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(done.stdout))
    assert not {m for m in loaded for a in absent if m == a or m.startswith(a + ".")}


def test_a_job_that_hands_nothing_off_builds_its_client_without_the_hand_off_code() -> None:
    code = """
import json, sys
from pathlib import Path
from omg.ci.context import JobContext, LegArgs
from omg.github.env import actions
from omg.leg.loop import LegOptions
environ = {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": "t",
           "GITHUB_EVENT_NAME": "workflow_dispatch", "GITHUB_EVENT_PATH": "/nonexistent"}
args = LegArgs(None, None, LegOptions(), "origin", Path(".omg/runs"), {}, None)
JobContext.of(actions(environ), args, environ, print, print)
print(json.dumps(["omg.ci.publisher" in sys.modules, "jsonschema" in sys.modules]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [False, False]
