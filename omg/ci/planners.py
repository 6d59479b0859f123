"""What a trigger asks of omg — pure: the planner of its kind (`pull_request`, `comment`,
`dispatch`, `schedule`), the one match both a leg's job and a publish job plan with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from omg.ci import comment, dispatch, pull_request, schedule
from omg.ci.actions import Action, Skip
from omg.github.event import Comment, Dispatch, Other, PullRequest, Schedule, Trigger

if TYPE_CHECKING:
    from omg.ci.facts import Facts


def plan(trigger: Trigger, facts: Facts) -> Action:
    """What ``trigger`` asks of omg: the planner of its kind."""
    match trigger:
        case PullRequest():
            return pull_request.plan(trigger, facts)
        case Comment():
            return comment.plan(trigger, facts)
        case Dispatch():
            return dispatch.plan(trigger, facts)
        case Schedule():
            return schedule.plan(trigger, facts)
        case Other():
            return Skip(f"omg has nothing to do on a {trigger.name} event", quiet=False)
