#!/usr/bin/env bash
# Installs what the tests need beyond npm packages: Debian's Chromium for the playground test, a
# JDK 17 for the Java contract tests (and builds the contract executor), Prometheus for the
# metrics test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-chromium.sh
bash scripts/ensure-jdk.sh
bash scripts/ensure-prometheus.sh
