#!/usr/bin/env bash
# Makes sure a Debian-packaged Chromium is at /usr/bin/chromium for the playground browser test.
# Only Debian packages are reachable here, so never fetch a browser through playwright.
set -euo pipefail

BIN=/usr/bin/chromium

if [[ -x "$BIN" ]]; then
  "$BIN" --version
  exit 0
fi

if [[ "$(id -u)" -ne 0 ]]; then
  echo "ensure-chromium: $BIN is missing and installing it needs root (apt-get install chromium)" >&2
  exit 1
fi

echo "ensure-chromium: $BIN not found; installing the Debian chromium package" >&2
if ! apt-get update; then
  echo "ensure-chromium: apt-get update failed; cannot install chromium" >&2
  exit 1
fi
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; then
  echo "ensure-chromium: apt-get install chromium failed" >&2
  exit 1
fi

if [[ ! -x "$BIN" ]]; then
  echo "ensure-chromium: chromium package installed but $BIN is still missing" >&2
  exit 1
fi
"$BIN" --version
