"""The lease goes back in the leg's last push, after the run branch: a leg of fast nodes pushes
three times (lease taken, the leg's start, its end with the lease given back), and no reader of
the remote ever sees the lease given back before the run branch holds the leg's work."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pygit2
from githttp import serving
from kit import omg_call

from .helpers import child_env, git_checkout, log_lines

TOKEN = "ghs_last-push-token-0123456789"
RUN = "refs/heads/omg/runs/r"
LEASE = "refs/omg/lease/r"
CHAIN = "name: chain\nnodes:\n" + "".join(
    f"  - {{id: n{i}, {f'depends_on: [n{i - 1}], ' if i else ''}run: 'echo n{i} >> ../log.txt'}}\n"
    for i in range(6)
)


def _watch(bare: Path, log: Path) -> None:
    """An ``update`` hook in the remote: each ref it moves, and where the run branch is then."""
    hooks = bare / "hooks"
    hooks.mkdir(exist_ok=True)
    hook = hooks / "update"
    hook.write_text(
        "#!/bin/sh\n"
        f'echo "$1 $3 $(git rev-parse -q --verify {RUN} || echo none)" >> "{log}"\n'
    )
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)


def _lease_json(repo: pygit2.Repository, sha: str) -> dict[str, object]:
    blob = repo[repo[sha].peel(pygit2.Commit).tree["lease.json"].id]
    assert isinstance(blob, pygit2.Blob)
    data = json.loads(blob.data)
    assert isinstance(data, dict)
    return data


def test_a_leg_of_fast_nodes_pushes_three_times_and_gives_its_lease_back_after_its_work(
    tmp_path: Path,
) -> None:
    root = git_checkout(tmp_path / "w", {"g.yaml": CHAIN})
    updates = tmp_path / "updates.txt"
    with serving(tmp_path / "server", TOKEN) as srv:
        _watch(srv.bare, updates)
        pygit2.Repository(str(root)).remotes.create("origin", srv.url)
        done = omg_call(
            "run", "g.yaml", "--run-id", "r", "--push", "origin",
            cwd=root, env=child_env(OMG_GIT_TOKEN=TOKEN),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert srv.pushes() == 3  # lease taken; the leg's start; its end + the lease given back
        bare = pygit2.Repository(str(srv.bare))
        final = str(pygit2.Repository(str(root)).references[RUN].target)
        assert str(bare.references[RUN].target) == final  # the leg's work is on the remote
        given = str(bare.references[LEASE].target)
        assert _lease_json(bare, given)["released"] is True

    assert log_lines(tmp_path) == [f"n{i}" for i in range(6)]
    moves = [line.split() for line in updates.read_text().splitlines()]
    assert [ref for ref, *_ in moves] == [LEASE, RUN, RUN, LEASE]
    ref, new, run_then = moves[-1]
    assert (ref, new) == (LEASE, given)
    assert run_then == final  # when the lease went back, the run branch held the leg's end


def test_a_leg_whose_last_push_is_refused_still_gives_its_lease_back(tmp_path: Path) -> None:
    """The remote refuses the run branch at the end (a hook): the leg fails, its lease is not
    moved by that push, and is given back by a push of its own — the next leg need not wait."""
    root = git_checkout(tmp_path / "w", {"g.yaml": CHAIN})
    with serving(tmp_path / "server", TOKEN) as srv:
        hooks = srv.bare / "hooks"
        hooks.mkdir(exist_ok=True)
        hook = hooks / "pre-receive"
        # the third push to reach the remote (the leg's last) is refused as a whole
        count = tmp_path / "receives"
        hook.write_text(
            "#!/bin/sh\n"
            f'n=$(cat "{count}" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "{count}"\n'
            'grep -q refs/heads/omg/runs/r && [ "$n" = 3 ] && exit 1\n'
            "exit 0\n"
        )
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
        pygit2.Repository(str(root)).remotes.create("origin", srv.url)
        done = omg_call(
            "run", "g.yaml", "--run-id", "r", "--push", "origin",
            cwd=root, env=child_env(OMG_GIT_TOKEN=TOKEN),
        )  # fmt: skip
        assert done.returncode != 0
        bare = pygit2.Repository(str(srv.bare))
        assert _lease_json(bare, str(bare.references[LEASE].target))["released"] is True
        final = str(pygit2.Repository(str(root)).references[RUN].target)
        assert str(bare.references[RUN].target) != final  # the end never reached the remote
