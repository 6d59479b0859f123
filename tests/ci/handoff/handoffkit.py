"""A leg's two jobs on real repositories: leg 1 of a run pushed to a bare remote and paused at
a gate; the run job's clone resumes it (approved) without pushing and bundles what it made; the
publish job's clone holds what the remote holds. Built once; each test works on copies."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest
from kit import omg_call

from omg.ci.handoff import Canaries, Expected, Plan, Publish, bundle, nothing

RUN = "r9"
RUN_REF = f"refs/heads/omg/runs/{RUN}"
LANE_REF = f"refs/heads/omg/work/{RUN}/lane"
#: A secret of the job, which no hand-off may carry.
SECRET = "sk-ant-api03-canary-7f3a9c2e1b5d4f60a8e7"
SIG = pygit2.Signature("Test User", "test@example.com")
GRAPH = """\
name: handoff
nodes:
  - id: write
    run: echo "first" > work.txt && echo wrote
    worktree: lane
  - id: approve
    type: gate
    depends_on: [write]
    description: Go on?
  - id: finish
    depends_on: [approve]
    run: echo "second" >> work.txt && cat work.txt
    worktree: lane
  - id: report
    depends_on: [finish]
    run: echo all done
"""


@dataclass(frozen=True)
class Legs:
    """The module's one setup: the remote after leg 1, the run job's clone after leg 2, the
    leg's plan and its clean bundle."""

    origin: Path
    run: Path
    plan: Plan
    artifact: Path
    main: str


def publish_for(head: str) -> Publish:
    out = nothing()
    out["comment"] = {"body": "omg: run r9 passed"}
    out["status"] = {
        "sha": head, "context": "omg/handoff", "state": "success",
        "description": "passed", "target_url": "https://github.com/o/r/actions/runs/1",
    }  # fmt: skip
    return out


def remote_refs(path: Path) -> dict[str, str]:
    repo = pygit2.Repository(str(path))
    return {n: str(repo.references[n].target) for n in repo.references if n.startswith("refs/")}


@pytest.fixture(scope="module")
def legs(tmp_path_factory: pytest.TempPathFactory) -> Legs:
    root = tmp_path_factory.mktemp("legs")
    origin = root / "origin.git"
    pygit2.init_repository(str(origin), bare=True, initial_head="main")
    work = root / "work"
    repo = pygit2.init_repository(str(work), initial_head="main")
    (work / "graph.yaml").write_text(GRAPH)
    (work / "tracked.txt").write_text("original\n")
    repo.index.add("graph.yaml")
    repo.index.add("tracked.txt")
    repo.index.write()
    main = repo.create_commit("HEAD", SIG, SIG, "initial", repo.index.write_tree(), [])
    repo.remotes.create("origin", str(origin))
    repo.remotes["origin"].push(["refs/heads/main:refs/heads/main"])
    done = omg_call("run", "graph.yaml", "--run-id", RUN, "--push", "origin", cwd=work)
    assert done.returncode == 4, done.stderr  # paused at the gate, pushed
    run = root / "run"
    pygit2.clone_repository(str(origin), str(run))
    olds = remote_refs(origin)
    plan = Plan(RUN, "handoff", 2, {RUN_REF: olds[RUN_REF], LANE_REF: olds[LANE_REF]}, (str(main),))
    done = omg_call("resume", RUN, "--fetch", "origin", "--approve", "approve", cwd=run)
    assert done.returncode == 0, done.stderr  # the run job: no push
    artifact = root / "artifact"
    bundle(run, artifact, plan, publish_for(str(main)))
    return Legs(origin, run, plan, artifact, str(main))


@dataclass
class Stage:
    """One test's copies: the remote, the run job's clone, the publish job's clone, and an
    artifact directory to write a (tampered) bundle into."""

    legs: Legs
    origin: Path
    run: Path
    pub: Path
    artifact: Path

    def expected(self, **change: Any) -> Expected:
        fields: dict[str, Any] = {
            "run_id": RUN, "graph": "handoff", "refs": dict(self.legs.plan.olds),
            "base": self.legs.plan.base, "head": self.legs.main,
            "canaries": Canaries.of([SECRET]),
        }  # fmt: skip
        fields.update(change)
        return Expected(**fields)

    def manifest(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.artifact / "manifest.json").read_text())
        return loaded

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        (self.artifact / "manifest.json").write_text(json.dumps(manifest))

    def rebundle(self, publish: Publish | None = None) -> None:
        """The run job's bundle again, of whatever its clone holds now."""
        shutil.rmtree(self.artifact)
        bundle(self.run, self.artifact, self.legs.plan, publish or publish_for(self.legs.main))

    def pub_state(self) -> tuple[dict[str, str], frozenset[str]]:
        """The publish clone's refs and every object it holds."""
        repo = pygit2.Repository(str(self.pub))
        refs = {n: str(repo.references[n].resolve().target) for n in repo.references}
        return refs, frozenset(str(o) for o in repo.odb)


@pytest.fixture
def stage(legs: Legs, tmp_path: Path) -> Stage:
    origin = tmp_path / "origin.git"
    shutil.copytree(legs.origin, origin)
    run = tmp_path / "run"
    shutil.copytree(legs.run, run, symlinks=True)
    pub = tmp_path / "pub"
    pygit2.clone_repository(str(origin), str(pub))
    artifact = tmp_path / "artifact"
    shutil.copytree(legs.artifact, artifact)
    return Stage(legs, origin, run, pub, artifact)


def commit_on(
    run: Path, ref: str, files: dict[str, bytes | None], *, mode: int = pygit2.enums.FileMode.BLOB,
    parents: list[str] | None = None,
) -> str:  # fmt: skip
    """A commit on ``ref`` in ``run``: its tip's tree with ``files`` written (None: removed),
    each at ``mode``; ``parents`` replaces the tip as parent (an orphan with [])."""
    repo = pygit2.Repository(str(run))
    tip = repo.references[ref].target
    tree = repo[tip].peel(pygit2.Commit).tree
    for path, data in files.items():
        tree = _put(repo, tree, path.split("/"), data, mode)
    parent_ids = [str(tip)] if parents is None else parents
    oid = repo.create_commit(None, SIG, SIG, "tamper", tree.id, parent_ids)
    repo.references[ref].set_target(oid)
    return str(oid)


def _put(
    repo: pygit2.Repository, tree: pygit2.Tree | None, parts: list[str], data: bytes | None,
    mode: int,
) -> pygit2.Tree:  # fmt: skip
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    name = parts[0]
    if len(parts) == 1:
        if data is None:
            builder.remove(name)
        else:
            builder.insert(name, repo.create_blob(data), mode)
    else:
        entry = builder.get(name)
        sub = repo[entry.id].peel(pygit2.Tree) if entry is not None else None
        builder.insert(name, _put(repo, sub, parts[1:], data, mode).id, pygit2.enums.FileMode.TREE)
    return repo[builder.write()].peel(pygit2.Tree)


def blob_at(run: Path, ref: str, path: str) -> bytes:
    repo = pygit2.Repository(str(run))
    tree = repo[repo.references[ref].target].peel(pygit2.Commit).tree
    return bytes(repo[tree[path].id].peel(pygit2.Blob).data)
