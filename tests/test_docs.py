"""The README and the docs pages say only what omg does: every `omg` command they show is one
omg's command line accepts, every option they name exists, every relative link reaches a file
and a heading, and the README stays a front door that links to every page and back."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main
from mdpages import DOCS, PAGES, README, ROOT, all_blocks, anchors, links, unfenced

from omg.cli.app import app
from omg.cli.init import FILES

OMG: Any = typer.main.get_command(app)
#: What splits a shell line into the commands it runs.
OPERATORS = {"&&", "||", "|", ";", "&", ">", ">>", "<"}


def parse(argv: list[str]) -> None:
    """Parse ``omg ARGV`` as the command line would — the command, its options and their
    values, its required arguments — without running it (an eager `--version` stops there)."""
    try:
        ctx = OMG.make_context("omg", list(argv))
        name, command, rest = OMG.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
        command.make_context(name, rest, parent=ctx)
    except typer.Exit:
        pass


def commands(script: str) -> list[list[str]]:
    """The argument lists of the `omg` commands a shell script runs (after `&&`, in a pipe,
    after `VAR=value` assignments), its continuation lines joined and comments dropped."""
    out = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line.removeprefix("$ "), posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words, part = list(lexer), []
        for word in [*words, ";"]:
            if word not in OPERATORS:
                part.append(word)
                continue
            while part and re.match(r"^[A-Z_][A-Z0-9_]*=", part[0]):
                part.pop(0)
            if part and part[0] == "omg":
                out.append(part[1:])
            part = []
    return out


SHOWN = [
    (b.where, argv)
    for b in all_blocks()
    if b.lang == "sh" or (b.lang == "" and b.text.startswith("$ omg "))
    for argv in commands(
        b.text if b.lang == "sh" else "\n".join(s for s in b.text.splitlines() if s[:2] == "$ ")
    )
]


def test_the_pages_show_omg_commands() -> None:
    assert len(SHOWN) > 10 and any(w.startswith("README.md") for w, _ in SHOWN)
    assert any(w.startswith("docs/") for w, _ in SHOWN)


@pytest.mark.parametrize(
    ("where", "argv"), SHOWN, ids=[f"{w}:{' '.join(a)[:50]}" for w, a in SHOWN]
)
def test_every_omg_command_in_a_shell_block_is_one_omg_accepts(where: str, argv: list[str]) -> None:
    parse(argv)  # raises, naming the option or argument, when omg would refuse the line


def test_the_command_parser_refuses_what_omg_refuses() -> None:
    """The check above can fail: an option a command lacks, a command omg lacks, a missing
    argument, a value of the wrong kind."""
    for argv in (
        ["stats", "--sinse", "7d"],
        ["frobnicate"],
        ["run"],
        ["report", "r", "--html"],
        ["run", "g.yaml", "--concurrency", "many"],
    ):
        with pytest.raises(typer.TyperException):
            parse(argv)
    parse(["--version"])
    assert commands('OMG_CLAUDE_BIN=x omg run g \\\n  -i task="a b" && omg status | jq') == [
        ["run", "g", "-i", "task=a b"],
        ["status"],
    ]


def options(name: str | None) -> set[str]:
    """The long options of ``omg NAME`` (of `omg` itself when ``name`` is None), and omg's own."""
    found = {o for p in OMG.params for o in [*p.opts, *p.secondary_opts]}
    if name is not None:
        command = OMG.commands[name]
        found |= {o for p in command.params for o in [*p.opts, *p.secondary_opts]}
    return found


def spans() -> list[tuple[str, str]]:
    """Every code span of the pages that shows an `omg` command, with its page."""
    return [
        (page.relative_to(ROOT).as_posix(), m.group(1))
        for page in PAGES
        for m in re.finditer(r"`(omg [^`]+)`", unfenced(page))
    ]


def test_every_omg_command_in_the_text_names_a_command_and_options_it_has() -> None:
    """A code span such as `omg resume RUN --retry-failed --guidance TEXT` names a real command
    and real options of it (values and placeholders aside)."""
    shown, wrong = spans(), []
    assert len(shown) > 20
    for page, span in shown:
        words = [w.strip("[]") for w in span.split("|")[0].split()[1:]]
        name = None if not words or words[0].startswith("-") else words[0]
        if name is not None and name not in OMG.commands:
            wrong.append(f"{page}: `{span}`: omg has no command {name!r}")
            continue
        have = options(name)
        wrong += [
            f"{page}: `{span}`: omg {name or ''} has no option {w.split('=')[0]}"
            for w in words
            if w.startswith("--") and w.split("=")[0] not in have
        ]
    assert not wrong, "\n".join(wrong)


def test_every_file_omg_init_shows_is_one_it_writes() -> None:
    """`omg init --show FILE` takes the path of a file `omg init` writes; the README names them
    all (the review workflow it shows in full)."""
    shown = {argv[argv.index("--show") + 1] for _, argv in SHOWN if "--show" in argv}
    assert shown - {"FILE"} <= set(FILES.values()), shown
    readme = [argv for w, argv in SHOWN if w.startswith("README.md") and "--show" in argv]
    named = {argv[argv.index("--show") + 1] for argv in readme}
    assert named | {".github/workflows/omg-review.yml"} == set(FILES.values())


LINKS = [
    (page, line, target)
    for page in [*PAGES, ROOT / "DESIGN.md"]
    for line, target in links(page)
    if not re.match(r"^[a-z]+:", target)  # https:, mailto:
]


def test_the_pages_link_to_each_other() -> None:
    assert any(t.startswith("docs/") for p, _, t in LINKS if p == README)
    assert any("#" in t for _, _, t in LINKS)


@pytest.mark.parametrize(
    ("page", "line", "target"),
    LINKS,
    ids=[f"{p.relative_to(ROOT).as_posix()}:{n}:{t}" for p, n, t in LINKS],
)
def test_every_relative_link_reaches_a_file_and_its_heading(
    page: Path, line: int, target: str
) -> None:
    path, _, anchor = target.partition("#")
    reached = (page.parent / path).resolve() if path else page
    assert reached.is_file(), f"{page.name}:{line}: {target} reaches no file"
    assert ROOT in reached.parents, f"{page.name}:{line}: {target} leaves the repository"
    if anchor:
        assert reached.suffix == ".md", f"{page.name}:{line}: an anchor into {reached.name}"
        found = anchors(reached)
        assert anchor in found, f"{page.name}:{line}: {reached.name} has no #{anchor}: {found}"


def test_the_link_check_is_able_to_fail(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# A title, with `code`\n\n## GitHub's rules — here\n\n[x](q.md) `[y](z.md)`\n")
    assert anchors(page) == {"a-title-with-code", "githubs-rules--here"}
    assert links(page) == [(5, "q.md")]


def test_the_readme_links_to_every_page_and_every_page_back() -> None:
    readme = {t.partition("#")[0] for p, _, t in LINKS if p == README}
    pages = sorted(DOCS.glob("*.md"))
    assert pages, "the docs pages are in docs/"
    for page in pages:
        assert f"docs/{page.name}" in readme, f"README.md does not link to docs/{page.name}"
        back = {t.partition("#")[0] for p, _, t in LINKS if p == page}
        assert "../README.md" in back, f"docs/{page.name} does not link back to the README"


def test_the_readme_stays_a_front_door() -> None:
    """What omg is, the demo, one graph, how to use it, the commands, and links: the rest is
    on the docs pages."""
    assert len(README.read_text().splitlines()) <= 250
