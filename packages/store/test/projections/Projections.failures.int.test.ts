// The projector's reads when SQLite itself fails (issue 18, mutation run): a table another tool dropped or replaced
// under a reader. Each read answers the store's typed one-line error (`StoreUnavailable` naming SQLite's reason),
// never the SQL client's raw error, which callers do not handle.
import { DatabaseSync } from "node:sqlite"
import type { Events } from "@pivot/core"
import { Cause, Effect, Exit, ManagedRuntime } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Projections } from "../../src/index.ts"
import { sessionArb } from "../session/support.ts"
import { appendBatches, openSqlite, reference, scratch, tally } from "./support.ts"

const { fresh, keep } = scratch("pivot-projection-failures-")

const perSession = Projections.inline(tally("per-session"))
const overall = Projections.async(tally("overall"))
const definitions = [perSession, overall]
const [session] = fc.sample(sessionArb(8), { numRuns: 1, seed: 7 })

/** A database with both projections caught up, then `damage` run on it with no pivot process open. */
const damaged = async (damage: string): Promise<string> => {
  const file = fresh()
  const writer = openSqlite(file, definitions)
  await writer.runPromise(
    Effect.gen(function* () {
      yield* appendBatches("ses_a", session!.batches)
      yield* (yield* Projections.Projections).awaitCaughtUp
    }),
  )
  await writer.dispose()
  const db = new DatabaseSync(file)
  db.exec(damage)
  db.close()
  return file
}

/** A reader that runs no background work (as `pivot projections status` opens one). */
const reader = (file: string) => {
  const runtime = ManagedRuntime.make(
    Projections.layerSqlite({ filename: file, readonly: true, projections: definitions }),
  )
  keep(runtime)
  return runtime
}

/** The failure of `read` run by a reader of `file`, as its tag and one-line message. */
const failure = async <A, E>(
  file: string,
  read: (projections: Projections.ProjectionsShape) => Effect.Effect<A, E>,
): Promise<{ readonly tag: unknown; readonly message: string }> => {
  const exit = await reader(file).runPromiseExit(Effect.flatMap(Projections.Projections, read))
  if (Exit.isSuccess(exit)) return { tag: "success", message: JSON.stringify(exit.value) }
  const error = Cause.squash(exit.cause) as { readonly _tag?: unknown; readonly message: string }
  return { tag: error._tag, message: error.message }
}

const unavailable = (reason: string) => ({
  tag: "StoreUnavailable",
  message: `event store unavailable: Failed to execute statement: ${reason}`,
})

describe("the projector's reads over a failing database", () => {
  it("without the state table: get (inline and async), status and stored answer StoreUnavailable", async () => {
    const file = await damaged("DROP TABLE pivot_pj_state")
    const missing = unavailable("no such table: pivot_pj_state")
    expect(await failure(file, (p) => p.get(perSession, "ses_a"))).toEqual(missing)
    expect(await failure(file, (p) => p.get(overall))).toEqual(missing)
    expect(await failure(file, (p) => p.status)).toEqual(missing)
    expect(await failure(file, (p) => p.stored("per-session", "ses_a"))).toEqual(missing)
  })

  it("opened read-only: rebuild's write answers StoreUnavailable", async () => {
    const file = await damaged("SELECT 1")
    const refused = await failure(file, (p) => p.rebuild("per-session"))
    expect(refused.tag).toBe("StoreUnavailable")
    expect(refused.message).toMatch(/^event store unavailable: .*readonly/)
  })

  it("without the status table: an async get and awaitCaughtUp answer StoreUnavailable", async () => {
    const file = await damaged("DROP TABLE pivot_pj_status")
    const missing = unavailable("no such table: pivot_pj_status")
    expect(await failure(file, (p) => p.get(overall))).toEqual(missing)
    expect(await failure(file, (p) => p.awaitCaughtUp)).toEqual(missing)
  })

  it("with the read models' checkpoints replaced by another table: builtIns answers StoreUnavailable", async () => {
    const file = await damaged("DROP TABLE pivot_rm_checkpoints; CREATE TABLE pivot_rm_checkpoints (other TEXT)")
    expect(await failure(file, (p) => p.builtIns)).toEqual(unavailable("no such column: model"))
  })
})

/** A database with `batches` of one session appended by a process that has none of the projections. */
const unprojected = async (batches: ReadonlyArray<ReadonlyArray<Events.Event>>): Promise<string> => {
  const file = fresh()
  const writer = openSqlite(file, [])
  await writer.runPromise(appendBatches("ses_a", batches))
  await writer.dispose()
  return file
}

const run = <A, E>(file: string, read: (projections: Projections.ProjectionsShape) => Effect.Effect<A, E>) =>
  reader(file).runPromise(Effect.flatMap(Projections.Projections, read))

describe("a reader that runs no background work", () => {
  const events = session!.batches.flat()

  it("an async projection no writer registered is not ready: at position 0 of the head", async () => {
    const file = await unprojected(session!.batches)
    expect(await failure(file, (p) => p.get(overall))).toEqual({
      tag: "ProjectionNotReady",
      message: `projection overall v1 is being built: at position 0 of ${events.length}`,
    })
  })

  it("an async projection whose build was set back is not ready: at its checkpoint", async () => {
    const file = await damaged("UPDATE pivot_pj_status SET ready = 0, checkpoint = 3 WHERE name = 'overall'")
    expect(await failure(file, (p) => p.get(overall))).toEqual({
      tag: "ProjectionNotReady",
      message: `projection overall v1 is being built: at position 3 of ${events.length}`,
    })
  })

  it("an inline row behind its session is caught up in the answer and left as it is in the file", async () => {
    const file = fresh()
    const writer = openSqlite(file, definitions)
    const version = await writer.runPromise(
      Effect.gen(function* () {
        const version = yield* appendBatches("ses_a", session!.batches.slice(0, 1))
        yield* (yield* Projections.Projections).awaitCaughtUp
        return version
      }),
    )
    await writer.dispose()
    const plain = openSqlite(file, [])
    await plain.runPromise(appendBatches("ses_a", session!.batches.slice(1), version))
    await plain.dispose()
    expect(await run(file, (p) => p.get(perSession, "ses_a"))).toEqual(reference(events))
    expect((await run(file, (p) => p.stored("per-session", "ses_a")))?.state).toEqual(reference(session!.batches[0]!))
  })

  it("awaitCaughtUp waits for a projection no writer has registered yet, until one builds it", async () => {
    const file = await unprojected(session!.batches)
    const waiting = run(file, (p) => p.awaitCaughtUp)
    const writer = openSqlite(file, definitions)
    keep(writer)
    await writer.runPromise(Effect.flatMap(Projections.Projections, (p) => p.awaitCaughtUp))
    await waiting
    expect((await run(file, (p) => p.get(overall))).count).toBe(events.length)
  })
})

describe("a writer's reads", () => {
  const events = session!.batches.flat()

  it("an inline row behind its session is caught up once and written: stored shows it, a second get adds nothing", async () => {
    const file = fresh()
    const writer = openSqlite(file, definitions)
    keep(writer)
    const version = await writer.runPromise(
      Effect.gen(function* () {
        const version = yield* appendBatches("ses_a", session!.batches.slice(0, 1))
        yield* (yield* Projections.Projections).awaitCaughtUp
        return version
      }),
    )
    // Another process without the projection appends the rest (3 events or more, one batch each).
    const plain = openSqlite(file, [])
    await plain.runPromise(appendBatches("ses_a", session!.batches.slice(1), version))
    await plain.dispose()
    expect(session!.batches.length).toBeGreaterThan(3)
    const [first, second, stored] = await writer.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        const first = yield* projections.get(perSession, "ses_a")
        const second = yield* projections.get(perSession, "ses_a")
        return [first, second, (yield* projections.stored("per-session", "ses_a"))?.state] as const
      }),
    )
    expect(first).toEqual(reference(events))
    expect(second).toEqual(reference(events))
    expect(stored).toEqual(reference(events))
  })

  it("a status table dropped under an open writer is reported, not shown as no projections", async () => {
    const file = fresh()
    const writer = openSqlite(file, [])
    keep(writer)
    await writer.runPromise(appendBatches("ses_a", session!.batches.slice(0, 1)))
    const db = new DatabaseSync(file)
    db.exec("DROP TABLE pivot_pj_status")
    db.close()
    const exit = await writer.runPromiseExit(Effect.flatMap(Projections.Projections, (p) => p.status))
    expect(Exit.isFailure(exit) && (Cause.squash(exit.cause) as { _tag?: unknown })._tag).toBe("StoreUnavailable")
  })

  it("status counts each version's keys apart: a row an older version left behind is not counted", async () => {
    const file = fresh()
    const writer = openSqlite(file, [Projections.inline(tally("per-session", 2))])
    keep(writer)
    await writer.runPromise(
      Effect.gen(function* () {
        yield* appendBatches("ses_a", session!.batches)
        yield* appendBatches("ses_b", session!.batches)
        yield* (yield* Projections.Projections).awaitCaughtUp
      }),
    )
    const db = new DatabaseSync(file)
    db.exec(`INSERT INTO pivot_pj_state (name, version, key, state, stream_version)
VALUES ('per-session', 1, 'ses_old', '{}', 1)`)
    db.close()
    const status = await writer.runPromise(Effect.flatMap(Projections.Projections, (p) => p.status))
    expect(status.map((s) => [s.version, s.keys])).toEqual([[2, 2]])
  })

  it("rebuild of a name no projection has resets nothing", async () => {
    const writer = openSqlite(fresh(), definitions)
    keep(writer)
    expect(await writer.runPromise(Effect.flatMap(Projections.Projections, (p) => p.rebuild("nothing")))).toBe(0)
  })
})
