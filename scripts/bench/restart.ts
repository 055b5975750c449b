/**
 * Benchmark: a cold restart at scale (issue 32). A session of 100k (and, with `--sizes`, 1M) events of the agent
 * loop's shape on a SQLite file; a new process (`support/restart.ts pivot`, as `bench:peers` starts it) opens the file
 * and answers its first `prepare`, timed from the opening (module loading excluded). Two files per size: one with a
 * session snapshot 100 events before the end (what the runtime's cadence of 200 leaves on average) and one without
 * (the whole log folded). Median of `--runs` restarts. The target (issue 32) is OpenCode's first step after a restart
 * (5–22 ms in `bench:peers`), measured here too on the same session's shape in OpenCode's tables, at the same load.
 * `--phases` also times the restart's steps (see docs/benchmarks.md, "A cold restart at scale"). `--compile-cache` also
 * times pivot's restart with Node's compile cache warm (one unmeasured run fills it first), lazily compiled as usual and
 * eagerly compiled (`support/eager.mjs`), and the floor of any restart in Node (`support/restart.ts floor`, `floor-fold`).
 * Like with like (sixth round): both sides' spans start after the child's module loading (the same modules for both:
 * the child imports pivot's and the AI SDK's) and include opening the file; OpenCode's is its bare per-step read
 * (pragmas, statements prepared, newest messages read, parsed, converted), pivot's its whole restart (store and
 * runtime layers, snapshot, the events after it, the first `prepare`). Each table also prints the garbage collector's
 * time inside the span (and in how many runs it ran there) and the module loading's CPU before it.
 * `--at-rest` adds a file whose snapshot is at the head (what the runtime leaves at rest or at its close, ADR 0069).
 *   node --conditions=@pivot/source scripts/bench/restart.ts [--sizes 1000,100000,1000000] [--runs 5] [--phases]
 *                          [--compile-cache] [--without-up-to 100000] [--opencode-up-to 1000000] [--files DIR]
 *                          [--at-rest]
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Events } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore, type NewEvent } from "@pivot/store"
import { Effect } from "effect"
import { SESSION, SYNCHRONOUS } from "./support/agentLoop.ts"
import { bulkSession } from "./support/bulkSession.ts"
import * as OpenCode from "./support/openCode.ts"

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,100000,1000000" },
    runs: { type: "string", default: "5" },
    // The restart without a snapshot folds the whole log: 20 s at 100k on a loaded machine, so not beyond this.
    "without-up-to": { type: "string", default: "100000" },
    // Keep the built files in this folder and reuse them on the next run (to compare a change before and after on the
    // same files); by default they are built in a scratch folder and deleted.
    files: { type: "string" },
    // OpenCode's first step after a restart on the same session's shape, in OpenCode's tables (support/openCode.ts),
    // up to this size: the target measured beside pivot, at the same load.
    "opencode-up-to": { type: "string", default: "1000000" },
    // Also time the restart's phases (support/restart.ts `pivot-phases`): median ms and CPU ms of each.
    phases: { type: "boolean", default: false },
    // Also pivot's restart with a warm compile cache, lazily and eagerly compiled, and the floor (ADR 0049).
    "compile-cache": { type: "boolean", default: false },
    // Also a file whose snapshot is at the head: what a clean close or a kill at rest leaves (ADR 0069), timed run by
    // run alternately with the snapshot 100 events before the end.
    "at-rest": { type: "boolean", default: false },
  },
})
const child = fileURLToPath(new URL("./support/restart.ts", import.meta.url))
const dir = values.files ?? fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-restart-"))
fs.mkdirSync(dir, { recursive: true })

/**
 * Where a file's snapshot is: 100 events before the end (`yes`, what the cadence of 200 leaves on average), at the
 * head (`at rest`, what the runtime leaves at rest or at its close: ADR 0069), or none (`no`).
 */
type SnapshotAt = "yes" | "at rest" | "no"

/** A file holding the session at `size` events, with its snapshot where `snapshot` says. */
const build = (file: string, size: number, snapshot: SnapshotAt) =>
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
    // The state as it stands when written (the bulk session's state moves on with each `until`).
    const snap = () =>
      store.writeSnapshot(bulk.stream, {
        version: bulk.state.session.version,
        format: Sessions.SNAPSHOT_FORMAT,
        data: Sessions.encodeSnapshot(Sessions.retain(bulk.state)),
      })
    yield* append(bulk.until(size - 100))
    if (snapshot === "yes") yield* snap()
    yield* append(bulk.until(size, { midCycle: true }))
    if (snapshot === "at rest") yield* snap()
    return bulk.state.session.version
  }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file, synchronous: SYNCHRONOUS })))

/** OpenCode's file: the same session's shape (a bulk session of `size` events) in OpenCode's tables. */
const buildOpenCode = (file: string, size: number) => {
  const db = new DatabaseSync(file)
  const tables = new OpenCode.OnSqlite(db, SESSION)
  db.exec("BEGIN")
  const bulk = bulkSession(SESSION, { observe: OpenCode.mirror(SESSION, [tables]) })
  bulk.until(size - 100)
  bulk.until(size, { midCycle: true })
  db.exec("COMMIT")
  db.close()
}

/** The session's version in a file kept from an earlier run (`--files`). */
const versionOf = (file: string) =>
  Effect.gen(function* () {
    return yield* (yield* EventStore).streamVersion(Events.streamName(SESSION))
  }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file, readonly: true })))

interface Timed {
  readonly ms: number
  readonly cpuMs: number
}
interface Run extends Timed {
  /** The window's length (messages; for `floor`, the rows parsed). */
  readonly window: number
  readonly loadMs: number
  readonly loadCpuMs: number
  /** The garbage collector's time inside the span (V8's record of each collection), and the collections' kinds. */
  readonly gcMs: number
  readonly gcs: ReadonlyArray<string>
  readonly phases?: Record<string, Timed>
}

type Who = "pivot" | "pivot-phases" | "opencode" | "floor" | "floor-fold"
/** How the child starts: as `bench:peers` starts it, or with a compile cache in `cache`, eagerly compiled or not. */
interface Start {
  readonly cache: string
  readonly eager: boolean
}
const eagerPreload = fileURLToPath(new URL("./support/eager.mjs", import.meta.url))
const restart = (file: string, who: Who = "pivot", start?: Start): Run => {
  const out = execFileSync(
    process.execPath,
    [...(start === undefined ? [] : ["--import", eagerPreload]), "--conditions=@pivot/source", child, who, file],
    {
      encoding: "utf8",
      env:
        start === undefined
          ? process.env
          : { ...process.env, PIVOT_BENCH_CACHE: start.cache, PIVOT_BENCH_EAGER: start.eager ? "1" : "0" },
    },
  )
  return JSON.parse(out.trim().split("\n").at(-1)!)
}
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
/** The garbage collector inside the span: its time's median, and in how many runs it ran at all. */
const gcCell = (runs: ReadonlyArray<Run>) =>
  `${median(runs.map((r) => r.gcMs)).toFixed(1)} (${runs.filter((r) => r.gcs.length > 0).length} of ${runs.length})`

const openCode: Array<{ readonly size: number; readonly runs: ReadonlyArray<Run> }> = []
const phased: Array<{ readonly size: number; readonly snapshot: SnapshotAt; readonly runs: ReadonlyArray<Run> }> = []
const cached: Array<{ readonly size: number; readonly variant: string; readonly runs: ReadonlyArray<Run> }> = []
/** A warm compile cache: a fresh folder filled by one unmeasured restart started the same way. */
const warmCache = (file: string, eager: boolean): Start => {
  const start = { cache: fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-restart-cache-")), eager }
  restart(file, "pivot", start)
  return start
}
console.log(
  "| events | snapshot | first `prepare` after a restart, median ms | min | max | its CPU time, median ms | GC in it, median ms (runs with one) | module loading before it, CPU ms |",
)
console.log("|---:|---|---:|---:|---:|---:|---:|---:|")
for (const size of values.sizes.split(",").map(Number)) {
  const kinds: Array<SnapshotAt> = ["yes"]
  if (values["at-rest"]) kinds.push("at rest")
  if (size <= Number(values["without-up-to"])) kinds.push("no")
  const fileOf = (snapshot: SnapshotAt) =>
    // The names of earlier runs' kept files (`--files`): `true` with the snapshot before the end, `false` without.
    path.join(dir, `restart-${size}-${snapshot === "yes" ? "true" : snapshot === "no" ? "false" : "rest"}.db`)
  // With `--at-rest`, the snapshot before the end and the one at the head are timed run by run alternately.
  const alternated = new Map<SnapshotAt, Array<Run>>()
  if (values["at-rest"]) {
    for (const kind of ["yes", "at rest"] as const) {
      const file = fileOf(kind)
      if (values.files === undefined || !fs.existsSync(file)) await Effect.runPromise(build(file, size, kind))
      alternated.set(kind, [])
    }
    for (let i = 0; i < Number(values.runs); i++)
      for (const [kind, runs] of alternated) runs.push(restart(fileOf(kind)))
  }
  for (const snapshot of kinds) {
    const file = fileOf(snapshot)
    const events = await Effect.runPromise(
      values.files !== undefined && fs.existsSync(file) ? versionOf(file) : build(file, size, snapshot),
    )
    const runs = alternated.get(snapshot) ?? Array.from({ length: Number(values.runs) }, () => restart(file))
    const times = runs.map((r) => r.ms)
    console.log(
      `| ${events.toLocaleString("en")} | ${snapshot} | ${median(times).toFixed(1)} | ${Math.min(...times).toFixed(1)} | ${Math.max(...times).toFixed(1)} | ${median(runs.map((r) => r.cpuMs)).toFixed(1)} | ${gcCell(runs)} | ${median(runs.map((r) => r.loadCpuMs)).toFixed(0)} |`,
    )
    if (snapshot === "yes" && size <= Number(values["opencode-up-to"])) {
      const ocFile = path.join(dir, `restart-${size}-opencode.db`)
      if (values.files === undefined || !fs.existsSync(ocFile)) buildOpenCode(ocFile, size)
      const oc = Array.from({ length: Number(values.runs) }, () => restart(ocFile, "opencode"))
      openCode.push({ size, runs: oc })
      if (values.files === undefined) fs.rmSync(ocFile, { force: true })
    }
    if (values.phases) phased.push({ size: events, snapshot, runs: runs.map(() => restart(file, "pivot-phases")) })
    if (values["compile-cache"] && snapshot === "yes") {
      const lazy = warmCache(file, false)
      const eager = warmCache(file, true)
      const variants: ReadonlyArray<readonly [string, () => Run]> = [
        ["no compile cache (as above)", () => restart(file)],
        ["compile cache, warm", () => restart(file, "pivot", lazy)],
        ["eager compilation + compile cache, warm", () => restart(file, "pivot", eager)],
        ["floor: open + one SELECT + JSON.parse", () => restart(file, "floor")],
        ["floor + pivot's pure resume and render", () => restart(file, "floor-fold")],
      ]
      // Interleaved run by run, so that a change of load touches every variant alike.
      const runsOf = variants.map(() => [] as Array<Run>)
      for (let i = 0; i < Number(values.runs); i++)
        for (const [v, [, run]] of variants.entries()) runsOf[v]!.push(run())
      for (const [v, [variant]] of variants.entries()) cached.push({ size: events, variant, runs: runsOf[v]! })
      // Every way of starting, and pivot's pure resume, must reach the same window as the first `prepare`.
      const windows = new Set(
        [...runs, ...runsOf.filter((_, v) => !variants[v]![0].startsWith("floor: ")).flat()].map((r) => r.window),
      )
      if (windows.size !== 1) throw new Error(`the variants disagree on the window: ${[...windows].join(", ")}`)
      for (const { cache } of [lazy, eager]) fs.rmSync(cache, { recursive: true, force: true })
    }
    if (values.files === undefined) fs.rmSync(file, { force: true })
  }
}
if (openCode.length > 0) {
  console.log(
    "\nOpenCode's first step after a restart on the same session's shape in its own tables (`support/restart.ts opencode`), timed the same way:\n",
  )
  console.log(
    "| events | first step, median ms | min | max | its CPU time, median ms | GC in it, median ms (runs with one) | module loading before it, CPU ms |",
  )
  console.log("|---:|---:|---:|---:|---:|---:|---:|")
  for (const { size, runs } of openCode) {
    const times = runs.map((r) => r.ms)
    console.log(
      `| ${size.toLocaleString("en")} | ${median(times).toFixed(1)} | ${Math.min(...times).toFixed(1)} | ${Math.max(...times).toFixed(1)} | ${median(runs.map((r) => r.cpuMs)).toFixed(1)} | ${gcCell(runs)} | ${median(runs.map((r) => r.loadCpuMs)).toFixed(0)} |`,
    )
  }
}
if (values.phases) {
  const names = ["store", "runtime", "resume", "prepare"]
  console.log(
    "\nThe same restarts step by step (`--phases`), median CPU ms / wall ms of each step; module loading (before the opening, excluded above) beside it:\n",
  )
  console.log(`| events | snapshot | ${names.join(" | ")} | all | module loading |`)
  console.log(`|---:|---|${names.map(() => "---:|").join("")}---:|---:|`)
  const cell = (xs: ReadonlyArray<Timed>) =>
    `${median(xs.map((x) => x.cpuMs)).toFixed(1)} / ${median(xs.map((x) => x.ms)).toFixed(1)}`
  for (const { size, snapshot, runs } of phased)
    console.log(
      `| ${size.toLocaleString("en")} | ${snapshot} | ${names.map((n) => cell(runs.map((r) => r.phases![n]!))).join(" | ")} | ${cell(runs)} | ${cell(runs.map((r) => ({ ms: r.loadMs, cpuMs: r.loadCpuMs })))} |`,
    )
}
if (cached.length > 0) {
  console.log(
    "\nWith a snapshot, how the child starts (`--compile-cache`; interleaved runs), median ms / CPU ms of the same span, module loading's CPU ms beside it:\n",
  )
  console.log(
    "| events | how | first `prepare`, median ms | min | max | CPU, median ms | GC in it, median ms (runs with one) | module loading, CPU ms |",
  )
  console.log("|---:|---|---:|---:|---:|---:|---:|---:|")
  for (const { size, variant, runs } of cached) {
    const times = runs.map((r) => r.ms)
    console.log(
      `| ${size.toLocaleString("en")} | ${variant} | ${median(times).toFixed(1)} | ${Math.min(...times).toFixed(1)} | ${Math.max(...times).toFixed(1)} | ${median(runs.map((r) => r.cpuMs)).toFixed(1)} | ${gcCell(runs)} | ${median(runs.map((r) => r.loadCpuMs)).toFixed(0)} |`,
    )
  }
}
if (values.files === undefined) fs.rmSync(dir, { recursive: true, force: true })
