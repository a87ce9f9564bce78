#!/usr/bin/env bash
# Makes sure a Debian-packaged Chromium is at /usr/bin/chromium for the playground browser test.
# Only Debian packages are reachable here, so never fetch a browser through playwright.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=/usr/bin/chromium

if [[ ! -x "$BIN" ]]; then
  bash scripts/apt-install.sh ensure-chromium chromium --no-install-recommends
  if [[ ! -x "$BIN" ]]; then
    echo "ensure-chromium: chromium package installed but $BIN is still missing" >&2
    exit 1
  fi
fi
"$BIN" --version
