// Projection plugins on PostgreSQL (the server comes from PIVOT_PG_URL or scripts/postgres.sh, see globalSetup):
// inline read-your-writes, async equal to the reference, two processes' workers with a lease (a holder that stops
// renewing is taken over), and a version bump swapped in.
import { execFileSync } from "node:child_process"
import type { Events } from "@pivot/core"
import { Effect, ManagedRuntime } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, inject, it } from "vitest"
import { Projections, ReadModels } from "../../src/index.ts"
import { sessionArb } from "../session/support.ts"
import { appendBatches, reference, tally } from "./support.ts"

const url = inject("pgUrl")
const setupError = inject("pgError")
const schemas: Array<string> = []
const opened: Array<{ dispose: () => Promise<void> }> = []

const open = (schema: string, definitions: ReadonlyArray<Projections.AnyDefinition>, owner: string) => {
  if (setupError !== "") throw new Error(setupError)
  const runtime = ManagedRuntime.make(
    Projections.layerPostgres({
      url,
      schema,
      maxConnections: 4,
      projections: definitions,
      projector: { owner, pollInterval: "10 millis", leaseTime: "400 millis" },
    }),
  )
  opened.push(runtime)
  return runtime
}
const freshSchema = () => {
  const schema = `pivot_pj_${process.pid}_${schemas.length}_${Date.now().toString(36)}`
  schemas.push(schema)
  return schema
}

afterAll(async () => {
  for (const runtime of opened) await runtime.dispose()
  if (setupError === "")
    for (const schema of schemas)
      try {
        execFileSync("psql", [url, "-q", "-c", `DROP SCHEMA IF EXISTS ${schema} CASCADE;`], { stdio: "ignore" })
      } catch {}
})

const perSession = Projections.inline(tally("per-session"))
const overall = Projections.async(tally("overall"))

describe("projections on PostgreSQL", () => {
  it("inline is there right after each append; async equals the reference once caught up", async () => {
    const runtime = open(freshSchema(), [perSession, overall], "a")
    const sessions = fc.sample(sessionArb(15), { numRuns: 3, seed: 31 })
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        for (const [i, session] of sessions.entries()) {
          let version = 0
          const seen: Array<Events.Event> = []
          for (const batch of session.batches) {
            version = yield* appendBatches(`ses_${i}`, [batch], version)
            seen.push(...batch)
            expect(yield* projections.get(perSession, `ses_${i}`)).toEqual(reference(seen))
          }
        }
        yield* projections.awaitCaughtUp
        expect(yield* projections.get(overall)).toEqual(reference(sessions.flatMap((s) => s.batches.flat())))
        // The built-in read models went through the same appends: every session held, nothing left to fold.
        const builtIns = yield* projections.builtIns
        expect(builtIns.map((s) => [s.name, s.keys, s.lag])).toEqual(
          ReadModels.names.map((n) => [n.name, sessions.length, 0]),
        )
      }),
    )
  })

  it("two processes: one holds the lease; when it stops, the other takes over; every event applied once", async () => {
    const schema = freshSchema()
    const a = open(schema, [overall], "holder")
    const sessions = fc.sample(sessionArb(15), { numRuns: 4, seed: 37 })
    await a.runPromise(
      Effect.gen(function* () {
        for (const [i, session] of sessions.slice(0, 2).entries()) yield* appendBatches(`ses_${i}`, session.batches)
        yield* (yield* Projections.Projections).awaitCaughtUp
      }),
    )
    const b = open(schema, [overall], "standby")
    const before = await b.runPromise(
      Effect.gen(function* () {
        return yield* (yield* Projections.Projections).status
      }),
    )
    expect(before[0]?.owner).toBe("holder")
    await a.dispose() // the holder stops without handing the lease back
    await b.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        for (const [i, session] of sessions.slice(2).entries()) yield* appendBatches(`ses_${i + 2}`, session.batches)
        yield* projections.awaitCaughtUp
        expect(yield* projections.get(overall)).toEqual(reference(sessions.flatMap((s) => s.batches.flat())))
        expect((yield* projections.status)[0]?.owner).toBe("standby")
      }),
    )
  })

  it("a version bump is built from the first event and swapped in", async () => {
    const schema = freshSchema()
    const sessions = fc.sample(sessionArb(12), { numRuns: 2, seed: 41 })
    const v1 = open(schema, [overall], "v1")
    await v1.runPromise(
      Effect.gen(function* () {
        for (const [i, session] of sessions.entries()) yield* appendBatches(`ses_${i}`, session.batches)
        yield* (yield* Projections.Projections).awaitCaughtUp
      }),
    )
    await v1.dispose()
    const bumped = Projections.async(tally("overall", 2, 5))
    const v2 = open(schema, [bumped], "v2")
    await v2.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* projections.awaitCaughtUp
        expect(yield* projections.get(bumped)).toEqual(
          reference(
            sessions.flatMap((s) => s.batches.flat()),
            5,
          ),
        )
        expect((yield* projections.status).map((s) => s.version)).toEqual([2])
      }),
    )
  })
})
