"""`omg lint` output: text, JSON and GitHub annotations, exit codes, and the files it picks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from omg.cli.lint import github, lint_paths
from omg.errors import UsageError
from omg.github import escape_data, escape_property
from omg.graph.findings import Finding
from omg.graph.lint import collect

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).parents[1] / "graphs"
VALID = "name: g\nnodes:\n  - id: a\n    run: echo\n"
WARNS = "name: g\nnodes:\n  - id: a\n    prompt: hi\n"  # an agent with no tool grant
BROKEN = "name: g\nnodes:\n  - id: a\n    run: echo\n    depends_on: [zz]\n"


def write(where: Path, name: str, text: str) -> Path:
    path = where / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_lint_text_prints_findings_then_a_verdict_per_file(tmp_path: Path) -> None:
    good, bad = write(tmp_path, "good.yaml", VALID), write(tmp_path, "bad.yaml", BROKEN)
    out, code = lint_paths([good, bad], "text", strict=False)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == f"{good}:2: info: worst case 1 node execution(s): 1 node(s) once"
    assert lines[1] == f"{good}: valid"
    assert lines[2] == f'{bad}:5: error: node "a": depends_on names unknown node "zz"'
    assert lines[3] == f"{bad}: 1 error(s), 0 warning(s)"


def test_lint_exit_code_is_zero_for_advisories_unless_strict(tmp_path: Path) -> None:
    path = write(tmp_path, "w.yaml", WARNS)
    out, code = lint_paths([path], "text", strict=False)
    assert code == 0 and out.endswith(f"{path}: valid, 1 warning(s)")
    assert lint_paths([path], "text", strict=True)[1] == 1


def test_lint_strict_ignores_the_worst_case_price(tmp_path: Path) -> None:
    assert lint_paths([write(tmp_path, "v.yaml", VALID)], "text", strict=True)[1] == 0


def test_lint_json_lists_every_finding_with_its_location(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", BROKEN)
    out, code = lint_paths([path], "json", strict=False)
    rows = json.loads(out)
    assert code == 1
    assert rows == [
        {
            "file": str(path),
            "line": 5,
            "column": 18,
            "node": "a",
            "severity": "error",
            "code": "unknown-dependency",
            "message": 'depends_on names unknown node "zz"',
            "path": "$.nodes[0].depends_on[0]",
        }
    ]


def test_lint_github_annotates_with_file_line_and_title(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", BROKEN)
    out, code = lint_paths([path], "github", strict=False)
    assert code == 1
    first = out.splitlines()[0]
    assert first == (
        f'::error file={path},line=5,col=18,title=omg lint unknown-dependency (node "a")'
        '::depends_on names unknown node "zz"'
    )


def test_lint_github_escapes_data_and_properties() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    f = Finding("dir,x/g:1.yaml", 3, "warning", "c", "50%\nof it", node="n")
    out = github([(f.file, [f])])
    assert out.splitlines()[0] == (
        '::warning file=dir%2Cx/g%3A1.yaml,line=3,title=omg lint c (node "n")::50%25%0Aof it'
    )


def test_lint_github_shows_ten_errors_and_ten_warnings_then_counts_the_rest() -> None:
    found = [Finding("g.yaml", i, "error", "e", f"error {i}") for i in range(1, 13)]
    found += [Finding("g.yaml", i, "warning", "w", f"warning {i}") for i in range(20, 35)]
    found.append(Finding("g.yaml", None, "info", "worst-case", "worst case 3"))
    lines = github([("g.yaml", found)]).splitlines()
    assert sum(line.startswith("::error ") for line in lines) == 10
    assert sum(line.startswith("::warning ") for line in lines) == 10
    notices = [line for line in lines if line.startswith("::notice ")]
    assert notices[0] == "::notice file=g.yaml,title=omg lint worst-case::worst case 3"
    assert notices[1] == (
        "::notice file=g.yaml::2 more error(s) and 5 more warning(s) not shown; "
        "run `omg lint g.yaml` to see them all"
    )


def test_lint_collects_yaml_recursively_and_skips_hidden_directories(tmp_path: Path) -> None:
    a = write(tmp_path, "graphs/a.yaml", VALID)
    b = write(tmp_path, "graphs/sub/b.yml", VALID)
    write(tmp_path, "graphs/.hidden/c.yaml", BROKEN)
    write(tmp_path, "graphs/notes.txt", "not yaml")
    assert collect([tmp_path / "graphs"]) == [a, b]
    assert collect([a, tmp_path / "graphs"]) == [a, b], "each file once"


def test_lint_refuses_paths_that_are_not_there_as_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or directory") as err:
        lint_paths([tmp_path / "nope.yaml"], "text", strict=False)
    assert err.value.kind == "usage"
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match=r"no \*\.yaml or \*\.yml files"):
        lint_paths([tmp_path / "empty"], "text", strict=False)


def test_lint_command_runs_from_the_shell(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.yaml", BROKEN)
    run = [sys.executable, "-m", "omg.lint"]
    done = subprocess.run([*run, str(bad)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1
    assert f'{bad}:5: error: node "a": depends_on names unknown node "zz"' in done.stdout
    done = subprocess.run([*run, str(tmp_path / "nope")], capture_output=True, text=True)
    assert done.returncode == 2 and "no such file or directory" in done.stderr
    done = subprocess.run([*run, "--format", "json", str(CASES / "valid")], capture_output=True)
    assert done.returncode == 0 and json.loads(done.stdout)


def test_every_shipped_graph_lints_without_errors() -> None:
    shipped = sorted((ROOT / "graphs").glob("*.yaml"))
    assert shipped, "graphs/ holds no *.yaml: nothing shipped would be checked"
    out, code = lint_paths(shipped, "text", strict=False)
    assert code == 0, out
