// The projector at its edges (issue 18, mutation run): a layer opened with no options, a state that encodes to
// nothing, inline rows kept current by appends alone, stored events that do not decode, streams that are no session,
// and a status row nothing has leased yet.
import { DatabaseSync } from "node:sqlite"
import type { Projection } from "@pivot/core"
import { Cause, Effect, Exit, ManagedRuntime } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { EventStore, Projections } from "../../src/index.ts"
import { sessionArb } from "../session/support.ts"
import { appendBatches, openSqlite, reference, scratch, tally } from "./support.ts"

const { fresh, keep, disposeLast } = scratch("pivot-projection-edges-")

/** A fresh file holding session `ses_bad` with one event no read model can decode (the store alone does not fold events). */
const withUndecodable = async (): Promise<string> => {
  const file = fresh()
  const plain = ManagedRuntime.make(EventStore.layerSqlite({ filename: file }))
  await plain.runPromise(
    Effect.gen(function* () {
      yield* (yield* EventStore).append("session-ses_bad", 0, [
        { id: "evt_bad_1", type: "UserMessageAdded", version: 1, data: { not: "a message" } },
      ])
    }),
  )
  await plain.dispose()
  return file
}

const failureOf = <A, E>(exit: Exit.Exit<A, E>): unknown =>
  Exit.isFailure(exit) ? Cause.squash(exit.cause) : new Error("expected a failure")

const perSession = Projections.inline(tally("per-session"))
const [first, second] = fc.sample(sessionArb(12), { numRuns: 2, seed: 43 })

describe("the projector at its edges", () => {
  it("a layer with no projections option and default timings opens, and has nothing to report", async () => {
    const runtime = keep(ManagedRuntime.make(Projections.layerSqlite({ filename: fresh() })))
    const status = await runtime.runPromise(
      Effect.gen(function* () {
        return yield* (yield* Projections.Projections).status
      }),
    )
    expect(status).toEqual([])
  })

  it("a layer with projections and no projector options opens with the default timings", async () => {
    const runtime = keep(ManagedRuntime.make(Projections.layerSqlite({ filename: fresh(), projections: [perSession] })))
    const status = await runtime.runPromise(
      Effect.gen(function* () {
        return yield* (yield* Projections.Projections).status
      }),
    )
    expect(status.map((row) => row.name)).toEqual(["per-session"])
  })

  it("a state that JSON cannot encode is stored as null and read back as null", async () => {
    const nothing: Projection.Projection<unknown> = { name: "nothing", version: 1, initial: 0, evolve: () => undefined }
    const definition = Projections.inline(nothing)
    const runtime = keep(openSqlite(fresh(), [definition]))
    const state = await runtime.runPromise(
      Effect.gen(function* () {
        yield* appendBatches("ses_a", first!.batches)
        return yield* (yield* Projections.Projections).get(definition, "ses_a")
      }),
    )
    expect(state).toBeNull()
  })

  it("an inline row follows every append on its own: stored shows it without a get", async () => {
    const runtime = keep(openSqlite(fresh(), [perSession]))
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        const version = yield* appendBatches("ses_a", first!.batches.slice(0, 1))
        yield* projections.awaitCaughtUp
        yield* appendBatches("ses_a", first!.batches.slice(1), version)
        expect((yield* projections.stored("per-session", "ses_a"))?.state).toEqual(reference(first!.batches.flat()))
      }),
    )
  })

  it("an event that does not decode (written by a process without the read models) fails get, naming it", async () => {
    const file = await withUndecodable()
    const runtime = keep(openSqlite(file, [perSession]))
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        const failure = failureOf(yield* Effect.exit(projections.get(perSession, "ses_bad")))
        expect(failure).toBeInstanceOf(Projections.ProjectionFailed)
        expect((failure as Error).message).toMatch(/^projection per-session v1 failed: .*UserMessageAdded.*$/)
      }),
    )
  })

  it("an async projection's batch that meets an undecodable event records the decoding failure", async () => {
    const file = await withUndecodable()
    const runtime = keep(openSqlite(file, [Projections.async(tally("overall"))]))
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        while ((yield* projections.status)[0]!.failures === 0) yield* Effect.sleep("5 millis")
        const [status] = yield* projections.status
        expect(status!.error).toMatch(/UserMessageAdded/)
        expect(status!.ready).toBe(false)
      }),
    )
  })

  it("events of a stream that is no session are not projected, and forgetting that stream keeps the sessions' rows", async () => {
    const runtime = keep(openSqlite(fresh(), [perSession]))
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        const store = yield* EventStore
        yield* appendBatches("ses_a", second!.batches)
        yield* store.append("audit-1", 0, [{ id: "evt_audit_1", type: "Noted", version: 1, data: { x: 1 } }])
        yield* store.append("session-ses_empty", 0, [])
        yield* store.forget("audit-1")
        yield* projections.awaitCaughtUp
        const [status] = yield* projections.status
        expect(status).toMatchObject({ failures: 0, error: undefined, keys: 1 })
        expect((yield* projections.stored("per-session", "ses_a"))?.state).toEqual(reference(second!.batches.flat()))
      }),
    )
  })

  it("a status row nothing has leased shows no owner, no lease and no error; unknown modes and scopes read as the defaults", async () => {
    const file = fresh()
    const writer = keep(openSqlite(file, []))
    await writer.runPromise(appendBatches("ses_a", first!.batches.slice(0, 1)))
    await disposeLast()
    const db = new DatabaseSync(file)
    db.exec(`INSERT INTO pivot_pj_status (name, version, mode, scope, checkpoint, ready, failures)
VALUES ('handmade', 1, 'other', 'other', 0, 0, 0)`)
    db.close()
    const reader = keep(
      ManagedRuntime.make(Projections.layerSqlite({ filename: file, readonly: true, projections: [] })),
    )
    const [status] = await reader.runPromise(
      Effect.gen(function* () {
        return yield* (yield* Projections.Projections).status
      }),
    )
    expect(status).toMatchObject({
      name: "handmade",
      mode: "async",
      scope: "session",
      ready: false,
      owner: undefined,
      leaseUntil: undefined,
      error: undefined,
      keys: 0,
    })
    expect(status!.lag).toBe(status!.head)
    expect(status!.head).toBeGreaterThan(0)
  })

  it("a lease runs ahead of the clock while the work goes on", async () => {
    const runtime = keep(openSqlite(fresh(), [Projections.async(tally("overall"))]))
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* appendBatches("ses_a", first!.batches)
        yield* projections.awaitCaughtUp
        // Idle polls renew it too: leaseTime (10 s by default) ahead of now.
        yield* Effect.sleep("30 millis")
        const [status] = yield* projections.status
        expect(status!.leaseUntil).toBeGreaterThan(Date.now() + 5_000)
      }),
    )
  })
})

// The background build of an inline projection meets sessions whose rows appends already wrote: here its checkpoint is
// set back by hand (as when a build lags behind the appends that wrote rows inline), and a process without the
// projection appended the rest of the session, which no row has. The lease is released too (the process is gone).
describe("an inline projection's build over rows that appends already wrote", () => {
  const events = first!.batches.flat()
  const written = 2

  /** The first `written` events appended with the projection, the rest without it, then the checkpoint set to `at`. */
  const prepare = async (at: (positions: ReadonlyArray<number>) => number) => {
    expect(events.length).toBeGreaterThanOrEqual(written + 3)
    const file = fresh()
    const withIt = openSqlite(file, [perSession])
    const version = await withIt.runPromise(
      Effect.gen(function* () {
        const version = yield* appendBatches(
          "ses_a",
          events.slice(0, written).map((event) => [event]),
        )
        yield* (yield* Projections.Projections).awaitCaughtUp
        return version
      }),
    )
    await withIt.dispose()
    const without = openSqlite(file, [])
    await without.runPromise(appendBatches("ses_a", [events.slice(written)], version))
    await without.dispose()
    const db = new DatabaseSync(file)
    const positions = db
      .prepare("SELECT position FROM pivot_events WHERE stream = 'session-ses_a' ORDER BY stream_version")
      .all()
      .map((row) => Number(row.position))
    db.prepare(
      "UPDATE pivot_pj_status SET checkpoint = ?, ready = 0, owner = NULL, lease_until = NULL WHERE name = 'per-session'",
    ).run(at(positions))
    db.close()
    return file
  }

  it("events a row already covers are not applied again; the rest are", async () => {
    const runtime = keep(openSqlite(await prepare(() => 0), [perSession]))
    const stored = await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* projections.awaitCaughtUp
        return yield* projections.stored("per-session", "ses_a")
      }),
    )
    expect(stored?.state).toEqual(reference(events))
  })

  it("a batch that starts past the row's next event leaves the row for get, which catches it up", async () => {
    // The checkpoint is past event written + 1: the batch holds written + 2 on, which do not follow the row.
    const runtime = keep(openSqlite(await prepare((positions) => positions[written]!), [perSession]))
    const [stored, got] = await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* projections.awaitCaughtUp
        const stored = yield* projections.stored("per-session", "ses_a")
        return [stored, yield* projections.get(perSession, "ses_a")] as const
      }),
    )
    expect(stored?.state).toEqual(reference(events.slice(0, written)))
    expect(got).toEqual(reference(events))
  })
})

describe("an async projection across sessions", () => {
  it("a later batch, which starts mid-session, is applied: the state counts every event", async () => {
    const overall = Projections.async(tally("overall"))
    const runtime = keep(openSqlite(fresh(), [overall]))
    const events = first!.batches.flat()
    const state = await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        const version = yield* appendBatches("ses_a", [events.slice(0, 2)])
        yield* projections.awaitCaughtUp
        yield* appendBatches("ses_a", [events.slice(2)], version)
        yield* projections.awaitCaughtUp
        return yield* projections.get(overall)
      }),
    )
    expect(state).toEqual(reference(events))
  })
})

describe("a batch over its time limit", () => {
  it("is abandoned and recorded as the projection's error, its checkpoint not moved", async () => {
    const base = tally("slow")
    // A fold that takes 10 ms an event against a limit of 1 ms: the batch is still going when its limit passes.
    const slow: Projection.Projection<ReturnType<typeof base.evolve>> = {
      ...base,
      evolve: (state, event, meta) => {
        const until = Date.now() + 10
        while (Date.now() < until);
        return base.evolve(state, event, meta)
      },
    }
    const runtime = keep(
      ManagedRuntime.make(
        Projections.layerSqlite({
          filename: fresh(),
          projections: [Projections.async(slow)],
          projector: { pollInterval: "5 millis", batchTimeout: "1 millis" },
        }),
      ),
    )
    const status = await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* appendBatches("ses_a", first!.batches)
        while ((yield* projections.status)[0]!.failures === 0) yield* Effect.sleep("5 millis")
        return (yield* projections.status)[0]!
      }),
    )
    expect(status).toMatchObject({ error: "a batch took longer than 0.001 s", checkpoint: 0, ready: false })
  })
})
