// The built-in read models as inline projections on the one projector: the shape users register, names users cannot
// take, a version bump of any one rebuilding it (and only it) from the log, and one transaction with users' inline
// projections.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Result } from "effect"
import fc from "fast-check"
import { afterAll, afterEach, describe, expect, it } from "vitest"
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
