/** `pivot forget --db FILE <session>`: crypto-shredding from the command line, and its errors. */
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { ReadModels, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { importedEvents, pivot, realExport, realSessionId, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let dbs = 0
const freshDb = () => path.join(dir, `forget-${++dbs}.db`)

/** A database holding the real export with its sensitive fields sealed (as `encryptAtRest` records them). */
const sealedDb = async () => {
  const db = freshDb()
  const entries = SessionLog.fromEvents(realSessionId, importedEvents(realExport)).map(({ event, meta }) => ({
    id: meta.id,
    event,
  }))
  await Effect.runPromise(
    SessionLog.append(realSessionId, "no-stream", entries, { seal: true }).pipe(
      Effect.provide(ReadModels.layerSqlite({ filename: db })),
    ),
  )
  return db
}

describe("pivot forget", () => {
  it("given a sealed session, when forgotten, then exit 0, and window still renders it with its fields erased; forgotten again, nothing is recorded until new text comes", async () => {
    const db = await sealedDb()
    const before = await pivot("window", "--db", db, "--format", "json")
    expect(before.code).toBe(0)
    expect(before.stdout).not.toContain("[ERASED]")

    const result = await pivot("forget", "--db", db, realSessionId)
    expect(result).toMatchObject({ code: 0, err: [] })
    expect(result.out).toEqual([
      `forgot session ${realSessionId} in ${db}: its key is deleted; its encrypted fields now read as [ERASED]`,
    ])

    const after = await pivot("window", "--db", db, "--format", "json")
    expect(after.code).toBe(0)
    expect(after.stdout).toContain("[ERASED]")
    // The same messages, in the same order: only their text is gone.
    const ids = (json: string) =>
      (JSON.parse(json) as { messages: ReadonlyArray<{ sourceMessageId: string }> }).messages.map(
        (m) => m.sourceMessageId,
      )
    expect(ids(before.stdout).length).toBeGreaterThan(0)
    expect(ids(after.stdout)).toEqual(ids(before.stdout))

    // Again: nothing to erase, so nothing recorded, and the same answer each time.
    const markers = () => {
      const raw = new DatabaseSync(db, { readOnly: true })
      const row = raw.prepare("SELECT count(*) AS n FROM pivot_events WHERE type = 'SessionForgotten'").get()
      raw.close()
      return Number(row?.n)
    }
    expect(markers()).toBe(1)
    const again = await pivot("forget", "--db", db, realSessionId)
    expect(again).toMatchObject({ code: 0, err: [] })
    expect(again.out).toEqual([
      `session ${realSessionId} in ${db} was already forgotten, and no text was recorded since: nothing to erase, nothing recorded`,
    ])
    expect((await pivot("forget", "--db", db, realSessionId)).out).toEqual(again.out)
    expect(markers()).toBe(1)

    // Text recorded since the forget (encrypted, under a new key): the next forget erases it and records its event.
    await Effect.runPromise(
      Effect.gen(function* () {
        const head = yield* SessionLog.version(realSessionId)
        const message = {
          role: "user",
          id: "msg_after_forget",
          createdAt: 1,
          parts: [{ type: "text", id: "prt_after_forget", text: "a secret told after the forget" }],
        }
        yield* SessionLog.append(
          realSessionId,
          head,
          [{ id: "evt_after_forget", event: { _tag: "UserMessageAdded", at: 1, message: message as never } }],
          { seal: true },
        )
      }).pipe(Effect.provide(ReadModels.layerSqlite({ filename: db }))),
    )
    expect((await pivot("window", "--db", db, "--format", "json")).stdout).toContain("told after the forget")
    const third = await pivot("forget", "--db", db, realSessionId)
    expect(third.out).toEqual([
      `forgot session ${realSessionId} in ${db}: its key is deleted; its encrypted fields now read as [ERASED]`,
    ])
    expect(markers()).toBe(2)
    expect((await pivot("window", "--db", db, "--format", "json")).stdout).not.toContain("told after the forget")
  })

  it("given a sealed session forked without --encrypt, then the fork is encrypted, and forgetting the parent forgets the fork too (issue 18 #2)", async () => {
    const db = await sealedDb()
    const forked = await pivot("fork", "--db", db, realSessionId, "--into", "try-b", "--at", "20")
    expect(forked.code).toBe(0)
    expect(forked.out[0]).toMatch(/; encrypted like its parent \(with its own key\)$/)
    const raw = new DatabaseSync(db, { readOnly: true })
    const plain = raw
      .prepare(
        "SELECT count(*) AS n FROM pivot_events WHERE stream = 'session-ses_try-b' AND data LIKE '%\"text\":\"%' AND data NOT LIKE '%pivot:sealed:v1:%'",
      )
      .get()
    raw.close()
    expect(Number(plain?.n)).toBe(0)
    const before = await pivot("window", "--db", db, "--session", "ses_try-b", "--format", "json")
    expect(before.stdout).not.toContain("[ERASED]")

    const result = await pivot("forget", "--db", db, realSessionId)
    expect(result).toMatchObject({ code: 0, err: [] })
    expect(result.out[1]).toBe("forgot its fork too: ses_try-b")
    expect((await pivot("forget", "--db", db, realSessionId)).out).toEqual([
      `session ${realSessionId} in ${db} was already forgotten, and no text was recorded since: nothing to erase, nothing recorded`,
      "its fork already forgotten, with no text since: ses_try-b",
    ])
    const after = await pivot("window", "--db", db, "--session", "ses_try-b", "--format", "json")
    expect(after.stdout).toContain("[ERASED]")
    const texts = (json: string) =>
      JSON.stringify(JSON.parse(json).messages).match(/"text":"(?!\[ERASED\])[^"]{20,}/g) ?? []
    expect(texts(before.stdout).length).toBeGreaterThan(0)
    expect(texts(after.stdout)).toEqual([])
  })

  it("given pivot import --encrypt, then the stored text is ciphertext, and forget erases it", async () => {
    const db = freshDb()
    expect((await pivot("import", realExport, "--db", db, "--encrypt")).code).toBe(0)
    const sqlite = new DatabaseSync(db, { readOnly: true })
    const texts = sqlite.prepare("SELECT data FROM pivot_events WHERE type = 'UserMessageAdded'").all()
    sqlite.close()
    expect(texts.length).toBeGreaterThan(0)
    for (const row of texts) expect(String(row.data)).toMatch(/"text":"pivot:sealed:v1:/)
    const window = (await pivot("window", "--db", db, "--format", "json")).stdout
    expect(window).toBe((await pivot("window", realExport, "--format", "json")).stdout)
    const forgotten = await pivot("forget", "--db", db, realSessionId)
    expect(forgotten.out[0]).toMatch(/its key is deleted/)
    expect((await pivot("window", "--db", db, "--format", "json")).stdout).toContain("[ERASED]")
  })

  it("given a plain import, then forget finds no key and the text stays", async () => {
    const db = freshDb()
    expect((await pivot("import", realExport, "--db", db)).code).toBe(0)
    const before = (await pivot("window", "--db", db, "--format", "json")).stdout
    expect((await pivot("forget", "--db", db, realSessionId)).out[0]).toMatch(/has no key/)
    expect((await pivot("window", "--db", db, "--format", "json")).stdout).toBe(before)
  })

  it("given no database at the path, then one line on stderr, exit 1, and no file is created", async () => {
    const db = path.join(dir, "missing.db")
    const result = await pivot("forget", "--db", db, realSessionId)
    expect(result).toMatchObject({ code: 1, out: [] })
    expect(result.err).toHaveLength(1)
    expect(result.err[0]).toMatch(
      new RegExp(`^pivot forget: no database at ${db.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`),
    )
    expect(fs.existsSync(db)).toBe(false)
  })

  it("given a session the database does not hold, then one line naming it, exit 1", async () => {
    const db = await sealedDb()
    const result = await pivot("forget", "--db", db, "ses_unknown")
    expect(result.code).toBe(1)
    expect(result.err).toHaveLength(1)
    expect(result.err[0]).toMatch(/^pivot forget: .*ses_unknown/)
  })

  it("given no --db or no session, then a usage error (exit 2)", async () => {
    expect((await pivot("forget", realSessionId)).code).toBe(2)
    expect((await pivot("forget", "--db", freshDb())).code).toBe(2)
  })
})
