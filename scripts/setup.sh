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
# Test-only JavaScript tools, pinned by tests/node/package-lock.json: TypeScript (checks rules.js's runtime,
# tests/test_javascript.py), axe-core (tests/test_site_browser.py) and pyright (tests/test_pyright.py).
if [ "${1:-}" = "test" ]; then
  if command -v npm >/dev/null 2>&1; then
    npm ci --prefix tests/node --no-audit --no-fund --loglevel=error
  else
    echo "note: npm is not installed; the TypeScript check and the axe-core browser tests will be skipped" >&2
  fi
fi
