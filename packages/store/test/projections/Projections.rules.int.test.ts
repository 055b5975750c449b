// The projector's rules at their edges (issue 18, mutation run): which definitions are refused and with what line,
// what `status` reports field by field (lag, keys, lease), what the viewer's `stored` answers, that `get` refuses a
// projection not registered (or of another version), and that forgetting a session deletes its rows only.
import { Cause, Effect, Exit, ManagedRuntime, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { EventStore, Projections } from "../../src/index.ts"
import { sessionArb } from "../session/support.ts"
import { appendBatches, reference, scratch, tally } from "./support.ts"

const { fresh, open, keep, disposeLast } = scratch("pivot-projection-rules-")
/** A reader that runs no background work: what `pivot projections status` opens. */
const openReadonly = (filename: string, definitions: ReadonlyArray<Projections.AnyDefinition>) => {
  const runtime = ManagedRuntime.make(
    Projections.layerSqlite({
      filename,
      readonly: true,
      projections: definitions,
      projector: { pollInterval: "5 millis" },
    }),
  )
  keep(runtime)
  return runtime
}

const perSession = Projections.inline(tally("per-session"))
const overall = Projections.async(tally("overall"))

const failureOf = <A, E>(exit: Exit.Exit<A, E>): unknown =>
  Exit.isFailure(exit) ? Cause.squash(exit.cause) : new Error("expected a failure")

const refusal = (definitions: ReadonlyArray<Projections.AnyDefinition>): string | undefined => {
  const result = Projections.validate(definitions)
  return Result.isFailure(result) ? result.failure.message : undefined
}

describe("Projections.validate", () => {
  const named = (name: string, version = 1) => Projections.inline(tally(name, version))

  it("a name is 1 to 100 of letters, digits, '_', '.', ':' and '-'", () => {
    const rule = "a name is 1 to 100 letters, digits, '_', '.', ':' or '-'"
    expect(refusal([named("")])).toBe(`projection : ${rule}`)
    expect(refusal([named("a b")])).toBe(`projection a b: ${rule}`)
    expect(refusal([named("x/y")])).toBe(`projection x/y: ${rule}`)
    expect(refusal([named("x".repeat(101))])).toBe(`projection ${"x".repeat(101)}: ${rule}`)
    expect(refusal([named("x".repeat(100))])).toBeUndefined()
    expect(refusal([named("a")])).toBeUndefined()
    expect(refusal([named("Az09_.:-")])).toBeUndefined()
  })

  it("a version is a positive whole number", () => {
    expect(refusal([named("v", 0)])).toBe("projection v: version 0 is not a positive integer")
    expect(refusal([named("v", -1)])).toBe("projection v: version -1 is not a positive integer")
    expect(refusal([named("v", 1.5)])).toBe("projection v: version 1.5 is not a positive integer")
    expect(refusal([named("v", Number.NaN)])).toBe("projection v: version NaN is not a positive integer")
    expect(refusal([named("v", 1)])).toBeUndefined()
  })

  it("a built-in read model's name is taken, and row-level storage is the built-ins' own", () => {
    expect(Projections.validate([named("usage")], [named("usage")])).toEqual(
      Result.fail(new Projections.InvalidProjection({ name: "usage", reason: "the name of a built-in read model" })),
    )
    expect(Projections.validate([named("usage")], [named("other")])).toEqual(Result.succeed(undefined))
    const rows: Projections.Rows<unknown> = {
      clear: () => Effect.void,
      write: () => Effect.void,
      apply: () => Effect.void,
    }
    expect(refusal([{ ...named("mine"), rows }])).toBe(
      "projection mine: row-level storage is the built-in read models' own; yours is stored as JSON",
    )
  })

  it("a name once; inline only per session; async in either scope", () => {
    expect(refusal([named("a"), named("b"), named("a")])).toBe("projection a: registered twice")
    expect(refusal([named("a"), named("b")])).toBeUndefined()
    expect(refusal([{ ...named("g"), scope: "global" }])).toBe(
      "projection g: an inline projection is per session: one state across sessions would serialise every append",
    )
    expect(
      refusal([Projections.async(tally("g")), Projections.async(tally("s"), { scope: "session" })]),
    ).toBeUndefined()
    expect(Projections.async(tally("g")).scope).toBe("global")
    expect(Projections.async(tally("s"), { scope: "session" }).scope).toBe("session")
    expect(Projections.inline(tally("i"))).toMatchObject({ mode: "inline", scope: "session" })
  })
})

describe("the projector's errors", () => {
  it("each says what happened on one line", () => {
    expect(new Projections.UnknownProjection({ name: "p" }).message).toBe(
      "projection p is not registered: pass it to the store layer's projections option",
    )
    expect(new Projections.ProjectionNotReady({ name: "p", version: 2, checkpoint: 5, head: 9 }).message).toBe(
      "projection p v2 is being built: at position 5 of 9",
    )
    expect(new Projections.InvalidProjection({ name: "p", reason: "r" }).message).toBe("projection p: r")
  })
})

describe("status, stored, get and forget on SQLite", () => {
  const [first, second] = fc.sample(sessionArb(12), { numRuns: 2, seed: 31 })
  const eventsA = first!.batches.flat()
  const eventsB = second!.batches.flat()

  it("status reports each projection's mode, scope, readiness, lag, keys and lease", async () => {
    const runtime = open(fresh(), [perSession, overall], "owner-1")
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* appendBatches("ses_a", first!.batches)
        yield* appendBatches("ses_b", second!.batches)
        yield* projections.awaitCaughtUp
        const [all, each] = yield* projections.status
        const head = eventsA.length + eventsB.length
        expect(all).toMatchObject({
          name: "overall",
          version: 1,
          mode: "async",
          scope: "global",
          ready: true,
          checkpoint: head,
          head,
          lag: 0,
          failures: 0,
          error: undefined,
          owner: "owner-1",
          keys: 1,
        })
        expect(all!.leaseUntil).toBeGreaterThan(0)
        expect(each).toMatchObject({
          name: "per-session",
          mode: "inline",
          scope: "session",
          ready: true,
          head,
          lag: 0,
          keys: 2,
        })
      }),
    )
  })

  it("a reader sees the lag of an async projection behind the log, and an inline one that is ready has none", async () => {
    const file = fresh()
    const writer = open(file, [perSession, overall])
    await writer.runPromise(
      Effect.gen(function* () {
        yield* appendBatches("ses_a", first!.batches)
        yield* (yield* Projections.Projections).awaitCaughtUp
      }),
    )
    await disposeLast()
    // More events, written by a process without the projections: nothing moves their checkpoints.
    const plain = open(file, [])
    await plain.runPromise(appendBatches("ses_b", second!.batches))
    await disposeLast()
    const reader = openReadonly(file, [perSession, overall])
    await reader.runPromise(
      Effect.gen(function* () {
        const [all, each] = yield* (yield* Projections.Projections).status
        expect(all).toMatchObject({ checkpoint: eventsA.length, head: eventsA.length + eventsB.length })
        expect(all!.lag).toBe(eventsB.length)
        expect(each!.lag).toBe(0)
      }),
    )
  })

  it("a reader of a database that never had projections sees none, and nothing stored", async () => {
    const file = fresh()
    const plain = ManagedRuntime.make(EventStore.layerSqlite({ filename: file }))
    await plain.runPromise(appendBatches("ses_a", first!.batches))
    await plain.dispose()
    const reader = openReadonly(file, [])
    await reader.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        expect(yield* projections.status).toEqual([])
        expect(yield* projections.stored("overall")).toBeUndefined()
      }),
    )
  })

  it("stored answers the newest ready version's state for a key (default the global key) and the keys in order", async () => {
    const runtime = open(fresh(), [perSession, overall])
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* appendBatches("ses_b", second!.batches)
        yield* appendBatches("ses_a", first!.batches)
        yield* projections.awaitCaughtUp
        expect(yield* projections.stored("overall")).toEqual({
          version: 1,
          state: reference([...eventsB, ...eventsA]),
          keys: [Projections.GLOBAL_KEY],
        })
        expect(yield* projections.stored("per-session", "ses_a")).toEqual({
          version: 1,
          state: reference(eventsA),
          keys: ["ses_a", "ses_b"],
        })
        expect(yield* projections.stored("per-session")).toEqual({ version: 1, state: null, keys: ["ses_a", "ses_b"] })
        expect(yield* projections.stored("missing")).toBeUndefined()
      }),
    )
  })

  it("get refuses a projection not registered, or registered with another version", async () => {
    const runtime = open(fresh(), [perSession])
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        for (const definition of [Projections.inline(tally("other")), Projections.inline(tally("per-session", 2))]) {
          const failure = failureOf(yield* Effect.exit(projections.get(definition, "ses_a")))
          expect(failure).toBeInstanceOf(Projections.UnknownProjection)
          expect((failure as Error).message).toBe(
            `projection ${definition.projection.name} is not registered: pass it to the store layer's projections option`,
          )
        }
      }),
    )
  })

  it("forgetting a session deletes its rows and no other session's; a global state stays", async () => {
    const runtime = open(fresh(), [perSession, overall])
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        const store = yield* EventStore
        yield* appendBatches("ses_a", first!.batches)
        yield* appendBatches("ses_b", second!.batches)
        yield* projections.awaitCaughtUp
        yield* store.forget("session-ses_a")
        expect((yield* projections.stored("per-session", "ses_b"))?.keys).toEqual(["ses_b"])
        expect((yield* projections.stored("per-session", "ses_b"))?.state).toEqual(reference(eventsB))
        expect((yield* projections.stored("overall"))?.keys).toEqual([Projections.GLOBAL_KEY])
      }),
    )
  })

  it("without an owner name a process leases as pj-<random>-<pid>", async () => {
    const runtime = open(fresh(), [overall])
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* appendBatches("ses_a", first!.batches)
        yield* projections.awaitCaughtUp
        const [status] = yield* projections.status
        expect(status!.owner).toMatch(new RegExp(`^pj-[a-z0-9]{1,8}-${process.pid}$`))
      }),
    )
  })

  it("an inline fold that throws records its first line, cut at 1,000 characters; a non-Error too", async () => {
    const long = "x".repeat(1_500)
    const throwing = (name: string, thrown: unknown) =>
      Projections.inline({
        ...tally(name),
        evolve: () => {
          throw thrown
        },
      })
    const longOne = throwing("long", new Error(`${long}\nsecond line`))
    const odd = throwing("odd", 42)
    const runtime = open(fresh(), [longOne, odd])
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* appendBatches("ses_a", first!.batches.slice(0, 2))
        const byName = new Map((yield* projections.status).map((s) => [s.name, s]))
        expect(byName.get("long")!.error).toBe("x".repeat(1_000))
        expect(byName.get("long")!.failures).toBeGreaterThanOrEqual(1)
        const failure = failureOf(yield* Effect.exit(projections.get(odd, "ses_a")))
        expect((failure as Error).message).toBe("projection odd v1 failed: 42")
        const longFailure = failureOf(yield* Effect.exit(projections.get(longOne, "ses_a")))
        expect((longFailure as Error).message).toBe(`projection long v1 failed: ${long}`)
      }),
    )
  })
})
