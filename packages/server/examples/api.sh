#!/usr/bin/env bash
# The viewer's JSON API from a shell: starts `pivot serve` on an OpenCode export (imported into memory; the file is
# only read), asks each route once, and stops the server. Run from anywhere: bash packages/server/examples/api.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."

log="$(mktemp)"
node packages/cli/src/bin.ts serve packages/opencode/test/fixtures/compaction-tail.json --port 0 >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 1 300); do grep -q "http://" "$log" && break; sleep 0.1; done
base="$(grep -o 'http://[^ ]*' "$log" | head -n 1)api/sessions"   # e.g. http://127.0.0.1:39421/api/sessions

curl -fsS "$base"; echo                                  # every session with its figures
curl -fsS "$base/ses_compaction"; echo                   # one session: figures, pivots, event types
curl -fsS "$base/ses_compaction/timeline"; echo          # usage per model step, marks, overflow line
curl -fsS "$base/ses_compaction/window/8" >/dev/null     # the window at version 8: entries, sources, pruned outputs
curl -fsS "$base/ses_compaction/window/8/raw"; echo      # the same bytes as: pivot window … --at 8 --format json
curl -fsS "$base/ses_compaction/diff?from=7&to=13"; echo # what entered, left, was replaced between two versions
curl -fsS "$base/ses_compaction/pivots/1"; echo          # the report of pivot #1
curl -fsS "$base/ses_compaction/events?type=SummaryFinished&offset=0&limit=10"; echo
curl -sS -o /dev/null -w "POST answers %{http_code}\n" -X POST "$base"   # read-only: 405
