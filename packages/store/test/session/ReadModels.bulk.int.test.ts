// `ReadModels.bulk`: appends in one transaction with the read models folded in memory and written once at the end
// (how `pivot import` stores a big export). Same tables as inline and rebuilt; all or nothing.
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../../core/test/support/runs.ts"
import { ReadModels, SessionLog } from "../../src/index.ts"
import {
  appendGenerated,
  expectReadModelsEqualFold,
  freshSession,
  type GeneratedSession,
  openSqliteOnce,
  type Stores,
  sessionArb,
} from "./support.ts"

const runtime = openSqliteOnce("pivot-read-models-bulk-")

const run = <A>(effect: Effect.Effect<A, unknown, Stores>) => runtime.runPromise(effect)

/** Appends `generated` split at `split` batches: the first part inline, the rest inside one bulk transaction. */
const inlineThenBulk = (generated: GeneratedSession, split: number) =>
  run(
    Effect.gen(function* () {
      const readModels = yield* ReadModels.ReadModels
      const sessionId = freshSession("b")
      const first = { ...generated, batches: generated.batches.slice(0, split) }
      let version = yield* appendGenerated(sessionId, first)
      yield* readModels.bulk(
        Effect.gen(function* () {
          for (const batch of generated.batches.slice(split)) {
            const entries = batch.map((event, i) => ({ id: SessionLog.eventId(sessionId, version + i + 1), event }))
            version = (yield* SessionLog.append(sessionId, version, entries)).streamVersion
          }
        }),
      )
      expect(version).toBe(generated.events.length)
      if (version === 0) return
      const bulk = yield* readModels.tables(sessionId)
      // Written at the end of the transaction: the checkpoints stand at the head, no read has to catch up.
      expect(bulk.checkpoints.map((c) => c.streamVersion)).toEqual(ReadModels.names.map(() => version))
      yield* expectReadModelsEqualFold(sessionId, generated.events)
      yield* readModels.rebuild(sessionId)
      expect(yield* readModels.tables(sessionId)).toEqual(bulk)
    }) as Effect.Effect<void, unknown, Stores>,
  )

describe("ReadModels.bulk (SQLite)", () => {
  it("property: bulk == rebuilt == the pure fold, from an empty session or after inline appends (200 runs)", async () => {
    await fc.assert(
      fc.asyncProperty(sessionArb(30), fc.nat(), (generated, k) =>
        inlineThenBulk(generated, k % (generated.batches.length + 1)),
      ),
      runs(200),
    )
  }, 240_000)

  // A new session's window rows are written batch by batch, with the text each append serialised, until a batch would
  // rewrite the window (a pivot); then they are written whole at the end: both ways end equal to the rebuilt tables.
  it("property: bulk from an empty session (window rows written as it goes) == rebuilt == the pure fold (150 runs)", async () => {
    await fc.assert(
      fc.asyncProperty(sessionArb(30), (generated) => inlineThenBulk(generated, 0)),
      runs(150),
    )
  }, 240_000)

  it("given a failure inside, then nothing of the transaction is stored: no events, no read-model rows", async () => {
    const sessionId = freshSession("f")
    const generated = fc.sample(sessionArb(10), { numRuns: 1, seed: 7 })[0]!
    const outcome = await run(
      Effect.gen(function* () {
        const readModels = yield* ReadModels.ReadModels
        return yield* Effect.exit(
          readModels.bulk(
            Effect.gen(function* () {
              yield* appendGenerated(sessionId, generated)
              return yield* Effect.fail("the import found a problem half-way")
            }),
          ),
        )
      }) as Effect.Effect<unknown, unknown, Stores>,
    )
    expect((outcome as { _tag: string })._tag).toBe("Failure")
    const after = await run(
      Effect.gen(function* () {
        const readModels = yield* ReadModels.ReadModels
        return { version: yield* SessionLog.version(sessionId), tables: yield* readModels.tables(sessionId) }
      }) as Effect.Effect<{ version: number; tables: ReadModels.Tables }, unknown, Stores>,
    )
    expect(after.version).toBe(0)
    expect(after.tables).toEqual({
      window: [],
      usage: [],
      compactions: [],
      pruned: [],
      audit: [],
      recall: [],
      timeline: [],
      checkpoints: [],
    })
    // The store is usable afterwards, inline as before.
    await inlineThenBulk(generated, generated.batches.length)
  })
})
