#!/usr/bin/env bash
# Makes sure a JDK 17 (java, javac, jar) is there for Java contracts (docs/jvm.md): Debian's
# openjdk-17-jdk-headless when javac is missing from $JAVA_HOME/bin and PATH. Then builds the
# contract executor (build/jvm/keel-executor.jar), so no test waits for javac.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! { [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/javac" ]] || command -v javac >/dev/null 2>&1; }; then
  bash scripts/apt-install.sh ensure-jdk openjdk-17-jdk-headless --no-install-recommends
fi

npx tsx scripts/build-jvm.ts
