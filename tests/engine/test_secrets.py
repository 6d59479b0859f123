"""Secrets: shell nodes and verify commands see a minimal environment unless a node names more;
what a node that was given one prints is masked in the run directory."""

from __future__ import annotations

from pathlib import Path

from .kit import ScriptedClaude, clean_env, omg_run, write_graph

SECRETS = {
    "GITHUB_TOKEN": "ghs_secret_github",
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "CLAUDE_CODE_OAUTH_TOKEN": "oauth-secret",
    "OPENAI_API_KEY": "sk-openai-secret",
    "SOME_RANDOM_SETTING": "random-value",
}


def _env_of(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep:
            out[name] = value
    return out


def test_shell_nodes_and_verify_commands_never_see_secrets(
    tmp_path: Path, omg, run_dir_check
) -> None:
    g = write_graph(
        tmp_path,
        """
        name: secrets
        nodes:
          - id: plain
            run: env
            success_check:
              verify: {command: env > verify-env.txt}
          - id: named
            run: env | tee named-env.txt
            env: [GITHUB_TOKEN, OPENAI_API_KEY]
          - id: valued
            run: env
            env: {DEPLOY_TARGET: staging}
    """,
    )
    r = omg_run(omg, g, env=clean_env(**SECRETS))
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)

    plain = _env_of(r.artifact("plain"))
    verify = _env_of((tmp_path / "verify-env.txt").read_text())
    for seen in (plain, verify):
        for name in SECRETS:
            assert name not in seen, f"{name} leaked into a child"
        assert "PATH" in seen and "HOME" in seen
        assert not any(v in "\n".join(seen.values()) for v in SECRETS.values())
        assert not any(k.startswith("OMG_") for k in seen)

    named = _env_of((tmp_path / "named-env.txt").read_text())  # what the node saw
    assert named["GITHUB_TOKEN"] == "ghs_secret_github"
    assert named["OPENAI_API_KEY"] == "sk-openai-secret"
    assert "ANTHROPIC_API_KEY" not in named and "CLAUDE_CODE_OAUTH_TOKEN" not in named
    kept = _env_of(r.artifact("named"))  # what omg kept of its output: masked
    assert kept["GITHUB_TOKEN"] == kept["OPENAI_API_KEY"] == "***"

    valued = _env_of(r.artifact("valued"))
    assert valued["DEPLOY_TARGET"] == "staging"
    assert "GITHUB_TOKEN" not in valued


def test_agent_nodes_get_only_their_runtime_auth(
    tmp_path: Path, omg, run_dir_check, claude: ScriptedClaude
) -> None:
    g = write_graph(
        tmp_path,
        """
        name: agentsecrets
        nodes:
          - id: agent
            prompt: Do the work.
            success_check:
              verify: {command: env > verify-env.txt}
    """,
    )
    r = omg_run(omg, g, env=claude.env(**SECRETS))
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    seen = claude.calls()[0]["env"]
    assert seen["ANTHROPIC_API_KEY"] == "sk-ant-secret"
    assert seen["CLAUDE_CODE_OAUTH_TOKEN"] == "oauth-secret"
    for name in ("GITHUB_TOKEN", "OPENAI_API_KEY", "SOME_RANDOM_SETTING"):
        assert name not in seen
    # the agent node's verify command is a shell child: no auth at all
    verify = _env_of((tmp_path / "verify-env.txt").read_text())
    for name in SECRETS:
        assert name not in verify


def test_a_note_between_legs_is_masked_by_the_snapshots_secrets(tmp_path: Path) -> None:
    """A refusal's words (a comment's text) may quote anything; the note is masked too."""
    import json

    from omg.graph.load import load_graph
    from omg.leg.loop import LegOptions
    from omg.leg.notes import note
    from omg.leg.start import Environment, start_run
    from omg.mask import Masker

    url, key = "https://u:pw-in-a-url@deploy.example", "secret-input-value-1"
    g = write_graph(
        tmp_path,
        """
        name: noted
        secrets: [DEPLOY_URL]
        inputs: {key: {secret: true}}
        nodes:
          - {id: ok, type: gate}
    """,
    )
    parent = {"PATH": "/usr/bin:/bin", "DEPLOY_URL": url, "GITHUB_TOKEN": "ghs_noteCanary0001"}
    env = Environment(tmp_path / "runs", tmp_path, parent, mask=Masker.from_env(parent))
    start_run(load_graph(g), g, {"key": key}, env, LegOptions(1), run_id="r")
    env.inputs = {"key": key}
    why = f"pasted {url}, {key} and ghs_noteCanary0001"
    note("r", env, "decision_refused", {"node_id": "ok", "by": "x", "reason": why}, "refused")
    text = (tmp_path / "runs" / "r" / "events.jsonl").read_text()
    assert json.loads(text.splitlines()[-1])["reason"] == "pasted ***, *** and ***"
    assert url not in text and key not in text and "ghs_noteCanary0001" not in text
