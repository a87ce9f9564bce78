#!/usr/bin/env bash
# Makes sure Debian's `prometheus` binary is there for test/metrics.test.ts, which starts a real
# Prometheus scraping a node and a network. Installed without recommends and not left running:
# the package's own service is stopped and disabled where systemd runs.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1; then
  exit 0
fi
if [[ "$(id -u)" -ne 0 ]]; then
  echo "ensure-prometheus: prometheus is missing and installing it needs root (apt-get install -y prometheus)" >&2
  exit 1
fi
echo "ensure-prometheus: prometheus not found; installing the Debian prometheus package" >&2
if ! apt-get update; then
  echo "ensure-prometheus: apt-get update failed; cannot install prometheus" >&2
  exit 1
fi
# policy-rc.d keeps the package's service from starting on a machine without systemd (a container)
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
chmod +x /usr/sbin/policy-rc.d
trap 'rm -f /usr/sbin/policy-rc.d' EXIT
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus; then
  echo "ensure-prometheus: apt-get install prometheus failed" >&2
  exit 1
fi
if command -v systemctl >/dev/null 2>&1 && systemctl is-system-running >/dev/null 2>&1; then
  systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
