#!/usr/bin/env bash
# Install the codex CLI that omg's codex nodes run, into PREFIX, and print the binary's path —
# only when the graph has codex nodes (prints nothing otherwise). The version is the one omg is
# tested with — pinned once, in SRC/package.json — unless VERSION names another. A codex of
# that version already on PATH is used as it is.
# Usage: install-codex.sh PREFIX SRC [VERSION] [GRAPH]   (--version-only SRC: the pinned version)
#   GRAPH: the graph file the leg starts (its nodes, fragments spliced, are asked); without one
#   (a resumed run, a comment) any tracked YAML file naming `runtime: codex` counts.
set -euo pipefail

pinned() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["devDependencies"]["@openai/codex"])' "$1/package.json"
}
if [ "${1:-}" = "--version-only" ]; then
  pinned "$2"
  exit 0
fi
prefix=$1 src=$2 version=${3:-} graph=${4:-}
[ -n "$version" ] || version=$(pinned "$src")

if [ -n "$graph" ] && [ -n "${OMG_PYTHON_BIN:-}" ]; then
  uses=$("$OMG_PYTHON_BIN" -c '
import sys
from pathlib import Path
from omg.graph.load import load_graph
g = load_graph(Path(sys.argv[1]))
print("yes" if any(n.kind == "agent" and n.runtime == "codex" for n in g.nodes) else "")
' "$graph" 2>/dev/null || echo yes)
else
  uses=$(git grep -lE '^[[:space:]-]*runtime:[[:space:]]*codex\b' -- '*.yml' '*.yaml' 2>/dev/null | head -1 || true)
fi
[ -n "$uses" ] || exit 0

if found=$(command -v codex 2>/dev/null) && [ "$("$found" --version 2>/dev/null | awk '{print $NF}')" = "$version" ]; then
  echo "$found"
  exit 0
fi
command -v npm >/dev/null 2>&1 || {
  echo "::error title=codex install::npm is needed to install @openai/codex@$version; add actions/setup-node before this step, or put codex $version on PATH." >&2
  exit 2
}
npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error \
  "@openai/codex@$version" >&2
echo "$prefix/node_modules/.bin/codex"
