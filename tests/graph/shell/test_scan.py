"""Where a placeholder stands in shell text: the form it is replaced in, or why it is refused."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from kit import command_spots, render_command

from omg.graph.placeholders import ResolveError, render_shell
from omg.graph.shell.lexer import Spot
from omg.graph.shell.scan import spots

X = "{{ inputs.x }}"

#: (command, the script sh gets) — every position where a value stays data.
ACCEPTED = [
    (f"echo {X}", 'echo "${OMG_P1}"'),
    (f'echo "got {X}"', 'echo "got ${OMG_P1}"'),
    (f"echo pre{X}post", 'echo pre"${OMG_P1}"post'),
    (f'echo "{X}"{X}', 'echo "${OMG_P1}""${OMG_P1}"'),
    (f'printf %s "$(echo {X})"', 'printf %s "$(echo "${OMG_P1}")"'),
    (f'printf %s "$(echo "{X}")"', 'printf %s "$(echo "${OMG_P1}")"'),
    (f"cat <<EOF\n{X}\nEOF", "cat <<EOF\n${OMG_P1}\nEOF"),
    (f"cat <<-EOF\n\t{X}\n\tEOF\necho {X}", 'cat <<-EOF\n\t${OMG_P1}\n\tEOF\necho "${OMG_P1}"'),
    (f'x="$(cat <<EOF\n{X}\nEOF\n)"', 'x="$(cat <<EOF\n${OMG_P1}\nEOF\n)"'),
    (f'v={X}; echo "$v"', 'v="${OMG_P1}"; echo "$v"'),
    (f"V={X} make test", 'V="${OMG_P1}" make test'),
    (f"export V={X}", 'export V="${OMG_P1}"'),
    (f"case {X} in {X}) echo same;; esac", 'case "${OMG_P1}" in "${OMG_P1}") echo same;; esac'),
    (f'for i in a {X}; do echo "$i"; done', 'for i in a "${OMG_P1}"; do echo "$i"; done'),
    (f"f() {{ echo {X}; }}; f", 'f() { echo "${OMG_P1}"; }; f'),
    (f'f() {{ grep -c -- "$1" f; }}; f {X}', None),
    (f'echo {X} | while read -r l; do echo "$l"; done', None),
    (f'v={X}; echo "${{v@U}}" "${{v@Q}}"', None),
    (f"exec 3<<< {X}; cat <&3", None),
    (f'v={X}; w=$v; printf "%s" "$w"; eval "$u"', None),
    (f"echo {X} | xargs -I{{}} grep -c -- {{}} f", None),
    (f"echo {X} | xargs sh -c 'echo \"$@\"' sh", None),
    (f'v={X}; git log --grep="$v"; eval "$w"', None),
    (f"if true; then echo {X}; fi", 'if true; then echo "${OMG_P1}"; fi'),
    (f"echo {X} > out; grep -q {X} < out", 'echo "${OMG_P1}" > out; grep -q "${OMG_P1}" < out'),
    (f"sh -c 'echo \"$1\"' sh {X}", 'sh -c \'echo "$1"\' sh "${OMG_P1}"'),
    (f"python3 -c 'import sys; print(sys.argv[1])' {X}", None),
    (f"python3 script.py {X}", None),
    (f"sed -e s/a/b/ {X}", None),
    (f"awk -v v={X} 'BEGIN {{ print v }}'", None),
    (f"printf '%s' {X} | tr a b", None),
    (f"echo {X} | sh -c 'read -r v; echo \"$v\"'", None),
    (f"find . -name {X} -exec rm {{}} +", None),
    (f"env A=1 grep {X} file", None),
    (f"# a comment with {X}\necho hi", "# a comment with ${OMG_P1}\necho hi"),
    (f"echo '{{{{ not a placeholder }}}}' {X}", None),
    (f"git diff -- {X}", None),
    (f"git commit -m {X}", None),
    (f"git fetch origin -- {X}", None),
    (f"git diff --end-of-options {X}", None),
    (f"git checkout -b x{X}", None),
    (f"grep python {X}", None),
    (f"docker run --rm img echo {X}", None),
    (f"MY_VAR={X} make test", None),
]

#: (command, a fragment of the refusal)
REFUSED = [
    (f"echo '{X}'", "inside single quotes"),
    (f"echo $'{X}'", "inside $'…'"),
    (f"cat <<'EOF'\n{X}\nEOF", "quoted heredoc"),
    (f'cat <<"EOF"\n{X}\nEOF', "quoted heredoc"),
    (f"cat <<\\EOF\n{X}\nEOF", "quoted heredoc"),
    (f"echo `echo {X}`", "backticks"),
    (f'echo "`echo {X}`"', "backticks"),
    (f"echo $(( {X} + 1 ))", "arithmetic"),
    (f"(( {X} > 1 ))", "arithmetic"),
    (f"echo $[{X}]", "arithmetic"),
    (f"echo ${{v:-{X}}}", "inside ${…}"),
    (f'echo "${{a[{X}]}}"', "inside ${…}"),
    (f"[[ {X} -eq 1 ]]", "[[ … ]]"),
    (f"a=( {X} )", "array assignment"),
    (f"echo \\{X}", "backslash"),
    (f'echo "\\{X}"', "backslash"),
    (f"echo ${X}", "follows a $"),
    (f"{X} --help", "the program to run"),
    (f"A=1 {X}", "the program to run"),
    (f"$({X})", "the program to run"),
    (f"if {X}; then :; fi", "the program to run"),
    (f"echo a | {X}", "the program to run"),
    (f"env {X}", "the name of the program `env` starts"),
    (f"xargs -n1 {X}", "the name of the program"),
    (f"find . -exec {X} ';'", "the name of the program"),
    (f'sh -c "echo {X}"', "the script `sh -c` runs"),
    (f"bash -lc {X}", "the script `bash -lc` runs"),
    (f"sh {X}", "the script of `sh`"),
    (f"sh ./{X}", "the script file `sh` runs"),
    (f'sudo -u me sh -c "echo {X}"', "the script `sh -c` runs"),
    (f'timeout 5 bash -c "{X}"', "the script `bash -c` runs"),
    (f'eval "echo {X}"', "`eval` runs"),
    (f". {X}", "`.` runs as shell code"),
    (f"trap 'x' {X}", "`trap` runs"),
    (f"let n={X}", "`let` evaluates"),
    (f'python3 -c "print({X})"', "`python3 -c` runs"),
    (f"python {X}", "the code of `python`"),
    (f"python3.12 ./{X}.py", "the script file `python3.12` runs"),
    (f'perl -e "print {X}"', "`perl -e` runs"),
    (f'node -e "{X}"', "`node -e` runs"),
    (f'sed "s/{X}/y/" file', "sed script"),
    (f"sed -e s/{X}/y/ file", "sed script"),
    (f'awk "/{X}/" file', "awk script"),
    (f"make test ARGS={X}", "`make` splices"),
    (f"make {X}", "`make` splices"),
    (f'ssh host "echo {X}"', "run through a shell"),
    (f'su -c "echo {X}" me', "`su -c` runs"),
    (f'watch "echo {X}"', "`watch` runs"),
    (f"read {X}", "variable name"),
    (f"printf -v {X} %s 1", "variable name"),
    (f"[ -v {X} ]", "variable name"),
    (f"unset {X}", "variable name"),
    (f"export {X}", "variable name"),
    (f"declare -i n={X}", "arithmetic"),
    (f"declare -i n; n={X}", "integer or nameref"),
    (f"echo {X} | sh", "standard input of a shell"),
    (f"printf '%s' {X} | bash -s", "standard input of a shell"),
    (f"{{ echo {X}; }} | sh", "standard input of a shell"),
    (f"cat <<EOF | sh\n{X}\nEOF", "standard input of a shell"),
    (f"sh <<EOF\n{X}\nEOF", "standard input of a shell"),
    (f"python3 - <<EOF\n{X}\nEOF", "standard input of a shell"),
    (f"sh <<< {X}", "standard input of a shell"),
    (f"sh < {X}", "standard input of a shell"),
    (f". /dev/stdin <<< {X}", "standard input of a shell"),
    (f"printf %s {X} | bash /dev/stdin", "standard input of a shell"),
    (f"while read l; do sh; done <<EOF\n{X}\nEOF", "standard input of a shell"),
    (f'echo {X} | echo "$(sh)"', "standard input of a shell"),
    (f'$SHELL -c "{X}"', "a program chosen when the command runs"),
    (f"cat <<{X}\nx\n{X}", "heredoc delimiter"),
    (f"PATH={X} make", "$PATH, which chooses a program"),
    (f"GIT_SSH_COMMAND={X} git fetch", "$GIT_SSH_COMMAND"),
    (f"export LD_PRELOAD={X}", "$LD_PRELOAD"),
    (f"env PS4={X} sh -x run.sh", "$PS4"),
    (f"git -c {X} log", "a git setting"),
    (f"git clone {X} dir", "may take for an option"),
    (f"git fetch origin {X}", "may take for an option"),
    (f"git log --upload-pack={X}", "a command git runs"),
    (f"tar --to-command={X} -xf a.tar", "a command tar runs"),
    (f"rsync -e {X} a b", "the remote shell rsync runs"),
    (f"scp {X} host:", "whose commands and options run through a shell"),
    (f'docker run img sh -c "echo {X}"', "the script `sh -c` runs"),
    (f'kubectl exec pod -- python3 -c "{X}"', "the code `python3 -c` runs"),
    (f"v={X}; echo $((v + 1))", "is assigned to $v, which an arithmetic expression reads"),
    (f"v={X}; [[ $v -gt 1 ]]", "is assigned to $v"),
    (f"for n in {X}; do let n++; done", "is assigned to $n"),
    (f"read n <<< {X}; echo ${{s:n}}", "is assigned to $n"),
    (f"f() {{ echo $(($1)); }}; f {X}", "is an argument ($1 …) that an arithmetic"),
    (f"sh -c 'echo $(($1))' sh {X}", "is an argument ($1 …)"),
    (f"sh -c 'n=$1; echo $((n))' sh {X}", "is an argument ($1 …)"),
    (f"echo {X} | xargs -I{{}} sh -c 'echo {{}}'", "standard input of a shell"),
    (f"printf '%s' {X} | xargs -0 -I % bash -c 'echo %'", "standard input of a shell"),
    (f"echo {X} | xargs sh -c", "standard input of a shell"),
    (f'v={X}; w=$v; eval "$w"', "is assigned to $w, which is then expanded"),
    (f'v={X}; w="pre${{v}}"; u=$w; $u', "is assigned to $u, which is then expanded"),
    (f"v={X}; for w in $v; do $w; done", "is assigned to $w, which is then expanded"),
    (f"v={X}; w=$v; echo $((w))", "is assigned to $w, which an arithmetic expression reads"),
    (f"echo {X} | while read -r l; do $l; done", "may reach $l through `read`"),
    (f'echo {X} | {{ read -r l; eval "$l"; }}', "may reach $l through `read`"),
    (f'read -r l <<EOF\n{X}\nEOF\nm=$l; eval "$m"', "may reach $l through `read`"),
    (f'printf %s {X} | {{ mapfile -t a; eval "${{a[0]}}"; }}', "through `read`"),
    (f"bash -c 'read -r l; $l' <<< {X}", "standard input of a shell"),
    (f"echo {X} | bash -c 'read -r l; eval \"$l\"'", "standard input of a shell"),
    (f"exec 3<<EOF\n{X}\nEOF\nsh <&3", "standard input of a shell"),
    (f"exec 3<<< {X}; bash 0<&3", "standard input of a shell"),
    (f"bash -c 'v=$1; echo \"${{v@P}}\"' _ {X}", "is an argument ($1 …) that is then expanded"),
    (f"export v={X}; bash -c 'echo \"${{v@P}}\"'", "is assigned to $v, which is then expanded"),
    (f'v={X}; echo "${{v@P}}"', "is assigned to $v, which is then expanded"),
    (f'v={X}; eval "$v"', "is assigned to $v, which is then expanded where code is read"),
    (f"v={X}; $v", "is assigned to $v, which is then expanded where code is read"),
    (f'v={X}; "${{v}}" --help', "is assigned to $v, which is then expanded"),
    (f"for v in {X}; do $v; done", "is assigned to $v, which is then expanded"),
    (f'read -r v <<< {X}; trap "$v" EXIT', "is assigned to $v, which is then expanded"),
    (f"export v={X}; bash -c 'eval \"$v\"'", "is assigned to $v, which is then expanded"),
    (f'f() {{ eval "$1"; }}; f {X}', "is an argument ($1 …) that is then expanded where code"),
    (f"f() {{ $1; }}; f {X}", "is an argument ($1 …) that is then expanded where code"),
    (f'set -- {X}; eval "$1"', "is an argument ($1 …) that is then expanded where code"),
    (f"sh -c 'eval \"$1\"' _ {X}", "is an argument ($1 …) that is then expanded where code"),
    (f"sh -c '$1' _ {X}", "is an argument ($1 …) that is then expanded where code"),
    (f"sh -c 'c=$1; $c' _ {X}", "is an argument ($1 …) that is then expanded where code"),
    (f"for {X} in a; do :; done", "loop variable"),
    (f"function {X} {{ :; }}", "names a function"),
    ("echo {{\n inputs.x }}", "split across lines"),
]


@pytest.mark.parametrize(("command", "script"), ACCEPTED, ids=[c for c, _ in ACCEPTED])
def test_a_value_may_stand_here_and_sh_gets_a_reference(command: str, script: str | None) -> None:
    spots = command_spots(command)
    assert spots and not [s.refused for s in spots if s.refused]
    shell = render_command(command, lambda tok: "$(touch pwned)")
    assert "touch pwned" not in shell.script
    assert shell.env == {"OMG_P1": "$(touch pwned)"}
    if script is not None:
        assert shell.script == script


@pytest.mark.parametrize(("command", "why"), REFUSED, ids=[c for c, _ in REFUSED])
def test_a_placeholder_where_a_value_would_be_code_is_refused(command: str, why: str) -> None:
    refused = [s.refused for s in command_spots(command) if s.refused]
    assert refused, f"{command!r} was accepted"
    assert any(why in r for r in refused), refused
    with pytest.raises(ResolveError, match="cannot run the command"):
        render_command(command, lambda tok: "v")


def test_the_scanner_handed_in_reads_the_very_command_that_is_rendered() -> None:
    read: list[str] = []

    def scanner(text: str, at: Sequence[tuple[int, int]]) -> list[Spot]:
        read.append(text)
        return spots(text, at)

    with pytest.raises(ResolveError, match="cannot run the command"):
        render_shell(f"eval {X}", scanner, lambda tok: "v")
    assert read == [f"eval {X}"]


def test_each_distinct_placeholder_gets_one_variable() -> None:
    command = "cp {{ artifacts.a }} {{ inputs.x }}/{{ artifacts.a | inline }} {{ inputs.x }}"
    shell = render_command(command, lambda tok: tok.text)
    assert shell.script == 'cp "${OMG_P1}" "${OMG_P2}"/"${OMG_P3}" "${OMG_P2}"'
    assert [v.placeholder for v in shell.values] == [
        "{{ artifacts.a }}",
        "{{ inputs.x }}",
        "{{ artifacts.a | inline }}",
    ]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("a\0b", "NUL byte"),
        ("x" * (128 * 1024), "more than the 128 KiB"),
        ("\ud800", "not text"),
    ],
    ids=["nul", "too-long", "surrogate"],
)
def test_a_value_no_environment_variable_can_carry_is_refused(value: str, why: str) -> None:
    with pytest.raises(ResolveError, match=why):
        render_command("echo {{ inputs.x }}", lambda tok: value)


def test_undecodable_bytes_travel_as_the_same_bytes() -> None:
    """An input given as raw bytes (decoded with surrogateescape, as argv is) stays those bytes."""
    value = b"\xff\xfe a".decode("utf-8", "surrogateescape")
    assert render_command("echo {{ inputs.x }}", lambda tok: value).env["OMG_P1"] == value
