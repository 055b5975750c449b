// The read models' snapshots: a new process (a new projector on the same file) resumes its folded read models from
// the latest snapshot and the events after it, with partial states (the window retained, old compaction and prune
// entries as places). Whatever the session and wherever the restarts fall, the tables equal the pure fold and a
// rebuild; a spoiled snapshot is ignored; and the first append of a new process does not read the whole log.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Events } from "@pivot/core"
import { Effect, Logger } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { runs } from "../../../core/test/support/runs.ts"
import { EventStore, ReadModels, SessionLog } from "../../src/index.ts"
import { expectReadModelsEqualFold, freshSession, type GeneratedSession, open, sessionArb } from "./support.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-read-models-snapshots-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const filename = path.join(dir, "snapshots.db")

/**
 * A new process on the file: a fresh store connection and projector (empty caches). Like `createPivot`, it opens its
 * store (and so migrates the file) when it starts, not at its first append: a restart before any append must still
 * find the tables.
 */
const process_ = async (every: number) => {
  const runtime = open(ReadModels.layerSqlite({ filename, synchronous: "normal", snapshots: { every } }))
  await runtime.context()
  return runtime
}

/** Appends the session's batches, opening a new process before each batch whose index is in `restarts`. */
const appendWithRestarts = async (
  sessionId: string,
  generated: GeneratedSession,
  restarts: ReadonlySet<number>,
  every: number,
) => {
  let runtime = await process_(every)
  let version = 0
  let resumedFromSnapshot = 0
  for (const [b, batch] of generated.batches.entries()) {
    if (restarts.has(b)) {
      await runtime.dispose()
      runtime = await process_(every)
      if (snapshotVersion(sessionId) > 0) resumedFromSnapshot++
    }
    const entries = batch.map((event, i) => ({ id: SessionLog.eventId(sessionId, version + i + 1), event }))
    version = (await runtime.runPromise(SessionLog.append(sessionId, version, entries))).streamVersion
  }
  return { runtime, version, resumedFromSnapshot }
}

const snapshotVersion = (sessionId: string): number => {
  const db = new DatabaseSync(filename)
  const row = db
    .prepare("SELECT stream_version FROM pivot_snapshots WHERE stream = ?")
    .get(ReadModels.snapshotKey(Events.streamName(sessionId))) as { stream_version: number } | undefined
  db.close()
  return row?.stream_version ?? 0
}

/** A session of several batches (the same on every run), for the pinned cases below. */
const pinnedSession = fc.sample(sessionArb(40), { numRuns: 30, seed: 11 }).find((g) => g.batches.length > 3)!

describe("read-model snapshots (SQLite)", () => {
  it("property: with restarts anywhere and any cadence, inline == the pure fold == rebuilt (150 runs; 15 in the fast lane)", async () => {
    const cases = runs(150)
    let resumed = 0
    await fc.assert(
      fc.asyncProperty(
        sessionArb(40),
        fc.uniqueArray(fc.nat(80), { maxLength: 6 }),
        fc.integer({ min: 1, max: 30 }),
        async (generated, restarts, every) => {
          const sessionId = freshSession("s")
          const run = await appendWithRestarts(sessionId, generated, new Set(restarts), every)
          resumed += run.resumedFromSnapshot
          try {
            if (run.version === 0) return
            await run.runtime.runPromise(
              Effect.gen(function* () {
                yield* expectReadModelsEqualFold(sessionId, generated.events)
                const readModels = yield* ReadModels.ReadModels
                const inline = yield* readModels.tables(sessionId)
                // What `pivot check` reports: the tables and the snapshot agree with a fold of the log.
                expect((yield* readModels.verify(sessionId)).differences).toEqual([])
                yield* readModels.rebuild(sessionId)
                expect(yield* readModels.tables(sessionId)).toEqual(inline)
                expect((yield* readModels.verify(sessionId)).differences).toEqual([])
              }) as Effect.Effect<void>,
            )
          } finally {
            await run.runtime.dispose()
          }
        },
      ),
      {
        ...cases,
        // Pinned: a restart before the first append (seed 517832682 once failed on it with "no such table").
        examples: [
          [pinnedSession, [0], 5],
          [pinnedSession, [0, 1, 3], 1],
        ],
      },
    )
    // Restarts did resume from snapshots (the partial states were exercised): more than 10 in the full run's 150 cases,
    // at least one in the fast lane's 15 (about 40% of the runs resume, so none at all would be a 0.05% chance).
    expect(resumed).toBeGreaterThan(cases.numRuns >= 150 ? 10 : 0)
  }, 300_000)

  for (const [what, spoil] of [
    [
      "altered data",
      "UPDATE pivot_snapshots SET data = replace(data, 'msg_', 'msh_') WHERE stream LIKE 'read-models:%'",
    ],
    ["another format", "UPDATE pivot_snapshots SET format = format || '+1' WHERE stream LIKE 'read-models:%'"],
  ] as const)
    it(`given a snapshot with ${what}, then a new process ignores it with a warning and the tables stay right`, async () => {
      const generated = fc.sample(sessionArb(40), { numRuns: 30, seed: 7 }).find((g) => g.batches.length > 20)!
      const sessionId = freshSession("spoiled")
      const half = Math.floor(generated.batches.length / 2)
      const first = await appendWithRestarts(
        sessionId,
        { ...generated, batches: generated.batches.slice(0, half) },
        new Set(),
        1,
      )
      await first.runtime.dispose()
      expect(snapshotVersion(sessionId)).toBeGreaterThan(0)
      const db = new DatabaseSync(filename)
      db.exec(spoil)
      db.close()
      const warnings: Array<string> = []
      const runtime = await process_(1_000)
      let version = first.version
      for (const batch of generated.batches.slice(half)) {
        const entries = batch.map((event, i) => ({ id: SessionLog.eventId(sessionId, version + i + 1), event }))
        version = (
          await runtime.runPromise(
            SessionLog.append(sessionId, version, entries).pipe(
              Effect.provide(
                Logger.layer([
                  Logger.make(({ message }) => warnings.push(String(Array.isArray(message) ? message[0] : message))),
                ]),
              ),
            ),
          )
        ).streamVersion
      }
      await runtime.runPromise(expectReadModelsEqualFold(sessionId, generated.events) as Effect.Effect<void>)
      await runtime.dispose()
      expect(warnings.filter((w) => w.includes("read-model snapshot ignored"))).toHaveLength(1)
    })

  // Issue 18: the checksum covers the data, and the data names its session and version, so a row moved to another
  // version or session, or older data under the newest version, is not used (it was, silently, and the usage read
  // model then counted calls twice).
  describe("given a snapshot row tampered with", () => {
    const generated = fc.sample(sessionArb(40), { numRuns: 30, seed: 7 }).find((g) => g.batches.length > 20)!
    const other = fc.sample(sessionArb(40), { numRuns: 30, seed: 8 }).find((g) => g.batches.length > 4)!
    const key = (sessionId: string) => ReadModels.snapshotKey(Events.streamName(sessionId))
    const cases: ReadonlyArray<
      readonly [string, (db: DatabaseSync, sessionId: string, older: { data: string; checksum: string }) => void]
    > = [
      [
        "its stream version lowered by 7",
        (db, sessionId) =>
          db
            .prepare("UPDATE pivot_snapshots SET stream_version = stream_version - 7 WHERE stream = ?")
            .run(key(sessionId)),
      ],
      [
        "another session's row copied over it",
        (db, sessionId) =>
          db
            .prepare(
              "UPDATE pivot_snapshots SET (stream_version, format, checksum, data) = (SELECT stream_version, format, checksum, data FROM pivot_snapshots WHERE stream = ?) WHERE stream = ?",
            )
            .run(key(`${sessionId}_other`), key(sessionId)),
      ],
      [
        "older data (and its checksum) under the newest version",
        (db, sessionId, older) =>
          db
            .prepare("UPDATE pivot_snapshots SET data = ?, checksum = ? WHERE stream = ?")
            .run(older.data, older.checksum, key(sessionId)),
      ],
    ]
    for (const [what, tamper] of cases)
      it(`${what}, then check reports it, a new process ignores it with a warning, and the tables equal the fold`, async () => {
        const sessionId = freshSession("tampered")
        const quarter = Math.floor(generated.batches.length / 4)
        const half = Math.floor(generated.batches.length / 2)
        // Another session with a snapshot at a version below this one's.
        const otherRun = await appendWithRestarts(`${sessionId}_other`, other, new Set(), 1)
        await otherRun.runtime.dispose()
        const early = await appendWithRestarts(
          sessionId,
          { ...generated, batches: generated.batches.slice(0, quarter) },
          new Set(),
          1,
        )
        const db = new DatabaseSync(filename)
        const older = db.prepare("SELECT data, checksum FROM pivot_snapshots WHERE stream = ?").get(key(sessionId)) as {
          data: string
          checksum: string
        }
        db.close()
        const first = { version: early.version }
        for (const batch of generated.batches.slice(quarter, half)) {
          const entries = batch.map((event, i) => ({ id: SessionLog.eventId(sessionId, first.version + i + 1), event }))
          first.version = (
            await early.runtime.runPromise(SessionLog.append(sessionId, first.version, entries))
          ).streamVersion
        }
        await early.runtime.dispose()
        expect(snapshotVersion(sessionId)).toBe(first.version)
        expect(snapshotVersion(`${sessionId}_other`)).toBeLessThan(first.version)
        const spoil = new DatabaseSync(filename)
        tamper(spoil, sessionId, older)
        spoil.close()

        const warnings: Array<string> = []
        const logger = Logger.layer([
          Logger.make(({ message }) => warnings.push(String(Array.isArray(message) ? message[0] : message))),
        ])
        const runtime = await process_(1_000)
        try {
          // `pivot check`: the snapshot a new process would not trust is reported; the tables agree with the log.
          const checked = await runtime.runPromise(
            Effect.flatMap(ReadModels.ReadModels, (rm) => rm.verify(sessionId)) as Effect.Effect<ReadModels.Verified>,
          )
          expect(checked.differences).toHaveLength(1)
          expect(checked.differences[0]).toMatch(/^snapshot: a new process would ignore it \(it holds the states of /)
          let version = first.version
          for (const batch of generated.batches.slice(half)) {
            const entries = batch.map((event, i) => ({ id: SessionLog.eventId(sessionId, version + i + 1), event }))
            version = (
              await runtime.runPromise(SessionLog.append(sessionId, version, entries).pipe(Effect.provide(logger)))
            ).streamVersion
          }
          expect(warnings.filter((w) => w.includes("read-model snapshot ignored"))).toHaveLength(1)
          await runtime.runPromise(
            Effect.gen(function* () {
              yield* expectReadModelsEqualFold(sessionId, generated.events)
              const after = yield* (yield* ReadModels.ReadModels).verify(sessionId)
              expect(after.differences.filter((d) => !d.startsWith("snapshot:"))).toEqual([])
            }) as Effect.Effect<void>,
          )
        } finally {
          await runtime.dispose()
        }
      })
  })

  it("given a database the runtime alone wrote (no read-model tables), then verify, read-only, compares nothing and finds nothing", async () => {
    const file = path.join(dir, "no-read-models.db")
    const sessionId = freshSession("plain")
    const generated = fc.sample(sessionArb(10), { numRuns: 1, seed: 3 })[0]!
    await Effect.runPromise(
      Effect.provide(
        SessionLog.append(
          sessionId,
          0,
          generated.events.map((event, i) => ({ id: SessionLog.eventId(sessionId, i + 1), event })),
        ),
        EventStore.layerSqlite({ filename: file }),
      ) as Effect.Effect<unknown>,
    )
    const verified = await Effect.runPromise(
      Effect.provide(
        Effect.flatMap(ReadModels.ReadModels, (rm) => rm.verify(sessionId)),
        ReadModels.layerSqlite({ filename: file, readonly: true }),
      ) as Effect.Effect<ReadModels.Verified>,
    )
    expect(verified).toEqual({ version: generated.events.length, models: 0, differences: [] })
  })
})
