"""`omg --version`: the version, and the commit a git install came from (PEP 610's record)."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from kit import clean_env, omg_in_process

from omg.cli.version import describe, origin

SHA = "0123456789abcdef0123456789abcdef01234567"


def installed(
    tmp_path: Path, direct_url: object | None, version: str = "1.2.3"
) -> metadata.Distribution:
    """A dist-info directory as pip leaves it, read by importlib's own reader."""
    info = tmp_path / f"omg-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: omg\nVersion: {version}\n")
    if direct_url is not None:
        text = direct_url if isinstance(direct_url, str) else json.dumps(direct_url)
        (info / "direct_url.json").write_text(text)
    return metadata.PathDistribution(info)


@pytest.mark.parametrize(
    ("record", "shown"),
    [
        (None, "omg 1.2.3"),
        (
            {"url": "https://github.com/acme/omg", "vcs_info": {"vcs": "git", "commit_id": SHA}},
            f"omg 1.2.3 (acme/omg@{SHA})",
        ),
        (
            {"url": "git@github.com:acme/omg.git", "vcs_info": {"vcs": "git", "commit_id": SHA}},
            f"omg 1.2.3 (acme/omg@{SHA})",
        ),
        (
            {
                "url": "https://bob:s3cr3t-t0ken@git.example.org/tools/omg.git",
                "vcs_info": {"vcs": "git", "commit_id": SHA, "requested_revision": "main"},
            },
            f"omg 1.2.3 (git https://git.example.org/tools/omg.git@{SHA})",
        ),
        (
            {"url": "file:///src/omg", "dir_info": {"editable": True}},
            "omg 1.2.3 (editable, file:///src/omg)",
        ),
        ({"url": "file:///src/omg", "dir_info": {}}, "omg 1.2.3 (file:///src/omg)"),
        # what is not a git commit or a directory names no origin, and a damaged record no error
        ({"url": "https://files.example.org/omg-1.2.3.tar.gz", "archive_info": {}}, "omg 1.2.3"),
        (
            {"url": "https://github.com/acme/omg", "vcs_info": {"vcs": "git", "commit_id": "main"}},
            "omg 1.2.3",
        ),
        ("{not json", "omg 1.2.3"),
        ([1, 2], "omg 1.2.3"),
        ({"url": "file:///a\x1b[31mred", "dir_info": {}}, "omg 1.2.3 (file:///a\\x1b[31mred)"),
    ],
)
def test_the_version_line_names_where_the_install_came_from(
    tmp_path: Path, record: object, shown: str
) -> None:
    assert describe(installed(tmp_path, record)) == shown


def test_a_github_install_gives_the_pin_omg_init_uses(tmp_path: Path) -> None:
    dist = installed(
        tmp_path,
        {
            "url": "git+https://github.com/acme/omg.git",
            "vcs_info": {"vcs": "git", "commit_id": SHA},
        },
    )
    found = origin(dist)
    assert found is not None and (found.repo, found.commit) == ("acme/omg", SHA)


def test_omg_version_answers_in_process_as_typer_does(tmp_path: Path) -> None:
    done = omg_in_process("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == describe() + "\n"
    assert done.stdout.startswith(f"omg {metadata.version('omg')}")


def test_python_m_omg_version_answers_as_typer_does_without_importing_typer(
    tmp_path: Path,
) -> None:
    fast = (
        "import runpy, sys; sys.argv = ['omg', '--version']\n"
        "runpy.run_module('omg', run_name='__main__')\n"
        "print('typer' in sys.modules, file=sys.stderr)"
    )
    slow = "import sys; sys.argv = ['omg', '--version']\nfrom omg.cli.app import app\napp()"
    res, typer = (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=clean_env(),
            cwd=tmp_path,
        )
        for code in (fast, slow)
    )  # fmt: skip
    assert res.returncode == 0 and typer.returncode == 0, res.stderr + typer.stderr
    assert res.stdout == typer.stdout and res.stderr.strip() == "False"
    assert res.stdout.startswith(f"omg {metadata.version('omg')}")
