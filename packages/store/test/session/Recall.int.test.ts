// The recall index (`ReadModels.recall`): full-text search over pruned outputs and summaries on a real SQLite file
// (FTS5), returning the expected ids in rank order — the same ids core's scan returns. The same cases on PostgreSQL
// (tsvector) are in Recall.postgres.slow.test.ts.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, type ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { ReadModels, SessionLog } from "../../src/index.ts"
import { eventsOf, searches } from "./recallCases.ts"
import { freshSession, open, type Stores } from "./support.ts"

describe("recall search on a real SQLite file (FTS5)", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-recall-"))
  let runtime: ManagedRuntime.ManagedRuntime<Stores, unknown> | undefined
  afterAll(async () => {
    await runtime?.dispose()
    fs.rmSync(dir, { recursive: true, force: true })
  })
  searches(() => {
    runtime ??= open(ReadModels.layerSqlite({ filename: path.join(dir, "recall.db") }))
    return runtime
  })
})

describe("recall after forget on a real SQLite file", () => {
  it("given a sealed session, when forgotten, then its words are gone from the file bytes and from the search", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-recall-forget-"))
    const filename = path.join(dir, "forget.db")
    const sessionId = freshSession("forget")
    const word = "zebraquokkasecretword"
    const layer = ReadModels.layerSqlite({ filename })
    try {
      const before = await Effect.runPromise(
        Effect.gen(function* () {
          const events = eventsOf(sessionId).map((event) =>
            event._tag === "AssistantStepRecorded"
              ? {
                  ...event,
                  message: {
                    ...event.message,
                    parts: event.message.parts.map((p) =>
                      p.type === "tool" && p.state.status === "completed"
                        ? { ...p, state: { ...p.state, output: `${p.state.output} ${word}` } }
                        : p,
                    ),
                  },
                }
              : event,
          )
          yield* SessionLog.append(
            sessionId,
            0,
            events.map((event, i) => ({ id: SessionLog.eventId(sessionId, i + 1), event })),
            { seal: true },
          )
          return yield* (yield* ReadModels.ReadModels).recall(sessionId, word, 10)
        }).pipe(Effect.provide(layer)),
      )
      expect(before.map((d) => d.id)).toHaveLength(3)
      const bytes = () =>
        Buffer.concat(
          ["", "-wal", "-shm"].filter((s) => fs.existsSync(filename + s)).map((s) => fs.readFileSync(filename + s)),
        )
      expect(bytes().includes(Buffer.from(word))).toBe(true) // the control: the index holds the word until forget
      const after = await Effect.runPromise(
        Effect.gen(function* () {
          yield* SessionLog.forget(sessionId)
          return yield* (yield* ReadModels.ReadModels).recall(sessionId, word, 10)
        }).pipe(Effect.provide(layer)),
      )
      expect(after).toEqual([])
      expect(bytes().includes(Buffer.from(word))).toBe(false)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
