// The built-in read models as inline projections on the one projector: the shape users register, names users cannot
// take, a version bump of any one rebuilding it (and only it) from the log, and one transaction with users' inline
// projections.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Events } from "@pivot/core"
import { Effect, Logger, Result } from "effect"
import fc from "fast-check"
import { afterAll, afterEach, describe, expect, it } from "vitest"
import { runs } from "../../../core/test/support/runs.ts"
import { EventStore, Projections, ReadModels, SessionLog } from "../../src/index.ts"
import { appendBatches, openSqlite, reference, tally } from "../projections/support.ts"
import { expectReadModelsEqualFold, type GeneratedSession, sessionArb } from "../session/support.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-built-ins-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let files = 0
const fresh = () => path.join(dir, `b${++files}.db`)

const opened: Array<{ dispose: () => Promise<void> }> = []
afterEach(async () => {
  for (const runtime of opened.splice(0)) await runtime.dispose()
})
const open = (filename: string, definitions: ReadonlyArray<Projections.AnyDefinition> = []) => {
  const runtime = openSqlite(filename, definitions)
  opened.push(runtime)
  return runtime
}

// A session whose first part already has a pivot and a prune (every read model has rows), and which goes on after.
const firstWith = (batches: GeneratedSession["batches"], tag: string) =>
  batches.findIndex((batch) => batch.some((e) => e._tag === tag))
const sample = (seed: number): { readonly session: GeneratedSession; readonly half: number } => {
  for (const session of fc.sample(sessionArb(40), { numRuns: 500, seed })) {
    const half = 1 + Math.max(...["SummaryFinished", "PartCompacted"].map((tag) => firstWith(session.batches, tag)))
    if (half > 1 && half < session.batches.length) return { session, half }
  }
  throw new Error("no sample with a pivot and a prune before its end")
}
const { session, half } = sample(11)

describe("the built-in read models on the projector", () => {
  it("each is an inline projection per session in the shape users register, stored as rows", () => {
    expect(ReadModels.builtIns.map((m) => ({ name: m.projection.name, version: m.projection.version }))).toEqual(
      ReadModels.names,
    )
    for (const model of ReadModels.builtIns) {
      expect(model.mode).toBe("inline")
      expect(model.scope).toBe("session")
      expect(typeof model.rows.apply).toBe("function")
    }
    // Without their row storage they pass the checks users' definitions go through.
    const asUsers = ReadModels.builtIns.map(({ projection, mode, scope }) => ({ projection, mode, scope }))
    expect(Result.isSuccess(Projections.validate(asUsers))).toBe(true)
  })

  it("a user's projection may not take a built-in read model's name, nor bring row storage", async () => {
    const taken = await open(fresh(), [Projections.inline(tally("window"))])
      .runPromise(Effect.void)
      .catch((e: unknown) => e)
    expect(taken).toBeInstanceOf(Projections.InvalidProjection)
    expect((taken as Error).message).toBe("projection window: the name of a built-in read model")
    const rows = await open(fresh(), [{ ...Projections.inline(tally("mine")), rows: ReadModels.builtIns[0]!.rows }])
      .runPromise(Effect.void)
      .catch((e: unknown) => e)
    expect(rows).toBeInstanceOf(Projections.InvalidProjection)
    expect((rows as Error).message).toContain("row-level storage")
  })

  for (const model of ReadModels.builtIns) {
    const { name, version } = model.projection
    it(`a version bump of ${name} rebuilds it from the log on the next append; the others go on by deltas`, async () => {
      const file = fresh()
      const sessionId = `ses_bump_${model.table}`
      const first = session.batches.slice(0, half)
      await open(file).runPromise(appendBatches(sessionId, first))
      await opened.pop()!.dispose()
      // As if the stored rows were written by the previous version of this read model: old checkpoint, other rows.
      const { DatabaseSync } = await import("node:sqlite")
      const db = new DatabaseSync(file)
      db.prepare("UPDATE pivot_rm_checkpoints SET projection_version = ? WHERE model = ? AND session_id = ?").run(
        version - 1,
        name,
        sessionId,
      )
      const deleted = db.prepare(`DELETE FROM pivot_rm_${model.table} WHERE session_id = ?`).run(sessionId)
      expect(Number(deleted.changes)).toBeGreaterThan(0)
      db.close()
      await open(file).runPromise(
        Effect.gen(function* () {
          yield* appendBatches(sessionId, session.batches.slice(half), first.flat().length)
          const readModels = yield* ReadModels.ReadModels
          // Checked before any read could catch up: the append itself rebuilt it.
          const tables = yield* readModels.tables(sessionId)
          expect(tables.checkpoints.find((c) => c.model === name)?.projectionVersion).toBe(version)
          expect(yield* readModels.verify(sessionId)).toMatchObject({ differences: [] })
          yield* expectReadModelsEqualFold(sessionId, session.events)
        }),
      )
    })
  }

  it("a version bump caught up by a read folds from the first event without warning of the snapshot it cannot use", async () => {
    const file = fresh()
    await open(file).runPromise(appendBatches("ses_quiet", session.batches))
    await opened.pop()!.dispose()
    const { DatabaseSync } = await import("node:sqlite")
    const db = new DatabaseSync(file)
    const snapshots = db.prepare("SELECT COUNT(*) AS n FROM pivot_snapshots WHERE stream LIKE 'read-models:%'").get()
    expect(Number((snapshots as { n: number }).n)).toBe(1)
    db.exec("UPDATE pivot_rm_checkpoints SET projection_version = 0 WHERE model = 'usage'")
    db.close()
    const warnings: Array<string> = []
    const logger = Logger.layer([
      Logger.make(({ message }) => warnings.push(String(Array.isArray(message) ? message[0] : message))),
    ])
    await open(file).runPromise(
      Effect.gen(function* () {
        yield* (yield* ReadModels.ReadModels).usage("ses_quiet")
        yield* expectReadModelsEqualFold("ses_quiet", session.events)
      }).pipe(Effect.provide(logger)),
    )
    expect(warnings).toEqual([])
  })

  it("status shows each built-in beside users' projections: its sessions, and the events a version bump left to fold", async () => {
    const file = fresh()
    const events = session.batches.flat()
    await open(file, [Projections.inline(tally("per-session"))]).runPromise(appendBatches("ses_st", session.batches))
    await opened.pop()!.dispose()
    const { DatabaseSync } = await import("node:sqlite")
    const db = new DatabaseSync(file)
    db.exec("UPDATE pivot_rm_checkpoints SET projection_version = 0 WHERE model = 'usage'")
    db.close()
    await open(file, [Projections.inline(tally("per-session"))]).runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        const byName = (all: ReadonlyArray<Projections.Status>) => new Map(all.map((s) => [s.name, s]))
        const before = byName(yield* projections.builtIns)
        for (const { name, version } of ReadModels.names)
          expect(before.get(name)).toMatchObject({
            version,
            mode: "inline",
            scope: "session",
            ready: true,
            failures: 0,
            keys: name === "usage" ? 0 : 1,
            lag: name === "usage" ? events.length : 0,
          })
        expect([...before.keys()]).toEqual(ReadModels.names.map((n) => n.name))
        const side = Projections.readSide(yield* projections.status, yield* projections.builtIns)
        expect(side.filter((e) => e.kind === "built-in").map((e) => e.status?.name)).toEqual(
          ReadModels.names.map((n) => n.name),
        )
        expect(side.filter((e) => e.kind === "projection").map((e) => e.name)).toEqual(["per-session"])
        // A read catches the session up: nothing is left to fold.
        yield* (yield* ReadModels.ReadModels).usage("ses_st")
        expect(byName(yield* projections.builtIns).get("usage")).toMatchObject({ keys: 1, lag: 0 })
      }),
    )
  })

  it("a user's inline projection commits in the append's transaction with the built-ins, or not at all", async () => {
    const perSession = Projections.inline(tally("per-session"))
    const file = fresh()
    const runtime = open(file, [perSession])
    const events = session.batches.flat()
    await runtime.runPromise(
      Effect.gen(function* () {
        const projections = yield* Projections.Projections
        yield* appendBatches("ses_tx", session.batches)
        expect(yield* projections.get(perSession, "ses_tx")).toEqual(reference(events))
        // An event the built-ins cannot fold fails the append: the user's state is not moved either.
        const error = yield* Effect.flip(
          (yield* EventStore).append("session-ses_tx", events.length, [
            { id: SessionLog.eventId("ses_tx", events.length + 1), type: "MysteryHappened", version: 1, data: {} },
          ]),
        )
        expect(error._tag).toBe("MalformedEvent")
        expect(error.message).toContain("MysteryHappened")
      }),
    )
    // The user's stored state still covers the last committed event, and nothing beyond it.
    const { DatabaseSync } = await import("node:sqlite")
    const db = new DatabaseSync(file, { readOnly: true })
    const row = db
      .prepare("SELECT state, stream_version FROM pivot_pj_state WHERE name = 'per-session' AND key = 'ses_tx'")
      .get() as { state: string; stream_version: number }
    db.close()
    expect(Number(row.stream_version)).toBe(events.length)
    expect(JSON.parse(row.state)).toEqual(reference(events))
  })
})

describe("property: any restart cadence and any built-in's version bump → every read model equals the fold from zero", () => {
  // What happens between two appends: a restart, a version bump of one built-in, or a read of one session.
  const interruptionArb = fc.oneof(
    fc.record({ kind: fc.constant("restart" as const) }),
    // As if the read model's code had moved on: its stored checkpoints and rows are the previous version's.
    fc.record({ kind: fc.constant("bump" as const), model: fc.integer({ min: 0, max: ReadModels.names.length - 1 }) }),
    fc.record({ kind: fc.constant("read" as const), session: fc.integer({ min: 0, max: 1 }) }),
  )
  it("15 runs (2 in the fast lane): two sessions appended batch by batch, interrupted anywhere", async () => {
    // Two sessions long enough that a bump finds rows in every table (pivots and prunes come after a few turns).
    const sessions = fc
      .sample(sessionArb(30), { numRuns: 200, seed: 23 })
      .filter((session) => session.batches.length >= 12 && session.events.some((e) => e._tag === "PartCompacted"))
      .slice(0, 2)
    expect(sessions).toHaveLength(2)
    // The appends, the two sessions' batches interleaved.
    const schedule: Array<{ readonly session: number; readonly batch: ReadonlyArray<Events.Event> }> = []
    for (let i = 0; i < Math.max(...sessions.map((s) => s.batches.length)); i++)
      for (const [session, { batches }] of sessions.entries())
        if (i < batches.length) schedule.push({ session, batch: batches[i]! })
    const { DatabaseSync } = await import("node:sqlite")
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat({ max: schedule.length }), interruptionArb), { minLength: 1, maxLength: 12 }),
        async (interruptions) => {
          const file = fresh()
          const appended: Array<Array<Events.Event>> = sessions.map(() => [])
          // Opened at once (a runtime builds its layer on first use): the tables exist before a bump writes them.
          const start = async () => {
            const opened = openSqlite(file, [])
            await opened.runPromise(Effect.void)
            return opened
          }
          let runtime = await start()
          try {
            for (let step = 0; step <= schedule.length; step++) {
              for (const [at, op] of interruptions) {
                if (at !== step) continue
                if (op.kind === "restart") {
                  await runtime.dispose()
                  runtime = await start()
                } else if (op.kind === "bump") {
                  const model = ReadModels.builtIns[op.model]!
                  const { name, version } = model.projection
                  const db = new DatabaseSync(file)
                  // The previous version's rows are not this one's: here, none at all.
                  db.exec(`DELETE FROM pivot_rm_${model.table}`)
                  db.prepare("UPDATE pivot_rm_checkpoints SET projection_version = ? WHERE model = ?").run(
                    version - 1,
                    name,
                  )
                  db.close()
                } else if (appended[op.session]!.length > 0)
                  await runtime.runPromise(
                    Effect.gen(function* () {
                      yield* (yield* ReadModels.ReadModels).window(`ses_${op.session}`)
                    }),
                  )
              }
              const next = schedule[step]
              if (next === undefined) continue
              await runtime.runPromise(
                appendBatches(`ses_${next.session}`, [next.batch], appended[next.session]!.length),
              )
              appended[next.session]!.push(...next.batch)
            }
            await runtime.runPromise(
              Effect.gen(function* () {
                const readModels = yield* ReadModels.ReadModels
                for (const [i, events] of appended.entries()) {
                  yield* expectReadModelsEqualFold(`ses_${i}`, events)
                  expect(yield* readModels.verify(`ses_${i}`)).toMatchObject({ differences: [] })
                }
              }),
            )
          } finally {
            await runtime.dispose()
          }
        },
      ),
      runs(15),
    )
  }, 300_000)
})
