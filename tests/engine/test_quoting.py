"""Placeholders in `run:` and `verify.command` are data: shell-quoted, never spliced as code."""

from __future__ import annotations

from pathlib import Path

from .kit import omg_run, write_graph

HOSTILE = {
    "semi": "a; touch pwned-semi",
    "subst": "$(touch pwned-subst)",
    "tick": "`touch pwned-tick`",
    "quote": "it's \"quoted\" 'twice'; touch pwned-quote",
    "newline": "line1\ntouch pwned-newline",
}


def _pwned(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("pwned*"))


def test_inputs_are_quoted_in_run_and_verify(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: quoting
        inputs: [semi, subst, tick, quote, newline]
        nodes:
          - id: echo
            run: >-
              printf '%s|' {{ inputs.semi }} {{ inputs.subst }} {{ inputs.tick }}
              {{ inputs.quote }} {{ inputs.newline }}
            success_check:
              verify:
                command: >-
                  test {{ inputs.semi }} = 'a; touch pwned-semi' &&
                  echo {{ inputs.subst }} {{ inputs.quote }}
    """,
    )
    args = [a for name, value in HOSTILE.items() for a in ("-i", f"{name}={value}")]
    r = omg_run(omg, g, *args)
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)
    assert _pwned(tmp_path) == []
    assert r.artifact("echo") == "|".join(HOSTILE.values()) + "|"
    assert state["nodes"]["echo"]["provenance"] == "verified"
    assert state["inputs"] == HOSTILE


def test_artifacts_and_feedback_are_quoted_too(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: relay
        nodes:
          - id: source
            run: printf '%s' "'; touch pwned-artifact; echo '"
          - id: relay
            depends_on: [source]
            run: printf '[%s]' {{ artifacts.source | inline }}
          - id: impl
            depends_on: [relay]
            run: printf '[%s]' {{ feedback.review }}
          - id: review
            depends_on: [impl]
            run: |
              if [ -f reviewed ]; then echo ok; exit 0; fi
              touch reviewed; printf '%s' '$(touch pwned-feedback)'; exit 1
            feedback: {rerun: impl, max: 1}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    assert _pwned(tmp_path) == []
    assert r.artifact("relay") == "['; touch pwned-artifact; echo ']"
    assert r.artifact("impl") == "[$(touch pwned-feedback)]"
