"""GitHub's published REST description (@octokit/openapi, pinned in package.json): a recorded
request checked against it — its method and path match an operation, its JSON body the
operation's requestBody schema."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

DESCRIPTION = (
    Path(__file__).resolve().parents[2]
    / "node_modules/@octokit/openapi/generated/api.github.com.json"
)


@functools.cache
def _description() -> tuple[dict[str, Any], list[tuple[re.Pattern[str], str]]]:
    if not DESCRIPTION.is_file():
        raise AssertionError(f"{DESCRIPTION} is missing: run `npm ci` (package.json pins it)")
    doc: dict[str, Any] = json.loads(DESCRIPTION.read_text())
    templates = [
        (re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$"), path)
        for path in doc["paths"]
    ]
    return doc, templates


def check(method: str, target: str, body: Any) -> str:
    """The operation a request matches (``METHOD /template``); AssertionError when it matches
    none or its body breaks the operation's schema."""
    doc, templates = _description()
    path = urlsplit(target).path
    found = [t for rx, t in templates if rx.match(path) and method.lower() in doc["paths"][t]]
    assert found, f"{method} {path} is no operation of GitHub's REST API"
    # the most literal template wins (/pulls/{n} over /{a}/{b})
    template = max(found, key=lambda t: len(re.sub(r"\{[^}]+\}", "", t)))
    op = doc["paths"][template][method.lower()]
    media = op.get("requestBody", {}).get("content", {}).get("application/json")
    if media is None:
        assert body is None, f"{method} {template} takes no body, got {body!r}"
        return f"{method} {template}"
    pointer = "/".join(
        part.replace("~", "~0").replace("/", "~1")
        for part in (
            "paths",
            template,
            method.lower(),
            "requestBody",
            "content",
            "application/json",
            "schema",
        )
    )
    registry: Registry[Any] = Registry().with_resource(
        "urn:github", Resource.from_contents(doc, default_specification=DRAFT202012)
    )
    validator = jsonschema.Draft202012Validator(
        {"$ref": f"urn:github#/{pointer}"}, registry=registry
    )
    errors = sorted(validator.iter_errors(body), key=lambda e: list(e.path))
    assert not errors, f"{method} {template}: {errors[0].message} at {list(errors[0].path)}"
    return f"{method} {template}"
