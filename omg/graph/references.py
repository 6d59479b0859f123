"""Placeholder references: every `{{ … }}` in an interpolated field, checked against the graph."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from omg.graph.feedback import closest, loop_text
from omg.graph.model import Graph, Node
from omg.graph.shell.programs import code_variable
from omg.graph.structured import output_ref
from omg.graph.tokens import TOKEN, Token, scan

FORMS = (
    "{{ inputs.<name> }}, {{ artifacts.<id> }} (optionally | inline), {{ feedback.<id> }}, "
    "{{ outputs.<id>.<field> }} or {{ guidance }}"
)
#: The fields sh runs, where a placeholder's position decides whether a value stays data
#: (``validate`` asks the shell scanner where each stands).
SHELL_FIELDS = ("run", "success_check.verify.command")
#: Where ``{{ guidance }}`` may stand: text an agent reads, or a command's data (never a path).
GUIDED_FIELDS = ("prompt", *SHELL_FIELDS)


@dataclass(frozen=True)
class RefProblem:
    """One unresolvable placeholder: node, field, offset of the token in the field's text."""

    node: str
    field: str
    offset: int
    text: str
    code: str
    message: str


class Reach:
    """Ancestor questions in O(1) after one pass: a bitset of ancestors per node."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.bit = {nid: 1 << i for i, nid in enumerate(graph.ids)}
        self.bits: dict[str, int] = {}
        for nid in graph.topo_order:
            acc = 0
            for p in graph.by_id[nid].depends_on:
                if p in self.bits:
                    acc |= self.bits[p] | self.bit[p]
            self.bits[nid] = acc

    def is_ancestor(self, a: str, n: str) -> bool:
        if n in self.bits:
            return bool(self.bits[n] & self.bit.get(a, 0))
        return a in self.graph.ancestors(n)  # a node on a cycle: no topological order


def check_references(graph: Graph) -> Iterator[RefProblem]:
    """Malformed tokens, unknown inputs and nodes, non-ancestor artifacts, rule 5 placements,
    and placeholders in an ``env:`` value that chooses code (a shell command's positions are
    ``validate``'s: it calls the scanner beside this check)."""
    reach = Reach(graph)
    for node in graph.nodes:
        for field, text in node.interpolated_fields():
            for tok in scan(text):
                for code, message in _judge(graph, reach, node, field, tok):
                    yield RefProblem(node.id, field, tok.start, text, code, message)
            if field.startswith("env."):
                yield from _code_value(node, field, text)


def _code_value(node: Node, field: str, text: str) -> Iterator[RefProblem]:
    """Placeholders in an ``env:`` value that a program runs or loads as code (``CC``, …)."""
    chooses = code_variable(field.removeprefix("env."))
    if chooses is None:
        return
    for m in TOKEN.finditer(text):
        yield RefProblem(
            node.id, field, m.start(), text, "placeholder-position",
            f"{field}: {m.group(0)} would set {chooses}, so a value would choose what runs; "
            "write the program into the command, and pass the value as data in a variable "
            "of another name",
        )  # fmt: skip


def _judge(
    graph: Graph, reach: Reach, node: Node, field: str, tok: Token
) -> Iterator[tuple[str, str]]:
    head = f"{field}: {tok.text}"
    if tok.kind is None:
        yield (
            "placeholder-malformed",
            (
                f"{head} looks like a placeholder but is none of {FORMS}"
                f"{_repair(tok.text)} — it would reach the "
                f"{_reader(field)} verbatim"
            ),
        )
        return
    if field == "worktree.branch" and tok.kind != "inputs":
        yield (
            "placeholder-branch",
            (
                f"{head} — a worktree branch is chosen before any node runs "
                "and shared by every node in the worktree, so it may only "
                "use {{ inputs.<name> }}"
            ),
        )
        return
    if tok.kind == "guidance":  # a person's words, given with --retry-failed; "" when none
        if field not in GUIDED_FIELDS:
            yield (
                "placeholder-guidance",
                f"{head} — a person's words may stand in a prompt or (as data) in a command, "
                f"not in {field}; use it in the node's prompt, run or verify command",
            )
        return
    if tok.kind == "inputs":
        if tok.ref not in graph.input_names:
            declared = ", ".join(sorted(graph.input_names)) or "none"
            yield (
                "placeholder-input",
                (
                    f'{head} references input "{tok.ref}", which the graph '
                    f"does not declare (declared: {declared}); add it to inputs: or fix "
                    f"the name{closest(tok.ref, graph.input_names)}"
                ),
            )
        return
    if tok.kind == "outputs":
        yield from output_ref(graph, reach.is_ancestor, node, head, tok)
        return
    if tok.ref not in graph.by_id:
        yield (
            "placeholder-node",
            (
                f'{head} references "{tok.ref}", which is not a node in the '
                f"graph{closest(tok.ref, graph.ids)}"
            ),
        )
        return
    if tok.kind == "artifacts":
        if tok.ref == node.id:
            yield (
                "placeholder-own-artifact",
                (
                    f"{head} references this node's own artifact, "
                    "which cannot exist while the node runs"
                ),
            )
        elif not reach.is_ancestor(tok.ref, node.id):
            yield (
                "placeholder-not-ancestor",
                (
                    f'{head} references node "{tok.ref}", which is '
                    f'not an ancestor of "{node.id}" — its artifact '
                    "may not exist yet when this node runs; add "
                    f'"{tok.ref}" to depends_on (directly or '
                    "through a parent)"
                ),
            )
        return
    yield from _feedback(graph, node, head, tok)


def _feedback(graph: Graph, node: Node, head: str, tok: Token) -> Iterator[tuple[str, str]]:
    """Rule 5: ``{{ feedback.<id> }}`` takes no filter and lives inside <id>'s loop."""
    if tok.inline:
        yield (
            "feedback-filter",
            (
                f"{head} — a feedback placeholder takes no filter: "
                f"{{{{ feedback.{tok.ref} }}}} always inlines the payload"
            ),
        )
        return
    declarer = graph.by_id[tok.ref]
    if declarer.feedback is None:
        yield (
            "feedback-no-arc",
            (
                f'{head} references "{tok.ref}", which declares no feedback: '
                "arc — the placeholder could never resolve; declare feedback: "
                f'{{rerun, max}} on "{tok.ref}" or drop the placeholder'
            ),
        )
        return
    body = graph.arcs.get(tok.ref, ())
    if body and node.id not in body:
        yield (
            "feedback-outside-body",
            (
                f'{head} is only legal inside the loop of "{tok.ref}" '
                f"({loop_text(body)}) — outside it the placeholder would "
                "be empty forever; quote it in a node of that loop"
            ),
        )


def _reader(field: str) -> str:
    return (
        "prompt"
        if field == "prompt"
        else "command"
        if field in ("run",) or field.endswith("command")
        else "value"
    )


def _repair(text: str) -> str:
    """`` (did you mean {{ inputs.x }}?)`` when a plain spelling fix makes the token valid."""
    inner = text[2:-2].strip()
    word, dot, rest = inner.partition(".")
    fixes = {"input": "inputs", "artifact": "artifacts", "feedbacks": "feedback"}
    fixes["output"] = "outputs"
    fixed_word = fixes.get(word.lower(), word.lower())
    rest = " | ".join(part.strip() for part in rest.split("|"))
    guess = f"{{{{ {fixed_word}{dot}{rest} }}}}"
    return f" (did you mean {guess}?)" if dot and TOKEN.fullmatch(guess) else ""
