#!/usr/bin/env bash
# Set up on a fresh machine (once), then lint, type-check and run every test.
# Extra arguments go to pytest, e.g. scripts/test.sh -k diagnostics
set -euo pipefail
cd "$(dirname "$0")/.."
# rules.js is compared with the Python package in Node, and its runtime type-checked with TypeScript (npm).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's nodejs and npm for tests/test_javascript.py..."
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "note: node or npm is not installed and cannot be installed here (needs root and apt-get);" \
      "tests/test_javascript.py will be skipped" >&2
  fi
fi
scripts/setup.sh test
# The browser test needs Chromium; Debian's package is the only browser this project uses.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's chromium for the browser test..."
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "note: chromium is not installed and cannot be installed here (needs root and apt-get);" \
      "the browser test will be skipped" >&2
  fi
fi
.venv/bin/python -m ruff check rulesdsl tests benchmarks editors
.venv/bin/python -m ruff format --check rulesdsl tests benchmarks editors
.venv/bin/python -m mypy
.venv/bin/rulesdsl fmt --check rules tests/examples >/dev/null
exec .venv/bin/python -m pytest "$@"
