"""The holder of a leg: a process as a later one can recognise it — on which machine, which
pid, since when — and whether it still runs."""

from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True)
class Process:
    """A process as a later one can recognise it: on which machine, which pid, since when."""

    host: str  # the host name, for people
    machine: str  # host name, boot and pid namespace: pids compare only when this matches
    pid: int
    started: int  # its start time in clock ticks since boot, so a reused pid is not taken for it


@cache
def machine_key() -> str:
    """This machine as its pids see it: host name, boot id and pid namespace, hashed."""
    parts = [socket.gethostname()]
    try:
        parts.append(Path("/proc/sys/kernel/random/boot_id").read_text().strip())
        parts.append(str(os.stat("/proc/self/ns/pid").st_ino))
    except OSError:
        pass
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _started(pid: int) -> int | None:
    """A live process's start time (clock ticks since boot); 0 without /proc; None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return 0
    fields = stat[stat.rfind(b")") + 2 :].split()  # after "pid (comm) ": state is field 3
    if not fields or fields[0] == b"Z":  # a zombie has ended; only its exit status is left
        return None
    return int(fields[19]) if len(fields) > 19 else 0


def this_process() -> Process:
    """The calling process, as ``alive`` recognises it later."""
    pid = os.getpid()
    return Process(socket.gethostname(), machine_key(), pid, _started(pid) or 0)


def alive(proc: Process) -> bool | None:
    """Whether ``proc`` still runs; None when it ran on another machine (no way to tell)."""
    if proc.machine != machine_key():
        return None
    if not Path("/proc").is_dir():
        try:
            os.kill(proc.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    started = _started(proc.pid)
    return started is not None and (started == proc.started or not proc.started)
