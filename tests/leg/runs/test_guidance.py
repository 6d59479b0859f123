"""A person's words reach the loop: `omg resume --retry-failed --guidance TEXT` re-arms the
failed nodes and gives them the text as {{ guidance }} — data, never code, in a shell node too
— recorded with who gave it."""

from __future__ import annotations

from pathlib import Path

from kit import ScriptedClaude, omg_call, write_graph

from .helpers import child_env, events, run_path, state

HOSTILE = "use `$(touch pwned)`; then \"quote\" it & ${HOME} '\n**bold** <b>x</b>"

SHELL = """\
name: guided
nodes:
  - id: fix
    run: |
      printf '%s' {{ guidance }} > said.txt
      test -s said.txt || { echo "no guidance yet" >&2; exit 1; }
"""

AGENT = """\
name: guided
nodes:
  - id: impl
    prompt: |
      Implement the feature.
      A person said: {{ guidance }}
    success_check: {result_matches: '^DONE$'}
"""


def test_guidance_reaches_a_shell_node_as_data_and_is_recorded_with_who(tmp_path: Path) -> None:
    g = write_graph(tmp_path, SHELL)
    first = omg_call("run", str(g), "--no-commit", "--run-id", "r", cwd=tmp_path, env=child_env())
    assert first.returncode == 1, first.stderr
    again = omg_call("resume", "r", "--no-commit", "--retry-failed", "--guidance", HOSTILE,
                     "--by", "mona", cwd=tmp_path, env=child_env())  # fmt: skip
    assert again.returncode == 0, again.stderr + again.stdout
    assert (tmp_path / "said.txt").read_text() == HOSTILE  # byte for byte, never run
    assert not (tmp_path / "pwned").exists()
    rd = run_path(tmp_path, "r")
    [leg2] = [e for e in events(rd) if e["event"] == "run_started" and e["leg"] == 2]
    assert (leg2["guidance"], leg2["guidance_by"]) == (HOSTILE, "mona")
    assert (state(rd)["guidance"], state(rd)["guidance_by"]) == (HOSTILE, "mona")


def test_guidance_reaches_the_rerun_prompt_and_is_empty_before(tmp_path: Path) -> None:
    claude = ScriptedClaude(tmp_path / "stub")
    claude.replies(["not yet", "DONE"])
    g = write_graph(tmp_path, AGENT)
    env = claude.env()
    first = omg_call("run", str(g), "--no-commit", "--run-id", "r", cwd=tmp_path, env=env)
    assert first.returncode == 1, first.stderr
    again = omg_call("resume", "r", "--no-commit", "--retry-failed", "--guidance",
                     "use the v2 API", cwd=tmp_path, env=env)  # fmt: skip
    assert again.returncode == 0, again.stderr + again.stdout
    before, after = claude.prompts()
    assert before.rstrip().endswith("A person said:")
    assert after.rstrip().endswith("A person said: use the v2 API")


def test_guidance_without_retry_failed_is_a_usage_error(tmp_path: Path) -> None:
    g = write_graph(tmp_path, SHELL)
    omg_call("run", str(g), "--no-commit", "--run-id", "r", cwd=tmp_path, env=child_env())
    done = omg_call("resume", "r", "--no-commit", "--guidance", "x", cwd=tmp_path,
                    env=child_env())  # fmt: skip
    assert done.returncode == 2
    assert "--guidance goes with --retry-failed" in done.stderr
    empty = omg_call("resume", "r", "--no-commit", "--retry-failed", "--guidance", "  ",
                     cwd=tmp_path, env=child_env())  # fmt: skip
    assert empty.returncode == 2 and "the guidance is empty" in empty.stderr


def test_words_that_are_not_utf8_or_show_nothing_are_refused_naming_the_option(
    tmp_path: Path,
) -> None:
    """A byte that is no UTF-8 reaches Python's argv surrogate-escaped (``\\udcff`` for 0xff):
    refused as a usage error naming the option — nothing runs, nothing is recorded."""
    g = write_graph(tmp_path, SHELL)
    omg_call("run", str(g), "--no-commit", "--run-id", "r", cwd=tmp_path, env=child_env())
    before = len(events(run_path(tmp_path, "r")))
    bad = omg_call("resume", "r", "--no-commit", "--retry-failed", "--guidance", "use v2\udcff",
                   cwd=tmp_path, env=child_env())  # fmt: skip
    assert bad.returncode == 2, bad.stderr
    assert "--guidance is not valid UTF-8 (byte 0xFF at character 7)" in bad.stderr
    assert "Traceback" not in bad.stderr
    unseen = omg_call("resume", "r", "--no-commit", "--retry-failed", "--guidance",
                      "\u200b\u2060\u3164", cwd=tmp_path, env=child_env())  # fmt: skip
    assert unseen.returncode == 2 and "the guidance is empty" in unseen.stderr
    by = omg_call("resume", "r", "--no-commit", "--retry-failed", "--guidance", "fine",
                  "--by", "m\udcfe", cwd=tmp_path, env=child_env())  # fmt: skip
    assert by.returncode == 2 and "--by is not valid UTF-8 (byte 0xFE" in by.stderr
    assert len(events(run_path(tmp_path, "r"))) == before
