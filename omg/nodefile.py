"""A node id's on-disk form: the one name its files and refs use (a spliced id's '/' → '+')."""

from __future__ import annotations

#: Stands for the '/' of a spliced id (``loop/review``) in file and ref names. Not a character
#: an id may hold, so the mapping is injective; not '.', so no name can end in ``.exhausted``
#: by accident; valid in a git ref component and a file name.
SEPARATOR = "+"


def on_disk(node_id: str) -> str:
    """``loop/review`` → ``loop+review``; an id without '/' is its own on-disk name."""
    return node_id.replace("/", SEPARATOR)


def from_disk(name: str) -> str:
    """The id an on-disk name stands for (the inverse of ``on_disk``)."""
    return name.replace(SEPARATOR, "/")
