"""YAML with positions: plain data plus the line and column of every key and item."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from omg.graph.positions import Path, Positions

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
#: More values than this is an alias bomb, not a graph.
MAX_VALUES = 200_000
#: Deeper nesting than this is not a graph (the deepest field, a verify output pattern, is 5).
MAX_DEPTH = 100


@dataclass(frozen=True)
class Problem:
    """A YAML-level error: the text is not YAML, or repeats a mapping key."""

    code: str
    message: str
    line: int | None
    column: int | None = None
    path: Path = ()


@dataclass
class Parsed:
    """The outcome of parsing: data (None when the text is not YAML), positions, problems."""

    data: Any
    positions: Positions
    problems: list[Problem]


def parse(text: str) -> Parsed:
    """Parse one YAML document; syntax errors and duplicate keys become Problems, never raise."""
    loader = _Loader(text)
    walker = _Walker(loader)
    try:
        root = loader.get_single_node()
        data = None if root is None else walker.value(root, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = (None, None) if mark is None else (mark.line + 1, mark.column + 1)
        what = " ".join(s for s in (exc.context, exc.problem) if s) or str(exc)
        return Parsed(
            None, walker.positions, [Problem("yaml-syntax", f"not valid YAML: {what}", *where)]
        )
    except yaml.reader.ReaderError as exc:
        line, column = _where(text, chr(exc.character) if isinstance(exc.character, int) else "")
        what = f"not valid YAML: {exc.reason} (character #x{exc.character:04x})"
        if isinstance(exc.character, int) and exc.character < 0x20:
            what += " — remove it, or write it as an escape in a double-quoted string"
        return Parsed(None, walker.positions, [Problem("yaml-syntax", what, line, column)])
    except (yaml.YAMLError, ValueError, OverflowError) as exc:
        return Parsed(None, walker.positions, [Problem("yaml-syntax", f"not valid YAML: {exc}", 1)])
    except _TooBig as exc:
        return Parsed(None, walker.positions, [Problem("yaml-size", exc.args[0], exc.args[1])])
    except RecursionError:
        return Parsed(
            None,
            walker.positions,
            [Problem("yaml-size", "the document is nested too deeply", _deepest(text))],
        )
    finally:
        loader.dispose()
    return Parsed(data, walker.positions, walker.problems)


class _TooBig(Exception):
    pass


def _where(text: str, char: str) -> tuple[int, int | None]:
    """The line and column of the first ``char`` in ``text`` (line 1 when it is absent)."""
    at = text.find(char) if char else -1
    if at < 0:
        return 1, None
    return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1


def _deepest(text: str) -> int:
    """The line where the nesting first passes MAX_DEPTH, read from the event stream."""
    depth, line = 0, 1
    try:
        for event in yaml.parse(text, Loader=_Loader):
            mark = event.start_mark
            line = line if mark is None else int(mark.line) + 1
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    return line
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        pass
    return line


class _Walker:
    """Turns a composed node tree into dicts, lists and scalars, recording positions."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.positions = Positions({(): (1, 1)})
        self.problems: list[Problem] = []
        self.count = 0
        self.stack: set[int] = set()

    def value(self, node: yaml.Node, path: Path) -> Any:
        self.count += 1
        if self.count > MAX_VALUES:
            raise _TooBig(
                f"the document expands to more than {MAX_VALUES} values (aliases?)",
                node.start_mark.line + 1,
            )
        if len(path) > MAX_DEPTH:
            raise _TooBig(
                f"the document is nested more than {MAX_DEPTH} levels deep — a graph needs 5",
                node.start_mark.line + 1,
            )
        if isinstance(node, yaml.ScalarNode):
            if node.style == "|":
                self.positions.blocks[path] = node.start_mark.line + 2
            if node.tag == _STR:
                return node.value
            try:
                return self.loader.construct_object(node)
            except (ValueError, OverflowError) as exc:  # 2001-13-45, a 5000-digit integer
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"cannot read {node.value[:40]!r}: {str(exc).split(';')[0]} — quote it",
                    node.start_mark,
                ) from None
        if id(node) in self.stack:
            raise _TooBig(
                "an alias refers to a value that contains it (a recursive YAML structure)",
                node.start_mark.line + 1,
            )
        self.stack.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self._item(child, (*path, i)) for i, child in enumerate(node.value)]
            return self._mapping(node, path)
        finally:
            self.stack.discard(id(node))

    def _item(self, node: yaml.Node, path: Path) -> Any:
        self.positions.keys[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        return self.value(node, path)

    def _mapping(self, node: yaml.Node, path: Path) -> dict[str, Any]:
        out: dict[str, Any] = {}
        pairs = [(k, v) for k, v in node.value if k.tag != _MERGE]
        for _, merged in (kv for kv in node.value if kv[0].tag == _MERGE):
            # `<<: *defaults` supplies keys; the keys written out here override them.
            sources = merged.value if isinstance(merged, yaml.SequenceNode) else [merged]
            for src in sources:
                if not isinstance(src, yaml.MappingNode):
                    raise yaml.constructor.ConstructorError(
                        None, None, "a merge key (<<) needs a mapping", src.start_mark
                    )
                out.update(self.value(src, path))
        first: dict[str, int] = {}
        for key_node, value_node in pairs:
            key = self._key(key_node, path)
            if key is None:
                continue
            line, column = key_node.start_mark.line + 1, key_node.start_mark.column + 1
            if key in first:
                self._problem(
                    "duplicate-key",
                    f'duplicate key "{key}" (first at line {first[key]}) — a mapping key may '
                    "appear once; YAML would silently keep only the last",
                    line,
                    column,
                    (*path, key),
                )
            first[key] = line
            self.positions.keys[(*path, key)] = (line, column)
            out[key] = self.value(value_node, (*path, key))
        return out

    def _problem(self, code: str, message: str, line: int, column: int, path: Path) -> None:
        problem = Problem(code, message, line, column, path)
        if problem not in self.problems:  # an aliased mapping is walked once per use
            self.problems.append(problem)

    def _key(self, node: yaml.Node, path: Path) -> str | None:
        # Keys are names: `on:` stays "on" (YAML 1.1 would read it as true), `1:` stays "1".
        if isinstance(node, yaml.ScalarNode):
            return str(node.value)
        self._problem(
            "yaml-key",
            "a mapping key must be a plain name, not a list or mapping",
            node.start_mark.line + 1,
            node.start_mark.column + 1,
            path,
        )
        return None
