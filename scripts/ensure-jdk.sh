#!/usr/bin/env bash
# Makes sure a JDK 17 (java, javac, jar) is there for Java contracts (docs/jvm.md): Debian's
# openjdk-17-jdk-headless when javac is missing from $JAVA_HOME/bin and PATH. Then builds the
# contract executor (build/jvm/keel-executor.jar), so no test waits for javac.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/javac" ]] || command -v javac >/dev/null 2>&1; then
  :
else
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "ensure-jdk: javac is missing and installing it needs root (apt-get install -y openjdk-17-jdk-headless)" >&2
    exit 1
  fi
  echo "ensure-jdk: javac not found; installing the Debian openjdk-17-jdk-headless package" >&2
  if ! apt-get update; then
    echo "ensure-jdk: apt-get update failed; cannot install the JDK" >&2
    exit 1
  fi
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openjdk-17-jdk-headless; then
    echo "ensure-jdk: apt-get install openjdk-17-jdk-headless failed" >&2
    exit 1
  fi
fi

npx tsx scripts/build-jvm.ts
