// Projection plugins on SQLite: inline (read-your-writes) and async (checkpointed, once per event), rebuilt on a
// version bump and swapped in, isolated when they throw, and equal to the reference tally after any restart cadence.
import type { Events } from "@pivot/core"
import { Cause, Effect, Exit, ManagedRuntime } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Projections } from "../../src/index.ts"
import { sessionArb } from "../session/support.ts"
import { appendBatches, openSqlite, reference, scratch, tally, throwingOn } from "./support.ts"

const { fresh, open, keep, disposeLast } = scratch("pivot-projections-")

const perSession = Projections.inline(tally("per-session"))
const overall = Projections.async(tally("overall"))
const asyncPerSession = Projections.async(tally("async-per-session"), { scope: "session" })

const failureOf = <A, E>(exit: Exit.Exit<A, E>): unknown =>
  Exit.isFailure(exit) ? Cause.squash(exit.cause) : new Error("expected a failure")

describe("projections on SQLite", () => {
  it("inline: the state is there right after the append (read-your-writes), and equals the reference", async () => {
    const runtime = open(fresh(), [perSession])
    const [first] = fc.sample(sessionArb(20), { numRuns: 1, seed: 7 })
    const events = first!.batches.flat()
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        let seen: Array<Events.Event> = []
        let version = 0
        for (const batch of first!.batches) {
          version = yield* appendBatches("ses_a", [batch], version)
          seen = [...seen, ...batch]
          expect(yield* projections.get(perSession, "ses_a")).toEqual(reference(seen))
        }
        expect(yield* projections.get(perSession, "ses_b")).toEqual(reference([]))
      }),
    )
    expect(events.length).toBeGreaterThan(0)
  })

  it("async: across sessions and per session, once caught up, equal to the reference; status shows no lag", async () => {
    const runtime = open(fresh(), [overall, asyncPerSession])
    const sessions = fc.sample(sessionArb(15), { numRuns: 4, seed: 11 })
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        for (const [i, session] of sessions.entries()) yield* appendBatches(`ses_${i}`, session.batches)
        yield* projections.awaitCaughtUp
        expect(yield* projections.get(overall)).toEqual(reference(sessions.flatMap((s) => s.batches.flat())))
        for (const [i, session] of sessions.entries())
          expect(yield* projections.get(asyncPerSession, `ses_${i}`)).toEqual(reference(session.batches.flat()))
        const status = yield* projections.status
        expect(status.map((s) => [s.name, s.version, s.mode, s.ready, s.lag, s.failures])).toEqual([
          ["async-per-session", 1, "async", true, 0, 0],
          ["overall", 1, "async", true, 0, 0],
        ])
      }),
    )
  })

  it("async: before it has caught up once, get fails with ProjectionNotReady naming its progress", async () => {
    const file = fresh()
    const writer = open(file, [])
    const [session] = fc.sample(sessionArb(10), { numRuns: 1, seed: 3 })
    await writer.runPromise(appendBatches("ses_w", session!.batches))
    const slow = openSqlite(file, [overall])
    keep(slow)
    const exit = await slow.runPromise(
      Effect.exit(
        Effect.gen(function* () {
          return yield* (yield* Projections.Projections).get(overall)
        }),
      ),
    )
    // Either it is not ready yet, or it already caught up (a fast machine): both are correct answers.
    if (Exit.isFailure(exit)) expect(failureOf(exit)).toBeInstanceOf(Projections.ProjectionNotReady)
    else expect(exit.value).toEqual(reference(session!.batches.flat()))
  })

  it("a version bump rebuilds from the first event and swaps in: the old version's rows are deleted", async () => {
    const file = fresh()
    const sessions = fc.sample(sessionArb(12), { numRuns: 3, seed: 5 })
    const all = sessions.flatMap((s) => s.batches.flat())
    const v1 = open(file, [Projections.async(tally("bumped", 1, 1)), Projections.inline(tally("inline-bumped", 1, 1))])
    await v1.runPromise(
      Effect.gen(function* () {
        for (const [i, session] of sessions.entries()) yield* appendBatches(`ses_${i}`, session.batches)
        yield* (yield* Projections.Projections).awaitCaughtUp
      }),
    )
    await disposeLast()
    const bumpedAsync = Projections.async(tally("bumped", 2, 3))
    const bumpedInline = Projections.inline(tally("inline-bumped", 2, 3))
    const v2 = open(file, [bumpedAsync, bumpedInline])
    await v2.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* projections.awaitCaughtUp
        expect(yield* projections.get(bumpedAsync)).toEqual(reference(all, 3))
        for (const [i, session] of sessions.entries())
          expect(yield* projections.get(bumpedInline, `ses_${i}`)).toEqual(reference(session.batches.flat(), 3))
        const status = yield* projections.status
        expect(status.map((s) => [s.name, s.version])).toEqual([
          ["bumped", 2],
          ["inline-bumped", 2],
        ])
      }),
    )
  })

  it("a projection that throws is isolated: appends and the other projections go on, the failure is recorded", async () => {
    const broken = Projections.async(throwingOn("broken", "UserMessageAdded"))
    const brokenInline = Projections.inline(throwingOn("broken-inline", "UserMessageAdded"))
    const runtime = open(fresh(), [broken, brokenInline, overall, perSession])
    const [session] = fc.sample(sessionArb(10), { numRuns: 1, seed: 9 })
    const events = session!.batches.flat()
    expect(events.some((event) => event._tag === "UserMessageAdded")).toBe(true)
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* appendBatches("ses_x", session!.batches)
        expect(yield* projections.get(perSession, "ses_x")).toEqual(reference(events))
        // The healthy async projection catches up although the broken one never does.
        while ((yield* Effect.exit(projections.get(overall)))._tag === "Failure") yield* Effect.sleep("5 millis")
        while (
          (yield* projections.status).find((s) => s.name === "broken")!.failures < 2 ||
          (yield* projections.get(overall)).count < events.length
        )
          yield* Effect.sleep("5 millis")
        expect(yield* projections.get(overall)).toEqual(reference(events))
        const status = (yield* projections.status).find((s) => s.name === "broken")!
        expect(status.error).toBe("cannot fold UserMessageAdded")
        expect(status.ready).toBe(false)
        const inlineFailure = failureOf(yield* Effect.exit(projections.get(brokenInline, "ses_x")))
        expect(inlineFailure).toBeInstanceOf(Projections.ProjectionFailed)
        expect((inlineFailure as Error).message).toBe(
          "projection broken-inline v1 failed: cannot fold UserMessageAdded",
        )
      }),
    )
  })

  it("two processes' workers on one file (two owners): each event is applied once", async () => {
    const file = fresh()
    const sessions = fc.sample(sessionArb(15), { numRuns: 3, seed: 21 })
    const a = open(file, [overall], "owner-a")
    const b = open(file, [overall], "owner-b")
    await a.runPromise(
      Effect.gen(function* () {
        for (const [i, session] of sessions.entries()) yield* appendBatches(`ses_${i}`, session.batches)
      }),
    )
    const expected = reference(sessions.flatMap((s) => s.batches.flat()))
    for (const runtime of [a, b])
      await runtime.runPromise(
        Effect.gen(function* () {
          const projections = yield* Projections.Projections
          yield* projections.awaitCaughtUp
          expect(yield* projections.get(overall)).toEqual(expected)
        }),
      )
  })

  it("rebuild resets a projection, which is built again to the same state; forget deletes a session's rows", async () => {
    const runtime = open(fresh(), [perSession, overall])
    const [session] = fc.sample(sessionArb(12), { numRuns: 1, seed: 13 })
    const events = session!.batches.flat()
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* appendBatches("ses_r", session!.batches)
        yield* projections.awaitCaughtUp
        expect(yield* projections.rebuild("overall")).toBe(1)
        expect((yield* projections.status).find((s) => s.name === "overall")!.keys).toBe(0)
        yield* projections.awaitCaughtUp
        expect(yield* projections.get(overall)).toEqual(reference(events))
        expect(yield* projections.rebuild("per-session")).toBe(1)
        // The inline build had stopped once done: rebuild starts it again, which writes the row without a get.
        yield* projections.awaitCaughtUp
        expect((yield* projections.stored("per-session", "ses_r"))?.state).toEqual(reference(events))
        expect(yield* projections.get(perSession, "ses_r")).toEqual(reference(events))
      }),
    )
  })

  it("bad definitions fail the layer with one line: a duplicate name, an inline projection across sessions", async () => {
    const duplicate = await openSqlite(fresh(), [perSession, Projections.inline(tally("per-session"))])
      .runPromise(Effect.void)
      .catch((e: unknown) => e)
    expect((duplicate as Error).message).toBe("projection per-session: registered twice")
    const global = await openSqlite(fresh(), [{ ...overall, mode: "inline" }])
      .runPromise(Effect.void)
      .catch((e: unknown) => e)
    expect(global).toBeInstanceOf(Projections.InvalidProjection)
    expect((global as Error).message).not.toContain("\n")
  })

  it("a projector option that is not a duration or a batch size fails the layer with one typed line naming it", async () => {
    const refused = (projector: Omit<Projections.Options, "projections">) =>
      Effect.runPromise(
        Effect.gen(function* () {
          return yield* (yield* Projections.Projections).status
        }).pipe(Effect.provide(Projections.layerSqlite({ filename: fresh(), projections: [overall], projector }))),
      ).then(
        () => undefined,
        (e: unknown) => e,
      )
    const lease = await refused({ leaseTime: "10 secs" as never })
    expect(lease).toBeInstanceOf(Projections.InvalidProjection)
    expect((lease as Error).message).toBe(
      'projection options: projector.leaseTime 10 secs is not a duration ("10 seconds", ms)',
    )
    expect(((await refused({ batchTimeout: "soon" as never })) as Error).message).toMatch(
      /projector\.batchTimeout soon/,
    )
    expect(((await refused({ pollInterval: "x" as never })) as Error).message).toMatch(/projector\.pollInterval x/)
    expect(((await refused({ batchSize: 0 })) as Error).message).toMatch(/projector\.batchSize 0 is not a positive/)
    expect(
      await refused({ leaseTime: "10 seconds", batchTimeout: 30_000, pollInterval: "50 millis", batchSize: 1 }),
    ).toBe(undefined)
  })
})

describe("property: any restart cadence and any version bump → each state equals the fold from zero", () => {
  const opArb = fc.oneof(
    fc.record({ kind: fc.constant("append" as const), session: fc.integer({ min: 0, max: 2 }) }),
    fc.record({ kind: fc.constant("restart" as const) }),
    fc.record({ kind: fc.constant("bump" as const) }),
  )
  it("20 runs of up to 12 operations over 3 sessions", async () => {
    const sessions = fc.sample(sessionArb(12), { numRuns: 3, seed: 17 })
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 12 }), async (ops) => {
        const file = fresh()
        let version = 1
        const definitions = () => [
          Projections.inline(tally("in", version, version)),
          Projections.async(tally("all", version, version)),
          Projections.async(tally("each", version, version), { scope: "session" }),
        ]
        const written = sessions.map(() => 0)
        const appended: Array<Array<Events.Event>> = sessions.map(() => [])
        let runtime = openSqlite(file, definitions())
        try {
          for (const op of ops) {
            if (op.kind === "append") {
              const batches = sessions[op.session]!.batches
              const next = written[op.session]!
              if (next >= batches.length) continue
              await runtime.runPromise(
                appendBatches(`ses_${op.session}`, [batches[next]!], appended[op.session]!.length),
              )
              appended[op.session]!.push(...batches[next]!)
              written[op.session] = next + 1
            } else {
              await runtime.dispose()
              if (op.kind === "bump") version++
              runtime = openSqlite(file, definitions())
            }
          }
          const [inl, all, each] = definitions()
          await runtime.runPromise(
            Effect.gen(function* () {
              const projections = yield* Projections.Projections
              yield* projections.awaitCaughtUp
              expect(yield* projections.get(all!)).toEqual(reference(appended.flat(), version))
              for (const [i, events] of appended.entries()) {
                expect(yield* projections.get(inl!, `ses_${i}`)).toEqual(reference(events, version))
                expect(yield* projections.get(each!, `ses_${i}`)).toEqual(reference(events, version))
              }
              expect((yield* projections.status).every((s) => s.version === version)).toBe(true)
            }),
          )
        } finally {
          await runtime.dispose()
        }
      }),
      { numRuns: 20 },
    )
  }, 120_000)
})

describe("an async projector as its own process (docs/extend.md)", () => {
  // docs/extend.md, "An async projector as its own process": a restarted projector with a stable owner takes its lease
  // back at once; one with the default (random) owner waits until the lease the stopped process left behind expires.
  it("a projector restarted under the same owner takes its lease back at once; a random owner waits for the lease", async () => {
    const file = fresh()
    const projector = (owner?: string) =>
      ManagedRuntime.make(
        Projections.layerSqlite({
          filename: file,
          synchronous: "normal",
          projections: [overall],
          // A lease no test outlives: only its owner can take it back.
          projector: { pollInterval: "5 millis", leaseTime: "1 hour", ...(owner === undefined ? {} : { owner }) },
        }),
      )
    const [first, second] = fc.sample(sessionArb(12), { numRuns: 2, seed: 43 })
    const statusOf = Effect.map(
      Effect.flatMap(Projections.Projections, (p) => p.status),
      (rows) => rows.find((s) => s.name === "overall")!,
    )
    const stopped = projector("projector-1")
    await stopped.runPromise(
      Effect.gen(function* () {
        yield* appendBatches("ses_1", first!.batches)
        yield* (yield* Projections.Projections).awaitCaughtUp
      }),
    )
    await stopped.dispose() // as a killed process: the lease is not handed back
    const random = keep(projector())
    const waiting = await random.runPromise(
      Effect.gen(function* () {
        yield* appendBatches("ses_2", second!.batches)
        yield* Effect.sleep("300 millis") // some 60 polls of its worker
        return yield* statusOf
      }),
    )
    expect(waiting.owner).toBe("projector-1")
    expect(waiting.lag).toBeGreaterThan(0)
    await disposeLast()
    const restarted = keep(projector("projector-1"))
    await restarted.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* projections.awaitCaughtUp
        expect(yield* projections.get(overall)).toEqual(
          reference([...first!.batches.flat(), ...second!.batches.flat()]),
        )
        expect(yield* statusOf).toMatchObject({ owner: "projector-1", lag: 0 })
      }),
    )
  })
})
