/**
 * Crypto-shredding end to end on a real SQLite file: a session recorded through the ContextManager with
 * `encryptAtRest` keeps its sensitive fields encrypted in the log; `SessionLog.forget` deletes its key (and the
 * read models' plain copies), after which no secret — nor the key — is left in the database, WAL or shared-memory
 * bytes, the fields read as erased, the window still renders, and the recorded usage, compactions and prunes are
 * unchanged.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Ids } from "@pivot/core"
import { ContextManager, Summarizer } from "@pivot/runtime"
import { EventStore, ReadModels, SessionLog } from "@pivot/store"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { SAMPLES } from "../../core/test/support/secrets.ts"
import { fileBytes, formsOf } from "./support/bytes.ts"
import { SESSION, SPEC, services, stub, tool, used } from "./support/harness.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-forget-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const ALL = SAMPLES.map((s) => s.text).join("\n")

const runtime = (filename: string) =>
  ContextManager.layer({
    model: SPEC,
    encryptAtRest: true,
    redactSecrets: false,
    config: { prune: true },
    prune: { protect: 10, minimum: 10 },
  }).pipe(
    Layer.provide(Layer.succeed(Summarizer, stub(`summary: the keys were ${ALL}`).summarizer)),
    Layer.provide(Ids.Ids.layer),
    Layer.provideMerge(ReadModels.layerSqlite({ filename })),
  )

const readSide = Effect.gen(function* () {
  const readModels = yield* ReadModels.ReadModels
  return {
    window: yield* readModels.window(SESSION),
    usage: yield* readModels.usage(SESSION),
    compactions: yield* readModels.compactions(SESSION),
    pruned: yield* readModels.pruned(SESSION),
  }
})

/** Ids, roles and part types of the window, and its erased-or-not texts. */
const shapeOf = (
  window: ReadonlyArray<{
    readonly id: string
    readonly role: string
    readonly parts: ReadonlyArray<{ readonly id: string; readonly type: string }>
  }>,
) => window.map((m) => ({ id: m.id, role: m.role, parts: m.parts.map((p) => `${p.id}:${p.type}`) }))

const leaked = (filename: string, extra: ReadonlyArray<string> = []): ReadonlyArray<string> => {
  const files = fileBytes(filename)
  const forms = [
    ...SAMPLES.flatMap((s) => formsOf(s.secret).map((form) => [s.kind, form] as const)),
    ...extra.map((e) => ["key", e] as const),
  ]
  return [...new Set(forms.filter(([, form]) => files.some((f) => f.bytes.includes(form))).map(([kind]) => kind))]
}

describe("forget (crypto-shredding) on a real SQLite file", () => {
  it("given an encrypted session, when forgotten, then no secret or key is in the file bytes and every recorded decision stands", async () => {
    const filename = path.join(dir, "forget.db")

    // 1. Record: every kind of text, a compaction whose summary repeats the secrets, and a prune.
    const before = await Effect.runPromise(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* cm.recordUserMessage(SESSION, { text: `credentials:\n${ALL}` })
        yield* cm.recordAssistantStep(SESSION, {
          parts: [
            { type: "reasoning", text: `the user pasted ${ALL}` },
            { type: "text", text: `using ${ALL}` },
            tool("bash", { command: `deploy ${ALL}` }, `deployed with ${ALL}\n${"log line\n".repeat(400)}`),
          ],
          usage: used(2_000),
          finish: "tool-calls",
        })
        for (const n of [1, 2, 3]) {
          yield* cm.recordUserMessage(SESSION, { text: `turn ${n}` })
          yield* cm.recordAssistantStep(SESSION, {
            parts: [tool("bash", { command: `step ${n}` }, "ok")],
            usage: used(2_000 + n),
            finish: "stop",
          })
        }
        const prune = yield* cm.prune(SESSION)
        yield* cm.compact(SESSION)
        return { prune, ...(yield* readSide) }
      }).pipe(Effect.provide(runtime(filename))),
    )
    expect(before.prune.parts).toBeGreaterThan(0)
    expect(before.pruned.entries.length).toBe(before.prune.parts)
    expect(before.compactions.map((c) => c.status)).toContain("finished")

    // The log itself holds ciphertext only: its rows carry none of the secrets (the read models do, until forget).
    const db = new DatabaseSync(filename, { readOnly: true })
    const rows = db
      .prepare("SELECT data FROM pivot_events")
      .all()
      .map((r) => String(r.data))
      .join("\n")
    const key = String(db.prepare("SELECT key FROM pivot_keys").get()?.key)
    db.close()
    expect(SAMPLES.filter((s) => formsOf(s.secret).some((form) => rows.includes(form)))).toEqual([])
    expect(rows).toContain("pivot:sealed:v1:")
    expect(leaked(filename)).not.toEqual([]) // the read models' plain copies: the control for the byte search

    // 2. Forget.
    const forgotten = await Effect.runPromise(
      SessionLog.forget(SESSION).pipe(Effect.provide(ReadModels.layerSqlite({ filename }))),
    )
    expect(forgotten).toEqual({
      keyDeleted: true,
      logCleared: true,
      alreadyForgotten: false,
      version: expect.any(Number),
      forks: [],
      forksAlreadyForgotten: [],
    })

    // 3. Nothing recoverable: no secret in any form, and not the key, in the db, -wal or -shm bytes.
    expect(leaked(filename, [key, Buffer.from(key, "base64").toString("latin1")])).toEqual([])

    // 4. Read again: fields erased, the window renders with the same messages, the recorded decisions unchanged.
    const after = await Effect.runPromise(
      Effect.gen(function* () {
        const log = yield* SessionLog.read(SESSION)
        return { log, ...(yield* readSide) }
      }).pipe(Effect.provide(ReadModels.layerSqlite({ filename }))),
    )
    expect(shapeOf(after.window)).toEqual(shapeOf(before.window))
    expect(JSON.stringify(after.window)).toContain(EventStore.ERASED)
    expect(after.usage).toEqual(before.usage)
    expect(after.pruned).toEqual(before.pruned)
    expect(
      after.compactions.map((c) => [c.markerId, c.status, c.requestedVersion, c.settledVersion, c.summaryTokens]),
    ).toEqual(
      before.compactions.map((c) => [c.markerId, c.status, c.requestedVersion, c.settledVersion, c.summaryTokens]),
    )
    const json = JSON.stringify(after.log)
    for (const s of SAMPLES) expect(json).not.toContain(s.secret)
  })

  it("given a session that does not exist, when forgotten, then UnknownSession and the file is unchanged", async () => {
    const filename = path.join(dir, "empty.db")
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* EventStore
      }).pipe(Effect.provide(EventStore.layerSqlite({ filename }))),
    )
    const bytes = fs.readFileSync(filename)
    const error = await Effect.runPromise(
      Effect.flip(SessionLog.forget("ses_missing")).pipe(Effect.provide(EventStore.layerSqlite({ filename }))),
    )
    expect(error._tag).toBe("UnknownSession")
    expect(fs.readFileSync(filename).equals(bytes)).toBe(true)
  })
})
