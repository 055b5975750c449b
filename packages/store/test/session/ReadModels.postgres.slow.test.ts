// The same read models on PostgreSQL (the server comes from PIVOT_PG_URL or scripts/postgres.sh, see globalSetup):
// rebuilt == inline == the pure fold, catching up with a plain store, and replay through the read models.
import { Window } from "@pivot/core"
import { Effect, type ManagedRuntime, Stream } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore, ReadModels, Replay, SessionLog } from "../../src/index.ts"
import { dropSchemas, schemaName, server } from "../support/postgres.ts"
import {
  appendGenerated,
  expectReadModelsEqualFold,
  freshSession,
  type GeneratedSession,
  open,
  type Stores,
  sessionArb,
} from "./support.ts"

const { url, setupError } = server()
const schema = schemaName("pivot_rm")
let runtime: ManagedRuntime.ManagedRuntime<Stores, unknown> | undefined

const pg = () => {
  if (setupError !== "") throw new Error(setupError)
  runtime ??= open(ReadModels.layerPostgres({ url, schema, maxConnections: 4 }))
  return runtime
}

afterAll(async () => {
  await runtime?.dispose()
  if (setupError === "") dropSchemas(url, [schema])
})

const inlineRebuiltFold = (session: GeneratedSession) =>
  pg().runPromise(
    Effect.gen(function* () {
      const readModels = yield* ReadModels.ReadModels
      const sessionId = freshSession("pg")
      const head = yield* appendGenerated(sessionId, session)
      const inline = yield* readModels.tables(sessionId)
      expect(inline.checkpoints.map((c) => c.streamVersion)).toEqual(ReadModels.names.map(() => head))
      yield* expectReadModelsEqualFold(sessionId, session.events)
      yield* readModels.rebuild(sessionId)
      expect(yield* readModels.tables(sessionId)).toEqual(inline)
    }),
  )

describe("read models (PostgreSQL)", () => {
  it("property: rebuilt == inline == the pure fold, for generated sessions (60 runs)", async () => {
    await fc.assert(fc.asyncProperty(sessionArb(30), inlineRebuiltFold), { numRuns: 60 })
  }, 180_000)

  it("given events appended by a plain Postgres store, then reads catch up and replay matches the recorded windows", async () => {
    const session = fc
      .sample(sessionArb(40), { numRuns: 200, seed: 9 })
      .find((s) => s.events.some((e) => e._tag === "SummaryFinished"))!
    const sessionId = freshSession("pgc")
    if (setupError !== "") throw new Error(setupError)
    await Effect.runPromise(
      appendGenerated(sessionId, session).pipe(Effect.provide(EventStore.layerPostgres({ url, schema }))),
    )
    await pg().runPromise(
      Effect.gen(function* () {
        yield* expectReadModelsEqualFold(sessionId, session.events)
        // `pivot check`'s comparison, on PostgreSQL: the caught-up rows equal a fold of the log.
        const verified = yield* (yield* ReadModels.ReadModels).verify(sessionId)
        expect(verified).toEqual({ version: session.events.length, models: ReadModels.names.length, differences: [] })
        let state = Window.initial
        for (const [i, { event }] of SessionLog.fromEvents(sessionId, session.events).entries()) {
          state = Window.evolve(state, event)
          expect(Window.render(yield* Replay.windowAt(sessionId, i + 1))).toEqual(Window.render(state))
        }
      }),
    )
  }, 60_000)

  it("given inline appends and a bulk transaction over two sessions, then checkpoints report each session's last position and the log is in strictly increasing positions", async () => {
    const [first, second] = fc.sample(sessionArb(12), { numRuns: 2, seed: 4 })
    const a = freshSession("pgb")
    const b = freshSession("pgb")
    await pg().runPromise(
      Effect.gen(function* () {
        const readModels = yield* ReadModels.ReadModels
        const store = yield* EventStore
        yield* appendGenerated(a, first!)
        // Appends inside a caller's transaction number their rows in it (ADR 0012), under the store-wide lock.
        yield* readModels.bulk(
          Effect.andThen(appendGenerated(b, second!), appendGenerated(freshSession("pgb"), first!)),
        )
        for (const sessionId of [a, b]) {
          const events = yield* store.read(`session-${sessionId}`)
          const { checkpoints } = yield* readModels.tables(sessionId)
          expect(checkpoints.map((c) => [c.streamVersion, c.position])).toEqual(
            ReadModels.names.map(() => [events.length, events[events.length - 1]!.position]),
          )
        }
        const all = yield* Stream.runCollect(store.readAll())
        for (let i = 1; i < all.length; i++) expect(all[i]!.position).toBeGreaterThan(all[i - 1]!.position)
      }),
    )
  })
})
