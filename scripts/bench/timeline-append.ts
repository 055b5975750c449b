// Benchmark: the writer's append cost with the inline read models (ADR 0057 added the timeline's rows to them). The
// session of `bench:serve`'s generator (user turns with a tool call, a prune every 5 turns, a compaction every 25) is
// appended into a fresh SQLite file through `ReadModels.layerSqlite` (the writer's own path: each append folds and
// writes every built-in read model in its transaction), in batches of each size given: 4 events (about a turn, as the
// OpenCode plugin appends) and 2,000 (as `bench:serve` and an import's batches). Reports events per second of wall
// time and of this process's CPU time (user + system), and the timeline rows' count and bytes when the store has them.
//
//   node scripts/bench/timeline-append.ts [--events 10000] [--batches 4,2000]

import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { ReadModels, SessionLog } from "@pivot/store"
import { Effect } from "effect"

type Play = typeof import("../../packages/server/test/support/play.ts")

const { values } = parseArgs({
  options: { events: { type: "string", default: "10000" }, batches: { type: "string", default: "4,2000" } },
})
const root = fileURLToPath(new URL("../../", import.meta.url))
const { play } = (await import(path.join(root, "packages/server/test/support/play.ts"))) as Play
const SESSION = "ses_bench_append"
const events = play({
  sessionId: SESSION,
  turns: Math.ceil(Number(values.events) / 4.1),
  compactEvery: 25,
  pruneEvery: 5,
  outputChars: 500,
})
const log = SessionLog.fromEvents(SESSION, events)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-append-"))
try {
  for (const size of values.batches.split(",").map(Number)) {
    const filename = path.join(dir, `append-${size}.db`)
    const cpu = process.cpuUsage()
    const start = performance.now()
    await Effect.runPromise(
      Effect.gen(function* () {
        for (let i = 0; i < log.length; i += size)
          yield* SessionLog.append(
            SESSION,
            i === 0 ? "no-stream" : i,
            log.slice(i, i + size).map(({ event, meta }) => ({ id: meta.id, event })),
          )
      }).pipe(Effect.provide(ReadModels.layerSqlite({ filename, synchronous: "normal" }))),
    )
    const wall = performance.now() - start
    const used = process.cpuUsage(cpu)
    const cpuMs = (used.user + used.system) / 1000
    const file = new DatabaseSync(filename, { readOnly: true })
    const hasRows = file.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'pivot_rm_timeline'").get()
    const rows =
      Number(hasRows?.n ?? 0) > 0
        ? file.prepare("SELECT COUNT(*) AS n, SUM(LENGTH(data)) AS bytes FROM pivot_rm_timeline").get()
        : undefined
    file.close()
    console.log(
      `${log.length} events in batches of ${size}: ${Math.round(wall)} ms wall (${Math.round((log.length / wall) * 1000)} events/s), ` +
        `${Math.round(cpuMs)} ms CPU (${Math.round((log.length / cpuMs) * 1000)} events/s of CPU)` +
        (rows === undefined ? "; no timeline rows" : `; timeline rows ${rows.n}, ${rows.bytes} bytes of data`),
    )
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
