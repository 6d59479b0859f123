#!/usr/bin/env bash
# Install the claude CLI that omg's agent nodes run, into PREFIX, and print the binary's path.
# The version is the one omg is tested with — pinned once, in SRC/package.json — unless VERSION
# names another. A claude of that version already on PATH is used as it is.
# Usage: install-claude.sh PREFIX SRC [VERSION]   (--version-only SRC: print the pinned version)
set -euo pipefail

pinned() {
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["devDependencies"]["@anthropic-ai/claude-code"])' "$1/package.json"
}
if [ "${1:-}" = "--version-only" ]; then
  pinned "$2"
  exit 0
fi
prefix=$1 src=$2 version=${3:-}
[ -n "$version" ] || version=$(pinned "$src")

if found=$(command -v claude 2>/dev/null) && [ "$("$found" --version 2>/dev/null | cut -d' ' -f1)" = "$version" ]; then
  echo "$found"
  exit 0
fi
command -v npm >/dev/null 2>&1 || {
  echo "::error title=claude install::npm is needed to install @anthropic-ai/claude-code@$version; add actions/setup-node before this step, or put claude $version on PATH." >&2
  exit 2
}
npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error \
  "@anthropic-ai/claude-code@$version" >&2
echo "$prefix/node_modules/.bin/claude"
