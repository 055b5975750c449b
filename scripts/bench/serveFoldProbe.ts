// Probe: a session's first catch-up in the viewer's catalog, phase by phase, CPU time each: the store's read of the
// whole log, its decode, the SessionView fold, the ledger's fold; GC pauses over all.
//   node --conditions=@pivot/source scripts/bench/serveFoldProbe.ts --db FILE [--session ID]
import { PerformanceObserver } from "node:perf_hooks"
import { parseArgs } from "node:util"
import { Events } from "@pivot/core"
import { Ledgers, SessionView } from "@pivot/server"
import { EventStore, Projections, SessionLog } from "@pivot/store"
import { Effect } from "effect"

const { values } = parseArgs({
  options: { db: { type: "string" }, session: { type: "string", default: "ses_bench_serve" } },
})
let gcMs = 0
new PerformanceObserver((l) => {
  for (const e of l.getEntries()) gcMs += e.duration
}).observe({ entryTypes: ["gc"] })
const cpuMs = (f: () => void) => {
  const c = process.cpuUsage()
  const t = performance.now()
  f()
  const d = process.cpuUsage(c)
  return `${((d.user + d.system) / 1000).toFixed(0)} ms CPU / ${(performance.now() - t).toFixed(0)} ms wall`
}
await Effect.runPromise(
  Effect.gen(function* () {
    const store = yield* EventStore
    let recorded: ReadonlyArray<any> = []
    let decoded: Array<SessionLog.Logged> = []
    const stream = Events.streamName(values.session!)
    console.log(
      `read: ${cpuMs(() => {
        recorded = Effect.runSync(store.read(stream))
      })}, ${recorded.length} events, GC so far ${gcMs.toFixed(0)} ms`,
    )
    console.log(
      `decode: ${cpuMs(() => {
        decoded = (SessionLog.decodeAll(recorded) as any).success
      })}, GC so far ${gcMs.toFixed(0)} ms`,
    )
    const byType = new Map<string, number>()
    for (const r of recorded) byType.set(r.type, (byType.get(r.type) ?? 0) + 1)
    console.log([...byType].map(([k, v]) => `${k} ${v}`).join(", "))
    const view = SessionView.make(values.session!)
    console.log(
      `SessionView fold: ${cpuMs(() => {
        for (const l of decoded) SessionView.evolve(view, l.event, l.meta)
      })}, GC so far ${gcMs.toFixed(0)} ms`,
    )
    console.log(
      `ledger fold: ${cpuMs(() => {
        Ledgers.ledgerOf(decoded)
      })}, GC so far ${gcMs.toFixed(0)} ms`,
    )
  }).pipe(Effect.provide(Projections.layerSqlite({ filename: values.db!, readonly: true }))),
)
