"""`omg init`: the workflows and a starter graph written into a repository, pinned, passing
omg lint, zizmor and actionlint; a file that differs is never overwritten."""

from __future__ import annotations

from pathlib import Path

import pygit2
from kit import omg_in_process

from omg.cli import exits
from tests.workflows.test_hygiene import ROOT, actionlint, load, zizmor

PIN = "acme/omg@" + "1" * 40
WORKFLOWS = ("omg-review.yml", "omg-resume.yml", "omg-lint.yml")


def init(repo: Path, *args: str) -> tuple[int, str]:
    done = omg_in_process("init", str(repo), *args, cwd=repo)
    return done.returncode, done.stdout + done.stderr


def test_init_into_an_empty_repository_writes_pinned_workflows_that_pass_every_check(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    pygit2.init_repository(str(repo))
    rc, out = init(repo, "--uses", PIN)
    assert rc == exits.PASSED, out
    assert "wrote      .github/workflows/omg-review.yml" in out and "secret" in out
    flows = [repo / ".github" / "workflows" / name for name in WORKFLOWS]
    for flow in flows[:2]:
        doc = load(flow)
        # the review workflow's leg is two jobs: the run job reads, the publish job writes
        runs, writes = ("run", "publish") if "run" in doc["jobs"] else ("leg", "leg")
        [step] = [s for s in doc["jobs"][runs]["steps"] if s.get("id") == "omg"]
        assert step["uses"] == PIN
        assert doc["jobs"][writes]["permissions"]["statuses"] == "write"
    assert f"git+https://github.com/acme/omg@{'1' * 40}" in flows[2].read_text()
    lint = omg_in_process("lint", "graphs/", ".github/workflows/", cwd=repo)  # as omg-lint.yml
    assert lint.returncode == 0, lint.stdout + lint.stderr
    done = zizmor(flows)
    assert done.returncode == 0, done.stdout + done.stderr
    done = actionlint([str(f) for f in flows])
    assert done.returncode == 0, done.stdout + done.stderr
    # run again: nothing differs, nothing is written
    rc, out = init(repo, "--uses", PIN)
    assert rc == exits.PASSED and out.count("unchanged") == 5, out


def test_init_keeps_a_hand_edited_workflow_and_says_how_to_compare(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    pygit2.init_repository(str(repo))
    mine = repo / ".github" / "workflows" / "omg-review.yml"
    mine.parent.mkdir(parents=True)
    mine.write_text("name: my own review\n")
    rc, out = init(repo, "--uses", PIN)
    assert rc == exits.REFUSED, out
    assert mine.read_text() == "name: my own review\n"
    assert "kept       .github/workflows/omg-review.yml: it differs" in out
    compare = f"omg init --uses {PIN} --show .github/workflows/omg-review.yml | diff -u"
    assert compare in out
    assert (repo / ".github" / "workflows" / "omg-resume.yml").is_file()  # the rest written
    shown = omg_in_process(
        "init", "--uses", PIN, "--show", ".github/workflows/omg-review.yml", cwd=repo
    )
    assert shown.returncode == 0 and f"uses: {PIN}" in shown.stdout


def test_init_refuses_a_pin_that_is_not_a_full_commit(tmp_path: Path) -> None:
    rc, out = init(tmp_path, "--uses", "acme/omg@v1")
    assert rc == exits.USAGE and "40-character commit" in out
    assert not (tmp_path / ".github").exists()


def test_the_templates_are_the_shipped_workflows_but_for_the_pin() -> None:
    """omg init writes what this repository runs: the shipped review and resume workflows with
    `uses: ./` replaced by the pinned action."""
    from omg.cli.init import Pin, render

    pin = Pin("acme/omg", "1" * 40)
    for name in ("omg-resume.yml", "omg-review.yml"):
        shipped = load(ROOT / ".github" / "workflows" / name)
        made = load(render(name, pin))
        for doc in (shipped, made):
            for job in doc["jobs"].values():
                for step in job["steps"]:
                    if step.get("uses", "").startswith(("./", "acme/omg@")):
                        step.pop("uses")
            doc["on"].get("pull_request", {}).pop("paths-ignore", None)
        assert made == shipped, name


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (links as where they point), to show nothing changed."""
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = b"-> " + str(p.readlink()).encode()
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out


def test_init_never_writes_through_a_link_planted_at_a_temporary_name(tmp_path: Path) -> None:
    """A link waiting where a temporary file might be made leads nowhere: omg writes in a
    directory of its own making, with names nobody could plant in advance."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    pygit2.init_repository(str(repo))
    outside.mkdir()
    victim = outside / "victim"
    victim.write_text("precious\n")
    flows = repo / ".github" / "workflows"
    flows.mkdir(parents=True)
    for name in WORKFLOWS:
        (flows / f".{name}.omg-init").symlink_to(victim)
    (repo / "graphs").mkdir()
    (repo / "graphs" / ".review-loop.yaml.omg-init").symlink_to(victim)
    rc, out = init(repo, "--uses", PIN)
    assert rc == exits.PASSED, out
    assert victim.read_text() == "precious\n"
    for name in WORKFLOWS:
        assert not (flows / name).is_symlink() and "omg" in (flows / name).read_text()
    assert not [p for p in repo.iterdir() if p.name.startswith(".omg-init")]  # cleaned up


def test_init_refuses_a_linked_directory_and_writes_nothing(tmp_path: Path) -> None:
    for linked in (".github", ".github/workflows", "graphs", "graphs/fragments"):
        repo, outside = tmp_path / linked.replace("/", "_") / "repo", tmp_path / "out" / linked
        pygit2.init_repository(str(repo))
        outside.mkdir(parents=True)
        (repo / linked).parent.mkdir(parents=True, exist_ok=True)
        (repo / linked).symlink_to(outside, target_is_directory=True)
        before = _tree(repo)
        rc, out = init(repo, "--uses", PIN)
        assert rc == exits.REFUSED, out
        assert f"{linked} is a symbolic link" in out and "nothing was written" in out, out
        assert not any(outside.iterdir()), linked
        assert _tree(repo) == before, linked


def test_init_refuses_a_linked_file_it_did_not_make(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "elsewhere.yml"
    pygit2.init_repository(str(repo))
    flows = repo / ".github" / "workflows"
    flows.mkdir(parents=True)
    (flows / "omg-lint.yml").symlink_to(outside)  # dangling: nothing there yet
    rc, out = init(repo, "--uses", PIN)
    assert rc == exits.REFUSED, out
    assert ".github/workflows/omg-lint.yml is a symbolic link" in out
    assert not outside.exists() and not (repo / "graphs").exists()


def test_init_refuses_a_file_where_a_directory_goes_before_writing_anything(
    tmp_path: Path,
) -> None:
    for blocker in (".github", "graphs", ".github/workflows/omg-lint.yml/"):
        repo = tmp_path / blocker.strip("/").replace("/", "_") / "repo"
        pygit2.init_repository(str(repo))
        path = repo / blocker.strip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        if blocker.endswith("/"):
            path.mkdir()  # a directory where a file goes
        else:
            path.write_text("not a directory\n")
        before = _tree(repo)
        rc, out = init(repo, "--uses", PIN)
        assert rc == exits.REFUSED, out
        assert blocker.strip("/") in out and "nothing was written" in out, out
        assert _tree(repo) == before, blocker


def test_init_keeps_a_file_that_is_not_utf8_and_never_crashes(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    pygit2.init_repository(str(repo))
    mine = repo / "graphs" / "review-loop.yaml"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"name: \xff\xfe mine\n")
    rc, out = init(repo, "--uses", PIN)
    assert rc == exits.REFUSED, out
    assert "kept       graphs/review-loop.yaml: it differs" in out
    assert mine.read_bytes() == b"name: \xff\xfe mine\n"
    assert (repo / ".github" / "workflows" / "omg-review.yml").is_file()
