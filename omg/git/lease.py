"""The lease ref's file: ``lease.json``, committed in a chain on a ref of its own.

Each renewal is a child of the commit it replaces (``onefile``), so pushing it is a
fast-forward of exactly the value read: a compare-and-swap on the remote, as for the run
branch, and never a force.
"""

from __future__ import annotations

FILE = "lease.json"
#: Bytes of a lease read from a remote; anything longer is not a lease omg wrote.
LIMIT = 16 << 10
