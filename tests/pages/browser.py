"""Headless Chromium for the page tests: the binary the npm package @sparticuz/chromium ships
(installed by the README's `npm ci`, unpacked once per checkout from its brotli archives by the
package's own code), driven from Python over the DevTools protocol on a pipe — no port, no
network, no download: open a file, read back its DOM, collect its console errors, screenshot it."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "node_modules" / "@sparticuz" / "chromium"
#: Flags that keep the browser off the network and away from the machine's profile.
FLAGS = (
    "--headless",
    "--no-sandbox",  # tests run as root in containers, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-domain-reliability",
    "--disable-breakpad",
    "--no-pings",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # no name resolves: nothing can be fetched
    "--remote-debugging-pipe",
)
UNPACK = """
const [base] = process.argv.slice(1);
const url = (p) => 'file://' + p;
const { default: chromium } = await import(url(base + '/build/esm/index.js'));
const { inflate } = await import(url(base + '/build/esm/lambdafs.js'));
const exe = await chromium.executablePath();
await inflate(base + '/bin/al2023.tar.br');
console.log(exe);
"""


def version() -> str:
    return str(json.loads((PACKAGE / "package.json").read_text())["version"])


def unpacked() -> Path:
    """The directory holding the unpacked browser, its fonts and the shared libraries the
    package bundles (NSS among them), made once per checkout and version under
    ``node_modules/.cache``; racing test workers wait for the first."""
    assert PACKAGE.is_dir(), "@sparticuz/chromium is a test dependency: run `npm ci`"
    home = ROOT / "node_modules" / ".cache" / f"omg-chromium-{version()}"
    if (home / "chromium").is_file():
        return home
    home.parent.mkdir(parents=True, exist_ok=True)
    with open(home.parent / f"{home.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (home / "chromium").is_file():
            return home
        work = Path(tempfile.mkdtemp(prefix=f"{home.name}.", dir=home.parent))
        node = shutil.which("node")
        assert node, "the browser is unpacked by node.js: install node"
        env = {"PATH": os.environ["PATH"], "HOME": str(work), "TMPDIR": str(work)}
        done = subprocess.run(
            [node, "--input-type=module", "-e", UNPACK, str(PACKAGE)],
            env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert (work / "chromium").is_file() and (work / "al2023" / "lib").is_dir(), done.stdout
        shutil.rmtree(home, ignore_errors=True)
        work.rename(home)
    return home


@dataclass
class Loaded:
    """A page as the browser left it: its DOM, its console errors, its size and a screenshot."""

    dom: str
    errors: list[str]
    width: int
    height: int
    png: bytes
    messages: list[dict[str, Any]] = field(default_factory=list)


def png_size(png: bytes) -> tuple[int, int]:
    """A PNG's width and height, from its header (its signature checked)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR", "not a PNG"
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


class _Pipe:
    """The DevTools protocol on a pipe: JSON messages, each ended by a NUL byte."""

    def __init__(self, out: int, inp: int) -> None:
        self.out, self.inp = out, inp
        self.buf = b""
        self.n = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> int:
        self.n += 1
        msg: dict[str, Any] = {"id": self.n, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.out, data) :]
        return self.n

    def recv(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.inp], [], [], max(0.0, left))
            assert ready, "the browser did not answer in time"
            chunk = os.read(self.inp, 1 << 20)
            assert chunk, "the browser closed its end of the pipe"
            self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        found: dict[str, Any] = json.loads(msg)
        return found

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str = "", wait: float = 60
    ) -> dict[str, Any]:
        deadline = time.monotonic() + wait
        n = self.send(method, params, session)
        while True:
            msg = self.recv(deadline)
            if msg.get("id") == n:
                assert "error" not in msg, f"{method}: {msg['error']}"
                result: dict[str, Any] = msg.get("result", {})
                return result
            self.events.append(msg)

    def until(self, method: str, wait: float = 60) -> None:
        deadline = time.monotonic() + wait
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self.recv(deadline))


FONTS = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>{fonts}</dir>
  <cachedir>{cache}</cachedir>
  <alias><family>sans-serif</family><prefer><family>Open Sans</family></prefer></alias>
  <alias><family>monospace</family><prefer><family>Open Sans</family></prefer></alias>
</fontconfig>
"""


def _fonts(home: Path, scratch: Path) -> Path:
    """A fontconfig file naming only the fonts the package ships (its own file names the
    directories of the cloud function it was made for)."""
    conf = scratch / "fonts.conf"
    conf.write_text(FONTS.format(fonts=home / "fonts" / "fonts", cache=scratch / "fontconfig"))
    return conf


@contextmanager
def browser(scratch: Path) -> Iterator[_Pipe]:
    """A headless Chromium of its own (profile, home and temp under ``scratch``), spoken to on
    a pipe; closed, and its process reaped, on the way out."""
    home = unpacked()
    scratch.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "LD_LIBRARY_PATH": f"{home / 'al2023' / 'lib'}:{home}",  # the package's own NSS
        "FONTCONFIG_FILE": str(_fonts(home, scratch)),  # the package's fonts: the same anywhere
    }
    to_child, from_us = os.pipe()  # the browser reads fd 3
    to_us, from_child = os.pipe()  # and writes fd 4

    def fds() -> None:  # in the child: the pipe's ends as fds 3 and 4, inherited by the exec
        a = fcntl.fcntl(to_child, fcntl.F_DUPFD, 10)  # out of the way of 3 and 4 first
        b = fcntl.fcntl(from_child, fcntl.F_DUPFD, 10)
        os.dup2(a, 3)
        os.dup2(b, 4)

    argv = [str(home / "chromium"), *FLAGS, f"--user-data-dir={scratch / 'profile'}", "about:blank"]
    log = open(scratch / "chromium.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=False,
        preexec_fn=fds, start_new_session=True,
    )  # fmt: skip
    os.close(to_child)
    os.close(from_child)
    pipe = _Pipe(from_us, to_us)
    try:
        yield pipe
        pipe.send("Browser.close")
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
        os.close(from_us)
        os.close(to_us)
        log.close()


def load(page: Path, scratch: Path, *, width: int = 1280, height: int = 800) -> Loaded:
    """Open ``page`` (a file) in a fresh headless Chromium: its DOM once loaded, every console
    error or uncaught exception, its full size, and a screenshot of the whole page."""
    with browser(scratch) as cdp:
        target = cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        sid = cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            cdp.call(f"{domain}.enable", session=sid)
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        cdp.call("Emulation.setDeviceMetricsOverride", metrics, session=sid)
        cdp.call("Page.navigate", {"url": page.resolve().as_uri()}, session=sid)
        cdp.until("Page.loadEventFired")
        got = cdp.call(
            "Runtime.evaluate",
            {"expression": "document.documentElement.outerHTML", "returnByValue": True},
            session=sid,
        )
        dom = str(got["result"]["value"])
        size = cdp.call("Page.getLayoutMetrics", session=sid)["cssContentSize"]
        w, h = int(size["width"]), int(size["height"])
        shot = cdp.call(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True,
             "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}},
            session=sid,
        )  # fmt: skip
        errors = [_said(e) for e in cdp.events if _is_error(e)]
        return Loaded(dom, errors, w, h, base64.b64decode(shot["data"]), list(cdp.events))


def _is_error(e: dict[str, Any]) -> bool:
    method, params = e.get("method"), e.get("params", {})
    if method == "Runtime.exceptionThrown":
        return True
    if method == "Runtime.consoleAPICalled":
        return params.get("type") in ("error", "assert", "warning")
    if method == "Log.entryAdded":
        return params.get("entry", {}).get("level") in ("error", "warning")
    return False


def _said(e: dict[str, Any]) -> str:
    return json.dumps(e.get("params", {}))[:500]
