#!/usr/bin/env python3
"""A stand-in for the claude CLI, copied into a test's tmp dir as an executable.

Beside itself it reads ``script.json`` (what to do) and appends to ``calls.json`` (what it
saw: argv, environment, cwd, and the pid of any grandchild it started). Script keys, all
optional: ``envelope`` (an object printed as one JSON line), ``stdout``, ``stderr``,
``exit``, ``grandchild`` (start a ``sleep 300`` in the same process group), ``detached``
(one in a session of its own, as claude's Bash tool does), ``sleep``.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

if sys.argv[1:] == ["--version"]:  # omg asks once per binary, before the node's session
    print("2.1.332 (Claude Code)")
    sys.exit(0)

here = Path(sys.argv[0]).resolve().parent
script_path = here / "script.json"
script = json.loads(script_path.read_text()) if script_path.exists() else {}

call = {
    "argv": sys.argv[1:],
    "env": dict(os.environ),
    "cwd": os.getcwd(),
    "stdin": sys.stdin.read(),
}
if script.get("grandchild"):
    child = subprocess.Popen(["sleep", "300"])
    call["grandchild_pid"] = child.pid
if script.get("detached"):  # as claude runs a Bash tool: in a session of its own
    child = subprocess.Popen(["sleep", "300"], start_new_session=True)
    call["detached_pid"] = child.pid
calls_path = here / "calls.json"
calls = json.loads(calls_path.read_text()) if calls_path.exists() else []
calls.append(call)
calls_path.write_text(json.dumps(calls))

if "stderr" in script:
    sys.stderr.write(script["stderr"])
    sys.stderr.flush()
if "stdout" in script:
    sys.stdout.write(script["stdout"])
if "envelope" in script:
    sys.stdout.write(json.dumps(script["envelope"]) + "\n")
sys.stdout.flush()
if script.get("sleep"):
    time.sleep(float(script["sleep"]))
sys.exit(int(script.get("exit", 0)))
