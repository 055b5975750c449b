// bench:peers' restart: a new process opens a SQLite file and answers its first call, timed from the opening.
// `restart.ts pivot <file>`: pivot's store and runtime, the first `prepare`; `restart.ts opencode <file>`: OpenCode's
// tables, the first step of its loop. Prints { ms, cpuMs, window, loadMs, loadCpuMs } as JSON (`cpuMs`: this
// process's CPU time over the same span, user + system, which a loaded machine stretches less than the wall time;
// `loadMs` / `loadCpuMs`: the process's life before the opening — Node's start and the modules' loading — which `ms`
// excludes for both). `restart.ts pivot-phases <file>` does pivot's restart in its steps, each timed (bench:restart
// `--phases`): the store's layer built (file checks, connection, schema check), the runtime's layers, the session's
// first load (snapshot + the events after it, decoded and folded), the first `prepare`; `phases` in the JSON.
// `restart.ts floor <file>`: the floor of any restart in Node, measured alone — the file opened with `node:sqlite`, one
// SELECT of the session's snapshot and the events after it, their JSON parsed; nothing of pivot's. `restart.ts
// floor-fold <file>`: the same rows, then pivot's pure code on them without Effect's runtime or any layer (the
// snapshot's checksum and decoding, each event decoded as the store's decoder does, the fold, the window rendered).
import { DatabaseSync } from "node:sqlite"
import * as v8 from "node:v8"
import { Ids, Window } from "@pivot/core"
import { ContextManager, Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer, Result } from "effect"
import { PRUNING, runtime, SESSION, SYNCHRONOUS } from "./agentLoop.ts"
import * as OpenCode from "./openCode.ts"
import { recordedOf, snapshotAndTail } from "./snapshotRows.ts"

const [who, file] = process.argv.slice(2)
const WHO = ["pivot", "pivot-phases", "opencode", "floor", "floor-fold"]
if (who === undefined || !WHO.includes(who) || file === undefined) {
  console.error(`usage: restart.ts ${WHO.join("|")} <file>`)
  process.exit(2)
}
const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000
// PIVOT_BENCH_CPU_PROFILE=FILE: the span (and only it) sampled by V8's profiler every 50 µs, written to FILE as a
// `.cpuprofile` (started before the clock, so its own start is outside the span; it slows the span ~2×).
const profileTo = process.env.PIVOT_BENCH_CPU_PROFILE
const inspector = profileTo === undefined ? undefined : new (await import("node:inspector/promises")).Session()
if (inspector !== undefined) {
  performance.now() // Node's lazy `performance` global loaded before the profile starts, as it is before the span.
  inspector.connect()
  await inspector.post("Profiler.enable")
  await inspector.post("Profiler.setSamplingInterval", { interval: 50 })
  await inspector.post("Profiler.start")
}
// The garbage collections inside the span (V8's own record of each, with its duration): `gcMs` and `gcs` in the JSON.
const gcs = new v8.GCProfiler()
gcs.start()
const t0 = performance.now()
const cpu0 = process.cpuUsage()
const store = () => EventStore.layerSqlite({ filename: file, synchronous: SYNCHRONOUS })

/** The same restart as `pivot`, step by step: each step's wall and CPU ms. */
const phased = (phases: Record<string, { ms: number; cpuMs: number }>) => {
  let at = { ms: t0, cpu: cpu0 }
  const mark = (name: string) =>
    Effect.sync(() => {
      const now = { ms: performance.now(), cpu: process.cpuUsage() }
      phases[name] = { ms: now.ms - at.ms, cpuMs: cpuMs(process.cpuUsage(at.cpu)) }
      at = { ms: performance.now(), cpu: process.cpuUsage() }
    })
  return Effect.scoped(
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      const opened = yield* Layer.buildWithScope(store(), scope)
      yield* mark("store")
      const built = yield* Layer.buildWithScope(runtime(Layer.succeedContext(opened), Ids.Ids.layer, PRUNING), scope)
      yield* mark("runtime")
      return yield* Effect.gen(function* () {
        yield* (yield* Sessions.Sessions).load(SESSION)
        yield* mark("resume")
        const window = (yield* (yield* ContextManager).prepare(SESSION)).modelMessages.length
        yield* mark("prepare")
        return window
      }).pipe(Effect.provideContext(built))
    }),
  )
}

/**
 * The session's snapshot row, then the rows of the events after it: one SELECT on a connection of its own. Opened as
 * pivot's store and OpenCode's child open it (not read-only: a read-only connection to a WAL file leaves its `-wal` and
 * `-shm` beside it, which the next restart would find).
 */
const rowsOf = () => {
  const db = new DatabaseSync(file)
  const stream = `session-${SESSION}`
  const rows = snapshotAndTail(db, stream)
  db.close()
  return { stream, rows }
}

/** `floor`: the rows' JSON parsed, nothing else; `floor-fold`: pivot's pure resume and render on them. */
const floor = (fold: boolean): number => {
  const { stream, rows } = rowsOf()
  const snapshot = rows[0]?.kind === 0 ? rows[0] : undefined
  const events = rows.filter((r) => r.kind === 1)
  if (!fold)
    return (
      (snapshot === undefined ? 0 : (JSON.parse(snapshot.data) as object) && 1) +
      events.map((r) => JSON.parse(r.data)).length
    )
  const from =
    snapshot === undefined
      ? Sessions.initialState
      : Result.getOrThrow(
          Sessions.decodeSnapshot(SESSION, {
            stream,
            version: snapshot.version,
            format: snapshot.type,
            checksum: snapshot.id,
            data: snapshot.data,
            recordedAt: snapshot.at,
          }),
        )
  const decoded = events.map((r) => Result.getOrThrow(Sessions.decodeEvent(SESSION, recordedOf(r, stream))))
  return Window.render(Sessions.fold(decoded, from).session.window).length
}

const phases: Record<string, { ms: number; cpuMs: number }> = {}
const window =
  who === "floor" || who === "floor-fold"
    ? floor(who === "floor-fold")
    : who === "pivot"
      ? await Effect.runPromise(
          Effect.gen(function* () {
            return (yield* (yield* ContextManager).prepare(SESSION)).modelMessages.length
          }).pipe(Effect.provide(runtime(store(), Ids.Ids.layer, PRUNING))),
        )
      : who === "pivot-phases"
        ? await Effect.runPromise(phased(phases))
        : (await OpenCode.step(new OpenCode.OnSqlite(new DatabaseSync(file), SESSION, false).newestFirst())).length
const cpu = process.cpuUsage(cpu0)
const ms = performance.now() - t0
const inSpan = gcs.stop()?.statistics ?? []
if (inspector !== undefined && profileTo !== undefined) {
  const { profile } = await inspector.post("Profiler.stop")
  ;(await import("node:fs")).writeFileSync(profileTo, JSON.stringify(profile))
}
console.log(
  JSON.stringify({
    ms,
    cpuMs: cpuMs(cpu),
    gcMs: inSpan.reduce((sum, gc) => sum + gc.cost, 0) / 1000,
    gcs: inSpan.map((gc) => gc.gcType),
    window,
    loadMs: t0,
    loadCpuMs: cpuMs(cpu0),
    ...(who === "pivot-phases" ? { phases } : {}),
  }),
)
