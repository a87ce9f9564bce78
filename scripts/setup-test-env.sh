#!/usr/bin/env bash
# Installs what the tests need beyond npm packages: Debian's Chromium for the playground test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-chromium.sh
