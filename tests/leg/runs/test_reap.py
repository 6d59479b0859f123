"""Nothing a node started outlives it, nor runs beside its re-run after a killed leg."""

from __future__ import annotations

import re
from pathlib import Path

from .conftest import Cli
from .helpers import (
    events,
    kill_group,
    launches,
    log_lines,
    pid_alive,
    popen_omg,
    run_path,
    wait_for,
    write_graph,
)

#: A shell test for "runs", a zombie (killed, awaiting a reaper that may never come) counting as
#: gone — `kill -0` would count it alive.
ALIVE = 'alive() { s=$(cut -d" " -f3 /proc/$1/stat 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ]; }'

BACKGROUND = f"""\
name: bg
nodes:
  - id: spawner
    run: 'sleep 30 & echo $! > bg.pid; echo started'
  - id: after
    depends_on: [spawner]
    run: |
      {ALIVE}
      if alive $(cat bg.pid); then echo alive >> log.txt; else echo gone >> log.txt; fi
"""


def test_a_shell_nodes_background_process_does_not_outlive_the_node(
    cli: Cli, tmp_path: Path
) -> None:
    write_graph(tmp_path, BACKGROUND)
    res = cli("run", "g.yaml", "--run-id", "r")
    assert res.returncode == 0, res.stderr
    assert log_lines(tmp_path) == ["gone"]  # reaped when `spawner` settled, before `after`
    assert not pid_alive(int((tmp_path / "bg.pid").read_text()))


# The node notes its start and its end, and whether the previous execution is still alive.
HELD = f"""\
name: held
nodes:
  - id: work
    run: |
      {ALIVE}
      n=$(ls starts 2>/dev/null | grep -c -v child); mkdir -p starts; echo $$ > starts/$n
      if [ "$n" -gt 0 ] && alive $(cat starts/$((n-1))); then echo overlap >> log.txt; fi
      echo start >> log.txt; sleep 30 & echo $! > starts/child-$n
      while [ ! -f go ]; do sleep 0.01; done; echo end >> log.txt
"""


def test_a_killed_legs_node_is_killed_before_the_next_leg_runs_it_again(
    cli: Cli, tmp_path: Path
) -> None:
    write_graph(tmp_path, HELD)
    rd = run_path(tmp_path, "r")
    proc = popen_omg(tmp_path, "run", "g.yaml", "--run-id", "r", "--no-commit")
    wait_for(lambda: (tmp_path / "starts" / "child-0").exists())
    kill_group(proc)  # the leg dies; its node runs on in a session of its own
    first = int((tmp_path / "starts" / "0").read_text())
    child = int((tmp_path / "starts" / "child-0").read_text())
    assert pid_alive(first) and pid_alive(child), "the orphaned node should still be running"

    second = popen_omg(tmp_path, "resume", "r", "--no-commit")
    wait_for(lambda: (tmp_path / "starts" / "1").exists())
    assert not pid_alive(first) and not pid_alive(child)
    (tmp_path / "go").touch()
    _, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    stopped = re.search(r"stopped (\d+) process\(es\) a killed leg of run 'r' left", err)
    assert stopped and int(stopped[1]) >= 2, err  # the node's sh and its sleep, at least
    assert log_lines(tmp_path) == ["start", "start", "end"]  # no overlap, one end: the re-run's
    assert launches(events(rd)) == [("work", 0), ("work", 0)]
