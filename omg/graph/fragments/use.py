"""A fragment use checked before it is spliced: its name, its place on the chain of files
citing one another, what stands beside it, and the values its `with:` binds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from omg.graph.findings import show
from omg.graph.fragments.record import Site, SpliceRecord
from omg.graph.fragments.schema import NAME

if TYPE_CHECKING:
    from omg.graph.fragments.file import Loaded

#: A chain of fragment files citing one another is at most this deep.
MAX_CHAIN = 3


def refused(rec: SpliceRecord, site: Site, chain: tuple[str, ...], where: str) -> bool:
    """Whether the `use:` at ``site`` is refused before its file is read (each refusal a
    finding); ``where`` is the fragments directory as shown."""
    name = site.raw["use"]
    if not isinstance(name, str) or not NAME.fullmatch(name):
        rec.at_site(
            site,
            "use",
            "fragment-name",
            f"use: {show(name)} is not a fragment name — write a bare name "
            "(letters, digits, then . _ -), no path: it is looked up as "
            f"NAME.yaml in {where}",
        )
        return True
    names = [c.rsplit(" use: ", 1)[-1] for c in chain]
    if name in names:
        rec.at_site(
            site,
            "use",
            "fragment-cycle",
            f'use: names "{name}", which is already on this citation chain ('
            + " → ".join([*names, name])
            + ") — a fragment may not cite itself, "
            "even through others",
        )
        return True
    if len(chain) >= MAX_CHAIN:
        rec.at_site(
            site,
            "use",
            "fragment-depth",
            f'use: names "{name}" at citation hop {len(chain) + 1} ('
            + " → ".join([*names, name])
            + f"); fragments cite fragments at most "
            f"{MAX_CHAIN} files deep — inline one level",
        )
        return True
    if "prompt" in site.raw:
        rec.at_site(
            site,
            "prompt",
            "prompt-beside-use",
            "prompt: beside use: — a whole prompt replaces what the fragment is "
            "for; bind its substitution points with with: instead, or drop use:",
        )
        return True
    return False


def bindings(rec: SpliceRecord, site: Site, loaded: Loaded) -> dict[str, object] | None:
    """The values ``site``'s `with:` binds, or None when they do not fit the fragment's
    declared points (each misfit a finding)."""
    given = site.raw.get("with", {})
    if not isinstance(given, Mapping):
        rec.at_site(
            site,
            "with",
            "with-type",
            f"with: holds {show(given)} — it is a mapping of substitution point → value",
        )
        return None
    declared = loaded.points
    ok = True
    for k in given:
        if k not in declared:
            ok = False
            rec.at_site(
                site,
                ("with", k),
                "with-unknown",
                f'with: binds "{k}", which fragment "{loaded.name}" does not '
                f"declare in substitutions: [{', '.join(declared)}] — fix the "
                "name or remove it",
            )
    for k in declared:
        if k not in given:
            ok = False
            rec.at_site(
                site,
                "use",
                "with-unbound",
                f'substitution point "{k}" of fragment "{loaded.name}" is left '
                f"unbound — add with: {{{k}: …}} (there are no defaults)",
            )
    for k in loaded.embedded:
        if k in given and (isinstance(given[k], (list, dict)) or given[k] is None):
            ok = False
            rec.at_site(
                site,
                ("with", k),
                "with-not-scalar",
                f'substitution point "{k}" is embedded in a longer string in '
                f'fragment "{loaded.name}", so its bound value must be a scalar '
                f"(text, number or boolean) — got {show(given[k])}",
            )
    return dict(given) if ok else None
