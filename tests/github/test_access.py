"""Who may decide a gate: bots never, a graph's approvers alone, else confirmed writers."""

from __future__ import annotations

import pytest

from omg.github.access import refusal

TABLE = {"alice": "admin", "bob": "write", "mo": "maintain", "tri": "triage", "rita": "read"}


def asked() -> tuple[list[str], object]:
    calls: list[str] = []

    def permission(login: str) -> str:
        calls.append(login)
        return TABLE.get(login, "none")

    return calls, permission


@pytest.mark.parametrize("login", ["alice", "bob", "mo"])
def test_a_confirmed_writer_may_decide(login: str) -> None:
    calls, permission = asked()
    assert (
        refusal(login, bot=False, association="MEMBER", approvers=(), permission=permission) is None
    )  # type: ignore[arg-type]
    assert calls == [login]


@pytest.mark.parametrize("login", ["tri", "rita", "ghost"])
def test_an_association_that_could_write_is_still_confirmed_by_the_api(login: str) -> None:
    calls, permission = asked()
    why = refusal(login, bot=False, association="COLLABORATOR", approvers=(), permission=permission)  # type: ignore[arg-type]
    assert why is not None and "deciding needs write access" in why and calls == [login]


@pytest.mark.parametrize("association", ["CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "NONE"])
def test_an_outside_association_is_refused_without_asking(association: str) -> None:
    calls, permission = asked()
    why = refusal("alice", bot=False, association=association, approvers=(), permission=permission)  # type: ignore[arg-type]
    assert why is not None and association in why and calls == []


def test_a_bot_never_decides_even_when_listed_or_admin() -> None:
    calls, permission = asked()
    why = refusal(
        "alice", bot=True, association="OWNER", approvers=("alice",), permission=permission
    )  # type: ignore[arg-type]
    assert why is not None and "bot" in why and calls == []


def test_a_graphs_approvers_list_is_the_whole_rule() -> None:
    calls, permission = asked()
    assert (
        refusal("Carol", bot=False, association="NONE", approvers=("carol",), permission=permission)
        is None
    )  # type: ignore[arg-type]
    why = refusal(
        "alice", bot=False, association="OWNER", approvers=("carol",), permission=permission
    )  # type: ignore[arg-type]
    assert why is not None and "approvers (carol)" in why and calls == []


def test_a_dispatch_is_checked_by_github_so_any_listed_or_unlisted_user_passes() -> None:
    calls, permission = asked()
    assert refusal("rita", bot=False, association=None, approvers=(), permission=permission) is None  # type: ignore[arg-type]
    assert calls == []
