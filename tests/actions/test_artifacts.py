"""The simulation's artifact store behaves like GitHub's: per workflow run, uploaded and
downloaded by name, a name used twice in a run refused, a size limit; and the REST endpoints
that list a run's artifacts and download one (a redirect to the archive) answer as GitHub's
description says."""

from __future__ import annotations

import io
import json
import os
import urllib.request
import zipfile
from pathlib import Path

import pytest

from .stand_in import ArtifactRefused, StandIn


def _handoff(where: Path) -> Path:
    where.mkdir()
    (where / "manifest.json").write_text('{"format": 1}\n')
    (where / "objects.pack").write_bytes(b"PACK" + os.urandom(10_000))
    return where


def _get(api: StandIn, path: str) -> tuple[int, bytes, str]:
    req = urllib.request.Request(api.url + path, headers={"Authorization": "token x"})
    with urllib.request.urlopen(req, timeout=10) as res:
        return res.status, res.read(), res.url


def test_an_artifact_goes_up_and_comes_down_by_name_in_its_run(
    api: StandIn, tmp_path: Path
) -> None:
    src = _handoff(tmp_path / "up")
    api.upload(101, "omg-handoff-r1-leg1", src)
    api.download(101, "omg-handoff-r1-leg1", tmp_path / "down")
    for name in ("manifest.json", "objects.pack"):
        assert (tmp_path / "down" / name).read_bytes() == (src / name).read_bytes()
    with pytest.raises(KeyError):
        api.download(102, "omg-handoff-r1-leg1", tmp_path / "other")  # another run's


def test_a_name_used_twice_in_a_run_is_refused_and_the_first_kept(
    api: StandIn, tmp_path: Path
) -> None:
    src = _handoff(tmp_path / "up")
    first = api.upload(101, "omg-handoff-r1-leg1", src)
    (src / "manifest.json").write_text("forged\n")
    with pytest.raises(ArtifactRefused, match="already exists"):
        api.upload(101, "omg-handoff-r1-leg1", src)
    assert api.artifacts[101] == [first]
    api.upload(102, "omg-handoff-r1-leg1", src)  # another run may use the name


def test_an_artifact_past_the_limit_is_refused(api: StandIn, tmp_path: Path) -> None:
    api.artifact_limit = 1000
    with pytest.raises(ArtifactRefused, match="over the limit"):
        api.upload(101, "big", _handoff(tmp_path / "up"))
    assert api.artifacts == {}


def test_the_rest_api_lists_a_runs_artifacts_and_downloads_one(
    api: StandIn, tmp_path: Path
) -> None:
    src = _handoff(tmp_path / "up")
    made = api.upload(101, "omg-handoff-r1-leg1", src)
    api.upload(101, "other", src)
    api.upload(102, "omg-handoff-r1-leg1", src)
    repo = f"/repos/{api.repo}/actions"
    status, body, _ = _get(api, f"{repo}/runs/101/artifacts?name=omg-handoff-r1-leg1")
    listed = json.loads(body)
    assert status == 200 and listed["total_count"] == 1
    (one,) = listed["artifacts"]
    assert (one["id"], one["workflow_run"]["id"]) == (made["id"], 101)
    status, data, url = _get(api, one["archive_download_url"].removeprefix(api.url))
    assert status == 200 and "/_blob/" in url  # followed GitHub's redirect to the archive
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.read("objects.pack") == (src / "objects.pack").read_bytes()
    assert json.loads(_get(api, f"{repo}/runs/101/artifacts")[1])["total_count"] == 2
