/**
 * Benchmark: a cold restart at scale (issue 32). A session of 100k (and, with `--sizes`, 1M) events of the agent
 * loop's shape on a SQLite file; a new process (`support/restart.ts pivot`, as `bench:peers` starts it) opens the file
 * and answers its first `prepare`, timed from the opening (module loading excluded). Two files per size: one with a
 * session snapshot 100 events before the end (what the runtime's cadence of 200 leaves on average) and one without
 * (the whole log folded). Median of `--runs` restarts. OpenCode's first step after a restart measured 5–22 ms in
 * `bench:peers` (issue 32), the target.
 *   node --conditions=@pivot/source scripts/bench/restart.ts [--sizes 1000,100000,1000000] [--runs 5]
 *                                                            [--without-up-to 100000]
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Events } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore, type NewEvent } from "@pivot/store"
import { Effect } from "effect"
import { SESSION, SYNCHRONOUS } from "./support/agentLoop.ts"
import { bulkSession } from "./support/bulkSession.ts"

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,100000,1000000" },
    runs: { type: "string", default: "5" },
    // The restart without a snapshot folds the whole log: 20 s at 100k on a loaded machine, so not beyond this.
    "without-up-to": { type: "string", default: "100000" },
    // Keep the built files in this folder and reuse them on the next run (to compare a change before and after on the
    // same files); by default they are built in a scratch folder and deleted.
    files: { type: "string" },
    // Also time the restart's phases (support/restart.ts `pivot-phases`): median ms and CPU ms of each.
    phases: { type: "boolean", default: false },
  },
})
const child = fileURLToPath(new URL("./support/restart.ts", import.meta.url))
const dir = values.files ?? fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-restart-"))
fs.mkdirSync(dir, { recursive: true })

/** A file holding the session at `size` events, with a snapshot 100 events before the end when `snapshot`. */
const build = (file: string, size: number, snapshot: boolean) =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const bulk = bulkSession(SESSION)
    const append = (events: ReadonlyArray<NewEvent>) =>
      Effect.gen(function* () {
        for (let at = 0; at < events.length; at += 2_000) {
          const expected = yield* store.streamVersion(bulk.stream)
          yield* store.append(bulk.stream, expected, events.slice(at, at + 2_000))
        }
      })
    yield* append(bulk.until(size - 100))
    if (snapshot)
      yield* store.writeSnapshot(bulk.stream, {
        version: bulk.state.session.version,
        format: Sessions.SNAPSHOT_FORMAT,
        data: Sessions.encodeSnapshot(Sessions.retain(bulk.state)),
      })
    yield* append(bulk.until(size, { midCycle: true }))
    return bulk.state.session.version
  }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file, synchronous: SYNCHRONOUS })))

/** The session's version in a file kept from an earlier run (`--files`). */
const versionOf = (file: string) =>
  Effect.gen(function* () {
    return yield* (yield* EventStore).streamVersion(Events.streamName(SESSION))
  }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file, readonly: true })))

const restart = (file: string): { readonly ms: number; readonly cpuMs: number } => {
  const out = execFileSync(process.execPath, ["--conditions=@pivot/source", child, "pivot", file], {
    encoding: "utf8",
  })
  return JSON.parse(out.trim().split("\n").at(-1)!)
}
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

console.log("| events | snapshot | first `prepare` after a restart, median ms | min | max | its CPU time, median ms |")
console.log("|---:|---|---:|---:|---:|---:|")
for (const size of values.sizes.split(",").map(Number)) {
  for (const snapshot of size <= Number(values["without-up-to"]) ? [true, false] : [true]) {
    const file = path.join(dir, `restart-${size}-${snapshot}.db`)
    const events = await Effect.runPromise(
      values.files !== undefined && fs.existsSync(file) ? versionOf(file) : build(file, size, snapshot),
    )
    const runs = Array.from({ length: Number(values.runs) }, () => restart(file))
    const times = runs.map((r) => r.ms)
    console.log(
      `| ${events.toLocaleString("en")} | ${snapshot ? "yes" : "no"} | ${median(times).toFixed(1)} | ${Math.min(...times).toFixed(1)} | ${Math.max(...times).toFixed(1)} | ${median(runs.map((r) => r.cpuMs)).toFixed(1)} |`,
    )
    if (values.files === undefined) fs.rmSync(file, { force: true })
  }
}
if (values.files === undefined) fs.rmSync(dir, { recursive: true, force: true })
