/**
 * Benchmark: the overhead of `ContextManager.prepare` per turn (everything but the model call) after 1k, 10k and
 * 100k events of history, on the memory store and on SQLite. The target is a flat per-turn cost: it must not grow
 * with the history (pivots keep the window bounded; the command handler reads only the events appended since its
 * cached version).
 *
 * The history is a real agent loop run through the ContextManager (user turns, tool-using steps whose usage is the
 * window's estimate plus a fixed overhead, automatic compactions by the extractive summariser whenever the context
 * fills up). Each size is a prefix of it, cut where no compaction is outstanding, bulk-loaded into a fresh store; a
 * fresh runtime then loads it once (cold) and runs measured turns: record a user message, `prepare` (timed), record
 * two steps. Run: `node --expose-gc scripts/bench/prepare.ts [--turns N]`. Compare ratios, not absolutes.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { Ids, Window } from "@pivot/core"
import { EventStore, type RecordedEvent } from "@pivot/store"
import { Effect, type Layer } from "effect"
import { generate, load, percentile, runtime, SESSION, services, settledPrefix, turn } from "./support/agentLoop.ts"

const { values } = parseArgs({ options: { turns: { type: "string", default: "300" } } })
const TURNS = Number(values.turns)
const SIZES = [1_000, 10_000, 100_000]
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-prepare-"))

const measure = (events: ReadonlyArray<RecordedEvent>, store: Layer.Layer<EventStore, unknown>) =>
  Effect.gen(function* () {
    yield* load(events)
    const { cm, sessions } = yield* services
    const cold0 = performance.now()
    yield* sessions.load(SESSION)
    const cold = performance.now() - cold0
    const windowAtStart = Window.messages((yield* sessions.load(SESSION)).session.window).length
    const samples: Array<number> = []
    const turns0 = performance.now()
    // Usage under the trigger: the measured turns never compact, so every size does the same work.
    for (let i = 0; i < TURNS; i++)
      yield* turn(
        1_000_000 + i,
        () => 1_000,
        (us) => samples.push(us),
      )
    const perTurn = ((performance.now() - turns0) * 1000) / TURNS
    yield* cm.usage(SESSION)
    samples.sort((a, b) => a - b)
    return { cold, windowAtStart, median: percentile(samples, 0.5), p95: percentile(samples, 0.95), perTurn }
  }).pipe(Effect.provide(runtime(store, Ids.Ids.layer)))

const main = Effect.gen(function* () {
  const g0 = performance.now()
  const history = yield* generate(Math.max(...SIZES) + 200)
  const pivots = history.filter((e) => e.type === "SummaryFinished").length
  console.log(
    `history: ${history.length} events, ${pivots} pivots, generated in ${((performance.now() - g0) / 1000).toFixed(1)} s; ${TURNS} measured turns per size\n`,
  )
  console.log(
    "| store | history (events) | window (messages) | cold load ms | prepare median µs | prepare p95 µs | whole turn µs |",
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|")
  const rows: Array<{ store: string; size: number; median: number }> = []
  for (const kind of ["memory", "sqlite"] as const) {
    for (const size of SIZES) {
      const prefix = settledPrefix(history, size)
      const store =
        kind === "memory"
          ? EventStore.layerMemory()
          : EventStore.layerSqlite({ filename: path.join(dir, `bench-${size}.db`) })
      ;(globalThis as { gc?: () => void }).gc?.()
      const r = yield* measure(prefix, store)
      rows.push({ store: kind, size, median: r.median })
      console.log(
        `| ${kind} | ${prefix.length} | ${r.windowAtStart} | ${r.cold.toFixed(1)} | ${r.median.toFixed(0)} | ${r.p95.toFixed(0)} | ${r.perTurn.toFixed(0)} |`,
      )
    }
  }
  for (const kind of ["memory", "sqlite"]) {
    const of = (size: number) => rows.find((r) => r.store === kind && r.size === size)!.median
    console.log(`\n${kind}: prepare median 100k / 1k = ×${(of(100_000) / of(1_000)).toFixed(2)}`)
  }
})

Effect.runPromise(main).finally(() => fs.rmSync(dir, { recursive: true, force: true }))
