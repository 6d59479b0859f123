"""A fragment file: where `use: NAME` finds it, and every rule it must keep on its own."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omg.graph.files import DISK, Files, repo_root
from omg.graph.findings import Finding
from omg.graph.fragments.schema import fragment_schema_findings
from omg.graph.fragments.walk import slashes, strings
from omg.graph.positions import Path as DataPath
from omg.graph.positions import Positions, json_path
from omg.graph.yamlpos import parse
from omg.graphdata import FragmentData

#: A fragment file larger than this is not one a person wrote.
MAX_FRAGMENT_BYTES = 256 * 1024
DEFAULT_DIR = "graphs/fragments"
_WITH_LOOSE = re.compile(r"\{\{\s*with\b[^{}]*\}\}")
_WITH = re.compile(r"\{\{\s*with\.([A-Za-z0-9._-]+)\s*\}\}")


@dataclass(frozen=True)
class Loaded:
    """A fragment file read and checked: its data, positions and any findings about it."""

    name: str
    path: Path
    sha256: str
    data: FragmentData  # schema-checked when ``findings`` hold no error
    positions: Positions
    findings: tuple[Finding, ...]
    points: tuple[str, ...]  # declared substitution points
    embedded: frozenset[str]  # points used inside a longer string
    description: str


def changed_sources(graph_source: Path, resolved_from: Mapping[str, str]) -> list[str]:
    """The fragment files (as a snapshot names them) that differ now, or are gone."""
    root = repo_root(graph_source)
    out = []
    for rel, sha in resolved_from.items():
        path = root / str(rel)
        try:
            now = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            now = ""
        if now != sha:
            out.append(str(rel))
    return out


def fragments_dir(root: Path, setting: str) -> Path:
    """The fragments directory a graph's ``fragments:`` setting names, under ``root``."""
    return root / setting


def read_fragment(directory: Path, name: str, root: Path, files: Files = DISK) -> Loaded | str:
    """Fragment ``name`` from ``directory`` (read through ``files``), or why it cannot be used
    (a sentence)."""
    path = directory / f"{name}.yaml"
    shown = _shown(path, root)
    kind = files.kind(path, directory, root)
    if kind == "missing":
        return (
            f'no fragment "{name}": {shown} does not exist — a use: resolves against the '
            f"graph's fragments directory ({_shown(directory, root)}; set fragments: to "
            "move it), never the working directory"
        )
    if kind == "linked-home":
        return (
            f"the fragments directory {_shown(directory, root)} is reached through a symbolic "
            "link — fragments are read only from the repository's own directory; replace "
            "the link with the directory"
        )
    if kind == "outside":
        return (
            f"{shown} is a link leading out of the fragments directory "
            f"({_shown(directory, root)}) — copy the fragment in instead"
        )
    if kind == "link":
        return f"{shown} is a link, which omg does not follow in a commit — copy the fragment in"
    raw = read_bytes(path, shown, files)
    if isinstance(raw, str):
        return raw
    data, positions, found = check_text(raw, shown)
    ok = not any(f.severity == "error" for f in found)
    points = tuple(data.get("substitutions") or ()) if ok else ()
    return Loaded(
        name,
        path,
        hashlib.sha256(raw).hexdigest(),
        data,
        positions,
        tuple(found),
        points,
        frozenset(embedded_points(data)) if ok else frozenset(),
        str(data.get("description", "")) if ok else "",
    )


def read_bytes(path: Path, shown: str, files: Files = DISK) -> bytes | str:
    """A fragment file's bytes, never read past its limit; else why not (a sentence)."""
    try:
        size = files.size(path)
        raw = b"" if size > MAX_FRAGMENT_BYTES else files.read(path, MAX_FRAGMENT_BYTES)
    except OSError as exc:
        return f"cannot read {shown}: {exc.strerror or exc}"
    size = max(size, len(raw))
    if size > MAX_FRAGMENT_BYTES:
        return f"{shown} holds {size:,} bytes, more than a fragment's {MAX_FRAGMENT_BYTES:,}"
    return raw


def _shown(p: Path, root: Path) -> str:
    try:
        return str(p.relative_to(root))
    except ValueError:
        return str(p)


def check_text(raw: bytes, file: str) -> tuple[Any, Positions, list[Finding]]:
    """Parse and check a fragment's text: YAML, its schema, names, ids and substitutions."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return (
            None,
            Positions(),
            [Finding(file, line, "error", "not-utf8", "the fragment is not UTF-8 text")],
        )
    parsed = parse(text)
    found = [
        Finding(file, p.line, "error", p.code, p.message, column=p.column) for p in parsed.problems
    ]
    if found:
        return parsed.data, parsed.positions, found
    if "<<" in text or re.search(r"(^|\s)[&*][A-Za-z0-9_-]+", text):
        found.append(
            Finding(
                file,
                1,
                "error",
                "fragment-alias",
                "a fragment may not use YAML anchors, aliases or merge keys (&, *, "
                "<<) — write each value out, so what is spliced is what is read",
            )
        )
        return parsed.data, parsed.positions, found
    return parsed.data, parsed.positions, check_fragment(parsed.data, parsed.positions, file)


def check_fragment(data: Any, pos: Positions, file: str) -> list[Finding]:
    """Every rule a fragment keeps on its own, each finding at its line in ``file``."""

    def at(path: DataPath, code: str, msg: str, sev: Any = "error") -> Finding:
        line, col = pos.at(path)
        return Finding(file, line, sev, code, msg, None, col, json_path(path))

    out: list[Finding] = []
    nodes = data.get("nodes") if isinstance(data, Mapping) else None
    for path, what, value in slashes(nodes, ("nodes",)):
        out.append(
            at(
                path,
                "authored-namespace",
                f'{what} carries a "/" ({value!r}) — that namespace is minted only when omg '
                "splices a fragment; rename it",
            )
        )
    if out:
        return out
    errors = fragment_schema_findings(data, pos, file)
    if errors:
        return errors
    stem = Path(file).stem
    if data["fragment"] != stem:
        out.append(
            at(
                ("fragment",),
                "fragment-name",
                f'fragment: "{data["fragment"]}" but the file is {Path(file).name} — a '
                f"use: finds a fragment by its file name; write fragment: {stem}",
            )
        )
    if "nodes" in data:
        out.extend(_loop_rules(data, at))
    declared = list(data.get("substitutions") or ())
    used: set[str] = set()
    body = data.get("node", data.get("nodes"))
    for path, text in strings(body, ("node",) if "node" in data else ("nodes",)):
        for m in _WITH_LOOSE.finditer(text):
            good = _WITH.fullmatch(m.group(0))
            if good is None:
                out.append(
                    at(
                        path,
                        "with-token",
                        f"{m.group(0)!r} looks like a substitution "
                        "point but is not {{ with.NAME }} — fix its spelling",
                    )
                )
            elif _in_shell(path):
                out.append(
                    at(
                        path,
                        "with-in-shell",
                        f"{m.group(0)} in a command would make a bound value shell text "
                        "— with: values are data: bind it in env: (env: {NAME: "
                        f'"{m.group(0)}"}}) and read "$NAME" in the command',
                    )
                )
            elif good.group(1) not in declared:
                out.append(
                    at(
                        path,
                        "with-undeclared",
                        f"{{{{ with.{good.group(1)} }}}} is used but substitutions: does "
                        f"not declare it — add {good.group(1)} to substitutions:",
                    )
                )
            else:
                used.add(good.group(1))
    for i, p in enumerate(declared):
        if p not in used:
            out.append(
                at(
                    ("substitutions", i),
                    "with-unused",
                    f'substitution point "{p}" is declared but the body never uses '
                    f"{{{{ with.{p} }}}} — use it or remove it",
                    "warning",
                )
            )
    return out


def _in_shell(path: DataPath) -> bool:
    keys = [k for k in path if isinstance(k, str)]
    return len(keys) >= 2 and (keys[1] == "run" or any(k.endswith("command") for k in keys[1:]))


def _loop_rules(data: FragmentData, at: Any) -> list[Finding]:
    out: list[Finding] = []
    nodes = data["nodes"]
    ids = [n["id"] for n in nodes]
    seen: set[str] = set()
    for i, n in enumerate(nodes):
        if n["id"] in seen:
            out.append(at(("nodes", i, "id"), "duplicate-id", f'id "{n["id"]}" is used twice'))
        seen.add(n["id"])
        deps = n.get("depends_on")
        if deps == []:
            out.append(
                at(
                    ("nodes", i, "depends_on"),
                    "fragment-deps",
                    "depends_on: [] — omit the key: a node without one is an entry node "
                    "and inherits the using node's depends_on",
                )
            )
        for k, d in enumerate(deps if isinstance(deps, list) else []):
            if d not in ids:
                out.append(
                    at(
                        ("nodes", i, "depends_on", k),
                        "fragment-deps",
                        f'depends_on names "{d}", which is not a node of this fragment '
                        f"({', '.join(ids)}) — a fragment's nodes depend only on each "
                        "other; its entry nodes inherit the using node's depends_on",
                    )
                )
        fb = n.get("feedback")
        if isinstance(fb, Mapping) and "rerun" in fb and fb["rerun"] not in ids:
            out.append(
                at(
                    ("nodes", i, "feedback", "rerun"),
                    "fragment-feedback",
                    f'feedback.rerun names "{fb["rerun"]}", which is not a node of this '
                    f"fragment ({', '.join(ids)})",
                )
            )
    if data["exit"] not in ids:
        out.append(
            at(
                ("exit",),
                "fragment-exit",
                f'exit: "{data["exit"]}" is not a node of '
                f"this fragment ({', '.join(ids)}) — name the node downstream nodes "
                "wait for",
            )
        )
    return out


def embedded_points(data: Any) -> set[str]:
    """Substitution points used inside a longer string (their values must be scalars)."""
    out: set[str] = set()
    body = data.get("node", data.get("nodes")) if isinstance(data, Mapping) else None
    for _, text in strings(body, ()):
        whole = _WITH.fullmatch(text.strip())
        if whole is None:
            out.update(m.group(1) for m in _WITH.finditer(text))
    return out
