"""The publish job's check of a hand-off, before anything is written: the artifact directory,
the manifest (schema, run, refs and base against the plan handed in), the pack (bounded,
exactly the objects the new tips reach down to the old ones), no secret anywhere, the texts
within GitHub's limits, each ref's history and trees, and the run's record at its new tip."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from omg.ci.handoff import trees
from omg.ci.handoff.canary import Canaries
from omg.ci.handoff.limits import Limits, text_problems
from omg.ci.handoff.manifest import MANIFEST, PACK, Manifest, parse
from omg.ci.handoff.outcome import Refusal, Refused, Verified
from omg.errors import OmgError
from omg.git.names import run_ref
from omg.git.pack import PackError
from omg.git.pack import read as read_pack
from omg.git.quarantine import Quarantine, RefMove
from omg.github.commitstatus import context


@dataclass(frozen=True)
class Expected:
    """What the publish job planned, handed in (never read from the artifact): the run, its
    graph, where each of the run's refs stands on the remote (ref → commit; absent: none
    yet), the commits the leg's lanes start from, the head a status may be set on, the
    workflows a leg may dispatch, the secrets to find nowhere, and the bounds."""

    run_id: str
    graph: str | None
    refs: Mapping[str, str | None]
    base: tuple[str, ...]
    head: str | None = None
    workflows: frozenset[str] = frozenset()
    canaries: Canaries = field(default_factory=Canaries)
    limits: Limits = field(default_factory=Limits)
    #: the seq the run stood at on the remote, and the gate decisions the publish job judged
    #: for this leg (at most one; None: no command was judged, and decisions go unchecked):
    #: the record may decide no other gate after that seq
    seq: int = 0
    decisions: tuple[trees.Ruling, ...] | None = None
    entry: str | None = None  # a fan-out matrix job's: the entry planned for its artifact


def verify(artifact: Path, repo_root: Path, expected: Expected) -> Verified | Refused:
    """The hand-off in the directory ``artifact`` checked against ``expected`` for the
    repository at ``repo_root``: Verified, its objects held aside (never in the repository),
    or the first Refused — its words masked of every secret the job knows."""
    try:
        return _verify(artifact, repo_root, expected)
    except Refusal as r:
        found = r.refused
        mask = expected.canaries.mask
        return Refused(found.reason, mask(found.where), mask(found.why))


def claimed(artifact: Path, limits: Limits | None = None) -> dict[str, str | None]:
    """Where the hand-off in ``artifact`` says each ref it moves stood when its leg started
    (ref → old commit, None: none yet) — its word, to be checked; {} when its manifest cannot
    be read (``verify`` then says why)."""
    try:
        manifest = parse(_files(artifact, limits or Limits())[0])
    except (Refusal, ValueError):
        return {}
    return {r["ref"]: r["old"] for r in manifest["refs"]}


def _verify(artifact: Path, repo_root: Path, expected: Expected) -> Verified:
    limits = expected.limits
    raw_manifest, data = _files(artifact, limits)
    try:
        manifest = parse(raw_manifest)
    except ValueError as exc:
        raise Refusal("manifest", MANIFEST, str(exc)) from None
    _plan(manifest, expected)
    _texts(manifest, expected)
    info = manifest["pack"]
    if len(data) != info["bytes"] or hashlib.sha256(data).hexdigest() != info["sha256"]:
        raise Refusal("pack", PACK, "is not the pack manifest.json describes (size or sha256)")
    try:
        objects = read_pack(data, max_objects=limits.objects, max_object=limits.object_bytes,
                            max_total=limits.total_bytes)  # fmt: skip
    except PackError as exc:
        raise Refusal("pack", PACK, str(exc)) from None
    if len(objects) != info["objects"]:
        raise Refusal("pack", PACK, f"holds {len(objects)} objects; manifest.json says "
                      f"{info['objects']}")  # fmt: skip
    for obj in objects:
        if expected.canaries.found(obj.data):
            raise Refusal("secret", f"{obj.kind} {obj.oid[:12]}", "holds a secret of the job")
    try:
        q = Quarantine(repo_root, objects)
    except OmgError as exc:
        raise Refusal("pack", PACK, f"could not be set aside: {exc}") from None
    try:
        moves = _objects(q, manifest, expected)
    except BaseException:
        q.close()
        raise
    return Verified(manifest["run_id"], manifest["leg"], moves, manifest["publish"],
                    len(objects), len(data), repo_root, q)  # fmt: skip


def _files(artifact: Path, limits: Limits) -> tuple[bytes, bytes]:
    """manifest.json and objects.pack, each a regular file within its bound, read without
    following a link; the directory holds nothing else."""
    try:
        if not stat.S_ISDIR(os.lstat(artifact).st_mode):
            raise Refusal("artifact", str(artifact), "is not a directory")
        names = sorted(os.listdir(artifact))
    except OSError as exc:
        raise Refusal("artifact", str(artifact), f"cannot be read ({exc.strerror})") from None
    extra = [n for n in names if n not in (MANIFEST, PACK)]
    if extra:
        raise Refusal("artifact", extra[0], "is no file of a hand-off (manifest.json and "
                      "objects.pack only)")  # fmt: skip
    return (_read(artifact / MANIFEST, limits.manifest_bytes),
            _read(artifact / PACK, limits.pack_bytes))  # fmt: skip


def _read(path: Path, limit: int) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise Refusal("artifact", path.name, "is missing") from None
    except OSError as exc:
        raise Refusal("artifact", path.name, f"cannot be opened ({exc.strerror}); a link is "
                      "never followed") from None  # fmt: skip
    with os.fdopen(fd, "rb") as fh:
        found = os.fstat(fh.fileno())
        if not stat.S_ISREG(found.st_mode):
            raise Refusal("artifact", path.name, "is not a regular file")
        if found.st_size > limit:
            raise Refusal("size", path.name, f"is {found.st_size:,} bytes, more than the "
                          f"{limit:,} allowed")  # fmt: skip
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise Refusal("size", path.name, f"holds more than the {limit:,} bytes allowed")
    return data


def _plan(manifest: Manifest, expected: Expected) -> None:
    """The run, graph, base and every ref's old commit are what the publish job planned."""
    rid = expected.run_id
    if manifest["run_id"] != rid:
        raise Refusal("plan", MANIFEST, f"is for run {manifest['run_id'][:100]!r}, not {rid!r}")
    if expected.graph is not None and manifest["graph"] != expected.graph:
        raise Refusal("plan", MANIFEST, f"is for graph {manifest['graph'][:100]!r}, not "
                      f"{expected.graph!r}")  # fmt: skip
    if manifest.get("entry") != expected.entry:
        raise Refusal("plan", MANIFEST, f"is for entry {str(manifest.get('entry'))[:100]!r}, "
                      f"not {expected.entry!r}")  # fmt: skip
    if sorted(manifest["base"]) != sorted(set(expected.base)):
        raise Refusal("plan", MANIFEST, "names other base commits than the leg started from")
    mine, lanes = run_ref(rid), re.compile(rf"refs/heads/omg/work/{re.escape(rid)}/[A-Za-z0-9._-]+")
    seen: set[str] = set()
    for r in manifest["refs"]:
        ref = r["ref"]
        if ref in seen:
            raise Refusal("plan", ref, "is listed twice in manifest.json")
        seen.add(ref)
        if ref != mine and (lanes.fullmatch(ref) is None or ".." in ref or ref.endswith(".lock")):
            raise Refusal("plan", ref, f"is not the branch of run {rid} nor one of its lanes")
        if r["old"] != expected.refs.get(ref):
            planned = expected.refs.get(ref) or "nothing"
            raise Refusal("plan", ref, f"is said to move from {(r['old'] or 'nothing')[:12]}, "
                          f"but it stands at {planned[:12]}")  # fmt: skip
    if seen and mine not in seen:
        raise Refusal("plan", mine, "does not move, yet the leg moved lanes of the run")


def _texts(manifest: Manifest, expected: Expected) -> None:
    """What the leg wants published: within GitHub's limits, aimed where the plan allows,
    and free of secrets."""
    publish = manifest["publish"]
    for what, why in text_problems(publish):
        raise Refusal("text", what, why)
    status = publish["status"]
    if status is not None:
        if status["sha"] != expected.head:
            raise Refusal("plan", "status", f"is for commit {status['sha'][:12]}, not the head "
                          "the run judges")  # fmt: skip
        if status["context"] != context(manifest["graph"]):
            raise Refusal("plan", "status", "has another context than its graph's")
    dispatch = publish["dispatch"]
    if dispatch is not None and dispatch["workflow"] not in expected.workflows:
        raise Refusal("plan", "dispatch", f"names workflow {dispatch['workflow']!r}, which "
                      "the publish job does not dispatch")  # fmt: skip
    if expected.canaries.found(json.dumps(publish, ensure_ascii=False).encode()):
        raise Refusal("secret", "publish", "holds a secret of the job in what it would publish")


def _objects(q: Quarantine, manifest: Manifest, expected: Expected) -> tuple[RefMove, ...]:
    """The pack holds exactly what the new tips reach down to the old commits and the base;
    each ref's history and trees pass; the run's record at its new tip passes."""
    refs = manifest["refs"]
    haves = sorted({*(c for c in expected.refs.values() if c), *expected.base})
    for have in haves:
        if not q.held(have):
            raise Refusal("plan", have[:12], "is a commit the plan names that the repository "
                          "lacks: fetch the run's refs before verifying")  # fmt: skip
    try:
        want = set(q.reach([r["new"] for r in refs], haves))
    except KeyError as exc:
        raise Refusal("objects", PACK, f"lacks object {exc.args[0] if exc.args else '?'}, "
                      "which the new commits need") from None  # fmt: skip
    extra = sorted(q.oids - want)
    if extra:
        raise Refusal("objects", PACK, f"holds {len(extra)} object(s) the new commits do not "
                      f"reach, e.g. {extra[0][:12]}")  # fmt: skip
    if want - q.oids:
        raise Refusal("objects", PACK, "lacks objects the new commits reach")
    count = trees.Counter(q, expected.limits)
    mine = run_ref(expected.run_id)
    for r in refs:
        run = r["ref"] == mine
        commits = trees.history(q, r["ref"], r["old"], r["new"], haves, run=run,
                                base=expected.base)  # fmt: skip
        check = trees.run_trees if run else trees.lane_trees
        check(q, r["ref"], commits, expected.limits, count)
        if run:
            decided = trees.record(q, expected.run_id, r["new"], expected.seq)
            if expected.decisions is not None:
                _decisions(r["ref"], decided, expected.decisions)
    return tuple(RefMove(r["ref"], r["old"], r["new"]) for r in refs)


def _decisions(ref: str, decided: list[trees.Ruling], planned: tuple[trees.Ruling, ...]) -> None:
    """A gate is decided only by a decision the publish job judged itself: a person's, whose
    permission it asked; any other decision in the leg's record is the run job's invention."""
    allowed = list(planned)
    for ruling in decided:
        if ruling not in allowed:
            gate, approve, by = ruling[0][:100], ruling[1], ruling[2][:100]
            verb = "approval" if approve else "rejection"
            raise Refusal("record", ref, f"records an {verb} of gate {gate!r} by {by!r} that "
                          "this job did not judge: a gate is decided by the command the "
                          "publish job admitted")  # fmt: skip
        allowed.remove(ruling)
