"""The REST client against the loopback stand-in: retries, waits, and no repeated side effects."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from actions.stand_in import Fault, StandIn

from omg.errors import GitHubError, UsageError
from omg.github.client import GitHub, Quiet
from omg.github.env import api_backoff


@pytest.fixture
def api() -> Iterator[StandIn]:
    stand_in = StandIn(permissions={"alice": "admin", "mo": "maintain", "rita": "read"})
    server = stand_in.start()
    yield stand_in
    server.shutdown()


def client(api: StandIn, waits: list[float]) -> GitHub:
    return GitHub(api.url, api.repo, "ghs_unit", sleep=waits.append)


def test_permission_reads_role_names_and_treats_strangers_as_none(api: StandIn) -> None:
    gh = client(api, [])
    assert [gh.permission(u) for u in ("alice", "mo", "rita", "ghost")] == [
        "admin",
        "maintain",
        "read",
        "none",
    ]


def test_a_lost_answer_to_a_post_does_not_post_twice(api: StandIn) -> None:
    waits: list[float] = []
    api.faults = [Fault("POST", "/issues/5/comments", "502-after", times=2)]
    cid = client(api, waits).post_once(5, "<!-- k -->", "<!-- k -->\nhello")
    assert [c["id"] for c in api.comments_on(5)] == [cid]
    assert waits == [1.0]


def test_a_reply_already_posted_is_found_before_posting_again(api: StandIn) -> None:
    """GitHub's "Re-run job" runs the whole job again: its reply must not be posted twice."""
    for i in range(120):  # the first reply is on page 2 of the comments
        api.add_comment(5, f"chatter {i}")
    gh = client(api, [])
    first = gh.post_once(5, "<!-- omg:reply=41 -->", "<!-- omg:reply=41 -->\n@mona refused")
    again = gh.post_once(5, "<!-- omg:reply=41 -->", "<!-- omg:reply=41 -->\n@mona refused")
    other = gh.post_once(5, "<!-- omg:reply=42 -->", "<!-- omg:reply=42 -->\n@mona refused")
    assert first == again != other
    assert len(api.calls("POST", "/issues/5/comments")) == 2
    assert [c["id"] for c in api.comments_on(5)][-2:] == [first, other]


def test_a_quiet_post_waits_for_omgs_last_tagged_comment_to_age(api: StandIn) -> None:
    """Nothing is posted while a comment of omg's (a bot's) carrying the tag is recent; a
    person's comment carrying it, an older one or another tag never holds a post back."""
    gh = client(api, [])
    now = datetime.now(UTC)
    quiet = Quiet("<!-- omg:to=mona -->", now - timedelta(minutes=10))
    api.add_comment(5, "<!-- omg:to=mona -->\nforged", login="mona")
    old = api.add_comment(5, "<!-- r1 -->\n<!-- omg:to=mona -->\n@mona no", "bot[bot]", "Bot")
    old["created_at"] = (now - timedelta(minutes=11)).strftime("%Y-%m-%dT%H:%M:%SZ")
    api.add_comment(5, "<!-- r0 -->\n<!-- omg:to=lisa -->\n@lisa no", "bot[bot]", "Bot")
    first = gh.post_once(5, "<!-- r2 -->", "<!-- r2 -->\n<!-- omg:to=mona -->\nno", quiet=quiet)
    held = gh.post_once(5, "<!-- r3 -->", "<!-- r3 -->\n<!-- omg:to=mona -->\nno", quiet=quiet)
    again = gh.post_once(5, "<!-- r2 -->", "<!-- r2 -->\n<!-- omg:to=mona -->\nno", quiet=quiet)
    assert first is not None and held is None and again == first  # a re-run finds its own
    assert len(api.calls("POST", "/issues/5/comments")) == 1


def test_rate_limits_wait_as_long_as_github_says(api: StandIn) -> None:
    waits: list[float] = []
    api.faults = [Fault("GET", "/pulls/3", "429"), Fault("GET", "/pulls/3", "403-limit")]
    api.set_pull(3, "a" * 40, "topic")
    assert client(api, waits).pull(3).head_sha == "a" * 40
    assert waits == [1.0, 1.0]


def test_a_long_wait_is_refused_rather_than_slept(api: StandIn) -> None:
    gh = GitHub(api.url, api.repo, "t", sleep=lambda s: None, max_wait=0.5)
    api.faults = [Fault("GET", "/pulls/3", "429")]
    with pytest.raises(GitHubError, match="asks to wait 1s"):
        gh.pull(3)


def test_upsert_finds_its_comment_across_pages(api: StandIn) -> None:
    for i in range(130):
        api.add_comment(7, f"chatter {i}")
    gh = client(api, [])
    first = gh.upsert_comment(7, "<!-- sticky -->", "<!-- sticky -->\nv1")
    second = gh.upsert_comment(7, "<!-- sticky -->", "<!-- sticky -->\nv2")
    assert first == second and len(api.comments_on(7)) == 131
    assert api.comments_on(7)[-1]["body"].endswith("v2")


def test_a_comment_that_only_quotes_a_marker_is_not_the_one_it_marks(api: StandIn) -> None:
    other = api.add_comment(
        7, "<!-- omg:sticky pr=7 graph=b -->\n`<!-- omg:sticky pr=7 graph=a -->`"
    )
    gh = client(api, [])
    mine = gh.upsert_comment(
        7, "<!-- omg:sticky pr=7 graph=a -->", "<!-- omg:sticky pr=7 graph=a -->\nv1"
    )
    assert mine != other["id"] and len(api.comments_on(7)) == 2
    assert other["body"].endswith("graph=a -->`")  # the other graph's report is untouched


def test_a_dispatch_whose_answer_was_lost_is_found_by_its_title(api: StandIn) -> None:
    waits: list[float] = []
    api.faults = [Fault("POST", "/dispatches", "502-after")]
    got = client(api, waits).dispatch("omg-resume.yml", "main", {"run-id": "r1"}, title="r1")
    assert len(api.runs) == 1 and got["workflow_run_id"] == str(api.runs[0]["id"])


def test_a_refusal_says_what_the_token_lacks(api: StandIn) -> None:
    with pytest.raises(GitHubError, match=r"HTTP 404 .*not found, or the token cannot see it"):
        client(api, []).pull(99)


def test_every_body_sent_is_masked_by_the_clients_token_and_its_masker(api: StandIn) -> None:
    from omg.mask import Masker

    gh = GitHub(api.url, api.repo, "ghs_unitTokenValue42", mask=Masker.of(["pw-of-a-service"]))
    gh.post_once(5, "<!-- k -->", "<!-- k -->\nsaw ghs_unitTokenValue42 and pw-of-a-service")
    [posted] = api.comments_on(5)
    assert posted["body"] == "<!-- k -->\nsaw *** and ***"
    assert api.requests[-1].authorization == "Bearer ghs_unitTokenValue42"  # the header is not


def test_the_token_is_not_in_the_jobs_repr() -> None:
    from omg.github.env import actions

    env = {"GITHUB_EVENT_NAME": "push", "GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": "ghs_x"}
    job = actions(env)
    assert job.token == "ghs_x" and "ghs_x" not in repr(job)


def test_a_persons_comment_that_starts_with_omgs_marker_is_never_taken_for_omgs(
    api: StandIn,
) -> None:
    sticky = "<!-- omg:sticky pr=7 graph=a -->"
    planted = api.add_comment(7, f"{sticky}\nI am omg now", login="stranger")
    gh = client(api, [])
    mine = gh.upsert_comment(7, sticky, f"{sticky}\nv1")
    assert mine != planted["id"] and planted["body"] == f"{sticky}\nI am omg now"
    assert not api.calls("PATCH")  # the stranger's comment was never edited for them
    assert gh.upsert_comment(7, sticky, f"{sticky}\nv2") == mine  # omg's own is found again
    reply = "<!-- omg:reply=99 -->"
    api.add_comment(7, f"{reply}\nsilence", login="stranger")
    answered = gh.post_once(7, reply, f"{reply}\nanswered")
    assert [c["body"] for c in api.comments_on(7) if c["id"] == answered] == [f"{reply}\nanswered"]


def test_a_server_error_is_retried_after_a_backoff_that_doubles(api: StandIn) -> None:
    api.faults = [Fault("POST", "/issues/5/comments", "502", times=10)]
    for backoff, expected in ((1.0, [1.0, 2.0, 4.0]), (0.25, [0.25, 0.5, 1.0])):
        waits: list[float] = []
        gh = GitHub(api.url, api.repo, "t", backoff=backoff, sleep=waits.append)
        with pytest.raises(GitHubError, match="kept failing"):
            gh.post_once(5, "<!-- k -->", "<!-- k -->\nhello")
        assert waits == expected


@pytest.mark.parametrize(
    ("raw", "seconds"), [(None, 1.0), ("", 1.0), (" 0.01 ", 0.01), ("0", 0.0), ("60", 60.0)]
)
def test_omg_api_backoff_sets_the_first_wait_after_a_server_error(
    raw: str | None, seconds: float
) -> None:
    assert api_backoff({} if raw is None else {"OMG_API_BACKOFF": raw}) == seconds


@pytest.mark.parametrize("raw", ["soon", "-1", "61", "nan", "inf"])
def test_a_backoff_that_is_not_seconds_from_0_to_60_is_refused_naming_it(raw: str) -> None:
    with pytest.raises(UsageError, match=f"OMG_API_BACKOFF={raw!r}.*unset it"):
        api_backoff({"OMG_API_BACKOFF": raw})
