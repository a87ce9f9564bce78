#!/usr/bin/env bash
# Makes sure Debian's `prometheus` binary is there for test/metrics.test.ts, which starts a real
# Prometheus scraping a node and a network (its own service is not left running: apt-install.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v prometheus >/dev/null 2>&1 || bash scripts/apt-install.sh ensure-prometheus prometheus --no-install-recommends
