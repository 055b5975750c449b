/**
 * A failing `pivot rebuild` leaves the file as it was (found by a CLI probe): on a store without read models (as the
 * demo and `EventStore` alone write one), `rebuild --session <unknown>` opened it read-write first, which created the
 * read side's tables, and only then said the session was unknown; `fork`, `pin`, `unpin` and `forget` did the same.
 * A writing command's session is now looked up read-only first (`storedSessionId`). Real SQLite files; each compared
 * before and after by its bytes, its tables and the files beside it.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { afterAll, describe, expect, it } from "vitest"
import { pivot, plainStore as plainStoreAt, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const plainStore = (name: string) => plainStoreAt(path.join(dir, name))

/** The file's tables, read without writing. */
const tables = (db: string) => {
  const sqlite = new DatabaseSync(db, { readOnly: true })
  try {
    return (
      sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{
        name: string
      }>
    ).map((row) => row.name)
  } finally {
    sqlite.close()
  }
}

const state = (db: string) => ({
  sha256: createHash("sha256").update(fs.readFileSync(db)).digest("hex"),
  tables: tables(db),
  sidecars: [`${db}-wal`, `${db}-shm`, `${db}-journal`].filter((file) => fs.existsSync(file)),
})

describe("pivot rebuild, refused", () => {
  it("given a store without read models and an unknown session, then it fails in one line and the file keeps its bytes and tables", async () => {
    const db = await plainStore("plain.db")
    const before = state(db)
    expect(before.tables).not.toContain("pivot_rm_window")
    const result = await pivot("rebuild", "--db", db, "--session", "ses_nobody")
    expect({ code: result.code, out: result.out, err: result.err }).toEqual({
      code: 1,
      out: [],
      err: [`pivot rebuild: unknown session ses_nobody in ${db} (the store has no events for it)`],
    })
    expect(state(db)).toEqual(before)
  })

  it("given a store without read models and an unknown session, then the other writing commands fail and leave it as it was too", async () => {
    const db = await plainStore("plain-writers.db")
    const before = state(db)
    for (const args of [
      ["fork", "--db", db, "ses_nobody", "--into", "copy"],
      ["pin", "--db", db, "ses_nobody", "msg_01", "--budget", "1000"],
      ["unpin", "--db", db, "ses_nobody", "msg_01"],
      ["forget", "--db", db, "ses_nobody"],
    ]) {
      const result = await pivot(...args)
      expect({ code: result.code, lines: result.err.length }, args.join(" ")).toEqual({ code: 1, lines: 1 })
      expect(state(db), args.join(" ")).toEqual(before)
    }
  })

  it("given another program's SQLite database, then it fails in one line and writes none of pivot's tables into it", async () => {
    const db = path.join(dir, "foreign.db")
    const sqlite = new DatabaseSync(db)
    sqlite.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine')")
    sqlite.close()
    const before = state(db)
    for (const args of [
      ["rebuild", "--db", db],
      ["rebuild", "--db", db, "--session", "ses_plain"],
    ]) {
      const result = await pivot(...args)
      expect(result.code, args.join(" ")).toBe(1)
      expect(result.out).toEqual([])
      expect(result.err).toHaveLength(1)
      expect(result.err[0]).toMatch(/^pivot rebuild: /)
      expect(state(db), args.join(" ")).toEqual(before)
    }
  })

  it("given a store without read models and its session, then it builds them (the writing case still writes)", async () => {
    const db = await plainStore("built.db")
    const result = await pivot("rebuild", "--db", db, "--session", "ses_plain")
    expect(result.out).toEqual([`rebuilt the read models of 1 session (1 event) in ${db}`])
    expect(tables(db)).toContain("pivot_rm_window")
  })
})
