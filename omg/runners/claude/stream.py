"""What claude's stream-json output says while it runs: the API retries it reports, and when
they are hopeless enough to stop the session."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Retries:
    count: int = 0
    statuses: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return self.count > 0

    def describe(self) -> str:
        shown = sorted(set(self.statuses))
        what = "retry" if self.count == 1 else "retries"
        return f"{self.count} API {what} (HTTP {', '.join(map(str, shown)) or '?'})"


def api_retries(stdout: str) -> Retries:
    """The ``system/api_retry`` events of a stream-json transcript."""
    count, statuses = 0, []
    for line in stdout.splitlines():
        if '"api_retry"' not in line:
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict) and ev.get("subtype") == "api_retry":
            count += 1
            if isinstance(ev.get("error_status"), int):
                statuses.append(int(ev["error_status"]))
    return Retries(count, tuple(statuses))


#: API refusals of the credentials after which omg stops a session: the CLI retries a 401 ten
#: times with backoff (minutes), yet a key it was refused twice will not start working.
AUTH_RETRIES = 2


class AuthRetries:
    """A ``give_up`` watch on claude's stream: a reason once the API has refused the session's
    credentials ``AUTH_RETRIES`` times (``system/api_retry`` with status 401 or 403)."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def __call__(self, line: str) -> str | None:
        if '"api_retry"' not in line:
            return None
        try:
            ev = json.loads(line)
        except ValueError:
            return None
        if isinstance(ev, dict) and ev.get("error_status") in (401, 403):
            self.seen.append(int(ev["error_status"]))
        if len(self.seen) < AUTH_RETRIES:
            return None
        return f"the API refused the credentials {len(self.seen)} times (HTTP {self.seen[-1]})"
