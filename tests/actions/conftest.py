"""Fixtures for the workflow simulation: the REST stand-in and the repository on "GitHub"."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from githttp import serving

from . import openapi
from .kit import READ_TOKEN, TOKEN, Repo
from .stand_in import StandIn


@pytest.fixture
def api() -> Iterator[StandIn]:
    stand_in = StandIn(permissions={"Codertocat": "admin", "octocat": "write", "reader": "read"})
    stand_in.read_only.add(READ_TOKEN)
    server = stand_in.start()
    yield stand_in
    server.shutdown()
    # every request of every simulated job is one GitHub's REST description has
    for r in stand_in.requests:
        openapi.check(r.method, r.path, r.body)


@pytest.fixture
def github(tmp_path: Path, api: StandIn) -> Iterator[Callable[[str], Repo]]:
    """The repository on "GitHub": origin over smart HTTP behind the token, and the API."""
    with serving(tmp_path / "github", TOKEN) as server:
        server.read_token = READ_TOKEN

        def make(graph: str) -> Repo:
            return Repo(tmp_path, api, graph, server, in_process=True)

        yield make
