"""The action installs codex only for a graph with codex nodes, at the one pin in
package.json (or a codex of that version already on PATH)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / ".github" / "install-codex.sh"
PIN = json.loads((ROOT / "package.json").read_text())["devDependencies"]["@openai/codex"]


def install(tmp_path: Path, graph: Path) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "bin" / "codex"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(f"#!/bin/sh\necho 'codex-cli {PIN}'\n")
    fake.chmod(0o755)
    env = {
        "PATH": f"{fake.parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "OMG_PYTHON_BIN": sys.executable,
    }
    return subprocess.run(
        ["bash", str(INSTALL), str(tmp_path / "prefix"), str(ROOT), "", str(graph)],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip


def test_the_codex_install_reads_the_one_pin_in_package_json() -> None:
    done = subprocess.run(
        ["bash", str(INSTALL), "--version-only", str(ROOT)], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.strip() == PIN, done.stderr


def test_codex_is_installed_only_for_a_graph_with_codex_nodes(tmp_path: Path) -> None:
    with_codex = install(tmp_path, ROOT / "graphs" / "cross-model.yaml")
    assert with_codex.returncode == 0, with_codex.stderr
    assert with_codex.stdout.strip() == str(tmp_path / "bin" / "codex")  # the pinned one on PATH
    without = install(tmp_path, ROOT / "graphs" / "review-loop.yaml")
    assert without.returncode == 0 and without.stdout == "", without.stderr
    assert not (tmp_path / "prefix").exists()


def test_the_action_passes_the_codex_it_installed_to_the_leg() -> None:
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert "codex-version" in action["inputs"]
    steps = {s.get("id"): s for s in action["runs"]["steps"]}
    # installed unless unwanted, or in a publish job (which runs no node)
    assert steps["codex"]["if"] == "inputs.codex-version != 'none' && inputs.job != 'publish'"
    assert steps["leg"]["env"]["OMG_CODEX_BIN"] == "${{ steps.codex.outputs.bin }}"
