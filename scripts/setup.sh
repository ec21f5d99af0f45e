#!/usr/bin/env bash
# Create .venv (once) and install rulesdsl into it; `scripts/setup.sh test` adds the test tools.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
extras=""
if [ "${1:-}" = "test" ]; then
  extras="[test]"
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --editable ".${extras}"
# The browser tests' JavaScript tools (axe-core), pinned by tests/node/package-lock.json.
if [ "${1:-}" = "test" ]; then
  if command -v npm >/dev/null 2>&1; then
    npm ci --prefix tests/node --no-audit --no-fund --silent
  else
    echo "note: npm is not installed; the browser tests that run axe-core will be skipped" >&2
  fi
fi
