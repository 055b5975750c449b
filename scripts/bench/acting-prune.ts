/**
 * Where the turns in which pivot's prune acts spend their time (bench:peers' mean column; docs/benchmarks.md).
 *
 * The same session as bench:peers (cut just after a pivot at each size, `PRUNING`'s sized thresholds), 40 untimed
 * turns, then `--turns` timed ones: each times `prune` alone and `prepare` after it, and every snapshot the store
 * writes is timed with its size (a wrapper around `writeSnapshot`; the state's encoding happens before it, untimed).
 * Each size and store also reports p50, p99 and max of the whole turn (record, prune, prepare) and of `prune` alone.
 * `--gap MS` waits that long between timed turns, as an agent waits for its model (snapshots are written after the
 * command that makes them due returns, ADR 0024: back to back, their encoding lands in a later turn).
 * `--no-snapshots` runs the same turns with snapshots off, to see what the acting turns cost without them.
 *
 *   node --conditions=@pivot/source scripts/bench/acting-prune.ts --sizes 1000,100000 [--turns 80] [--no-snapshots]
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { Ids } from "@pivot/core"
import { ContextManager, Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Layer, ManagedRuntime } from "effect"
import { PRUNING, runtime, SESSION, SYNCHRONOUS } from "./support/agentLoop.ts"
import { bulkSession, readStep } from "./support/bulkSession.ts"

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,100000" },
    turns: { type: "string", default: "80" },
    "no-snapshots": { type: "boolean", default: false },
    // Idle milliseconds between timed turns (the agent waiting for its model); 0: back to back.
    gap: { type: "string", default: "0" },
  },
})
const TURNS = Number(values.turns)
const GAP = Number(values.gap)
const options = values["no-snapshots"] ? { ...PRUNING, snapshots: false as const } : PRUNING
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-acting-prune-"))
const now = () => performance.now()
const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? Number.NaN
/** p50, p99 and max of a sample, µs. */
const spread = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN
  return `p50 ${at(0.5).toFixed(0)} µs, p99 ${at(0.99).toFixed(0)}, max ${(sorted.at(-1) ?? Number.NaN).toFixed(0)}`
}
const list = (xs: ReadonlyArray<number>) => xs.map((x) => x.toFixed(0)).join(", ")

const snapshots: Array<{ readonly micros: number; readonly chars: number }> = []
/** The store with each `writeSnapshot` timed. */
const timedSnapshots = (store: Layer.Layer<EventStore, unknown>) =>
  Layer.effect(
    EventStore,
    Effect.gen(function* () {
      const s = yield* EventStore
      return {
        ...s,
        writeSnapshot: (stream: string, snapshot: Parameters<typeof s.writeSnapshot>[1]) =>
          Effect.suspend(() => {
            const t0 = now()
            return Effect.tap(s.writeSnapshot(stream, snapshot), () =>
              Effect.sync(() => snapshots.push({ micros: (now() - t0) * 1000, chars: snapshot.data.length })),
            )
          }),
      }
    }),
  ).pipe(Layer.provideMerge(store))

/** bench:peers' turn (a user message, `steps` tool steps), then `prune` and `prepare`, each timed. */
const turn = (i: number, steps: number) =>
  Effect.gen(function* () {
    const cm = yield* ContextManager
    const start = now()
    yield* cm.recordUserMessage(SESSION, { text: `request ${i}: look at src/module${i % 40}.ts and fix the bug` })
    for (let s = 0; s < steps; s++) yield* cm.recordAssistantStep(SESSION, readStep(i, s))
    const before = snapshots.length
    const t0 = now()
    const pruned = yield* cm.prune(SESSION)
    const t1 = now()
    yield* cm.prepare(SESSION)
    const t2 = now()
    return {
      turn: (t2 - start) * 1000,
      prune: (t1 - t0) * 1000,
      prepare: (t2 - t1) * 1000,
      parts: pruned.parts,
      snapshot: snapshots.length > before,
    }
  })

console.log(
  `${new Date().toISOString()}, load average ${os.loadavg().map((x) => x.toFixed(2))}, gap ${GAP} ms${values["no-snapshots"] ? ", no snapshots" : ""}`,
)
for (const size of values.sizes.split(",").map(Number)) {
  const bulk = bulkSession(SESSION, {})
  const events = bulk.until(size, { messages: true, afterPivot: true })
  for (const kind of ["memory", "SQLite"] as const) {
    const store =
      kind === "memory"
        ? EventStore.layerMemory()
        : EventStore.layerSqlite({ filename: path.join(dir, `pivot-${size}.db`), synchronous: SYNCHRONOUS })
    const rt = ManagedRuntime.make(runtime(timedSnapshots(store), Ids.Ids.layer, options))
    await rt.runPromise(
      Effect.gen(function* () {
        const st = yield* EventStore
        for (let at = 0; at < events.length; at += 2_000)
          yield* st.append(bulk.stream, at, events.slice(at, at + 2_000))
        yield* st.writeSnapshot(bulk.stream, {
          version: bulk.state.session.version,
          format: Sessions.SNAPSHOT_FORMAT,
          data: Sessions.encodeSnapshot(Sessions.retain(bulk.state)),
        })
        yield* (yield* Sessions.Sessions).load(SESSION)
      }),
    )
    for (let i = 0; i < 40; i++) await rt.runPromise(turn(i, 2 + (i % 4)))
    snapshots.length = 0
    const acting: Array<number> = []
    const withSnapshot: Array<number> = []
    const idle: Array<number> = []
    const turns: Array<number> = []
    const prunes: Array<number> = []
    for (let i = 40; i < 40 + TURNS; i++) {
      if (GAP > 0) await new Promise((resolve) => setTimeout(resolve, GAP))
      const r = await rt.runPromise(turn(i, 2 + (i % 4)))
      turns.push(r.turn)
      prunes.push(r.prune)
      if (r.parts === 0) idle.push(r.prune)
      else (r.snapshot ? withSnapshot : acting).push(r.prune)
    }
    console.log(
      `${size} ${kind}: acting prune without a snapshot (${acting.length}) median ${median(acting).toFixed(0)} µs, mean ${mean(acting).toFixed(0)}; with one [${list(withSnapshot)}] µs; prune that clears nothing median ${median(idle).toFixed(0)} µs`,
    )
    console.log(`   whole turn (${turns.length}): ${spread(turns)}; prune alone: ${spread(prunes)}`)
    console.log(
      `   snapshots written (µs / chars): ${snapshots.map((s) => `${s.micros.toFixed(0)} / ${s.chars}`).join(", ")}`,
    )
    snapshots.length = 0
    await rt.dispose()
  }
}
fs.rmSync(dir, { recursive: true, force: true })
