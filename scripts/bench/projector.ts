/**
 * Benchmark: the async projector's throughput (issue 32). A global async projection (calls, tokens and dollars per
 * day, the shape of docs/extend.md's `cost-per-day`) on a SQLite file, worked by this process
 * (`Projections.layerSqlite` with a stable owner), while events are appended by a child process through a plain
 * `EventStore.layerSqlite` (the writer's own costs are not the projector's).
 *
 * - **catch-up**: `--backlog` events of the agent loop's shape are appended first; the projector opens afterwards and
 *   the time until `awaitCaughtUp` gives events per second (layer start included).
 * - **keeping up**: the child appends `--rate` events per second (batches of 10, ~10 ms apart, their timing kept on
 *   schedule) for `--seconds`; every 100 ms this process reads the projection's `lag` (events appended and not
 *   applied). Reported: the largest lag in events and in seconds of the writer's rate, and the lag when the writer
 *   stopped; then the time to catch up.
 *
 * The target: keep up with ≥ 10× a writer of 80–100 events/s (so 1,000 events/s) with lag ≤ 1 s.
 *   node --conditions=@pivot/source scripts/bench/projector.ts [--backlog 20000] [--rate 1000] [--seconds 20]
 *                                                              [--batch 500]
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Pricing, type Projection } from "@pivot/core"
import { EventStore, type NewEvent, Projections } from "@pivot/store"
import { Context, Effect, Layer } from "effect"
import { bulkSession } from "./support/bulkSession.ts"

const { values } = parseArgs({
  options: {
    backlog: { type: "string", default: "20000" },
    rate: { type: "string", default: "1000" },
    seconds: { type: "string", default: "20" },
    batch: { type: "string", default: "500" },
    child: { type: "string" },
  },
})

type CostPerDay = Readonly<Record<string, { readonly calls: number; readonly tokens: number; readonly usd: number }>>
const PRICE: Pricing.Price = { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 1.25 }
const costPerDay: Projection.Projection<CostPerDay> = {
  name: "cost-per-day",
  version: 1,
  initial: {},
  evolve: (state, event) => {
    if (event._tag !== "AssistantStepRecorded") return state
    const day = new Date(event.at).toISOString().slice(0, 10)
    const { input, output, reasoning, cacheRead, cacheWrite } = event.message.tokens
    const before = state[day] ?? { calls: 0, tokens: 0, usd: 0 }
    return {
      ...state,
      [day]: {
        calls: before.calls + 1,
        tokens: before.tokens + input + output + reasoning + cacheRead + cacheWrite,
        usd: before.usd + Pricing.dollars(event.message.tokens, PRICE),
      },
    }
  },
}
const perDay = Projections.async(costPerDay)

/** Appends `events` to `session` in batches: all at once (`rate` 0), or `rate` events per second. */
const append = (file: string, session: string, events: ReadonlyArray<NewEvent>, rate: number) =>
  Effect.gen(function* () {
    const store = yield* EventStore
    const batch = rate === 0 ? 500 : 10
    const t0 = performance.now()
    for (let i = 0; i < events.length; i += batch) {
      if (rate > 0) {
        const due = t0 + (i / rate) * 1000
        const wait = due - performance.now()
        if (wait > 0) yield* Effect.sleep(`${wait} millis`)
      }
      yield* store.append(`session-${session}`, i, events.slice(i, i + batch))
    }
  }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file, synchronous: "normal" })))

if (values.child !== undefined) {
  // The writer: a session of its own, `rate` events per second for `seconds`.
  const count = Number(values.rate) * Number(values.seconds)
  const events = bulkSession("ses_live").until(count).slice(0, count)
  process.stdout.write("ready\n")
  await new Promise((resolve) => process.stdin.once("data", resolve))
  await Effect.runPromise(append(values.child, "ses_live", events, Number(values.rate)))
  process.exit(0)
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-projector-"))
const file = path.join(dir, "projector.db")
const backlog = Number(values.backlog)
await Effect.runPromise(append(file, "ses_backlog", bulkSession("ses_backlog").until(backlog).slice(0, backlog), 0))

const projector = Projections.layerSqlite({
  filename: file,
  projections: [perDay],
  projector: { owner: "bench-projector", batchSize: Number(values.batch) },
})
const lagOf = (statuses: ReadonlyArray<Projections.Status>) =>
  statuses.find((s) => s.name === costPerDay.name)?.lag ?? 0

const report = await Effect.runPromise(
  Effect.scoped(
    Effect.gen(function* () {
      const t0 = performance.now()
      const service = Context.get(yield* Layer.build(projector), Projections.Projections)
      yield* service.awaitCaughtUp
      const catchUpMs = performance.now() - t0

      const child = spawn(
        process.execPath,
        ["--conditions=@pivot/source", fileURLToPath(import.meta.url), "--child", file, ...process.argv.slice(2)],
        { stdio: ["pipe", "pipe", "inherit"] },
      )
      yield* Effect.promise(() => new Promise((resolve) => child.stdout!.once("data", resolve)))
      const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
      let running = true
      void exited.then(() => (running = false))
      child.stdin!.write("go\n")
      const lags: Array<number> = []
      while (running) {
        lags.push(lagOf(yield* service.status))
        yield* Effect.sleep("100 millis")
      }
      const atStop = lagOf(yield* service.status)
      const s0 = performance.now()
      yield* service.awaitCaughtUp
      const drainMs = performance.now() - s0
      const rate = Number(values.rate)
      const maxLag = Math.max(0, ...lags)
      const maxAt = lags.indexOf(maxLag)
      const sorted = [...lags].sort((a, b) => a - b)
      return {
        backlog,
        catchUp: { ms: Math.round(catchUpMs), eventsPerSecond: Math.round(backlog / (catchUpMs / 1000)) },
        keepUp: {
          rate,
          seconds: Number(values.seconds),
          samples: lags.length,
          maxLagEvents: maxLag,
          maxLagSeconds: Number((maxLag / rate).toFixed(2)),
          maxLagAtSample: maxAt,
          medianLagEvents: sorted[Math.floor(sorted.length / 2)] ?? 0,
          p95LagEvents: sorted[Math.floor(sorted.length * 0.95)] ?? 0,
          lagAtStop: atStop,
          drainMs: Math.round(drainMs),
        },
        batch: Number(values.batch),
      }
    }),
  ),
)
console.log(JSON.stringify(report))
fs.rmSync(dir, { recursive: true, force: true })
