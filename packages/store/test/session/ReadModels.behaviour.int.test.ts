// The SQL read models' behaviours on SQLite: checkpoints, catching up with events appended without the hook, a
// projection-version bump forcing a rebuild, two processes' worth of connections, and what an unknown event does.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, ManagedRuntime, Schema } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore, ReadModels, SessionLog } from "../../src/index.ts"
import { appendGenerated, expectReadModelsEqualFold, type GeneratedSession, sessionArb } from "./support.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-read-models-b-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let files = 0
const fresh = () => path.join(dir, `rm-${++files}.db`)

const sample = (seed: number, maxActions = 40): GeneratedSession => {
  // A session with at least one pivot and one prune, so every read model has rows.
  for (const session of fc.sample(sessionArb(maxActions), { numRuns: 500, seed })) {
    const tags = new Set(session.events.map((e) => e._tag))
    if (tags.has("SummaryFinished") && tags.has("PartCompacted") && tags.has("ToolResultRecorded")) return session
  }
  throw new Error("no sample with a pivot and a prune")
}

const withReadModels = <A, E>(
  file: string,
  program: Effect.Effect<A, E, EventStore | ReadModels.ReadModels>,
  options: ReadModels.Options = {},
) => Effect.runPromise(program.pipe(Effect.provide(ReadModels.layerSqlite({ filename: file, ...options }))))

const withPlainStore = <A, E>(file: string, program: Effect.Effect<A, E, EventStore>) =>
  Effect.runPromise(program.pipe(Effect.provide(EventStore.layerSqlite({ filename: file }))))

const withService = <A, E>(f: (readModels: ReadModels.ReadModelsShape) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    return yield* f(yield* ReadModels.ReadModels)
  })

const readWindow = (sessionId: string) => withService((readModels) => readModels.window(sessionId))

const session = sample(7)

describe("read models (SQLite)", () => {
  it("given appends through the read-model store, then each read model's checkpoint holds its name, projection version and the last position", async () => {
    const file = fresh()
    await withReadModels(
      file,
      Effect.gen(function* () {
        const head = yield* appendGenerated("ses_cp", session)
        const all = yield* (yield* EventStore).read("session-ses_cp")
        const { checkpoints } = yield* (yield* ReadModels.ReadModels).tables("ses_cp")
        expect(checkpoints).toEqual(
          [...ReadModels.names]
            .sort((a, b) => a.name.localeCompare(b.name))
            .map(({ name, version }) => ({
              model: name,
              projectionVersion: version,
              streamVersion: head,
              position: all[all.length - 1]!.position,
            })),
        )
        expect(ReadModels.names.map((n) => n.name)).toEqual([
          "window",
          "usage",
          "compaction-history",
          "prune-index",
          "audit",
          "recall",
          "timeline",
        ])
      }),
    )
  })

  it("given events appended by a store without the hook, when a read model is read, then it catches up and equals the fold", async () => {
    const file = fresh()
    const half = { ...session, batches: session.batches.slice(0, Math.floor(session.batches.length / 2)) }
    await withReadModels(file, appendGenerated("ses_cu", half))
    // The rest arrives through a plain store (another program, an older pivot): the read models fall behind.
    await withPlainStore(
      file,
      Effect.gen(function* () {
        let version = yield* SessionLog.version("ses_cu")
        for (const batch of session.batches.slice(half.batches.length)) {
          const entries = batch.map((event, i) => ({ id: SessionLog.eventId("ses_cu", version + i + 1), event }))
          version = (yield* SessionLog.append("ses_cu", version, entries)).streamVersion
        }
      }),
    )
    await withReadModels(
      file,
      Effect.gen(function* () {
        const readModels = yield* ReadModels.ReadModels
        const behind = yield* readModels.tables("ses_cu")
        expect(behind.checkpoints.every((c) => c.streamVersion < session.events.length)).toBe(true)
        expect(yield* readModels.sync("ses_cu")).toBe(session.events.length)
        yield* expectReadModelsEqualFold("ses_cu", session.events)
        const caughtUp = yield* readModels.tables("ses_cu")
        yield* readModels.rebuild("ses_cu")
        expect(yield* readModels.tables("ses_cu")).toEqual(caughtUp)
      }),
    )
  })

  it("given a checkpoint with an older projection version, when the read model is read, then it is rebuilt from the log", async () => {
    const file = fresh()
    await withReadModels(file, appendGenerated("ses_bump", session))
    // Simulate a database written by a pivot whose window projection was at version 0, with rows in an old shape.
    const { DatabaseSync } = await import("node:sqlite")
    const db = new DatabaseSync(file)
    db.exec("UPDATE pivot_rm_checkpoints SET projection_version = 0 WHERE model = 'window'")
    db.exec("UPDATE pivot_rm_window SET message = '{\"old\":true}'")
    db.close()
    await withReadModels(
      file,
      Effect.gen(function* () {
        const readModels = yield* ReadModels.ReadModels
        yield* expectReadModelsEqualFold("ses_bump", session.events)
        const { checkpoints, window } = yield* readModels.tables("ses_bump")
        expect(checkpoints.find((c) => c.model === "window")?.projectionVersion).toBe(1)
        expect(window.some((row) => String((row as { message: string }).message).includes('"old"'))).toBe(false)
      }),
    )
  })

  it("given two connections appending to one session in turns, then each catches its cached fold up and the tables equal the fold", async () => {
    const file = fresh()
    // Both stay open, so each keeps its fold cached while the other appends behind its back.
    const a = ManagedRuntime.make(ReadModels.layerSqlite({ filename: file }))
    const b = ManagedRuntime.make(ReadModels.layerSqlite({ filename: file }))
    try {
      let version = 0
      for (const [n, batch] of session.batches.entries()) {
        const entries = batch.map((event, i) => ({ id: SessionLog.eventId("ses_two", version + i + 1), event }))
        const writer = n % 3 === 0 ? b : a
        version = (await writer.runPromise(SessionLog.append("ses_two", version, entries))).streamVersion
      }
      const inline = await a.runPromise(withService((r) => r.tables("ses_two")))
      await a.runPromise(expectReadModelsEqualFold("ses_two", session.events))
      await b.runPromise(withService((r) => r.rebuild("ses_two")))
      expect(await a.runPromise(withService((r) => r.tables("ses_two")))).toEqual(inline)
    } finally {
      await a.dispose()
      await b.dispose()
    }
  })

  it("given an event type the read models do not know, when appended, then the append fails with a typed error and nothing is written", async () => {
    const file = fresh()
    await withReadModels(
      file,
      Effect.gen(function* () {
        const store = yield* EventStore
        yield* appendGenerated("ses_unk", session)
        const before = yield* (yield* ReadModels.ReadModels).tables("ses_unk")
        const error = yield* Effect.flip(
          store.append("session-ses_unk", session.events.length, [
            { id: "evt_mystery", type: "MysteryHappened", version: 1, data: {} },
          ]),
        )
        expect(error._tag).toBe("MalformedEvent")
        expect(error.message).toContain("unknown event type MysteryHappened")
        expect(yield* store.streamVersion("session-ses_unk")).toBe(session.events.length)
        expect(yield* (yield* ReadModels.ReadModels).tables("ses_unk")).toEqual(before)
      }),
    )
  })

  it("given an unknown event stored by another program, when a read model is read, then it fails with UndecodableEvent", async () => {
    const file = fresh()
    await withReadModels(file, appendGenerated("ses_bad", session))
    await withPlainStore(
      file,
      Effect.gen(function* () {
        const store = yield* EventStore
        yield* store.append("session-ses_bad", "any", [{ id: "evt_m", type: "MysteryHappened", version: 1, data: {} }])
      }),
    )
    const error = await withReadModels(file, Effect.flip(readWindow("ses_bad")))
    expect(error).toMatchObject({ _tag: "UndecodableEvent", reason: "unknown-type", type: "MysteryHappened" })
  })

  it("given foreign event types declared, then they advance the checkpoints and leave the read models as the fold", async () => {
    const file = fresh()
    const Noted = { version: 1, schema: Schema.Struct({ _tag: Schema.Literal("Noted"), text: Schema.String }) }
    await withReadModels(
      file,
      Effect.gen(function* () {
        const store = yield* EventStore
        const head = yield* appendGenerated("ses_for", session)
        yield* store.append("session-ses_for", head, [
          { id: "evt_noted", type: "Noted", version: 1, data: { _tag: "Noted", text: "plugin output" } },
        ])
        const { checkpoints } = yield* (yield* ReadModels.ReadModels).tables("ses_for")
        expect(checkpoints.every((c) => c.streamVersion === head + 1)).toBe(true)
        yield* expectReadModelsEqualFold("ses_for", session.events)
      }),
      { foreign: { Noted } },
    )
  })

  it("rebuild of all sessions answers how many it rebuilt and leaves the tables equal", async () => {
    const file = fresh()
    await withReadModels(
      file,
      Effect.gen(function* () {
        const readModels = yield* ReadModels.ReadModels
        yield* appendGenerated("ses_r1", session)
        yield* appendGenerated("ses_r2", sample(11))
        const before = [yield* readModels.tables("ses_r1"), yield* readModels.tables("ses_r2")]
        expect(yield* readModels.rebuild({ all: true })).toBe(2)
        expect([yield* readModels.tables("ses_r1"), yield* readModels.tables("ses_r2")]).toEqual(before)
        expect(yield* readModels.sessions).toEqual([
          { sessionId: "ses_r1", version: session.events.length },
          { sessionId: "ses_r2", version: sample(11).events.length },
        ])
      }),
    )
  })

  it("given a session with no events, then reads fail with UnknownSession", async () => {
    const error = await withReadModels(fresh(), Effect.flip(readWindow("ses_nobody")))
    expect(error).toMatchObject({ _tag: "UnknownSession", sessionId: "ses_nobody" })
  })
})
