"""The CLI's fast paths behave exactly as the typer app they stand in for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from omg.cli import HELP

ROOT = Path(__file__).resolve().parents[2]


def test_the_fast_help_is_the_help_typer_renders() -> None:
    code = "import sys; sys.argv = ['omg', '--help']\nfrom omg.cli.app import app\napp()"
    env = {**os.environ, "COLUMNS": "80"}
    typer_help = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    ).stdout
    assert typer_help == HELP


def test_omg_help_answers_without_importing_typer() -> None:
    code = (
        "import sys; sys.argv = ['omg', '--help']\nfrom omg.__main__ import main\nmain()\n"
        "print('typer' in sys.modules, file=sys.stderr)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.stdout == HELP and res.stderr.strip() == "False"


def test_omg_lint_answers_without_importing_typer_or_jsonschema() -> None:
    code = (
        f"import sys; sys.argv = ['omg', 'lint', {str(ROOT / 'graphs')!r}]\n"
        "import atexit\n"
        "atexit.register(lambda: print(sorted(m for m in ('typer', 'jsonschema', 'pygit2') "
        "if m in sys.modules), file=sys.stderr))\n"
        "from omg.__main__ import main\nmain()"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "demo.yaml: valid" in res.stdout
    assert res.stderr.strip().splitlines()[-1] == "[]"


#: What a leg of shell nodes that commits nothing has no use for before its first node runs.
NOT_BEFORE_A_SHELL_NODE = (
    *("pygit2", "typer", "uuid", "omg.modelproxy", "omg.git.repo"),
    *("omg.runners.claude.runner", "omg.runners.codex.runner"),
)


def test_a_shell_run_without_commits_reaches_its_first_node_without_git_or_typer(
    tmp_path: Path,
) -> None:
    (tmp_path / "g.yaml").write_text("name: g\nnodes:\n  - id: a\n    run: echo first-node\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Ada\n\temail = ada@example.com\n")
    seen = tmp_path / "seen.txt"
    code = (
        "import sys\n"
        "def hook(event, args):\n"
        "    if event == 'subprocess.Popen' and 'first-node' in str(args[1]):\n"
        f"        with open({str(seen)!r}, 'a') as f:\n"
        "            f.write('\\n'.join(sorted(sys.modules)) + '\\n--\\n')\n"
        "sys.addaudithook(hook)\n"
        "sys.argv = ['omg', 'run', 'g.yaml', '--no-commit']\n"
        "from omg.__main__ import main\nmain()"
    )
    env = {**os.environ, "HOME": str(home)}
    res = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert res.returncode == 0, res.stderr
    loaded = seen.read_text().split("\n--\n")[0].splitlines()
    assert "omg.leg.loop" in loaded  # the hook saw the leg's node
    assert [m for m in NOT_BEFORE_A_SHELL_NODE if m in loaded] == []
