"""A CI job's hold on a run: fetched from the remote and verified, its commits attached (a PR
run's lanes based at the head it judges), and notes written under its snapshot's mask."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from omg.errors import StateError, Unreadable, UsageError
from omg.leg.run import Run, open_run
from omg.records import PullRequestRecord
from omg.state.events import EventFields, EventKind
from omg.state.recorder import Recorder
from omg.state.runid import check_run_id, pr_run_id
from omg.state.store import RunDir, catch_up, load_run

if TYPE_CHECKING:  # the leg's machinery is imported when a leg runs
    from omg.ci.handoff.manifest import Note, NoteEvent
    from omg.ci.prgraph import Base, PrGraph
    from omg.git.repo import RunRepo
    from omg.leg.commits import RunCommits
    from omg.leg.start import Environment
    from omg.state import State


class JobRuns:
    """The runs one job touches, on remote ``push``, kept under ``runs_dir``."""

    def __init__(
        self,
        runs_dir: Path,
        push: str,
        inputs: Mapping[str, str],
        tokens: Sequence[tuple[str, str, str | None]],
        warn: Callable[[str], None],
    ) -> None:
        self.runs_dir = runs_dir
        self.push = push
        self.inputs = inputs
        self.tokens = list(tokens)
        self.warn = warn
        #: the run job of a leg split in two: the remote is read, never written — the leg's
        #: commits stay here and its notes are kept (``noted``) for the hand-off
        self.hand_off = False
        self.noted: dict[str, list[Note]] = {}  # run id → its notes, in order

    @property
    def pushes_to(self) -> str | None:
        """The remote a leg pushes to: none in the run job of a leg split in two."""
        return None if self.hand_off else self.push

    def environment(self, run_id: str, run: Run | None = None) -> Environment:
        """A leg's environment for run ``run_id`` (``run``: as the caller opened it, if it did;
        else its state.json, if any, is read here once)."""
        from omg.leg.commits import attach
        from omg.leg.start import Environment

        env = Environment(
            runs_dir=self.runs_dir, root=Path.cwd(), warn=self.warn, inputs=self.inputs
        )
        tokens = self.tokens
        env.commits = attach(
            env.root, run_id, push=self.pushes_to, base="HEAD", warn=self.warn, tokens=tokens
        )
        if env.commits is None:
            raise UsageError(f"{env.root} is not a git checkout; run actions/checkout first")
        if self.hand_off:  # the caps read the remote's books; the publish job writes them
            env.commits.books_from = self.push
        if run is None and (self.runs_dir / run_id / "state.json").exists():
            run = open_run(self.runs_dir, run_id)
        pr = run.state.get("pull_request") if run is not None else None
        env.commits.workspace.base = self.pr_base(env.commits.repo, pr)
        return env

    def pr_base(self, repo: RunRepo, pr: PullRequestRecord | None) -> str:
        """Where new lanes of a PR run start: the head it judges, never the checkout (the base
        the PR targets, or the default branch a comment or dispatch leg runs on).

        The head is fetched by its id (else ``refs/pull/<n>/head``) when the clone lacks it;
        a head that cannot be had is refused, since any other commit would be judged in its
        place."""
        if pr is None:
            return "HEAD"
        sha, n = pr["head_sha"], pr["number"]
        if not repo.fetch_commit(self.push, sha, f"refs/pull/{n}/head"):
            raise StateError(
                f"PR #{n}'s head {sha[:12]} cannot be fetched from {self.push}; nothing ran "
                "(a newer push starts a run of its own head)"
            )
        return sha

    def pr_graph(self, pr: Base, graph: Path) -> PrGraph:
        """The graph that judges pull request ``pr``: ``graph`` as the base commit has it, and
        the PR's change to it (``ci/prgraph``); both commits fetched when the clone lacks them."""
        from omg.ci.prgraph import in_repo, load
        from omg.git.repo import open_repo

        repo = open_repo(Path.cwd(), tokens=self.tokens)
        if repo is None:
            raise UsageError(f"{Path.cwd()} is not a git checkout; run actions/checkout first")
        return load(repo, self.push, pr, in_repo(repo, graph, Path.cwd()))

    def pr_runs(self, number: int, graph_name: str) -> list[str]:
        """The runs the remote holds of pull request ``number`` judged by ``graph_name``, one
        per head it judged (``pr-<n>-<graph>-<head7>``)."""
        from omg.git.repo import open_repo

        repo = open_repo(Path.cwd(), tokens=self.tokens)
        if repo is None:
            raise UsageError(f"{Path.cwd()} is not a git checkout; run actions/checkout first")
        prefix = pr_run_id(number, graph_name, "0" * 7)[:-7]
        mine = re.compile(re.escape(prefix) + "[0-9a-f]{7}")
        return [rid for rid in repo.fetch_runs(self.push, prefix) if mine.fullmatch(rid)]

    def fetch(self, run_id: str, *, replace: bool = False) -> bool:
        """The run from the remote into the runs directory, its whole record verified, so a
        damaged one is refused before this job decides anything on it; ``replace`` after a
        lost race. Every run id a job acts on comes through here, and is checked first."""
        from omg.leg.commits import fetch_run
        from omg.state.store import load_run

        rundir = self.runs_dir / check_run_id(run_id)
        found = fetch_run(
            Path.cwd(),
            rundir,
            run_id,
            self.push,
            warn=self.warn,
            tokens=self.tokens,
            missing_ok=True,
            replace=replace,
        )
        if found:
            load_run(RunDir(rundir))
        return found

    def waits(self) -> dict[str, bytes | Unreadable]:
        """Every run the remote records as waiting (a provider's limit, a day's spend cap):
        run id → its ``wait.json``."""
        from omg.git.repo import open_repo

        repo = open_repo(Path.cwd(), tokens=self.tokens)
        if repo is None:
            raise UsageError(f"{Path.cwd()} is not a git checkout; run actions/checkout first")
        return repo.waits(self.push)

    def drop_wait(self, run_id: str) -> None:
        """Clear run ``run_id``'s wait on the remote (it waits for nothing any more); the run
        job of a leg split in two leaves it to the publish job, which plans the same."""
        from omg.git.repo import open_repo

        if self.hand_off:
            return
        repo = open_repo(Path.cwd(), tokens=self.tokens)
        if repo is not None:
            repo.drop_wait(self.push, run_id)

    def note(self, rid: str, kind: EventKind, fields: EventFields, what: str, note_id: str) -> bool:
        """Record a note about run ``rid`` on a ref of its own (never on the run branch, so a
        leg running now keeps its work); False when that note is on record already."""
        from omg.leg.notes import note

        if self.hand_off:
            noted = self.noted.setdefault(rid, [])
            if any(n["id"] == note_id for n in noted):
                return False
            noted.append({"id": note_id, "event": note_event(kind), "fields": dict(fields)})
            return True
        return note(rid, self.masked(rid), self.commits(rid), kind, fields, note_id, what)

    def on_branch(
        self, rid: str, kind: EventKind, fields: EventFields, note_id: str, what: str
    ) -> State:
        """Record a note about run ``rid`` straight on its run branch, under the
        compare-and-swap a leg commits by (MovedOn when a leg advanced it): for a run no leg is
        running, whose record must say so at once — a superseded run, which no leg runs again
        to fold a note in."""
        rundir, commits = self.masked(rid), self.commits(rid)
        rundir.lock()
        try:
            state, last = load_run(rundir)
            catch_up(rundir, state)
            rec = Recorder(rundir, state, leg=max(1, len(state["legs"])), last_seq=last)
            commits.before_leg(rec)
            rec.emit(kind, {**fields, "note": note_id})
            rec.flush()
            commits.noted(rec, what)
            return rec.state
        finally:
            rundir.close()

    def masked(self, rid: str) -> RunDir:
        """Run ``rid``'s directory with the masker of its graph snapshot, for writing a note."""
        from omg.leg.start import Environment, snapshot_mask

        run = open_run(self.runs_dir, rid)
        env = Environment(runs_dir=self.runs_dir, root=Path.cwd(), inputs=self.inputs)
        run.rundir.mask = snapshot_mask(env, run.state["graph"])
        return run.rundir

    def commits(self, rid: str) -> RunCommits:
        """The run's commits for a note: no lane is made, so the PR head is not fetched."""
        from omg.leg.commits import attach

        tokens = self.tokens
        found = attach(
            Path.cwd(), rid, push=self.pushes_to, base="HEAD", warn=self.warn, tokens=tokens
        )
        if found is None:
            raise UsageError(f"{Path.cwd()} is not a git checkout; run actions/checkout first")
        return found


def note_event(kind: EventKind) -> NoteEvent:
    """``kind`` as a note a hand-off may carry; a UsageError for any other."""
    if kind == "leg_dispatched" or kind == "decision_refused" or kind == "run_superseded":
        return kind
    raise UsageError(f"a {kind} note cannot be handed off; run this leg in one job")
