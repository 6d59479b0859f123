"""A leg's live progress on GitHub: a recorder listener that updates the sticky comment and the
commit status as nodes start and settle, throttled by ``ci/pace``; the leg's end is reported
by ``ci/reporting``."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from omg.ci import pace
from omg.ci.report_md import Links, Situation, comment, marker
from omg.errors import GitHubError, GitHubForbidden
from omg.github.client import GitHub
from omg.github.commitstatus import changing, clip, context
from omg.graph.model import Graph
from omg.mask import Masker
from omg.state import Event, State

if TYPE_CHECKING:
    from omg.ci.context import Say


def _unsaid(message: str) -> None:
    """No log: a LiveReport given no printer says nothing."""


@dataclass
class LiveReport:
    """Watches one leg's recorder (the one-way flow: events in, REST calls out, nothing back);
    best effort — a GitHub failure stops the live updates, never the leg."""

    api: GitHub
    graph: Graph
    head: str  # the judged head ('' when the run judges none: no status)
    number: int | None  # the PR ('' : no comment)
    links: Links
    mask: Masker
    events: list[Event]  # the run's events so far; the leg's are appended as they land
    leg: int
    interval: float = pace.INTERVAL
    clock: Callable[[], float] = time.monotonic
    say: Say = _unsaid  # the job's log, where a failure that stops the updates is said
    started: dict[str, float] = field(default_factory=dict)
    sent: int = 0  # updates published
    held: int = 0  # updates the throttle held back
    comment_id: int | None = None
    broken: bool = False

    def __post_init__(self) -> None:
        self.last = self.clock()  # the leg's start set the status just now

    def __call__(self, ev: Event, state: State) -> None:
        self.events.append(ev)
        kind, nid = ev["event"], ev.get("node_id", "")
        now = self.clock()
        if kind == "node_started":
            self.started[nid] = now
        elif kind in ("node_passed", "node_failed"):
            self.started.pop(nid, None)
        node_kind = self.graph.node(nid).kind if nid in self.graph.by_id else ""
        if self.broken or not pace.worth_showing(kind, node_kind):
            return
        if not pace.due(now, self.last, self.interval):
            self.held += 1
            return
        self.last = now
        try:
            self.publish(state, now)
        except GitHubError as exc:
            self.broken = True
            self.say(f"omg: live progress stopped (the leg goes on): {exc}")

    def publish(self, state: State, now: float) -> None:
        running = pace.running_line(self.started, now)
        settled = sum(1 for rec in state["nodes"].values() if rec.get("verdict"))
        note = f"running: {running}" if running else ""
        if self.number is not None:
            sit = Situation("running", head_sha=self.head, note=note)
            body = self.mask.text(
                comment(self.graph, state, self.events, sit, self.links, self.number)
            )
            if self.comment_id is None:
                self.comment_id = self.api.upsert_comment(
                    self.number, marker(self.number, self.graph.name), body
                )
            else:
                self.api.update_comment(self.comment_id, body)
        if self.head:
            text = clip(f"running leg {self.leg}: {running or 'between nodes'}; {settled} settled")
            if "graph_change" in state.get("pull_request", {}):
                text = changing(text)
            # no `statuses: write`: the leg's summary says so, and the comment goes on (the
            # client asks GitHub no more this job)
            with suppress(GitHubForbidden):
                self.api.set_status(
                    self.head,
                    context(self.graph.name),
                    "pending",
                    clip(self.mask.text(text)),
                    self.links.workflow_run,
                )
        self.sent += 1
