"""A graph loaded from a commit's tree: the graph file and its fragments as that commit has
them, whatever the checkout on disk holds; links, paths out of the tree and oversized files
refused with the commit named; a commit the clone lacks fetched by its id."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest
from gitkit import SIG, make_repo, runner
from pygit2.enums import FileMode

from omg.git.treefiles import TreeFiles
from omg.graph.load import check_file

GRAPH = "name: g\nnodes:\n  - id: a\n    use: step\n"
STEP = "fragment: step\ndescription: one step.\nnode:\n  run: echo {word}\n"


def committed(path: Path) -> tuple[pygit2.Repository, str]:
    repo = make_repo(
        path, {"graphs/g.yaml": GRAPH, "graphs/fragments/step.yaml": STEP.format(word="base")}
    )
    return repo, str(repo.head.target)


def test_a_graph_and_its_fragment_come_from_the_commit_not_the_checkout(tmp_path: Path) -> None:
    _, base = committed(tmp_path / "r")
    # the checkout says otherwise: another command, and the gate-free graph a PR might bring
    (tmp_path / "r" / "graphs" / "fragments" / "step.yaml").write_text(STEP.format(word="disk"))
    (tmp_path / "r" / "graphs" / "g.yaml").write_text("name: other\nnodes: [{id: b, run: x}]\n")
    graph, found = check_file(Path("graphs/g.yaml"), runner(tmp_path / "r").files_at(base))
    assert graph is not None, found
    assert graph.name == "g" and graph.node("a").run == "echo base"
    assert list(graph.data["resolved_from"]) == ["graphs/fragments/step.yaml"]


def tree_with(repo: pygit2.Repository, entries: dict[str, tuple[bytes, int]]) -> str:
    index = pygit2.Index()
    for path, (data, mode) in entries.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), mode))
    tree = index.write_tree(repo)
    return str(repo.create_commit(None, SIG, SIG, "odd files", tree, []))


@pytest.mark.parametrize(
    ("path", "kind", "error"),
    [
        ("graphs/g.yaml", "file", ""),
        ("graphs/nothing.yaml", "missing", "no such file in commit"),
        ("graphs/link.yaml", "link", "a link in commit"),
        ("graphs", "missing", "no such file in commit"),
        ("../outside.yaml", "missing", "no such file in commit"),
        ("/etc/passwd", "missing", "no such file in commit"),
        ("graphs/big.yaml", "file", "more than the 64 omg reads"),
    ],
)
def test_what_a_tree_path_is_and_what_reading_it_says(
    tmp_path: Path, path: str, kind: str, error: str
) -> None:
    repo, _ = committed(tmp_path / "r")
    sha = tree_with(
        repo,
        {
            "graphs/g.yaml": (GRAPH.encode(), FileMode.BLOB),
            "graphs/link.yaml": (b"g.yaml", FileMode.LINK),
            "graphs/big.yaml": (b"#" * 65, FileMode.BLOB),
        },
    )
    files = TreeFiles(repo, sha, limit=64)
    assert files.kind(Path(path), Path(path).parent, Path()) == kind
    if not error:
        assert files.read(Path(path), 1 << 20) == GRAPH.encode()
        return
    with pytest.raises(OSError) as caught:
        files.read(Path(path), 1 << 20)
    assert error in str(caught.value.strerror) and sha[:12] in str(caught.value.strerror)


def test_a_fragment_that_is_a_link_in_the_commit_is_refused_by_name(tmp_path: Path) -> None:
    repo, _ = committed(tmp_path / "r")
    sha = tree_with(
        repo,
        {
            "graphs/g.yaml": (GRAPH.encode(), FileMode.BLOB),
            "graphs/fragments/step.yaml": (b"/etc/passwd", FileMode.LINK),
        },
    )
    graph, found = check_file(Path("graphs/g.yaml"), TreeFiles(repo, sha))
    assert graph is None
    [error] = [f for f in found if f.severity == "error"]
    assert "graphs/fragments/step.yaml is a link, which omg does not follow" in error.message


def test_a_commit_the_clone_lacks_is_fetched_by_its_id(tmp_path: Path, bare: Path) -> None:
    repo, first = committed(tmp_path / "r")
    repo.remotes.create("origin", f"file://{bare}")
    ours = runner(tmp_path / "r")
    ours.push("origin", ["refs/heads/main"])
    clone = pygit2.init_repository(str(tmp_path / "c"), initial_head="main")
    clone.remotes.create("origin", f"file://{bare}")
    theirs = runner(tmp_path / "c")
    assert not theirs.has_commit(first)
    assert theirs.fetch_commit("origin", first, "refs/heads/main")
    assert theirs.files_at(first).read(Path("graphs/g.yaml"), 1 << 20) == GRAPH.encode()
    missing = "0" * 40
    assert not theirs.fetch_commit("origin", missing, "refs/heads/nowhere")
    assert os.listdir(tmp_path / "c") == [".git"]  # nothing checked out or written there
