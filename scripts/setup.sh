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
if [ "${1:-}" = "test" ]; then
  # TypeScript, which checks the JavaScript runtime of rules.js (tests/test_javascript.py); needs npm
  if command -v npm > /dev/null; then
    (cd tests/node && npm ci --no-audit --no-fund --loglevel=error)
  else
    echo "npm not found: tests/test_javascript.py will skip its TypeScript check" >&2
  fi
fi
