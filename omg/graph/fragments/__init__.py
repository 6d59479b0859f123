"""The fragment splice: ``use: NAME`` / ``with:`` spliced into a graph's parsed data before any
check runs, positions kept per file.

``splice`` (``splice``: the two forms, one node and a loop, each given one ``SpliceUse``) checks
each use first with ``use`` (its name, its place on the chain of files citing one another, a
``prompt:`` beside it, its ``with:`` bindings), projects its size with ``size`` (a fragment body
weighed once, what each use adds with its bindings, so a bomb is refused unbuilt), puts a loop's
ids under ``<using-id>/`` with ``namespacing`` (references to the using id pointed at the loop's
exit) and replaces ``{{ with.NAME }}`` with ``substitution``; ``record`` keeps the splice's
findings, each at the file and line it names, and the positions copied from the file each value
came from (``Site``, where a using node is written). ``file`` finds a fragment file, reads it
and checks it on its own (``changed_sources``: which fragments a run's snapshot names differ
now, or are gone), with ``schema`` (a fragment against ``schemas/fragment.schema.json``: the
fast verdict, each violation at its own line) and ``body`` (``omg lint`` of a fragment file: its
body checked as the splice would). ``walk`` is what they share: every string of parsed data with
its path, and every id or reference that carries a '/'.
"""

__all__ = [
    "body",
    "file",
    "namespacing",
    "record",
    "schema",
    "size",
    "splice",
    "substitution",
    "use",
    "walk",
]
