"""The per-day spend cap across runs: two runs racing in two clones of one bare remote keep
one spend book by compare-and-swap — no reservation or settlement lost, the overshoot bounded
by the executions already running — and a book that is not one omg wrote is refused."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pygit2
import pytest
from kit import ScriptedClaude, clean_env, omg_call, spawn_omg

from omg import spendbook
from omg.errors import StateError

CHAIN = """\
name: busy
day_budget_usd: 0.09
nodes:
  - id: a
    prompt: step a
    budget_usd: 0.05
  - id: b
    depends_on: [a]
    prompt: step b
    budget_usd: 0.05
  - id: c
    depends_on: [b]
    prompt: step c
    budget_usd: 0.05
  - id: d
    depends_on: [c]
    prompt: step d
    budget_usd: 0.05
"""
COST = 0.02


def git(cwd: Path, *args: str) -> str:
    env = {**clean_env(), "GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com"}
    env |= {"GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def clone_of(bare: Path, path: Path) -> Path:
    git(bare.parent, "clone", "-q", str(bare), str(path))
    return path


def test_two_runs_racing_in_two_clones_share_one_day_book_without_losing_spend(
    tmp_path: Path,
) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    (seed / "g.yaml").write_text(CHAIN)
    git(seed, "add", ".")
    git(seed, "commit", "-qm", "graph")
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    jobs = []
    for name in ("one", "two"):
        clone = clone_of(bare, tmp_path / name)
        claude = ScriptedClaude(tmp_path / f"claude-{name}")
        claude.replies([{"result": "DONE", "cost": COST, "sleep": 0.4}])
        env = claude.env(
            GIT_AUTHOR_NAME="Dev",
            GIT_AUTHOR_EMAIL="dev@example.com",
            GIT_COMMITTER_NAME="Dev",
            GIT_COMMITTER_EMAIL="dev@example.com",
        )
        argv = ("run", "g.yaml", "--run-id", f"run-{name}", "--push", "origin")
        jobs.append((clone, spawn_omg(*argv, cwd=clone, env=env)))
    codes = []
    for _, proc in jobs:
        out, err = proc.communicate(timeout=120)
        codes.append(proc.returncode)
        assert proc.returncode in (0, 4), out + err
    assert 4 in codes  # the cap stopped at least one of them

    origin = pygit2.Repository(str(bare))
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    ref = f"refs/omg/spend/day/{day}"
    data = bytes(origin.revparse_single(ref).peel(pygit2.Commit).tree["spend.json"].data)
    book = spendbook.parse(data, f"day/{day}", ref)
    entries = list(book["entries"].values())
    assert entries and all(e["settled"] for e in entries)  # every reservation settled
    spent = {}
    for clone, _ in jobs:
        for rid in ("run-one", "run-two"):
            state = clone / ".omg" / "runs" / rid / "state.json"
            if state.exists():
                spent[rid] = json.loads(state.read_text())
    runs = {rid: st["cost_usd"] for rid, st in spent.items()}
    # no lost update: the book holds every execution of both runs, at what it cost
    assert spendbook.spent(book) == pytest.approx(sum(runs.values()))
    assert sorted({e["run"] for e in entries}) == ["run-one", "run-two"]
    assert len(entries) == sum(len(st["nodes"]) for st in spent.values())
    # the overshoot is at most the executions already running (one per leg)
    assert spendbook.spent(book) <= 0.09 + 2 * COST + 1e-9
    capped = [st["legs"][-1]["capped"] for st in spent.values() if st["status"] == "paused"]
    assert capped and all(c["scope"] == "day" and c["key"] == day for c in capped)
    # a wait on the remote for each run the day's cap stopped: the next day's schedule ends it
    waits = sorted(r.removeprefix("refs/omg/waits/") for r in origin.references if "waits/" in r)
    assert waits == sorted(rid for rid, st in spent.items() if st["status"] == "paused")


def _entries(*amounts: str) -> bytes:
    entry = '{"run": "r", "node": "n", "usd": %s, "settled": true, "at": "t"}'
    body = ", ".join(f'"k{i}": ' + entry % usd for i, usd in enumerate(amounts))
    return ('{"scope": "pr/2", "entries": {' + body + "}}").encode()


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"not json", "is not JSON omg wrote"),
        (b'{"scope": "day/2026-01-01", "entries": {}}', "is not the book of pr/2"),
        (b'{"scope": "pr/2"}', "has no entries map"),
        (b"", "is an empty file"),  # never read as $0
        (_entries("NaN"), "NaN is not a number"),
        (_entries("1e999"), "past a float's range"),
        (_entries("1" * 400), "past 64 bits"),
        (_entries("1e308", "1e308"), "its amounts add up past any number"),
        (_entries("-1"), "entry 'k0' is malformed"),
        (b'{"scope": "pr/2", "entries": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested"),
    ],
)
def test_a_book_omg_did_not_write_is_refused_naming_its_ref(data: bytes, says: str) -> None:
    with pytest.raises(StateError, match=r"spend book refs/omg/spend/pr/2\b.*git log") as caught:
        spendbook.parse(data, "pr/2", "refs/omg/spend/pr/2")
    assert says in str(caught.value)
    assert "git update-ref refs/omg/spend/pr/2 <commit>" in str(caught.value)  # kept here alone


def test_no_amount_past_any_number_goes_into_a_book() -> None:
    book = spendbook.reserve(spendbook.empty("pr/2"), "k", "r", "a", 0.5, "t")
    for usd in (float("inf"), float("nan")):
        with pytest.raises(StateError, match="cannot be booked"):
            spendbook.settle(book, "k", usd)
        with pytest.raises(StateError, match="cannot be booked"):
            spendbook.reserve(book, "k2", "r", "a", usd, "t")


def test_a_reservation_settles_at_its_cost_or_stands_when_the_cost_is_unknown() -> None:
    book = spendbook.reserve(spendbook.empty("pr/2"), "k", "r", "a", 0.5, "t")
    assert spendbook.spent(book) == 0.5
    assert spendbook.spent(spendbook.settle(book, "k", 0.2)) == 0.2
    assert spendbook.spent(spendbook.settle(book, "k", None)) == 0.5
    assert spendbook.spent(spendbook.release(book, "k")) == 0.0


# -- a book that cannot be read is refused, never read as $0 ------------------------------------

ONE_AGENT = """\
name: capped
day_budget_usd: 5
nodes:
  - id: impl
    prompt: Implement it.
    budget_usd: 1
"""


def _book_tree(repo: pygit2.Repository, form: str) -> pygit2.Oid:
    """A tree as a hand with push access might leave a spend book: ``form`` says how."""
    from pygit2.enums import FileMode

    builder = repo.TreeBuilder()
    if form == "no spend.json":
        builder.insert("notes.txt", repo.create_blob(b"hello\n"), FileMode.BLOB)
    elif form == "an empty spend.json":
        builder.insert("spend.json", repo.create_blob(b""), FileMode.BLOB)
    elif form == "spend.json a directory":
        inner = repo.TreeBuilder()
        inner.insert("entries", repo.create_blob(b"{}"), FileMode.BLOB)
        builder.insert("spend.json", inner.write(), FileMode.TREE)
    elif form == "spend.json a submodule":
        builder.insert("spend.json", pygit2.Oid(hex="1" * 40), FileMode.COMMIT)
    elif form == "spend.json over the size limit":
        big = b'{"scope": "x", "entries": {}}' + b" " * spendbook.LIMIT
        builder.insert("spend.json", repo.create_blob(big), FileMode.BLOB)
    else:  # the amounts of two entries add up past any number; one amount has 400 digits
        amounts = ["1e308", "1e308"] if form == "amounts summing past any number" else ["1" * 400]
        entries = ", ".join(
            f'"k{i}": {{"run": "r0", "node": "n", "usd": {usd}, "settled": true, "at": "t"}}'
            for i, usd in enumerate(amounts)
        )
        text = f'{{"scope": "day/{_today()}", "entries": {{{entries}}}}}'
        builder.insert("spend.json", repo.create_blob(text.encode()), FileMode.BLOB)
    return builder.write()


def _today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


DAMAGED_BOOKS = [
    "no spend.json",
    "an empty spend.json",
    "spend.json a directory",
    "spend.json a submodule",
    "spend.json over the size limit",
    "amounts summing past any number",
    "an amount of 400 digits",
]


@pytest.mark.parametrize("form", DAMAGED_BOOKS)
def test_a_damaged_day_book_on_the_remote_is_refused_and_no_agent_runs(
    tmp_path: Path, form: str
) -> None:
    from .helpers import bare_origin, child_env, git_checkout

    work = git_checkout(tmp_path / "work", {"g.yaml": ONE_AGENT})
    bare = tmp_path / "origin.git"
    bare_origin(work, bare)
    origin = pygit2.Repository(str(bare))
    sig = pygit2.Signature("Someone", "someone@example.com")
    ref = f"refs/omg/spend/day/{_today()}"
    origin.references.create(
        ref, origin.create_commit(None, sig, sig, "by hand", _book_tree(origin, form), [])
    )
    claude = ScriptedClaude(tmp_path / "claude")
    env = child_env(OMG_CLAUDE_BIN=str(claude.bin))
    res = omg_call("run", "g.yaml", "--run-id", "r", "--push", "origin", cwd=work, env=env)
    assert res.returncode == 3, res.stdout + res.stderr
    said = " ".join(res.stderr.split())
    assert "Traceback" not in said and "Infinity" not in said
    assert f"spend book {ref} on origin" in said, said
    assert f"git push --force origin <commit>:{ref}" in said  # how to restore it
    assert claude.calls() == []  # never an agent node against a book that cannot be read
    assert not (work / ".omg" / "runs" / "r" / "events.jsonl").exists()  # nor a byte recorded


@pytest.mark.parametrize(
    ("events", "booked"),
    [
        (
            [{"event": "node_passed", "seq": 4, "node_id": "a", "cost_usd": 0.2}],
            [("r:a:4", "a", 0.2)],
        ),
        # a retry's spend and the final one are each booked; an unknown cost books the node's
        # budget_usd (its reservation stands), or what was reported when that is more
        (
            [
                {"event": "node_retried", "seq": 5, "node_id": "a", "cost_usd": 0.1},
                {"event": "node_failed", "seq": 6, "node_id": "a", "cost_unknown": True},
                {
                    "event": "node_passed",
                    "seq": 7,
                    "node_id": "b",
                    "cost_usd": 2.0,
                    "cost_unknown": True,
                },
            ],
            [("r:a:5", "a", 0.1), ("r:a:6", "a", 1.0), ("r:b:7", "b", 2.0)],
        ),
        # nothing spent, or no execution: nothing booked
        ([{"event": "node_passed", "seq": 8, "node_id": "s", "cost_usd": 0.0}], []),
        ([{"event": "run_started", "seq": 1, "cost_usd": 5.0}], []),
        ([{"event": "node_passed", "seq": 9, "node_id": "a", "cost_usd": "5"}], []),
    ],
)
def test_a_record_books_each_spend_it_carries_keyed_by_its_seq(
    events: list[dict[str, object]], booked: list[spendbook.Spent]
) -> None:
    assert spendbook.recorded("r", events, {"a": 1.0, "b": 0.5}) == booked
