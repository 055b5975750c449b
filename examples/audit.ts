// Auditing a session from code: the pivots, the window before and after one, each window message's source events,
// and the prune index, all from @pivot/store. The session comes from one of the importer's fixtures, stored in a
// SQLite file the way `pivot import` stores it. Run from the repository root.
import { readFileSync } from "node:fs"
import { Window } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { ReadModels, Replay, SessionLog } from "@pivot/store"
import { Effect, Result } from "effect"
import { fresh } from "./support/fresh.ts"

fresh("pivot.db") // each run stores the fixture anew (a second append of the same events is refused)

const imported = Import.importText(readFileSync("packages/opencode/test/fixtures/compaction-tail.json", "utf8"))
if (Result.isFailure(imported)) throw new Error(imported.failure.message)
const { sessionId, events } = imported.success
const entries = SessionLog.fromEvents(sessionId, events).map(({ event, meta }) => ({ id: meta.id, event }))

// #region audit
const audit = Effect.gen(function* () {
  const readModels = yield* ReadModels.ReadModels
  const pivots = yield* Replay.pivots(sessionId) // each with `version` (right after) and `requestedVersion`
  const first = pivots[0]!
  const before = yield* Replay.windowAt(sessionId, first.requestedVersion - 1)
  const after = yield* Replay.windowAt(sessionId, first.version)
  const sources = yield* readModels.audit(sessionId) // each window message with the ids of its events
  const pruned = yield* readModels.pruned(sessionId) // the prune index
  yield* readModels.rebuild({ all: true }) // replay the whole log into the read models
  console.log(`pivot 1: ${Window.messages(before).length} messages before, ${Window.messages(after).length} after`)
  console.log(`the first window message comes from ${sources[0]?.eventIds.join(", ")}`)
  console.log(`pruned outputs: ${pruned.entries.length}`)
})
// #endregion

const program = Effect.gen(function* () {
  yield* SessionLog.append(sessionId, "no-stream", entries)
  yield* audit
})

await Effect.runPromise(program.pipe(Effect.provide(ReadModels.layerSqlite({ filename: "pivot.db" }))))
