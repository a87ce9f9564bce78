#!/usr/bin/env bash
# apt-install.sh <who> <package> [apt-get option…]: installs one Debian package for a script of
# scripts/ensure-*.sh, saying who asked and why it failed. Needs root (only Debian packages and the
# npm registry are reachable, so nothing is fetched any other way). Services the package brings are
# not started (policy-rc.d), so a test machine runs only what the tests start.
set -euo pipefail
who=$1
package=$2
shift 2

if [[ "$(id -u)" -ne 0 ]]; then
  echo "$who: installing $package needs root (apt-get install -y $package)" >&2
  exit 1
fi
echo "$who: installing the Debian $package package" >&2
if ! apt-get update; then
  echo "$who: apt-get update failed; cannot install $package" >&2
  exit 1
fi
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
chmod +x /usr/sbin/policy-rc.d
trap 'rm -f /usr/sbin/policy-rc.d' EXIT
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" "$package"; then
  echo "$who: apt-get install $package failed" >&2
  exit 1
fi
