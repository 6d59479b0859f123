"""Secrets: shell nodes and verify commands see a minimal environment unless a node names more;
what a node that was given one prints is masked in the run directory."""

from __future__ import annotations

from pathlib import Path

from kit import ScriptedClaude, clean_env, omg_run, write_graph

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
    assert "OPENAI_API_KEY" not in named  # a model key reaches no node, named or not
    assert "ANTHROPIC_API_KEY" not in named and "CLAUDE_CODE_OAUTH_TOKEN" not in named
    kept = _env_of(r.artifact("named"))  # what omg kept of its output: masked
    assert kept["GITHUB_TOKEN"] == "***"

    valued = _env_of(r.artifact("valued"))
    assert valued["DEPLOY_TARGET"] == "staging"
    assert "GITHUB_TOKEN" not in valued


def test_agent_nodes_get_only_a_placeholder_and_omgs_proxy(
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
    assert seen["ANTHROPIC_API_KEY"].startswith("omg-")  # its placeholder: omg holds the key
    assert seen["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")  # omg's model proxy
    for name in (
        "GITHUB_TOKEN",
        "OPENAI_API_KEY",
        "SOME_RANDOM_SETTING",
        "CLAUDE_CODE_OAUTH_TOKEN",
    ):
        assert name not in seen
    # the agent node's verify command is a shell child: no auth at all
    verify = _env_of((tmp_path / "verify-env.txt").read_text())
    for name in SECRETS:
        assert name not in verify


def test_a_note_between_legs_is_masked_by_the_snapshots_secrets(tmp_path: Path) -> None:
    """A refusal's words (a comment's text) may quote anything: the note on its own ref is
    masked, and so is the event the next leg folds it in as."""
    import json

    import pygit2

    from omg.graph.load import load_graph
    from omg.leg.commits import attach
    from omg.leg.decisions import Decision
    from omg.leg.loop import LegOptions
    from omg.leg.notes import note
    from omg.leg.start import Environment, resume_run, snapshot_mask, start_run
    from omg.mask import Masker
    from omg.state.store import RunDir

    repo = pygit2.init_repository(str(tmp_path), initial_head="main")
    sig = pygit2.Signature("t", "t@example.com")
    repo.create_commit("HEAD", sig, sig, "init", repo.TreeBuilder().write(), [])
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

    def env() -> Environment:
        e = Environment(tmp_path / "runs", tmp_path, parent, mask=Masker.from_env(parent))
        e.commits = attach(tmp_path, "r", push=None, base="HEAD", warn=print, tokens=())
        e.inputs = {"key": key}
        return e

    start_run(load_graph(g), g, {"key": key}, env(), LegOptions(1), run_id="r")
    rundir = RunDir(tmp_path / "runs" / "r")
    rundir.mask = snapshot_mask(env(), rundir.read_state()["graph"])
    why = f"pasted {url}, {key} and ghs_noteCanary0001"
    fields = {"node_id": "ok", "by": "x", "reason": why}
    commits = env().commits
    assert commits is not None
    assert note("r", rundir, commits, "decision_refused", fields, "refused-c1", "refused")
    [sha] = commits.repo.local_notes("r").values()
    noted = commits.repo.read_note(sha).decode()
    assert json.loads(noted)["reason"] == "pasted ***, *** and ***", noted
    approve = Decision("ok", approve=True, by="alice")
    resume_run("r", env(), LegOptions(1), decision=approve)  # folds the note in
    text = (tmp_path / "runs" / "r" / "events.jsonl").read_text()
    assert [json.loads(x)["reason"] for x in text.splitlines() if "refused" in x] == [
        "pasted ***, *** and ***"
    ]
    for secret in (url, key, "ghs_noteCanary0001"):
        assert secret not in text and secret not in noted
