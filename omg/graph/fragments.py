"""Fragments: `use: NAME` / `with:` spliced into a graph's parsed data before any check runs."""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omg.graph.findings import Finding, Severity
from omg.graph.fragmentfile import (
    NAME,
    Loaded,
    fragments_dir,
    read_fragment,
    repo_root,
    slashes,
    strings,
)
from omg.graph.model import FragmentUse
from omg.graph.yamlpos import Path as DataPath
from omg.graph.yamlpos import Positions, json_path

#: A chain of fragment files citing one another is at most this deep.
MAX_CHAIN = 3
#: A graph spliced out to more nodes than this is refused (a fragment fan-out bomb).
MAX_SPLICED_NODES = 2000
#: Keys a multi-node using node may carry: its wiring, never behaviour.
WIRING = ("id", "description", "use", "with", "depends_on", "cwd", "worktree")
_REF = re.compile(
    r"(\{\{\s*(?:artifacts|feedback)\.)([A-Za-z0-9][A-Za-z0-9._-]*)(\s*(?:\|[^}]*)?\}\})"
)
_WITH = re.compile(r"\{\{\s*with\.([A-Za-z0-9._-]+)\s*\}\}")
_WITH_ANY = re.compile(r"\{\{\s*with\b[^{}]*\}\}")
_FEEDBACK_OF = re.compile(r"\{\{\s*feedback\.([A-Za-z0-9][A-Za-z0-9._/-]*)\s*\}\}")


@dataclass
class Spliced:
    """The graph data with every `use:` resolved, where each value came from, and what was used."""

    data: Any
    positions: Positions
    findings: list[Finding]
    uses: list[FragmentUse] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # path from the root → sha256


def splice(data: Any, positions: Positions, file: str) -> Spliced:
    """``data`` with every `use:` node replaced by its fragment; findings name the file:line."""
    s = _Splicer(file)
    s.refuse_slashes(data.get("nodes"), positions, file, "", ("nodes",))
    for path, text in strings(data.get("nodes"), ("nodes",)):
        for m in _WITH_ANY.finditer(text):
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
    root = repo_root(Path(file))
    s.dir = fragments_dir(root, where if isinstance(where, str) else "graphs/fragments")
    s.root = root
    out_pos = Positions(dict(positions.keys), dict(positions.blocks))
    nodes = s.level(data["nodes"], positions, ("nodes",), file, "", (), "", out_pos, ("nodes",))
    out = {**data, "nodes": nodes}
    if s.sources and not s.findings_error():
        out["resolved_from"] = dict(sorted(s.sources.items()))
    return Spliced(out, out_pos, s.found, s.uses, s.sources)


class _Splicer:
    def __init__(self, file: str) -> None:
        self.file = file
        self.found: list[Finding] = []
        self.uses: list[FragmentUse] = []
        self.sources: dict[str, str] = {}
        self.dir = Path()
        self.root = Path()
        self.count = 0
        self.last_exits: dict[str, str] = {}
        self._index: dict[Any, tuple[list[Any], list[Any]]] = {}

    def findings_error(self) -> bool:
        return any(f.severity == "error" for f in self.found)

    def error(
        self,
        file: str,
        pos: Positions,
        path: DataPath,
        code: str,
        message: str,
        via: str = "",
        node: str | None = None,
        severity: Severity = "error",
    ) -> None:
        line, col = pos.at(path)
        self.found.append(
            Finding(file, line, severity, code, message, node, col, json_path(path), via)
        )

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
            if isinstance(raw, Mapping) and "with" in raw and "use" not in raw:
                self.error(
                    file,
                    pos,
                    (*at, i, "with"),
                    "with-without-use",
                    "with: binds values for a fragment, but the node has no use: — "
                    "add use: NAME or remove with:",
                    via,
                    _id(raw),
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
                    _id(raw),
                )
                return out
            spliced, exit_id = self.use(
                raw, pos, (*at, i), file, via, chain, ns, out_pos, out_at, len(out)
            )
            if exit_id is not None:
                exits[_id(raw) or ""] = exit_id
            out.extend(spliced)
        if exits:
            self.alias(out, exits, out_pos, out_at)
        self.last_exits = exits
        return out

    def place(
        self,
        pos: Positions,
        src: DataPath,
        out_pos: Positions,
        dst: DataPath,
        file: str,
        via: str,
        keys: set[str] | None = None,
    ) -> None:
        """Copy the positions under ``src`` to ``dst``, marking them as written in ``file``."""
        n = len(src)
        keyed, blocks = self.index(pos, src)
        for p, v in keyed:
            if p[:n] == src and (keys is None or len(p) == n or p[n] in keys):
                out_pos.keys[(*dst, *p[n:])] = v
                if file != self.file or via or keys is not None:
                    out_pos.origins[(*dst, *p[n:])] = (file, via)
        for p, b in blocks:
            if p[:n] == src and (keys is None or p[n] in keys):
                out_pos.blocks[(*dst, *p[n:])] = b
        if (file != self.file or via) and keys is None:
            out_pos.origins[dst] = (file, via)

    def index(self, pos: Positions, src: DataPath) -> tuple[list[Any], list[Any]]:
        """The positions under ``src``, grouped once per positions object and depth."""
        n = len(src)
        if (id(pos), n, None) not in self._index:
            self._index[(id(pos), n, None)] = ([], [])
            for p, v in pos.keys.items():
                self._index.setdefault((id(pos), n, p[:n]), ([], []))[0].append((p, v))
            for p, b in pos.blocks.items():
                self._index.setdefault((id(pos), n, p[:n]), ([], []))[1].append((p, b))
        return self._index.get((id(pos), n, src), ([], []))

    # -- one using node ---------------------------------------------------------------------
    def use(
        self,
        raw: Mapping[str, Any],
        pos: Positions,
        at: DataPath,
        file: str,
        via: str,
        chain: tuple[str, ...],
        ns: str,
        out_pos: Positions,
        out_at: DataPath,
        j: int,
    ) -> tuple[list[Any], str | None]:
        uid = _id(raw)
        name = raw["use"]
        if not isinstance(name, str) or not NAME.fullmatch(name):
            self.error(
                file,
                pos,
                (*at, "use"),
                "fragment-name",
                f"use: {_show(name)} is not a fragment name — write a bare name "
                "(letters, digits, then . _ -), no path: it is looked up as "
                f"NAME.yaml in {self.shown(self.dir)}",
                via,
                uid,
            )
            return [], None
        line = pos.at((*at, "use"))[0]
        cite = f"{file}:{line} use: {name}"
        names = [c.rsplit(" use: ", 1)[-1] for c in chain]
        if name in names:
            self.error(
                file,
                pos,
                (*at, "use"),
                "fragment-cycle",
                f'use: names "{name}", which is already on this citation chain ('
                + " → ".join([*names, name])
                + ") — a fragment may not cite itself, "
                "even through others",
                via,
                uid,
            )
            return [], None
        if len(chain) >= MAX_CHAIN:
            self.error(
                file,
                pos,
                (*at, "use"),
                "fragment-depth",
                f'use: names "{name}" at citation hop {len(chain) + 1} ('
                + " → ".join([*names, name])
                + f"); fragments cite fragments at most "
                f"{MAX_CHAIN} files deep — inline one level",
                via,
                uid,
            )
            return [], None
        if "prompt" in raw:
            self.error(
                file,
                pos,
                (*at, "prompt"),
                "prompt-beside-use",
                "prompt: beside use: — a whole prompt replaces what the fragment is "
                "for; bind its substitution points with with: instead, or drop use:",
                via,
                uid,
            )
            return [], None
        loaded = read_fragment(self.dir, name, self.root)
        if isinstance(loaded, str):
            self.error(file, pos, (*at, "use"), "fragment-missing", loaded, via, uid)
            return [], None
        self.sources[self.shown(loaded.path)] = loaded.sha256
        for f in loaded.findings:
            self.found.append(
                Finding(
                    f.file,
                    f.line,
                    f.severity,
                    f.code,
                    f.message,
                    f.node,
                    f.column,
                    f.path,
                    _join(via, cite),
                )
            )
        if any(f.severity == "error" for f in loaded.findings):
            return [], None
        binds = self.bindings(raw, pos, at, file, via, uid, loaded)
        if binds is None:
            return [], None
        fvia = _join(via, cite)
        chain2 = (*chain, cite)
        d = loaded.data
        if "node" in d:
            return self.single(
                raw, pos, at, file, via, uid, loaded, binds, fvia, chain2, ns, out_pos, out_at, j
            ), None
        return self.multi(
            raw, pos, at, file, via, uid, loaded, binds, fvia, chain2, out_pos, out_at, j
        )

    def shown(self, p: Path) -> str:
        try:
            return str(p.relative_to(self.root))
        except ValueError:
            return str(p)

    def bindings(
        self,
        raw: Mapping[str, Any],
        pos: Positions,
        at: DataPath,
        file: str,
        via: str,
        uid: str | None,
        loaded: Loaded,
    ) -> dict[str, Any] | None:
        given = raw.get("with", {})
        if not isinstance(given, Mapping):
            self.error(
                file,
                pos,
                (*at, "with"),
                "with-type",
                f"with: holds {_show(given)} — it is a mapping of substitution point → value",
                via,
                uid,
            )
            return None
        declared = loaded.points
        ok = True
        for k in given:
            if k not in declared:
                ok = False
                self.error(
                    file,
                    pos,
                    (*at, "with", k),
                    "with-unknown",
                    f'with: binds "{k}", which fragment "{loaded.name}" does not '
                    f"declare in substitutions: [{', '.join(declared)}] — fix the "
                    "name or remove it",
                    via,
                    uid,
                )
        for k in declared:
            if k not in given:
                ok = False
                self.error(
                    file,
                    pos,
                    (*at, "use"),
                    "with-unbound",
                    f'substitution point "{k}" of fragment "{loaded.name}" is left '
                    f"unbound — add with: {{{k}: …}} (there are no defaults)",
                    via,
                    uid,
                )
        for k in loaded.embedded:
            if k in given and (isinstance(given[k], (list, dict)) or given[k] is None):
                ok = False
                self.error(
                    file,
                    pos,
                    (*at, "with", k),
                    "with-not-scalar",
                    f'substitution point "{k}" is embedded in a longer string in '
                    f'fragment "{loaded.name}", so its bound value must be a scalar '
                    f"(text, number or boolean) — got {_show(given[k])}",
                    via,
                    uid,
                )
        return dict(given) if ok else None

    # -- the two forms ----------------------------------------------------------------------
    def single(
        self,
        raw: Mapping[str, Any],
        pos: Positions,
        at: DataPath,
        file: str,
        via: str,
        uid: str | None,
        loaded: Loaded,
        binds: Mapping[str, Any],
        fvia: str,
        chain: tuple[str, ...],
        ns: str,
        out_pos: Positions,
        out_at: DataPath,
        j: int,
    ) -> list[Any]:
        body = substitute(loaded.data["node"], binds)
        own = [k for k in raw if k not in ("use", "with")]
        node = {**body, **{k: raw[k] for k in own}}
        if raw.get("budget_usd") == 0 and "budget_usd" in body:
            del node["budget_usd"]  # 0 over a fragment's budget: this node runs without one
        dst = (*out_at, j)
        ffile = self.shown(loaded.path)
        self.place(loaded.positions, ("node",), out_pos, dst, ffile, fvia, set(body) - set(own))
        self.place(pos, at, out_pos, dst, file, via, set(own))
        out_pos.keys[dst] = pos.at(at)  # type: ignore[assignment]
        self.uses.append(
            FragmentUse(
                uid or "",
                loaded.name,
                ffile,
                loaded.description,
                (uid or "",),
                tuple(k for k in own if k in body),
                file,
                pos.at((*at, "use"))[0],
            )
        )
        if "use" not in body:
            return [node]
        inner, exit_id = self.use(
            node, loaded.positions, ("node",), ffile, fvia, chain, ns, out_pos, out_at, j
        )
        if exit_id is not None:
            self.error(
                ffile,
                loaded.positions,
                ("node", "use"),
                "fragment-form",
                f'single-node fragment "{loaded.name}" cites multi-node fragment '
                f'"{body["use"]}" — one node cannot hold a loop; use it from a graph',
                fvia,
                uid,
            )
            return []
        self.place(pos, at, out_pos, dst, file, via, set(own))
        return inner

    def multi(
        self,
        raw: Mapping[str, Any],
        pos: Positions,
        at: DataPath,
        file: str,
        via: str,
        uid: str | None,
        loaded: Loaded,
        binds: Mapping[str, Any],
        fvia: str,
        chain: tuple[str, ...],
        out_pos: Positions,
        out_at: DataPath,
        j: int,
    ) -> tuple[list[Any], str | None]:
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
            self.error(file, pos, (*at, key), "use-wiring", why, via, uid)
            return [], None
        prefix = uid + "/"
        ids: set[str] = {str(n["id"]) for n in loaded.data["nodes"]}
        entries = {prefix + str(n["id"]) for n in loaded.data["nodes"] if "depends_on" not in n}
        internal = []
        for n in loaded.data["nodes"]:
            m = substitute(namespace(n, ids, prefix), binds)
            if m["id"] in entries and "depends_on" in raw:
                m["depends_on"] = copy.deepcopy(raw["depends_on"])
            for k in ("cwd", "worktree"):
                if k in raw:
                    m[k] = copy.deepcopy(raw[k])
            internal.append(m)
        ffile = self.shown(loaded.path)
        spliced, exits = self.level_at(
            internal, loaded.positions, ffile, fvia, chain, out_pos, out_at, j
        )
        for idx, n in enumerate(spliced):
            nid = n.get("id", "") if isinstance(n, Mapping) else ""
            dst = (*out_at, j + idx)
            if any(nid == e or nid.startswith(e + "/") for e in entries):
                self.place(pos, at, out_pos, dst, file, via, {"depends_on"})
            self.place(pos, at, out_pos, dst, file, via, {"cwd", "worktree"})
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
                file,
                pos.at((*at, "use"))[0],
            )
        )
        return spliced, exit_id

    def level_at(
        self,
        nodes: list[Any],
        pos: Positions,
        file: str,
        via: str,
        chain: tuple[str, ...],
        out_pos: Positions,
        out_at: DataPath,
        j: int,
    ) -> tuple[list[Any], dict[str, str]]:
        """A fragment's nodes spliced, placed from index ``j`` of the output list."""
        sub = Positions()
        out = self.level(nodes, pos, ("nodes",), file, via, chain, "", sub, ("nodes",))
        for p, v in sub.keys.items():
            out_pos.keys[(*out_at, j + int(p[1]), *p[2:])] = v
        for p, b in sub.blocks.items():
            out_pos.blocks[(*out_at, j + int(p[1]), *p[2:])] = b
        for p, o in sub.origins.items():
            out_pos.origins[(*out_at, j + int(p[1]), *p[2:])] = o
        return out, self.last_exits

    def alias(
        self, out: list[Any], exits: Mapping[str, str], out_pos: Positions, out_at: DataPath
    ) -> None:
        """References to a multi-node using id point at its exit; its loop is closed."""
        for k, n in enumerate(out):
            if not isinstance(n, Mapping):
                continue
            node = n  # mutated in place: every node here is a fresh dict or the author's own
            deps = node.get("depends_on")
            if isinstance(deps, list):
                node["depends_on"] = [exits.get(d, d) if isinstance(d, str) else d for d in deps]  # type: ignore[index]
            fb = node.get("feedback")
            if isinstance(fb, Mapping) and fb.get("rerun") in exits:
                self.located(
                    out_pos,
                    (*out_at, k, "feedback", "rerun"),
                    "feedback-into-loop",
                    f'feedback.rerun names "{fb["rerun"]}", a loop spliced from a '
                    "fragment — an arc from outside cannot re-enter it; rerun a node "
                    "of this graph, or put the arc inside the fragment",
                    node,
                )
            for path, text in strings(node, (*out_at, k)):
                for m in _FEEDBACK_OF.finditer(text):
                    if m.group(1) in exits:
                        self.located(
                            out_pos,
                            path,
                            "feedback-of-loop",
                            f"{{{{ feedback.{m.group(1)} }}}} names a loop spliced "
                            "from a fragment — its feedback belongs to the nodes "
                            "inside it",
                            node,
                        )
            for key, value in list(node.items()):
                node[key] = _retarget(value, exits)  # type: ignore[index]

    def located(
        self, pos: Positions, path: DataPath, code: str, message: str, node: Mapping[str, Any]
    ) -> None:
        file, via = pos.origin(path, self.file)
        self.error(file, pos, path, code, message, via, _id(node))

    def refuse_slashes(self, nodes: Any, pos: Positions, file: str, via: str, at: DataPath) -> None:
        """An authored '/' in an id or a reference: that namespace is omg's own."""
        for path, what, value in slashes(nodes, at):
            self.error(
                file,
                pos,
                path,
                "authored-namespace",
                f'{what} carries a "/" ({_show(value)}) — "<using-id>/<id>" is minted '
                "only when omg splices a multi-node fragment, never written; rename it",
                via,
            )


def namespace(node: Mapping[str, Any], ids: set[str], prefix: str) -> dict[str, Any]:
    """A fragment node with its own ids (and the references to them) under ``prefix``."""
    out = {k: _renamed(v, ids, prefix) for k, v in node.items()}
    out["id"] = prefix + str(node["id"])
    deps = node.get("depends_on")
    if isinstance(deps, list):
        out["depends_on"] = [prefix + d if d in ids else d for d in deps]
    fb = node.get("feedback")
    if isinstance(fb, Mapping) and fb.get("rerun") in ids:
        out["feedback"] = {**out["feedback"], "rerun": prefix + str(fb["rerun"])}
    return out


def _renamed(value: Any, ids: set[str], prefix: str) -> Any:
    if isinstance(value, str):
        return _REF.sub(
            lambda m: (
                m.group(1) + (prefix + m.group(2) if m.group(2) in ids else m.group(2)) + m.group(3)
            ),
            value,
        )
    if isinstance(value, list):
        return [_renamed(v, ids, prefix) for v in value]
    if isinstance(value, Mapping):
        return {k: _renamed(v, ids, prefix) for k, v in value.items()}
    return value


def _retarget(value: Any, exits: Mapping[str, str]) -> Any:
    """``{{ artifacts.<using-id> }}`` → ``{{ artifacts.<using-id>/<exit> }}``."""
    if isinstance(value, str):
        return _ART.sub(
            lambda m: m.group(1) + exits.get(m.group(2), m.group(2)) + m.group(3), value
        )
    if isinstance(value, list):
        return [_retarget(v, exits) for v in value]
    if isinstance(value, Mapping):
        return {k: _retarget(v, exits) for k, v in value.items()}
    return value


_ART = re.compile(r"(\{\{\s*artifacts\.)([A-Za-z0-9][A-Za-z0-9._/-]*)(\s*(?:\|[^}]*)?\}\})")


def substitute(value: Any, binds: Mapping[str, Any]) -> Any:
    """``value`` with every ``{{ with.x }}`` replaced; a bound value is never scanned again.

    The whole scalar keeps the bound value's type; embedded, the value is written as text."""
    if isinstance(value, list):
        return [substitute(v, binds) for v in value]
    if isinstance(value, Mapping):
        return {k: substitute(v, binds) for k, v in value.items()}
    if not isinstance(value, str) or "with" not in value:
        return value
    whole = _WITH.fullmatch(value.strip())
    if whole is not None and whole.group(1) in binds:
        return copy.deepcopy(binds[whole.group(1)])
    return _WITH.sub(
        lambda m: _text(binds[m.group(1)]) if m.group(1) in binds else m.group(0), value
    )


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _id(raw: Any) -> str | None:
    v = raw.get("id") if isinstance(raw, Mapping) else None
    return v if isinstance(v, str) else None


def _show(value: Any) -> str:
    from omg.graph.schema import show

    return show(value)


def _join(via: str, cite: str) -> str:
    return f"{via} → {cite}" if via else cite


def unused_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
