"""Fuzzed graph files through `omg lint` (every format), `omg graph` and `omg run --dry-run`,
in process: whatever the file holds, each answers with findings or a refusal — never a
traceback (exit 70) — and every error it reports carries a line.

``FUZZ_EXAMPLES`` raises the number of examples per property (CI runs the default).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omg.cli.lint import lint_paths
from omg.cli.runs import dry_run
from omg.errors import OmgError
from omg.graph.load import check_file, load_graph
from omg.graph.mermaid import render_mermaid

CASES = Path(__file__).parents[1] / "graphs"
SEEDS = sorted((CASES / "valid").glob("*.yaml")) + sorted(
    (Path(__file__).parents[2] / "graphs").glob("*.yaml")
)
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "120"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

HOSTILE_TEXT = st.sampled_from(
    [
        "",
        "\0",
        "a\0b",
        "\x01",
        "\x7f",
        "\ud800",
        "\u2028",
        "é" * 3,
        "x" * 5000,
        "597h",
        "0s",
        "1e400s",
        "9" * 400 + "h",
        "1h30m",
        "-1s",
        "^(a+)+$",
        "(",
        "[",
        "\\",
        "{{ inputs.x }}",
        "{{ inputs.x | inline }}",
        "{{ artifacts.a }}",
        "{{ artifacts.a | inline }}",
        "{{ feedback.b }}",
        "{{ feedback.zz }}",
        "{{ inputs.x }",
        "{{{{ inputs.x }}}}",
        "echo '{{ inputs.x }}'",
        'echo "{{ inputs.x }}"',
        'sh -c "{{ inputs.x }}"',
        "cat <<EOF\n{{ inputs.x }}\nEOF",
        "cat <<'EOF'\n{{ inputs.x }}\nEOF",
        "echo $(( {{ inputs.x }} ))",
        "echo `{{ inputs.x }}`",
        "{{ inputs.x }}",
        "$({{ inputs.x }})",
        "${{ inputs.x }}",
        "\\{{ inputs.x }}",
        "{{ inputs.x }} | sh",
        "((",
        "$(",
        "<<",
        "'",
        '"',
        "`",
        "case",
        "esac",
        "[[",
        "a=(",
        "gate",
        "claude",
        "codex",
        "session",
        "artifact",
        "halt",
        "continue",
        "fail",
        "nonzero_exit",
        "Bash(git *)",
        "a",
        "b",
        "x",
        "lane",
    ]
)
COUNTS = st.one_of(st.integers(0, 3), st.sampled_from([1, 2, 100, 101, 255, 256, 10**400]))
NUMBERS = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([10**400, -(10**400), 2**63, 255, 256, 100, 101, 10**4000]),
    st.floats(allow_nan=True, allow_infinity=True),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, HOSTILE_TEXT, st.text(max_size=12))
KEYS = st.sampled_from(
    [
        "id", "depends_on", "type", "prompt", "run", "runtime", "handoff", "worktree", "env",
        "cwd", "success_check", "exit_zero", "result_matches", "verify", "command",
        "expect_exit", "output_matches", "timeout", "idle_timeout", "retry", "max", "on",
        "backoff", "initial", "factor", "feedback", "rerun", "on_exhausted", "allowed_tools",
        "permission_mode", "budget_usd", "description", "model", "agent", "branch", "push",
        "name", "default", "required", "x", "OMG_P1", "PATH",
    ]
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


SHELL_TEXT = st.lists(
    st.sampled_from(
        [
            "echo",
            " ",
            "{{ inputs.x }}",
            "{{ artifacts.a }}",
            "{{ artifacts.a | inline }}",
            "{{ feedback.b }}",
            '"',
            "'",
            "$(",
            ")",
            "`",
            "<<EOF\n",
            "\nEOF\n",
            "<<'E'\n",
            "\nE\n",
            "|",
            "sh",
            "-c",
            ";",
            "&&",
            "$((",
            "))",
            "${",
            "}",
            "[[",
            "]]",
            "\\",
            "$",
            "#",
            "\n",
            "case",
            "in",
            "esac",
            "for",
            "do",
            "done",
            "(",
            "=",
            "v=",
            "eval",
            "python3",
            "make",
            "ssh",
            "env",
            "xargs",
            "find",
            "-exec",
            "\0",
        ]
    ),
    max_size=12,
).map("".join)
DURATIONS = st.sampled_from(["1s", "2m", "1h30m", "120h", "121h", "597h", "0s", "10m", "11m",
                             1, 0.5, 10**400, 1e308, "9" * 40 + "h", "1.5s", "5m"])  # fmt: skip
PATTERNS = st.sampled_from(["^DONE", "^(a+)+$", "(", "a{99999999999}", ".*.*.*x", "[", ""])


def maybe(draw: st.DrawFn, value: Any) -> Any:
    """Usually ``value``; now and then anything at all, so the schema gets its turn."""
    return draw(VALUES) if draw(st.integers(0, 40)) == 0 else value


@st.composite
def nodes(draw: st.DrawFn, ids: list[str], nid: str) -> dict[str, Any]:
    """A node of plausible shape whose values are hostile: shell text built from every
    quoting construct, durations and counts at and past their limits, catastrophic patterns."""
    kind = draw(st.sampled_from(["shell", "shell", "agent", "gate"]))
    node: dict[str, Any] = {"id": nid}
    if kind == "shell":
        node["run"] = maybe(draw, draw(SHELL_TEXT | HOSTILE_TEXT))
    elif kind == "agent":
        node["prompt"] = maybe(draw, draw(HOSTILE_TEXT | st.text(max_size=40)))
        node["allowed_tools"] = draw(st.sampled_from([[], ["Bash"], ["Read", "Bash(git *)"]]))
    else:
        node["type"] = "gate"
    others = [i for i in ids if i != nid]
    if others and draw(st.booleans()):
        node["depends_on"] = draw(st.lists(st.sampled_from(others), max_size=2, unique=True))
    if kind == "agent" and draw(st.booleans()):
        node["budget_usd"] = draw(st.sampled_from([0.5, 1, 10**400, 1e308]))
    if kind != "gate":
        optional: dict[str, st.SearchStrategy[Any]] = {
            "timeout": DURATIONS,
            "idle_timeout": DURATIONS,
            "cwd": HOSTILE_TEXT,
            "env": st.sampled_from([["PATH"], {"OMG_P1": "x"}, {"A": "\0"}, {"A": None}]),
            "worktree": st.sampled_from(["lane", {"name": "lane", "branch": "{{ inputs.x }}"}]),
            "success_check": st.fixed_dictionaries(
                {"exit_zero": st.just(True)},
                optional={
                    "result_matches": PATTERNS,
                    "verify": st.fixed_dictionaries(
                        {"command": SHELL_TEXT | HOSTILE_TEXT},
                        optional={"timeout": DURATIONS, "expect_exit": COUNTS,
                                  "output_matches": PATTERNS, "cwd": HOSTILE_TEXT},
                    ),
                },
            ),
            "retry": st.fixed_dictionaries(
                {"max": COUNTS, "on": st.just(["nonzero_exit", "timeout"])},
                optional={"backoff": DURATIONS | st.fixed_dictionaries({}, optional={
                    "initial": DURATIONS, "max": DURATIONS,
                    "factor": st.sampled_from([1, 2.5, 1e308, 10**400])})},
            ),
        }  # fmt: skip
        for key in draw(st.lists(st.sampled_from(sorted(optional)), max_size=4, unique=True)):
            node[key] = maybe(draw, draw(optional[key]))
    if others and kind != "gate" and draw(st.booleans()):
        node["feedback"] = maybe(draw, {"rerun": draw(st.sampled_from(others)),
                                        "max": draw(COUNTS)})  # fmt: skip
    return node


@st.composite
def graphs(draw: st.DrawFn) -> dict[str, Any]:
    ids = draw(st.lists(st.sampled_from(["a", "b", "c", "x", "a.b", "d-1"]), min_size=1,
                        max_size=4, unique=True))  # fmt: skip
    data: dict[str, Any] = {
        "name": draw(HOSTILE_TEXT),
        "inputs": draw(st.sampled_from([["x"], {"x": {"default": "v"}}, {"x": None}, []])),
        "nodes": [draw(nodes(ids, nid)) for nid in ids],
    }
    extra = {
        "concurrency": COUNTS,
        "max_hops": COUNTS,
        "budget_usd": st.sampled_from([0.5, 10**400, 1e308]),
        "on_fail": st.sampled_from(["halt", "continue"]),
        "version": SCALARS,
        "approvers": st.sampled_from([["a"], ["a-b"]]),
    }
    for key in draw(st.lists(st.sampled_from(sorted(extra)), max_size=3, unique=True)):
        data[key] = maybe(draw, draw(extra[key]))
    return data


def _dump(data: Any) -> bytes:
    try:
        return yaml.safe_dump(data, allow_unicode=True, sort_keys=False).encode(
            "utf-8", "surrogatepass"
        )
    except (yaml.YAMLError, ValueError):
        return repr(data).encode("utf-8", "surrogatepass")


def exercise(raw: bytes) -> None:
    """The file ``raw`` through every read-only command; fails on any non-OmgError exception."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.yaml"
        path.write_bytes(raw)
        for fmt in ("text", "json", "github"):
            lint_paths([path], fmt, strict=fmt == "github")  # type: ignore[arg-type]
        graph, found = check_file(path)
        unplaced = [f.as_text() for f in found if f.severity == "error" and f.line is None]
        assert not unplaced, unplaced
        if graph is None:
            try:
                load_graph(path)
            except OmgError:
                return
            raise AssertionError("check_file found errors but load_graph accepted the file")
        render_mermaid(load_graph(path))
        for given in ({}, {"x": "$(touch pwned) it's"}, {"x": "\0"}, {"zz": "1"}):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(OmgError):
                dry_run(path, given)
        assert not list(Path(tmp).rglob("pwned"))


@FUZZ
@given(graphs())
def test_fuzzed_graphs_never_raise(data: dict[str, Any]) -> None:
    exercise(_dump(data))


@FUZZ
@given(SHELL_TEXT, SHELL_TEXT)
def test_fuzzed_shell_commands_never_raise(run: str, verify: str) -> None:
    data = {
        "name": "sh",
        "inputs": {"x": {"default": "v"}},
        "nodes": [
            {"id": "a", "run": "echo a"},
            {"id": "b", "depends_on": ["a"], "run": run,
             "success_check": {"verify": {"command": verify or "true"}}},
            {"id": "c", "depends_on": ["b"], "run": "true", "feedback": {"rerun": "b", "max": 1}},
        ],
    }  # fmt: skip
    exercise(_dump(data))


PIECES = [b"\0", b"\x01", b"'", b'"', b"{{", b"}}", b"\n  ", b": ", b"- ", b"[", b"&a ", b"*a"]
PIECES += [b"\xff", b"\t", b"{{ inputs.x }}", b"'{{ inputs.x }}'", b"$((", b"<<EOF\n"]


@st.composite
def mutations(draw: st.DrawFn) -> bytes:
    """A shipped or case graph with a few bytes changed, inserted, cut or repeated."""
    text = draw(st.sampled_from(SEEDS)).read_bytes()
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        how = draw(st.sampled_from(["insert", "cut", "repeat", "number"]))
        if how == "insert":
            piece = draw(st.sampled_from(PIECES))
            text = text[:at] + piece + text[at:]
        elif how == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 40)) :]
        elif how == "repeat":
            end = min(len(text), at + draw(st.integers(1, 80)))
            text = text[:end] + text[at:end] + text[end:]
        else:
            text = text[:at] + b"9" * draw(st.integers(1, 500)) + text[at:]
    return text


@FUZZ
@given(mutations())
def test_mutated_graph_files_never_raise(raw: bytes) -> None:
    exercise(raw)
