"""Progress: one line per node start and finish on stderr, and a live status line on a TTY;
marks coloured on a terminal (never with NO_COLOR), plain text in a file or a CI log."""

from __future__ import annotations

import re
import sys
import threading
import time
from typing import TextIO

from omg.cli.terminal import Paint, Tone, inert, may_redraw
from omg.state import Event, State

_BREAK = re.compile(r"\r\n|\r|\n")


class Progress:
    """Listens to the recorder; prints plain lines (CI) or adds a redrawn status line (TTY)."""

    def __init__(
        self, stream: TextIO | None = None, live: bool | None = None, paint: Paint | None = None
    ) -> None:
        self.stream = stream or sys.stderr
        self.live = may_redraw(self.stream) if live is None else live
        self.paint = Paint.to(self.stream) if paint is None else paint
        self.started: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> Progress:
        if self.live:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._write("\r\033[K")

    def __call__(self, ev: Event, state: State) -> None:
        kind = ev["event"]
        nid = ev.get("node_id", "")
        rnd = f"  round {ev['round']}" if ev.get("round") else ""
        if kind == "node_started":
            self.started[nid] = time.monotonic()
            self._line("▶", "note", nid, f"running…{rnd}")
        elif kind in ("node_passed", "node_failed"):
            took = time.monotonic() - self.started.pop(nid, time.monotonic())
            passed = kind == "node_passed"
            prov = f" ({ev['provenance']})" if ev.get("provenance") else ""
            cost = f"  ${ev.get('cost_usd', 0.0):.4f}" if "cost_usd" in ev else ""
            if ev.get("cost_unknown"):  # never $0.0000 for work whose price is not known
                used = ev.get("usage") or {}
                tokens = int(used.get("input_tokens", 0)) + int(used.get("output_tokens", 0))
                cost = f"  unknown ({tokens} tokens)" if tokens else "  cost unknown"
            detail = f"  {ev['detail']}" if ev.get("detail") else ""
            text = f"{prov}{rnd}{cost}  {took:.1f}s{detail}"
            if passed:
                self._line("✓", "good", nid, text, verdict="PASS")
            else:
                self._line("✗", "bad", nid, text, verdict="FAIL")
        elif kind == "node_retried" and ev.get("reason") == "limit":
            self._line("⏸", "wait", nid, f"{ev.get('limit', '')} limit reached — pausing the run")
        elif kind == "node_retried":
            retry = ev.get("reason") == "retry"
            said = f"retry: {ev.get('cause')}" if retry else str(ev.get("detail"))
            self._line("↻", "wait", nid, said)
        elif kind == "gate_paused":
            self._line("⏸", "wait", nid, "gate paused")
        elif kind == "gate_approved":
            self._line("✓", "good", nid, f"gate approved by {ev.get('by', '?')}")
        elif kind == "gate_rejected":
            said = f"gate rejected by {ev.get('by', '?')}: {ev.get('reason', '')}"
            self._line("✗", "bad", nid, said)

    def _line(self, mark: str, tone: Tone, nid: str, text: str, verdict: str = "") -> None:
        """``<mark> <node>  [<verdict>]<text>``: the mark and verdict coloured (omg's own words);
        the rest one line whatever it holds — the runner reads a log line that starts with `::`
        as a workflow command, so a node's output must never begin a line of its own here —
        and its control characters shown, never sent."""

        def flat(part: str) -> str:
            return inert(_BREAK.sub(" ↵ ", part))

        said = f"{self.paint(verdict, tone)}{flat(text)}" if verdict else flat(text)
        head = "\r\033[K" if self.live else ""
        self._write(f"{head}{self.paint(mark, tone)} {flat(nid)}  {said}\n")

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(text)
            self.stream.flush()

    def _tick(self) -> None:
        frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
        i = 0
        while not self._stop.wait(0.2):
            now = time.monotonic()
            running = ", ".join(f"{n} {now - t:.0f}s" for n, t in list(self.started.items()))
            if running:
                self._write(f"\r\033[K{frames[i % len(frames)]} {running}")
            i += 1
