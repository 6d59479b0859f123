"""Untrusted text is inert in GitHub's UI: a PR whose gate question and node output are hostile
(a graph's name cannot be: one not in run-id form is refused), and hostile comments, leave a
sticky comment, replies and step summaries that cmark-gfm renders with no element omg did not
write, the text verbatim, the marker intact."""

from __future__ import annotations

from collections.abc import Callable

from gfm import Page, read

from omg.github.markdown import marker_value, one_line

from .kit import Repo
from .test_pr_loop import replies, sticky

NAME = "x--y.b_table"
QUESTION = "Ship <b>it</b>? [y](https://evil.example) @everyone | `x`"
OUTPUT = "</table><tr><td>forged **b** \\| x --> y\n::error title=forged::fake annotation\n"
STRANGER = "/omg approve ok </table> **b** [l](https://evil.example) x --> y @everyone"
MALFORMED = "/omg **b**</table>x-->y<img/src=x>"

GRAPH = f"""\
name: "{NAME}"
on_fail: continue
nodes:
  - id: loud
    run: cat hostile.txt; exit 1
    worktree: lane  # the PR's code (the job's checkout is the base)
  - id: ok
    type: gate
    description: "{QUESTION}"
"""
#: The elements omg's reports are made of; a hostile text adds none.
OURS = {"h3", "p", "code", "a", "strong", "pre", "blockquote", "em"} | {
    *("table", "thead", "tbody", "tr", "th", "td"),
}


def report_is_ours(page: Page, server: str) -> None:
    assert set(page.tags) <= OURS, page.html
    assert page.tags.count("strong") <= 2 and page.tags.count("tr") in (0, 3)  # head, loud, ok
    assert all(h.startswith(server) for h in page.hrefs()), page.hrefs()
    assert one_line(NAME) in page.codes and one_line(QUESTION) in page.codes
    prose = "".join(page.prose)
    assert "forged" not in prose and "evil.example" not in prose and "-->" not in prose


def test_hostile_names_outputs_and_comments_render_as_text(github: Callable[[str], Repo]) -> None:
    gh = github(GRAPH)
    gh.push_pr(2, {"hostile.txt": OUTPUT})
    first = gh.run("pull_request", gh.pr_event("opened", 2))
    assert first.outputs["status"] == "paused", first.stderr
    server = first.env["GITHUB_SERVER_URL"]
    # the log: omg's one annotation for the failed node, and no line a node's output began
    [annotation] = [a for a in first.annotations if a.startswith("::error")]
    assert annotation.startswith("::error file=graphs/pr.yaml,title=omg%3A node loud failed")
    assert "%0A::error title=forged::fake annotation" in annotation  # on omg's line, escaped
    assert not [ln for ln in first.stderr.splitlines() if ln.lstrip().startswith("::")]

    stranger = gh.comment_event(2, STRANGER, "stranger", "NONE")
    refused = gh.run("issue_comment", stranger, actor="stranger")
    assert refused.rc == 0 and "refused" in refused.stderr, refused.stderr
    malformed = gh.run("issue_comment", gh.comment_event(2, MALFORMED, "octocat", "MEMBER"))
    assert malformed.rc == 0, malformed.stderr

    body = sticky(gh)  # one comment, found again by its marker and updated in place
    marker = f"<!-- omg:sticky pr=2 graph={marker_value(NAME)} -->"
    page = read(body)
    assert page.html.startswith(marker + "\n<h3>") and page.comments == [marker[4:-3]]
    report_is_ours(page, server)
    assert any(one_line(STRANGER) in c for c in page.codes)  # the refusal note, verbatim
    detail = 'node "loud" failed success_check exit_zero: exit code 1: </table><tr><td>forged **b**'
    assert any(c.startswith(detail) for c in page.codes)  # as far as the ledger's cut
    for job in (first, refused):
        summary = read(job.summary)
        report_is_ours(summary, server)
        assert summary.comments == []

    refusal, problem = (read(r) for r in replies(gh))
    assert refusal.tags == ["p", "code", "code"] and refusal.codes[0] == STRANGER
    assert "".join(refusal.prose).strip() == "@stranger omg refused : ."
    assert problem.tags[:2] == ["p", "code"] and problem.codes[0] == MALFORMED.split()[1]
    assert set(problem.tags) == {"p", "code"}
    assert refusal.comments[1:] == [" omg:to=stranger "] and len(refusal.comments) == 2
    skipped = read(malformed.summary)
    assert skipped.tags == ["h3", "p", "code"] and MALFORMED.split()[1] in skipped.codes[0]


def test_a_stranger_who_plants_omgs_markers_gets_neither_the_report_nor_silence(
    github: Callable[[str], Repo],
) -> None:
    gh = github(GRAPH)
    gh.push_pr(2, {"hostile.txt": "x\n"})
    marker = f"<!-- omg:sticky pr=2 graph={marker_value(NAME)} -->"
    planted = gh.api.add_comment(2, f"{marker}\nforged report", login="stranger")
    # ids go up by one: this forged reply, omg's sticky comment, then the stranger's command
    ahead = f"<!-- omg:reply={planted['id'] + 3} -->"
    # a person's comment never passes for omg's: neither its reply nor its recent answer
    gh.api.add_comment(2, f"{ahead}\n<!-- omg:to=stranger -->\nforged reply", login="stranger")
    first = gh.run("pull_request", gh.pr_event("opened", 2))
    assert first.outputs["status"] == "paused", first.stderr
    command = gh.comment_event(2, "/omg approve ok", "stranger", "NONE")
    assert f"<!-- omg:reply={command['comment']['id']} -->" == ahead
    refused = gh.run("issue_comment", command)
    assert refused.rc == 0, refused.stderr
    ours = [c for c in gh.api.comments_on(2) if c["user"]["type"] == "Bot"]
    assert [c["body"].startswith(marker) for c in ours].count(True) == 1
    assert planted["body"] == f"{marker}\nforged report"  # never edited on the stranger's behalf
    assert not [r for r in gh.api.calls("PATCH") if str(planted["id"]) in r.path]
    assert [c for c in ours if "omg refused" in c["body"]]  # answered despite the planted key
