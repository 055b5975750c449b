// Rebuilds every built-in read model of a SQLite store from its log (`ReadModels.rebuild`), as a version bump does:
// how a store written before a read model existed gets its rows (e.g. the timeline's, ADR 0057). Reports the time.
//
//   node scripts/bench/rebuild.ts FILE

import { ReadModels } from "@pivot/store"
import { Effect } from "effect"

const file = process.argv[2]
if (file === undefined) throw new Error("usage: rebuild.ts FILE")
const cpu = process.cpuUsage()
const start = performance.now()
const sessions = await Effect.runPromise(
  Effect.gen(function* () {
    return yield* (yield* ReadModels.ReadModels).rebuild({ all: true })
  }).pipe(Effect.provide(ReadModels.layerSqlite({ filename: file, synchronous: "normal" }))),
)
const used = process.cpuUsage(cpu)
console.log(
  `rebuilt ${sessions} session(s) in ${Math.round(performance.now() - start)} ms wall, ${Math.round((used.user + used.system) / 1000)} ms CPU`,
)
