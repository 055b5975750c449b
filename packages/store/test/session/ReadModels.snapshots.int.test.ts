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
import { ReadModels, SessionLog } from "../../src/index.ts"
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
  it("property: with restarts anywhere and any cadence, inline == the pure fold == rebuilt (150 runs)", async () => {
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
                yield* readModels.rebuild(sessionId)
                expect(yield* readModels.tables(sessionId)).toEqual(inline)
              }) as Effect.Effect<void>,
            )
          } finally {
            await run.runtime.dispose()
          }
        },
      ),
      {
        numRuns: 150,
        // Pinned: a restart before the first append (seed 517832682 once failed on it with "no such table").
        examples: [
          [pinnedSession, [0], 5],
          [pinnedSession, [0, 1, 3], 1],
        ],
      },
    )
    // Restarts did resume from snapshots (the partial states were exercised).
    expect(resumed).toBeGreaterThan(10)
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
})
