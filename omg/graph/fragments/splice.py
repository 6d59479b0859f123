"""The splice: `use: NAME` / `with:` spliced into a graph's parsed data before any check runs."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omg.graph.files import DISK, Files
from omg.graph.findings import Finding
from omg.graph.fragments.file import Loaded, fragments_dir, read_fragment
from omg.graph.fragments.namespacing import alias, namespace
from omg.graph.fragments.record import Site, SpliceRecord, join, node_id
from omg.graph.fragments.size import Weight, growth, weigh
from omg.graph.fragments.substitution import WITH_ANY, substitute
from omg.graph.fragments.use import MAX_CHAIN, bindings, refused
from omg.graph.fragments.walk import strings
from omg.graph.limits import MAX_SNAPSHOT_BYTES, more, snapshot_bytes
from omg.graph.model import FragmentUse
from omg.graph.positions import Path as DataPath
from omg.graph.positions import Positions

__all__ = ["MAX_CHAIN", "MAX_SPLICED_NODES", "WIRING", "Spliced", "splice"]

#: A graph spliced out to more nodes than this is refused (a fragment fan-out bomb).
MAX_SPLICED_NODES = 2000
#: Keys a multi-node using node may carry: its wiring, never behaviour.
WIRING = ("id", "description", "use", "with", "depends_on", "cwd", "worktree")


@dataclass
class Spliced:
    """The graph data with every `use:` resolved, where each value came from, and what was used."""

    data: Any
    positions: Positions
    findings: list[Finding]
    uses: list[FragmentUse] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # path from the root → sha256


@dataclass(frozen=True)
class SpliceUse:
    """One `use:` being spliced: where it is written, the fragment it loaded and the values
    bound, the chain of `use:` lines through it, and where its nodes land (from index ``j`` of
    the list at ``out_at``)."""

    site: Site
    loaded: Loaded
    binds: Mapping[str, object]
    fvia: str  # the chain as the fragment's own findings name it
    chain: tuple[str, ...]
    ns: str
    out_pos: Positions
    out_at: DataPath
    j: int


def splice(data: Any, positions: Positions, file: str, files: Files = DISK) -> Spliced:
    """``data`` with every `use:` node replaced by its fragment (read through ``files``);
    findings name the file:line."""
    s = _Splicer(file, files)
    s.refuse_slashes(data.get("nodes"), positions, file, "", ("nodes",))
    for path, text in strings(data.get("nodes"), ("nodes",)):
        for m in WITH_ANY.finditer(text):
            s.error(
                file,
                positions,
                path,
                "with-outside-fragment",
                f"{m.group(0)} is a fragment's substitution point; a graph's own nodes "
                "have none — write the value, or use an input ({{ inputs.NAME }})",
            )
    if "resolved_from" in data:
        s.error(
            file,
            positions,
            ("resolved_from",),
            "resolved-from",
            "resolved_from: is written by omg into a run's snapshot, never by hand — remove it",
        )
    where = data.get("fragments", "graphs/fragments")
    root = files.root(Path(file))
    s.dir = fragments_dir(root, where if isinstance(where, str) else "graphs/fragments")
    s.root = root
    s.size = snapshot_bytes(data)
    out_pos = Positions(dict(positions.keys), dict(positions.blocks))
    nodes = s.level(data["nodes"], positions, ("nodes",), file, "", (), "", out_pos, ("nodes",))
    out = {**data, "nodes": nodes}
    if s.sources and not s.findings_error():
        out["resolved_from"] = dict(sorted(s.sources.items()))
    return Spliced(out, out_pos, s.found, s.uses, s.sources)


class _Splicer(SpliceRecord):
    def __init__(self, file: str, files: Files) -> None:
        super().__init__(file)
        self.files = files
        self.uses: list[FragmentUse] = []
        self.sources: dict[str, str] = {}
        self.dir = Path()
        self.root = Path()
        self.count = 0
        self.last_exits: dict[str, str] = {}
        self.size = 0  # the resolved graph's JSON bytes, projected use by use
        self.over = False  # a use would pass MAX_SNAPSHOT_BYTES: nothing more is spliced
        self.read: dict[str, Loaded | str] = {}  # each fragment read once, by name
        self.weights: dict[str, Weight] = {}

    # -- one list of nodes (the graph's, or a fragment's) -----------------------------------
    def level(
        self,
        nodes: Any,
        pos: Positions,
        at: DataPath,
        file: str,
        via: str,
        chain: tuple[str, ...],
        ns: str,
        out_pos: Positions,
        out_at: DataPath,
    ) -> Any:
        """``nodes`` (at ``at`` in ``file``) spliced; positions copied to ``out_pos``."""
        if not isinstance(nodes, list):
            return nodes
        out: list[Any] = []
        exits: dict[str, str] = {}  # a multi-node using id → its exit's id
        for i, raw in enumerate(nodes):
            if self.over:
                return out
            if isinstance(raw, Mapping) and "with" in raw and "use" not in raw:
                self.error(
                    file,
                    pos,
                    (*at, i, "with"),
                    "with-without-use",
                    "with: binds values for a fragment, but the node has no use: — "
                    "add use: NAME or remove with:",
                    via,
                    node_id(raw),
                )
            if not isinstance(raw, Mapping) or "use" not in raw:
                self.place(pos, (*at, i), out_pos, (*out_at, len(out)), file, via)
                out.append(raw)
                continue
            self.count += 1
            if self.count > MAX_SPLICED_NODES:
                self.error(
                    file,
                    pos,
                    (*at, i, "use"),
                    "fragment-size",
                    f"more than {MAX_SPLICED_NODES} uses of fragments — a graph this "
                    "size is not one a person reviews",
                    via,
                    node_id(raw),
                )
                return out
            site = Site(raw, pos, (*at, i), file, via, node_id(raw))
            spliced, exit_id = self.use(site, chain, ns, out_pos, out_at, len(out))
            if exit_id is not None:
                exits[node_id(raw) or ""] = exit_id
            out.extend(spliced)
        if exits:
            alias(self, out, exits, out_pos, out_at)
        self.last_exits = exits
        return out

    # -- one using node ---------------------------------------------------------------------
    def use(
        self,
        site: Site,
        chain: tuple[str, ...],
        ns: str,
        out_pos: Positions,
        out_at: DataPath,
        j: int,
    ) -> tuple[list[Any], str | None]:
        if refused(self, site, chain, self.shown(self.dir)):
            return [], None
        name = str(site.raw["use"])
        cite = f"{site.file}:{site.pos.at((*site.at, 'use'))[0]} use: {name}"
        if name not in self.read:
            self.read[name] = read_fragment(self.dir, name, self.root, self.files)
        loaded = self.read[name]
        if isinstance(loaded, str):
            self.at_site(site, "use", "fragment-missing", loaded)
            return [], None
        self.sources[self.shown(loaded.path)] = loaded.sha256
        fvia = join(site.via, cite)
        for f in loaded.findings:
            self.found.append(
                Finding(
                    f.file, f.line, f.severity, f.code, f.message, f.node, f.column, f.path, fvia
                )
            )
        if any(f.severity == "error" for f in loaded.findings):
            return [], None
        binds = bindings(self, site, loaded)
        if binds is None:
            return [], None
        u = SpliceUse(site, loaded, binds, fvia, (*chain, cite), ns, out_pos, out_at, j)
        if not self.fits(u):
            return [], None
        if "node" in loaded.data:
            return self.single(u), None
        return self.multi(u)

    def fits(self, u: SpliceUse) -> bool:
        """Whether the graph, with ``u`` spliced, stays within what a run records — projected
        from the fragment's weight and the bound values, before anything is built."""
        name, single = u.loaded.name, "node" in u.loaded.data
        if name not in self.weights:
            self.weights[name] = weigh(u.loaded.data["node" if single else "nodes"])
        weight = self.weights[name]
        own = set(u.site.raw) - {"use", "with"}  # what the node overrides, as single() does
        keep = [k for k in weight.entries if not single or k not in own]
        self.size += growth(weight, u.site.raw, u.binds, keep, loop=not single)
        if self.size <= MAX_SNAPSHOT_BYTES:
            return True
        self.over = True
        self.at_site(
            u.site,
            "use",
            "graph-too-large",
            f'splicing fragment "{name}" here would bring the graph to about {self.size:,} '
            f"bytes as JSON, {more()}; it was refused before it was built and nothing after "
            "it was spliced — use the fragment fewer times, or move long text into files the "
            "nodes read",
        )
        return False

    def shown(self, p: Path) -> str:
        try:
            return str(p.relative_to(self.root))
        except ValueError:
            return str(p)

    # -- the two forms ----------------------------------------------------------------------
    def single(self, u: SpliceUse) -> list[Any]:
        site, loaded, raw = u.site, u.loaded, u.site.raw
        body = substitute(loaded.data["node"], u.binds)
        own = [k for k in raw if k not in ("use", "with")]
        node = {**body, **{k: raw[k] for k in own}}
        if raw.get("budget_usd") == 0 and "budget_usd" in body:
            del node["budget_usd"]  # 0 over a fragment's budget: this node runs without one
        dst = (*u.out_at, u.j)
        ffile = self.shown(loaded.path)
        self.place(loaded.positions, ("node",), u.out_pos, dst, ffile, u.fvia, set(body) - set(own))
        self.place(site.pos, site.at, u.out_pos, dst, site.file, site.via, set(own))
        u.out_pos.keys[dst] = site.pos.at(site.at)  # type: ignore[assignment]
        self.uses.append(
            FragmentUse(
                site.uid or "",
                loaded.name,
                ffile,
                loaded.description,
                (site.uid or "",),
                tuple(k for k in own if k in body),
                site.file,
                site.pos.at((*site.at, "use"))[0],
            )
        )
        if "use" not in body:
            return [node]
        inner_site = Site(node, loaded.positions, ("node",), ffile, u.fvia, node_id(node))
        inner, exit_id = self.use(inner_site, u.chain, u.ns, u.out_pos, u.out_at, u.j)
        if exit_id is not None:
            self.error(
                ffile,
                loaded.positions,
                ("node", "use"),
                "fragment-form",
                f'single-node fragment "{loaded.name}" cites multi-node fragment '
                f'"{body["use"]}" — one node cannot hold a loop; use it from a graph',
                u.fvia,
                site.uid,
            )
            return []
        self.place(site.pos, site.at, u.out_pos, dst, site.file, site.via, set(own))
        return inner

    def multi(self, u: SpliceUse) -> tuple[list[Any], str | None]:
        site, loaded, raw, uid = u.site, u.loaded, u.site.raw, u.site.uid
        extra = [k for k in raw if k not in WIRING]
        if extra or not uid:
            key = extra[0] if extra else "use"
            why = (
                (
                    f'declares "{key}" alongside a multi-node use: — a loop\'s nodes carry '
                    "their own behaviour; the using node declares wiring only "
                    f"({', '.join(WIRING)})"
                )
                if extra
                else "a multi-node use: needs an id"
            )
            self.at_site(site, key, "use-wiring", why)
            return [], None
        prefix = uid + "/"
        ids: set[str] = {str(n["id"]) for n in loaded.data["nodes"]}
        entries = {prefix + str(n["id"]) for n in loaded.data["nodes"] if "depends_on" not in n}
        internal = []
        for n in loaded.data["nodes"]:
            m = substitute(namespace(n, ids, prefix), u.binds)
            if m["id"] in entries and "depends_on" in raw:
                m["depends_on"] = copy.deepcopy(raw["depends_on"])
            for k in ("cwd", "worktree"):
                if k in raw:
                    m[k] = copy.deepcopy(raw[k])
            internal.append(m)
        ffile = self.shown(loaded.path)
        sub = Positions()
        spliced = self.level(
            internal, loaded.positions, ("nodes",), ffile, u.fvia, u.chain, "", sub, ("nodes",)
        )
        self.shift(sub, u.out_pos, u.out_at, u.j)
        exits = self.last_exits
        for idx, n in enumerate(spliced):
            nid = n.get("id", "") if isinstance(n, Mapping) else ""
            dst = (*u.out_at, u.j + idx)
            if any(nid == e or nid.startswith(e + "/") for e in entries):
                self.place(site.pos, site.at, u.out_pos, dst, site.file, site.via, {"depends_on"})
            self.place(site.pos, site.at, u.out_pos, dst, site.file, site.via, {"cwd", "worktree"})
        exit_id = prefix + loaded.data["exit"]
        exit_id = exits.get(exit_id, exit_id)
        self.uses.append(
            FragmentUse(
                uid,
                loaded.name,
                ffile,
                loaded.description,
                tuple(n.get("id", "") for n in spliced),
                (),
                site.file,
                site.pos.at((*site.at, "use"))[0],
            )
        )
        return spliced, exit_id
