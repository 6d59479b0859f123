"""The stand-in's OpenAI Responses API (``POST /v1/responses``, streamed), as the codex CLI
speaks it: the request read into a script ``Request``, a rule's turn written back as the
server-sent events codex accepts (text, a shell or patch tool call, usage, a failure)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping
from typing import Any

from omg.replyschema import CORRECTION_OPENING
from omg.stubmodel.script import Failure, Turn

#: The event names of one streamed response, in the order the API sends them.
CREATED, COMPLETED, FAILED = "response.created", "response.completed", "response.failed"
#: The error code a failed response gives for a context window that is full.
CONTEXT_CODE = "context_length_exceeded"
#: The script's tool names that run a shell command in codex, and that write a file.
SHELL_TOOLS = ("exec_command", "shell", "Bash")
WRITE_TOOLS = ("Write",)


def is_responses(path: str) -> bool:
    """Whether a POST path is the Responses API's."""
    return path.split("?", 1)[0].rstrip("/").endswith("/responses")


def prompt_and_turn(body: Mapping[str, Any]) -> tuple[str, int]:
    """The last user prompt of a request (its environment context left out), and how many tool
    calls the model has made since it (a rule's ``turns`` index)."""
    items = body.get("input")
    prompt, turn = "", 0
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if item.get("role") == "user" and kind in (None, "message"):
            text = _text(item.get("content"))
            if text.lstrip().startswith("<environment_context>"):
                continue
            prompt, turn = text, 0
        elif kind in ("function_call", "custom_tool_call"):
            turn += 1
    return prompt, turn


def asks_schema(body: Mapping[str, Any]) -> bool:
    """Whether the request asks for a reply in a JSON Schema (``--output-schema``)."""
    text = body.get("text")
    form = text.get("format") if isinstance(text, dict) else None
    return isinstance(form, dict) and form.get("type") == "json_schema"


def corrected(body: Mapping[str, Any]) -> bool:
    """Whether a user message of the request is omg's correction turn (output_schema)."""
    items = body.get("input")
    return any(
        isinstance(item, dict)
        and item.get("role") == "user"
        and CORRECTION_OPENING in _text(item.get("content"))
        for item in (items if isinstance(items, list) else [])
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict) and "text" in c)


def code_mode(body: Mapping[str, Any]) -> bool:
    """Whether codex offered its tools in code mode (JavaScript through the ``exec`` tool)
    rather than as top-level function tools (``exec_command``)."""
    tools = body.get("tools")
    names = (
        {t.get("name") for t in tools if isinstance(t, dict)} if isinstance(tools, list) else set()
    )
    return "exec_command" not in names


def command_of(turn: Turn) -> str:
    """The shell command a tool turn stands for: a shell tool's command, a patch, a Write."""
    given = turn.input
    if turn.tool in WRITE_TOOLS:
        path, content = str(given.get("file_path", "")), str(given.get("content", ""))
        lines = "".join(f"+{line}\n" for line in content.splitlines())
        patch = f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch"
        return f"apply_patch <<'OMG_PATCH'\n{patch}\nOMG_PATCH"
    if turn.tool == "apply_patch":
        return f"apply_patch <<'OMG_PATCH'\n{given.get('patch', '')}\nOMG_PATCH"
    cmd = given.get("cmd", given.get("command", ""))
    return " ".join(shlex.quote(str(c)) for c in cmd) if isinstance(cmd, list) else str(cmd)


def output_items(turn: Turn, code: bool, n: int) -> list[dict[str, Any]]:
    """The output items of one turn: its text message, then its tool call."""
    items: list[dict[str, Any]] = []
    said = turn.text if turn.structured is None else turn.structured  # codex: JSON as text
    if said:
        items.append({
            "type": "message", "id": f"msg_omg{n:06d}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": said, "annotations": []}],
        })  # fmt: skip
    if turn.tool:
        cmd = command_of(turn)
        if code:
            script = f"const r = await tools.exec_command({{cmd: {json.dumps(cmd)}}});\ntext(r);"
            items.append({
                "type": "custom_tool_call", "id": f"ctc_omg{n:06d}", "status": "completed",
                "call_id": f"call_omg{n:06d}", "name": "exec", "input": script,
            })  # fmt: skip
        else:
            items.append({
                "type": "function_call", "id": f"fc_omg{n:06d}", "status": "completed",
                "call_id": f"call_omg{n:06d}", "name": "exec_command",
                "arguments": json.dumps({"cmd": cmd}),
            })  # fmt: skip
    return items


def usage(turn: Turn, prompt: str) -> dict[str, Any]:
    """The response's usage: the turn's own counts, else plausible ones from the text sizes."""
    given = turn.usage
    inp = int(given.get("input_tokens", max(1, len(prompt) // 4)))
    out = int(given.get("output_tokens", max(1, (len(turn.text) + 20 * bool(turn.tool)) // 4)))
    cached = int(given.get("cached_tokens", given.get("cache_read_input_tokens", 0)))
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": inp + out,
    }


def sse(
    response_id: str, model: str, items: list[dict[str, Any]], used: Mapping[str, Any]
) -> Iterator[bytes]:
    """One completed response as the events the API streams for it."""
    shell = {
        "id": response_id,
        "object": "response",
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    yield _event(CREATED, {"response": shell})
    yield _event("response.in_progress", {"response": shell})
    for i, item in enumerate(items):
        opened = {**item}
        if item["type"] == "message":
            opened["content"] = []
        yield _event("response.output_item.added", {"output_index": i, "item": opened})
        if item["type"] == "message":
            text = item["content"][0]["text"]
            base = {"item_id": item["id"], "output_index": i, "content_index": 0}
            yield _event("response.output_text.delta", {**base, "delta": text})
            yield _event("response.output_text.done", {**base, "text": text})
        elif item["type"] == "function_call":
            base = {"item_id": item["id"], "output_index": i}
            yield _event(
                "response.function_call_arguments.delta", {**base, "delta": item["arguments"]}
            )
            yield _event(
                "response.function_call_arguments.done", {**base, "arguments": item["arguments"]}
            )
        else:
            base = {"item_id": item["id"], "output_index": i}
            yield _event("response.custom_tool_call_input.delta", {**base, "delta": item["input"]})
            yield _event("response.custom_tool_call_input.done", {**base, "input": item["input"]})
        yield _event("response.output_item.done", {"output_index": i, "item": item})
    done = {**shell, "status": "completed", "output": items, "usage": dict(used)}
    yield _event(COMPLETED, {"response": done})


def failed(response_id: str, model: str, code: str, message: str) -> Iterator[bytes]:
    """A response that fails after it started (e.g. a full context window)."""
    shell = {
        "id": response_id,
        "object": "response",
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    yield _event(CREATED, {"response": shell})
    gone = {**shell, "status": "failed", "error": {"code": code, "message": message}}
    yield _event(FAILED, {"response": gone})


def error_body(fail: Failure) -> dict[str, Any]:
    """An HTTP error answer's body, as the Responses API words one."""
    if fail.limit is not None:  # a subscription's usage window, as codex's backend words it
        resets = 3600 if fail.resets_in is None else int(fail.resets_in)
        said = fail.message or f"You've hit your {fail.limit} limit"
        return {"error": {"type": "usage_limit_reached", "message": said, "plan_type": "plus",
                          "resets_in_seconds": resets}}  # fmt: skip
    kinds = {401: "invalid_api_key", 403: "permission_denied", 429: "rate_limit_exceeded"}
    code = kinds.get(fail.status, "server_error" if fail.status >= 500 else "invalid_request")
    return {"error": {"type": code, "code": code, "message": fail.message or code, "param": None}}


def _event(name: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()
