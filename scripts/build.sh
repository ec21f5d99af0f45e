#!/usr/bin/env bash
# Set up on a fresh machine (once), then build rules/ into generated/ (Python packages + HTML site).
# Extra arguments go to `rulesdsl build`, e.g. scripts/build.sh --check
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/rulesdsl build "$@"
