#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server on 127.0.0.1 for pivot's tests and prints its connection URL (one line).
#
#   export PIVOT_PG_URL="$(scripts/postgres.sh)"   # start (or reuse) the server
#   scripts/postgres.sh stop                       # stop it
#
# Installs Debian's `postgresql` package when it is missing (needs root and apt). The cluster lives in
# $PIVOT_PG_DIR (default $TMPDIR/pivot-postgres), runs as the `postgres` user when started by root, trusts local
# connections, and listens on loopback only. Idempotent: a running server is reused, so a second call is instant.
set -euo pipefail

DIR="${PIVOT_PG_DIR:-${TMPDIR:-/tmp}/pivot-postgres}"
DATA="$DIR/data"

log() { echo "postgres.sh: $*" >&2; }

find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# initdb and pg_ctl refuse to run as root.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pick_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 40000))
    if port_free "$port"; then echo "$port"; return 0; fi
  done
  log "no free port found"
  return 1
}

url() { echo "postgres://postgres@127.0.0.1:$(cat "$DIR/port")/postgres"; }

BIN="$(find_bin)"
if [ "${1:-start}" = "stop" ]; then
  if [ -n "$BIN" ] && [ -d "$DATA" ]; then as_pg "$BIN/pg_ctl" -D "$DATA" -m fast stop >&2 || true; fi
  exit 0
fi

if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  if [ "$(id -u)" != 0 ]; then
    log "PostgreSQL is not installed and installing it needs root: apt-get install -y postgresql"
    exit 1
  fi
  log "installing Debian's postgresql package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
  BIN="$(find_bin)"
fi

mkdir -p "$DIR"
if [ "$(id -u)" = 0 ]; then chown postgres: "$DIR"; fi

# Serialise concurrent callers (several test workers start at once).
exec 9>"$DIR.lock"
flock 9

# A running server is reused; its port is read from its own pid file (line 4), never from what an earlier caller
# meant to start, so a failed or concurrent start cannot leave a stale port behind.
if as_pg "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
  running_port="$(sed -n 4p "$DATA/postmaster.pid" 2>/dev/null || true)"
  if [ -n "$running_port" ]; then
    echo "$running_port" >"$DIR/port"
    url
    exit 0
  fi
fi

if [ ! -f "$DATA/PG_VERSION" ]; then
  rm -rf "$DATA"
  as_pg "$BIN/initdb" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 --no-sync >"$DIR/initdb.log" 2>&1 ||
    { cat "$DIR/initdb.log" >&2; exit 1; }
fi

PORT="$(pick_port)"
# fsync off: a throwaway test server trades durability for speed.
# The server must not inherit the lock (fd 9) or a caller's pipes, or callers would wait for it forever.
if ! (
  for fd in $(ls "/proc/$BASHPID/fd"); do
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
  as_pg "$BIN/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c fsync=off -c synchronous_commit=off -c max_connections=300" \
    start >&2 </dev/null
); then
  tail -n 30 "$DIR/server.log" >&2 || true
  exit 1
fi
echo "$PORT" >"$DIR/port"
url
