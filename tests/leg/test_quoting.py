"""A value substituted into `run:` or `verify.command` is never code, wherever it stands.

Each placeholder becomes a reference to an environment variable that carries the value; a
position where sh (or a program it starts) would read the value as code is refused at load.
The properties run real shells — dash and bash, each as `sh` — on hostile values.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from kit import command_spots, omg_run, render_command, write_graph

from omg.graph.model import Node
from omg.runners.base import Invocation
from omg.runners.process import spawn
from omg.runners.shell import ShellRunner

HOSTILE = {
    "semi": "a; touch pwned-semi",
    "subst": "$(touch pwned-subst)",
    "tick": "`touch pwned-tick`",
    "quote": "it's \"quoted\" 'twice'; touch pwned-quote",
    "newline": "line1\ntouch pwned-newline",
}


def _pwned(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("pwned*"))


def test_a_value_inside_the_authors_own_double_quotes_stays_data(tmp_path: Path, omg) -> None:
    """The shell-quoting this replaced put `'$(touch pwned)'` inside "…", where sh ran it."""
    g = write_graph(
        tmp_path,
        """
        name: q
        inputs: [x]
        nodes:
          - id: echo
            run: 'echo "got {{ inputs.x }}"'
    """,
    )
    r = omg_run(omg, g, "-i", "x=$(touch pwned)")
    assert r.code == 0, r.explain()
    assert _pwned(tmp_path) == []
    assert r.artifact("echo") == "got $(touch pwned)\n"


def test_a_placeholder_inside_single_quotes_is_refused_at_load(tmp_path: Path, omg) -> None:
    g = write_graph(
        tmp_path,
        """
        name: q
        inputs: [x]
        nodes:
          - id: echo
            run: |
              echo start
              sh -c 'echo {{ inputs.x }}'
    """,
    )
    lint = omg("lint", str(g), cwd=tmp_path)
    assert lint.returncode == 1
    assert f'{g}:8: error: node "echo": run: {{{{ inputs.x }}}} stands inside single' in (
        lint.stdout
    )
    assert "end the quotes before it and reopen them after" in lint.stdout
    r = omg_run(omg, g, "-i", "x=$(touch pwned)")
    assert r.code == 3 and "stands inside single quotes" in r.err
    assert _pwned(tmp_path) == [] and not (tmp_path / "runs").exists()


def test_inputs_are_data_in_run_and_verify(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: quoting
        inputs: [semi, subst, tick, quote, newline]
        nodes:
          - id: echo
            run: >-
              printf '%s|' {{ inputs.semi }} {{ inputs.subst }} {{ inputs.tick }}
              {{ inputs.quote }} {{ inputs.newline }}
            success_check:
              verify:
                command: >-
                  test {{ inputs.semi }} = 'a; touch pwned-semi' &&
                  echo "{{ inputs.subst }}" {{ inputs.quote }}
    """,
    )
    args = [a for name, value in HOSTILE.items() for a in ("-i", f"{name}={value}")]
    r = omg_run(omg, g, *args)
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)
    assert _pwned(tmp_path) == []
    assert r.artifact("echo") == "|".join(HOSTILE.values()) + "|"
    assert state["nodes"]["echo"]["provenance"] == "verified"
    assert state["inputs"] == HOSTILE


def test_artifacts_and_feedback_are_data_too(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: relay
        nodes:
          - id: source
            run: printf '%s' "'; touch pwned-artifact; echo '"
          - id: relay
            depends_on: [source]
            run: printf '[%s]' "{{ artifacts.source | inline }}"
          - id: impl
            depends_on: [relay]
            run: |
              cat <<EOF
              [{{ feedback.review }}]
              EOF
          - id: review
            depends_on: [impl]
            run: |
              if [ -f reviewed ]; then echo ok; exit 0; fi
              touch reviewed; printf '%s' '$(touch pwned-feedback)'; exit 1
            feedback: {rerun: impl, max: 1}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    assert _pwned(tmp_path) == []
    assert r.artifact("relay") == "['; touch pwned-artifact; echo ']"
    assert r.artifact("impl") == "[$(touch pwned-feedback)]\n"


# -- properties: real shells, hostile values ------------------------------------------------

X = "{{ inputs.x }}"
PROPERTY = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
SHELLS = [name for name in ("dash", "bash") if shutil.which(name)]
#: Each touches a marker file if sh ever reads the value as code.
PAYLOADS = [
    "$(touch M1)",
    "`touch M2`",
    "'; touch M3; '",
    '"; touch M4; "',
    "\ntouch M5\n",
    "a[$(touch M6)]",
    "\nEOF\ntouch M7\nEOF\n",
    "| touch M8",
    "&& touch M9",
    ") ; touch M10 ; (",
    "} ; touch M11 ; {",
    "${IFS}touch${IFS}M12",
    "__import__('os').system('touch M13')",
    '\\"; touch M14; \\"',
    "$((a[$(touch M15)]))",
]
TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\0"), max_size=30)
#: Bytes that are not UTF-8 reach the environment as the same bytes (surrogateescape).
BINARY = (
    st.binary(max_size=30)
    .filter(lambda b: b"\0" not in b)
    .map(lambda b: b.decode("utf-8", "surrogateescape"))
)
VALUES = st.one_of(
    st.lists(st.sampled_from(PAYLOADS) | TEXT, max_size=4).map("".join),
    TEXT,
    BINARY,
    st.sampled_from(PAYLOADS),
)

#: (command, the bytes it writes to `out` for value v) — a value in every quoting context.
CONTEXTS: list[tuple[str, Callable[[bytes], bytes]]] = [
    (f"printf '%s' {X} > out", lambda v: v),
    (f"printf '%s' \"pre {X} post\" > out", lambda v: b"pre " + v + b" post"),
    (f"printf '%s' pre{X}post > out", lambda v: b"pre" + v + b"post"),
    (f"printf '%s' \"$(printf '%s' {X})\" > out", lambda v: v.rstrip(b"\n")),
    (f"printf '%s' \"$(printf '%s' \"{X}\")\" > out", lambda v: v.rstrip(b"\n")),
    (f"cat > out <<EOF\n{X}\nEOF", lambda v: v + b"\n"),
    (f"cat > out <<-EOF\n\t<{X}>\n\tEOF", lambda v: b"<" + v + b">\n"),
    (f"printf '%s' \"$(cat <<EOF\n{X}\nEOF\n)\" > out", lambda v: v.rstrip(b"\n")),
    (f"v={X}; printf '%s' \"$v\" > out", lambda v: v),
    (f'V={X} sh -c \'printf "%s" "$V"\' > out', lambda v: v),
    (f'sh -c \'printf "%s" "$1"\' sh {X} > out', lambda v: v),
    (f"f() {{ printf '%s' \"$1\"; }}; f {X} > out", lambda v: v),
    (f"case {X} in *) printf '%s' {X};; esac > out", lambda v: v),
    (f"for i in {X}; do printf '%s' \"$i\"; done > out", lambda v: v),
    (f"if true; then printf '%s' \"{X}\"; fi > out", lambda v: v),
    (f"printf '%s' {X} | cat > out", lambda v: v),
    (f"test {X} = {X} && printf same > out", lambda v: b"same"),
    (f"# {X}\nprintf '%s' \"[{X}]\" > out", lambda v: b"[" + v + b"]"),
]


@pytest.fixture(scope="module", params=SHELLS)
def sh_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PATH on which `sh` is dash, or bash (bash as sh, as on macOS and Fedora)."""
    bindir = tmp_path_factory.mktemp(f"sh-{request.param}")
    (bindir / "sh").symlink_to(shutil.which(request.param) or request.param)
    return os.pathsep.join([str(bindir), str(Path(sys.executable).parent), "/usr/bin", "/bin"])


def _run(command: str, value: str, cwd: Path, path: str) -> None:
    """``command`` as a shell node runs it: the script sh parses, the values in its env."""
    shell = render_command(command, lambda tok: value)
    node = Node(id="n", kind="shell", run=command)
    env = {"PATH": path, "LC_ALL": "C", **shell.env}
    inv = Invocation(node=node, text=shell.script, cwd=cwd, env=env, timeout_s=20)
    out = ShellRunner().run(inv, spawn)
    assert out.error is None, out.detail


def _clean(cwd: Path) -> list[str]:
    found = sorted(p.name for p in cwd.iterdir())
    for p in cwd.iterdir():
        p.unlink()
    return found


def test_the_shells_are_there() -> None:
    assert SHELLS, "no dash or bash to run the properties on"


@PROPERTY
@given(st.sampled_from(CONTEXTS), VALUES)
def test_property_a_value_reaches_the_command_byte_for_byte(
    sh_path: str, tmp_path: Path, context: tuple[str, Callable[[bytes], bytes]], value: str
) -> None:
    command, expected = context
    cwd = tmp_path / "w"
    cwd.mkdir(exist_ok=True)
    _run(command, value, cwd, sh_path)
    raw = value.encode("utf-8", "surrogateescape")
    assert (cwd / "out").read_bytes() == expected(raw)
    assert _clean(cwd) == ["out"], "the value ran as code"


ARGS = st.deferred(
    lambda: (
        st.sampled_from([X, f'"{X}"', f"'{X}'", "word", '"$v"', f"pre{X}"])
        | st.builds(lambda a: f'"a {a} b"', ARGS)
        | st.builds(lambda a: f"$(printf '%s' {a})", ARGS)
        | st.builds(lambda a: f"`printf '%s' {a}`", ARGS)
        | st.builds(lambda a: f"$(( {a} ))", ARGS)
        | st.builds(lambda a: f"${{v:-{a}}}", ARGS)
        | st.builds(lambda a: f"'{a}'", ARGS)
    )
)
COMMANDS = st.deferred(
    lambda: (
        st.builds(
            lambda t, a: t.replace("A", a),
            st.sampled_from(
                [
                    "printf '%s' A",
                    "eval A",
                    "sh -c A",
                    "bash -c A",
                    "v=A",
                    "declare -i n; n=A",
                    "[[ A ]]",
                    "test A = A",
                    "case A in *) :;; esac",
                    "for i in A; do :; done",
                    "printf '%s' A | sh",
                    "printf '%s' A | cat",
                    "cat <<EOF\nA\nEOF",
                    "sh <<EOF\nA\nEOF",
                    "cat <<'EOF'\nA\nEOF",
                    "python3 -c A",
                    "f() { echo A; }; f",
                    "A",
                    "export A",
                    "read A <<EOF\nx\nEOF",
                    "let A",
                    "x=( A )",
                    ": $((A))",
                    "env A",
                    "xargs printf A < /dev/null",
                    "find . -name A -exec sh -c A ';'",
                    "a=(1 2); echo ${a[A]}",
                    "awk A < /dev/null",
                    "sed -e A < /dev/null",
                    "printf -v A %s 1",
                    "sh -s A < /dev/null",
                    "cat <<EOF | sh\nA\nEOF",
                ]
            ),
            ARGS,
        )
        | st.builds(lambda a, b: f"{a}; {b}", COMMANDS, COMMANDS)
        | st.builds(lambda a, b: f"{a} | {b}", COMMANDS, COMMANDS)
        | st.builds(lambda a, b: f"if {a}; then {b}; fi", COMMANDS, COMMANDS)
        | st.builds(lambda a: f"{{ {a}; }}", COMMANDS)
        | st.builds(lambda a: f"( {a} )", COMMANDS)
        | st.builds(lambda a: f'x="$({a})"', COMMANDS)
    )
)


@settings(PROPERTY, max_examples=150)
@given(COMMANDS, st.sampled_from(PAYLOADS))
def test_property_whatever_the_script_a_value_it_accepts_never_runs(
    sh_path: str, tmp_path: Path, script: str, value: str
) -> None:
    """Random scripts from every construct: either a placeholder's position is refused, or the
    script runs and no payload in the value ever executes."""
    if _refused(script):
        return
    cwd = tmp_path / "w"
    cwd.mkdir(exist_ok=True)
    shell = render_command(script, lambda tok: value)
    node = Node(id="n", kind="shell", run=script)
    env = {"PATH": sh_path, "LC_ALL": "C", **shell.env}
    inv = Invocation(node=node, text=shell.script, cwd=cwd, env=env, timeout_s=20)
    ShellRunner().run(inv, spawn)
    markers = [p.name for p in cwd.iterdir() if p.name.startswith("M")]
    _clean(cwd)
    assert markers == [], f"{script!r} ran the value {value!r} as code"


def _refused(script: str) -> bool:
    return any(s.refused for s in command_spots(script))


def test_the_random_scripts_reach_both_verdicts() -> None:
    """The grammar yields accepted scripts that use a value, and refused ones."""
    accepted = find(COMMANDS, lambda s: X in s and not _refused(s) and "|" in s)
    refused = find(COMMANDS, _refused)
    assert "OMG_P1" in render_command(accepted, lambda tok: "v").script and _refused(refused)


def test_shell_quoting_inside_double_quotes_ran_the_value(tmp_path: Path) -> None:
    """What the properties guard against, shown with the old renderer: shlex.quote inside the
    author's double quotes leaves $(…) live — so the marker check can fail."""
    command = 'printf "%s" "got ' + shlex.quote("$(touch M1)") + '"'
    node = Node(id="n", kind="shell", run=command)
    inv = Invocation(node=node, text=command, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
                     timeout_s=20)  # fmt: skip
    ShellRunner().run(inv, spawn)
    assert (tmp_path / "M1").exists()
