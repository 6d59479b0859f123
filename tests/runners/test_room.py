"""Rooms: made empty for one execution, gone with all they hold when it ends (read-only
directories too), the rooms a killed leg left cleared by the next, and nothing of another's
base ever used."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from omg.runners.registry import agents
from omg.runners.room import Rooms, carry


def test_a_room_holds_an_empty_home_and_tmpdir_and_goes_with_the_block(tmp_path: Path) -> None:
    rooms = Rooms.of_run("r1@abc", {"TMPDIR": str(tmp_path)})
    with rooms.room() as room:
        env = room.env({"HOME": "/home/u", "TMPDIR": "/tmp", "KEEP": "x"})
        assert env == {"HOME": str(room.home), "TMPDIR": str(room.tmp), "KEEP": "x"}
        assert sorted(p.name for p in room.path.iterdir()) == ["home", "tmp"]
        assert stat.S_IMODE(room.path.stat().st_mode) == 0o700
        cache = room.home / "go" / "pkg" / "mod"
        cache.mkdir(parents=True)
        (cache / "f").write_text("x")
        cache.chmod(0o500)  # a Go module cache is read-only
        (room.tmp / "link").symlink_to(tmp_path / "outside")
    assert not room.path.exists()
    assert list(rooms.base.iterdir()) == []


def test_rooms_left_behind_are_new_and_empty_each_and_all_gone_once_cleared(
    tmp_path: Path,
) -> None:
    """A shell execution's room is removed behind it (the next node does not wait): still
    never given to another execution, and none of them, nor the sweeper, outlives ``clear``."""
    rooms = Rooms.of_run("r1@abc", {"TMPDIR": str(tmp_path)}, gitconfig="[user]\n")
    made = []
    for _ in range(20):
        with rooms.room(behind=True) as room:
            assert sorted(p.name for p in room.home.iterdir()) == [".gitconfig"]
            assert list(room.tmp.iterdir()) == []
            (room.home / ".bashrc").write_text("echo planted")
            (room.tmp / "secret").write_text("s")
            made.append(room.path)
    assert len(set(made)) == 20
    rooms.clear()
    assert not rooms.base.exists() and not any(p.exists() for p in made)
    assert "omg-rooms" not in {t.name for t in threading.enumerate()}
    with rooms.room(behind=True) as room:  # a cleared run's rooms are made again as before
        assert sorted(p.name for p in room.home.iterdir()) == [".gitconfig"]
    rooms.clear()
    assert not rooms.base.exists()


def test_a_room_goes_when_the_execution_raises(tmp_path: Path) -> None:
    rooms = Rooms.of_run("r1@abc", {"TMPDIR": str(tmp_path)})
    with pytest.raises(RuntimeError), rooms.room() as room:
        raise RuntimeError("the runner failed")
    assert not room.path.exists()


def test_two_executions_never_share_a_room_and_two_runs_never_share_a_base(
    tmp_path: Path,
) -> None:
    env = {"TMPDIR": str(tmp_path)}
    one, other = Rooms.of_run("r1@abc", env), Rooms.of_run("r1@def", env)
    assert one.base != other.base and one.base.parent == tmp_path.resolve()
    with one.room() as a, one.room() as b:
        assert a.path != b.path and a.path.parent == b.path.parent == one.base


def test_the_next_leg_clears_what_a_killed_leg_left(tmp_path: Path) -> None:
    rooms = Rooms.of_run("r1@abc", {"TMPDIR": str(tmp_path)})
    left = rooms.base / "killed" / "claude" / "projects"
    left.mkdir(parents=True)
    (left / "s.jsonl").write_text("a prompt with a secret")
    rooms.clear()
    assert not rooms.base.exists()
    rooms.clear()  # nothing there: nothing to do


def test_a_base_that_is_a_link_or_open_to_others_is_never_used(tmp_path: Path) -> None:
    rooms = Rooms.of_run("r1@abc", {"TMPDIR": str(tmp_path)})
    elsewhere = tmp_path / "someone-elses"
    elsewhere.mkdir()
    rooms.base.symlink_to(elsewhere)
    with rooms.room() as room:
        assert elsewhere not in room.path.parents and rooms.base not in room.path.parents
    rooms.base.unlink()
    rooms.base.mkdir(mode=0o777)
    os.chmod(rooms.base, 0o777)
    with rooms.room() as room:
        assert rooms.base not in room.path.parents
    assert list(elsewhere.iterdir()) == [] and list(rooms.base.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [rooms.base.name, "someone-elses"]


def test_carry_copies_a_regular_file_for_its_owner_alone_and_never_follows_a_link(
    tmp_path: Path,
) -> None:
    source = tmp_path / "login.json"
    source.write_text('{"token": "t"}')
    assert carry(source, tmp_path / "copy")
    assert (tmp_path / "copy").read_text() == '{"token": "t"}'
    assert stat.S_IMODE((tmp_path / "copy").stat().st_mode) == 0o600
    (tmp_path / "link").symlink_to(source)
    assert not carry(tmp_path / "link", tmp_path / "copy2")
    assert not carry(tmp_path / "missing", tmp_path / "copy3")
    assert not (tmp_path / "copy2").exists() and not (tmp_path / "copy3").exists()


@pytest.mark.parametrize("runtime", ["claude", "codex"])
def test_an_agent_runtime_moves_its_configuration_home_into_the_room(
    runtime: str, tmp_path: Path
) -> None:
    """Only the room's: the user's home and the user's configuration home are not used, and
    a stored login is carried in only when no key variable authenticates the CLI."""
    runner = agents()[runtime]
    [var] = runner.room_env
    users = tmp_path / "users"
    users.mkdir()
    login = {"claude": ".credentials.json", "codex": "auth.json"}[runtime]
    (users / login).write_text("{}")
    (users / "settings.json").write_text("{}")
    (users / "config.toml").write_text("notify = ['x']")
    key = {"claude": "ANTHROPIC_API_KEY", "codex": "OPENAI_API_KEY"}[runtime]
    rooms = Rooms.of_run("r1@abc", {"TMPDIR": str(tmp_path)})
    with rooms.room() as room:
        env = runner.furnish(room, {"HOME": "/home/u", var: str(users)})
        home = Path(env[var])
        assert home.parent == room.path and home.is_dir()
        assert sorted(p.name for p in home.iterdir()) == [login]  # nothing else of the user's
    with rooms.room() as room:
        env = runner.furnish(room, {"HOME": "/home/u", var: str(users), key: "k"})
        assert list(Path(env[var]).iterdir()) == []  # a key: no login carried


@pytest.mark.parametrize("swapped", ["home", "tmp"])
def test_a_room_whose_home_or_tmpdir_became_a_link_is_removed_without_following_it(
    tmp_path: Path, swapped: str
) -> None:
    """A node may swap its HOME or TMPDIR for a link to the user's own files: removing the
    room removes the link, never what it points at."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".gitconfig").write_text("the user's own")
    rooms = Rooms.of_run("r1@abc", {"TMPDIR": str(tmp_path)}, gitconfig="[user]\n")
    for behind in (False, True):
        with rooms.room(behind=behind) as room:
            target = room.path / swapped
            for entry in target.iterdir():
                entry.unlink()
            target.rmdir()
            target.symlink_to(outside)
        rooms.clear()
        assert not room.path.exists()
        assert (outside / ".gitconfig").read_text() == "the user's own"


def test_a_room_holding_more_than_it_was_made_with_is_removed_whole(tmp_path: Path) -> None:
    rooms = Rooms.of_run("r1@abc", {"TMPDIR": str(tmp_path)}, gitconfig="[user]\n")
    for extra in ("home/.bashrc", "tmp/x/y", "home/.gitconfig.d/z", "left"):
        with rooms.room(behind=True) as room:
            where = room.path / extra
            if extra == "home/.gitconfig.d/z":
                (room.home / ".gitconfig").unlink()
                (room.home / ".gitconfig").mkdir()  # a directory by that name, not a file
                where = room.home / ".gitconfig" / "z"
            where.parent.mkdir(parents=True, exist_ok=True)
            where.write_text("x")
        rooms.clear()
        assert not room.path.exists()
