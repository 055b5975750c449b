/**
 * Forks and erasure (issue 18 #2): a fork of an encrypted session is encrypted too, whether the forking program asked
 * for it or not, and forgetting a session forgets the sessions forked from it at any depth (they hold copies of its
 * text), also a fork committed while the forget ran.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Ids } from "@pivot/core"
import { ContextManager, Sessions } from "@pivot/runtime"
import { EventStore, ReadModels, SessionLog } from "@pivot/store"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { SAMPLES } from "../../core/test/support/secrets.ts"
import { fileBytes, formsOf } from "./support/bytes.ts"
import { SESSION, SPEC, tool, used } from "./support/harness.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-fork-erasure-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const ALL = SAMPLES.map((s) => s.text).join("\n")
const kindsIn = (text: string): ReadonlyArray<string> =>
  SAMPLES.filter((s) => formsOf(s.secret).some((form) => text.includes(form))).map((s) => s.kind)

/** An encrypted session with every kind of secret, recorded by a ContextManager encrypting at rest. */
const recordEncrypted = (filename: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const cm = yield* ContextManager
      yield* cm.recordUserMessage(SESSION, { text: `credentials:\n${ALL}` })
      yield* cm.recordAssistantStep(SESSION, {
        parts: [{ type: "text", text: `using ${ALL}` }, tool("bash", { command: `deploy ${ALL}` }, `ok ${ALL}`)],
        usage: used(2_000),
        finish: "tool-calls",
      })
      // A summary (the extractive one: it quotes the secrets), so `context_recall` has something to find.
      yield* cm.compact(SESSION)
    }).pipe(
      Effect.provide(
        ContextManager.layer({ model: SPEC, encryptAtRest: true, redactSecrets: false }).pipe(
          Layer.provide(Ids.Ids.layer),
          Layer.provide(ReadModels.layerSqlite({ filename })),
        ),
      ),
    ),
  )

/** `pivot fork` without `--encrypt`: a Sessions handler that was not asked to encrypt. */
const plainSessions = (store: Layer.Layer<EventStore, unknown>) =>
  Sessions.Sessions.layer({ encryptAtRest: false }).pipe(Layer.provide(Ids.Ids.layer), Layer.provideMerge(store))

const forkWith = (store: Layer.Layer<EventStore, unknown>, parent: string, child: string) =>
  Effect.runPromise<Sessions.Forked, unknown>(
    Effect.flatMap(Sessions.Sessions, (sessions) => sessions.fork(parent, child)).pipe(
      Effect.provide(plainSessions(store)),
    ),
  )

/** The stored (raw) rows of a session's stream. */
const rawRows = (filename: string, sessionId: string) => {
  const db = new DatabaseSync(filename, { readOnly: true })
  try {
    return db
      .prepare("SELECT data FROM pivot_events WHERE stream = ?")
      .all(`session-${sessionId}`)
      .map((r) => String(r.data))
      .join("\n")
  } finally {
    db.close()
  }
}

const readText = (filename: string, sessionId: string) =>
  Effect.runPromise(
    Effect.map(SessionLog.read(sessionId), (log) => JSON.stringify(log)).pipe(
      Effect.provide(ReadModels.layerSqlite({ filename })),
    ),
  )

describe("forks of encrypted sessions", () => {
  it("given an encrypted session, when forked without asking for encryption, then the fork is encrypted: its rows hold ciphertext only", async () => {
    const filename = path.join(dir, "fork.db")
    await recordEncrypted(filename)
    const forked = await forkWith(ReadModels.layerSqlite({ filename }), SESSION, "ses_child")
    expect(forked.encrypted).toBe(true)
    expect(kindsIn(rawRows(filename, "ses_child"))).toEqual([])
    expect(rawRows(filename, "ses_child")).toContain("pivot:sealed:v1:")
    expect(kindsIn(await readText(filename, "ses_child"))).toHaveLength(SAMPLES.length) // readable until forgotten
  })

  it("given a fork and a fork of the fork, when the parent is forgotten, then both forks are forgotten too: no secret reads back or stays in the file", async () => {
    const filename = path.join(dir, "lineage.db")
    await recordEncrypted(filename)
    const store = ReadModels.layerSqlite({ filename })
    await forkWith(store, SESSION, "ses_child")
    await forkWith(store, "ses_child", "ses_grandchild")
    await forkWith(store, SESSION, "ses_sibling")
    const recall = (id: string) =>
      Effect.runPromise(
        Effect.flatMap(ReadModels.ReadModels, (rm) => rm.recall(id, "credentials using deploy summary", 50)).pipe(
          Effect.provide(store),
        ),
      )
    expect(kindsIn(JSON.stringify(await recall("ses_grandchild")))).not.toEqual([]) // the control
    const forgotten = await Effect.runPromise(SessionLog.forget(SESSION).pipe(Effect.provide(store)))
    expect(forgotten.forks).toEqual(["ses_child", "ses_grandchild", "ses_sibling"])
    for (const id of [SESSION, "ses_child", "ses_grandchild", "ses_sibling"])
      expect(kindsIn(await readText(filename, id))).toEqual([])
    const recalled = await Effect.runPromise(
      Effect.flatMap(ReadModels.ReadModels, (rm) => rm.window("ses_grandchild")).pipe(Effect.provide(store)),
    )
    expect(kindsIn(JSON.stringify(recalled))).toEqual([])
    for (const id of ["ses_child", "ses_grandchild", "ses_sibling"])
      expect(kindsIn(JSON.stringify(await recall(id)))).toEqual([])
    expect([...new Set(fileBytes(filename).flatMap((f) => kindsIn(f.bytes)))]).toEqual([])
  })

  it("given a forget of the parent that ran while a fork copied it, when the fork commits after the forget looked for forks, then the fork forgets itself", async () => {
    const filename = path.join(dir, "race.db")
    await recordEncrypted(filename)
    // The forget runs (marker, then its search for forks) between the fork's copy and the fork's commit.
    const racing = Layer.effect(
      EventStore,
      Effect.gen(function* () {
        const store = yield* EventStore
        return {
          ...store,
          append: (stream, expected, events) =>
            stream === "session-ses_late"
              ? Effect.andThen(
                  Effect.orDie(SessionLog.forget(SESSION).pipe(Effect.provideService(EventStore, store))),
                  store.append(stream, expected, events),
                )
              : store.append(stream, expected, events),
        } satisfies EventStore["Service"]
      }),
    ).pipe(Layer.provide(ReadModels.layerSqlite({ filename })))
    const forked = await forkWith(racing, SESSION, "ses_late")
    expect(forked.encrypted).toBe(true)
    expect(kindsIn(await readText(filename, "ses_late"))).toEqual([])
    expect(await readText(filename, "ses_late")).toContain("SessionForgotten")
  })
})
