#!/usr/bin/env bash
# Install omg from SRC into a fresh virtualenv VENV for the action, fast:
#   uv when it is on PATH (about 3 s cold); else uv bootstrapped with pip into the venv
#   (about 11 s); else pip alone (about 15 s). action.yml caches VENV, so later jobs skip this.
# Usage: install-omg.sh PYTHON VENV SRC   (OMG_NO_UV=1: pip alone, e.g. to measure it)
set -euo pipefail
python=$1 venv=$2 src=$3

"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "::error title=omg install::omg needs Python 3.11 or newer; $python is $("$python" -V 2>&1). Add actions/setup-python before this step or set the action's python input." >&2
  exit 2
}
rm -rf "$venv"
if [ -z "${OMG_NO_UV:-}" ] && command -v uv >/dev/null 2>&1; then
  uv venv --quiet --python "$python" "$venv"
  uv pip install --quiet --python "$venv/bin/python" "$src" && exit 0
  echo "omg install: uv failed; falling back to pip" >&2
  rm -rf "$venv"
fi
"$python" -m venv "$venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1
if [ -z "${OMG_NO_UV:-}" ] && "$venv/bin/python" -m pip install --quiet uv 2>/dev/null; then
  "$venv/bin/uv" pip install --quiet --python "$venv/bin/python" "$src" && exit 0
  echo "omg install: uv failed; falling back to pip" >&2
fi
"$venv/bin/python" -m pip install --quiet "$src"
