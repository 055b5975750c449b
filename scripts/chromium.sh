#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for pivot's browser tests and prints its path (one line).
#
#   CHROMIUM="$(scripts/chromium.sh)"
#
# Installs Debian's `chromium` package when /usr/bin/chromium is missing (needs root and apt). Serialised with a lock
# so parallel test workers install it once.
set -euo pipefail

BIN="${PIVOT_CHROMIUM:-/usr/bin/chromium}"
log() { echo "chromium.sh: $*" >&2; }

if [ ! -x "$BIN" ]; then
  exec 9>"${TMPDIR:-/tmp}/pivot-chromium.lock"
  flock 9
  if [ ! -x "$BIN" ]; then
    if [ "$(id -u)" != 0 ]; then
      log "Chromium is not installed and installing it needs root: apt-get install -y chromium"
      exit 1
    fi
    log "installing Debian's chromium package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq chromium >&2
  fi
fi
echo "$BIN"
