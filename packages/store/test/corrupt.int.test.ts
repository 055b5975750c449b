// Damaged and foreign database files: a clear `StoreCorrupt`, no crash, and the file left byte-for-byte as it was.

import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Effect, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EventStore } from "../src/index.ts"
import { ev } from "./contract.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-store-corrupt-"))
let n = 0
const fresh = () => path.join(dir, `db-${++n}.db`)
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const readEverything = Effect.gen(function* () {
  const store = yield* EventStore
  yield* store.read("s")
  return yield* Stream.runCollect(store.readAll())
})

/** Opens the file as a store and reads it all; resolves to the failure (or throws if it succeeded). */
const openFails = (filename: string) =>
  Effect.runPromise(Effect.flip(readEverything.pipe(Effect.provide(EventStore.layerSqlite({ filename })))))

const appendSome = (filename: string, count: number) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      for (let i = 0; i < count; i += 100) {
        yield* store.append(
          "s",
          "any",
          Array.from({ length: 100 }, (_, k) => ev(`e${i + k}`, { i: i + k, text: "lorem ipsum ".repeat(20) })),
        )
      }
    }).pipe(Effect.provide(EventStore.layerSqlite({ filename }))),
  )

// A deterministic byte source for "random" files.
const bytes = (length: number, seed: number): Buffer => {
  const out = Buffer.alloc(length)
  let x = seed
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    out[i] = x >>> 24
  }
  return out
}

/** Expects `StoreCorrupt` for the file, and the file unchanged afterwards. */
const expectCorruptAndUntouched = async (filename: string, reason: RegExp) => {
  const before = fs.readFileSync(filename)
  const error = await openFails(filename)
  expect(error).toMatchObject({ _tag: "StoreCorrupt", path: filename })
  expect((error as { reason: string }).reason).toMatch(reason)
  expect(Buffer.compare(fs.readFileSync(filename), before)).toBe(0)
}

describe("damaged database files", () => {
  let healthy = ""
  beforeAll(async () => {
    healthy = fresh()
    await appendSome(healthy, 2000)
    // Closing the last connection checkpoints the WAL into the file.
    expect(fs.existsSync(`${healthy}-wal`)).toBe(false)
  })

  it("given a file of random bytes, then StoreCorrupt and the file is not overwritten", async () => {
    for (const [i, size] of [8192, 100, 4096 * 3].entries()) {
      const filename = fresh()
      fs.writeFileSync(filename, bytes(size, 42 + i))
      await expectCorruptAndUntouched(filename, /not a SQLite database/)
    }
  })

  it("given random bytes behind a valid SQLite header, then StoreCorrupt and the file is not overwritten", async () => {
    const filename = fresh()
    const header = fs.readFileSync(healthy).subarray(0, 100)
    fs.writeFileSync(filename, Buffer.concat([header, bytes(fs.statSync(healthy).size - 100, 7)]))
    await expectCorruptAndUntouched(filename, /.+/)
  })

  const truncations: ReadonlyArray<readonly [string, (size: number) => number]> = [
    ["to 50 bytes", () => 50],
    ["to the first page", () => 4096],
    ["to half", (size) => Math.floor(size / 2)],
    ["by one page", (size) => size - 4096],
    ["by one byte", (size) => size - 1],
  ]
  for (const [what, length] of truncations) {
    it(`given a store truncated ${what}, then StoreCorrupt and the file is not overwritten`, async () => {
      const filename = fresh()
      const full = fs.readFileSync(healthy)
      fs.writeFileSync(filename, full.subarray(0, length(full.length)))
      await expectCorruptAndUntouched(filename, /truncated|malformed/)
    })
  }

  it("given a zeroed page in the middle of the events, then reading fails with StoreCorrupt, untouched", async () => {
    const filename = fresh()
    const full = Buffer.from(fs.readFileSync(healthy))
    const pages = full.length / 4096
    full.fill(0, Math.floor(pages / 2) * 4096, (Math.floor(pages / 2) + 1) * 4096)
    fs.writeFileSync(filename, full)
    await expectCorruptAndUntouched(filename, /malformed/)
  })

  it("given another program's SQLite database, then StoreCorrupt (not a pivot store) and it is not written to", async () => {
    const filename = fresh()
    const db = new DatabaseSync(filename)
    db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada')")
    db.close()
    await expectCorruptAndUntouched(filename, /not a pivot event store.*users/)
  })

  it("given another program's database with a write-ahead log left beside it, then StoreCorrupt and neither is written to", async () => {
    // A copy taken while its writer was open (as after a crash): the log holds frames the file does not. A connection
    // that may write would checkpoint them into the file when it closes; the check reads it read-only instead.
    const live = fresh()
    const writer = new DatabaseSync(live)
    writer.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0")
    writer.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada')")
    const filename = fresh()
    fs.copyFileSync(live, filename)
    fs.copyFileSync(`${live}-wal`, `${filename}-wal`)
    writer.close()
    const wal = fs.readFileSync(`${filename}-wal`)
    expect(wal.length).toBeGreaterThan(32)
    await expectCorruptAndUntouched(filename, /not a pivot event store.*users/)
    expect(Buffer.compare(fs.readFileSync(`${filename}-wal`), wal)).toBe(0)
  })

  it("given a pivot_events table without pivot's columns, then StoreCorrupt and it is not written to", async () => {
    const filename = fresh()
    const db = new DatabaseSync(filename)
    db.exec(`CREATE TABLE pivot_migrations (migration_id integer PRIMARY KEY NOT NULL, created_at datetime NOT NULL
      DEFAULT current_timestamp, name VARCHAR(255) NOT NULL);
      INSERT INTO pivot_migrations (migration_id, name) VALUES (1, 'create_events');
      CREATE TABLE pivot_events (id INTEGER PRIMARY KEY, payload TEXT);`)
    db.close()
    await expectCorruptAndUntouched(filename, /pivot_events does not have pivot's columns/)
  })

  it("given a store written by a newer pivot (unknown migration), then StoreCorrupt and it is not written to", async () => {
    const filename = fresh()
    await appendSome(filename, 100)
    const db = new DatabaseSync(filename)
    db.exec("INSERT INTO pivot_migrations (migration_id, name) VALUES (99, 'from_the_future')")
    db.close()
    await expectCorruptAndUntouched(filename, /newer pivot/)
  })

  it("given a stored payload that is not JSON, then reads fail with StoreCorrupt naming its position", async () => {
    const filename = fresh()
    await appendSome(filename, 100)
    const db = new DatabaseSync(filename)
    db.exec("UPDATE pivot_events SET data = '{broken' WHERE position = 42")
    db.close()
    const error = await openFails(filename)
    expect(error).toMatchObject({ _tag: "StoreCorrupt", path: filename })
    expect((error as { reason: string }).reason).toMatch(/position 42/)
  })

  it("given an empty file, then it is a new, empty store", async () => {
    const filename = fresh()
    fs.writeFileSync(filename, "")
    const events = await Effect.runPromise(readEverything.pipe(Effect.provide(EventStore.layerSqlite({ filename }))))
    expect(events).toEqual([])
  })

  it("given a healthy store, then integrityCheck passes and everything reads back", async () => {
    const events = await Effect.runPromise(
      readEverything.pipe(Effect.provide(EventStore.layerSqlite({ filename: healthy, integrityCheck: true }))),
    )
    expect(events.length).toBe(2000)
  })
})
