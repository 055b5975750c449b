// pivot's SqlClient over node:sqlite: the statement API, transactions that really lock, and typed failures.

import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Effect, Fiber, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore, SqliteClient } from "../src/index.ts"
import { ev } from "./contract.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-sqlite-client-"))
let n = 0
const fresh = () => path.join(dir, `c-${++n}.db`)
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const withClient = <A, E>(config: SqliteClient.SqliteClientConfig, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.provide(effect, SqliteClient.layer(config)))

describe("SqliteClient", () => {
  it("runs statements: insert helper, rows, values, raw results, and result-name transforms", () =>
    withClient(
      { filename: fresh(), transformResultNames: (s) => s.replace(/_(\w)/g, (_, c: string) => c.toUpperCase()) },
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE notes (note_id INTEGER PRIMARY KEY, note_text TEXT NOT NULL)`
        const raw = (yield* sql`INSERT INTO notes ${sql.insert([{ note_text: "a" }, { note_text: "b" }])}`.raw) as {
          changes: number
        }
        expect(raw.changes).toBe(2)
        expect(yield* sql`SELECT note_id, note_text FROM notes ORDER BY note_id`).toEqual([
          { noteId: 1, noteText: "a" },
          { noteId: 2, noteText: "b" },
        ])
        expect(yield* sql`SELECT note_id, note_text FROM notes ORDER BY note_id`.values).toEqual([
          [1, "a"],
          [2, "b"],
        ])
        expect(yield* sql`SELECT note_text FROM notes WHERE ${sql.in("note_id", [2])}`.unprepared).toEqual([
          { noteText: "b" },
        ])
      }),
    ))

  it("streams rows in order, page by page", () =>
    withClient(
      { filename: fresh() },
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (i INTEGER)`
        yield* sql`INSERT INTO t ${sql.insert(Array.from({ length: 600 }, (_, i) => ({ i })) as [{ i: number }])}`
        const rows = yield* Stream.runCollect(sql<{ i: number }>`SELECT i FROM t ORDER BY i`.stream)
        expect(rows.map((r) => r.i)).toEqual(Array.from({ length: 600 }, (_, i) => i))
      }),
    ))

  it("a failing transaction rolls back everything it wrote", () =>
    withClient(
      { filename: fresh() },
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (i INTEGER)`
        const failed = yield* Effect.flip(
          sql.withTransaction(Effect.andThen(sql`INSERT INTO t (i) VALUES (1)`, Effect.fail("boom" as const))),
        )
        expect(failed).toBe("boom")
        expect(yield* sql`SELECT * FROM t`).toEqual([])
      }),
    ))

  it("switches the database to WAL unless disableWAL is set", async () => {
    const wal = fresh()
    const plain = fresh()
    const mode = (filename: string, disableWAL: boolean) =>
      withClient(
        { filename, disableWAL },
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ journal_mode: string }>`PRAGMA journal_mode`),
      )
    expect((await mode(wal, false))[0]!.journal_mode).toBe("wal")
    expect((await mode(plain, true))[0]!.journal_mode).toBe("delete")
  })

  it("transactions take the write lock at BEGIN: another connection waits busyTimeout, then LockTimeoutError", async () => {
    const filename = fresh()
    await withClient(
      { filename },
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE t (i INTEGER)`),
    )
    const holder = new DatabaseSync(filename)
    holder.exec("BEGIN IMMEDIATE")
    try {
      const error = await withClient(
        { filename, busyTimeout: "50 millis" },
        Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.flip(sql.withTransaction(sql`SELECT * FROM t`))),
      )
      expect(error.reason._tag).toBe("LockTimeoutError")
    } finally {
      holder.exec("ROLLBACK")
      holder.close()
    }
  })

  it("fails to open a read-only database that does not exist with a SqlError, not a crash", async () => {
    const error = await Effect.runPromise(
      Effect.flip(
        Effect.provide(Effect.void, SqliteClient.layer({ filename: path.join(dir, "missing.db"), readonly: true })),
      ),
    )
    expect(error._tag).toBe("SqlError")
  })
})

describe("EventStore on a locked SQLite file", () => {
  it("given another process holding the write lock past the busy timeout, then append fails with StoreUnavailable; afterwards it succeeds", async () => {
    const filename = fresh()
    const program = Effect.gen(function* () {
      const store = yield* EventStore
      yield* store.append("s", "no-stream", [ev("a")])
      const holder = new DatabaseSync(filename)
      holder.exec("BEGIN IMMEDIATE")
      const error = yield* Effect.flip(store.append("s", 1, [ev("b")]))
      holder.exec("ROLLBACK")
      holder.close()
      expect(error._tag).toBe("StoreUnavailable")
      yield* store.append("s", 1, [ev("b")])
      return (yield* store.read("s")).map((e) => e.id)
    })
    const ids = await Effect.runPromise(
      Effect.provide(program, EventStore.layerSqlite({ filename, busyTimeout: "50 millis" })),
    )
    expect(ids).toEqual(["a", "b"])
  })

  it("a reader keeps reading while a writer holds the lock (WAL)", async () => {
    const filename = fresh()
    const program = Effect.gen(function* () {
      const store = yield* EventStore
      yield* store.append("s", "no-stream", [ev("a")])
      const holder = new DatabaseSync(filename)
      holder.exec(
        "BEGIN IMMEDIATE; INSERT INTO pivot_events (event_id, stream, stream_version, type, schema_version, data, recorded_at) VALUES ('x', 's', 2, 'T', 1, '1', 0)",
      )
      const fiber = yield* Effect.forkChild(store.read("s"))
      const read = yield* Fiber.join(fiber)
      holder.exec("ROLLBACK")
      holder.close()
      return read.map((e) => e.id)
    })
    expect(await Effect.runPromise(Effect.provide(program, EventStore.layerSqlite({ filename })))).toEqual(["a"])
  })
})

describe("EventStore.layerSqlite readonly", () => {
  it("given an existing store opened read-only, then it reads everything and appending fails with StoreUnavailable", async () => {
    const filename = fresh()
    await Effect.runPromise(
      Effect.provide(
        Effect.flatMap(EventStore, (store) => store.append("s", "no-stream", [ev("a"), ev("b")])),
        EventStore.layerSqlite({ filename }),
      ),
    )
    const before = fs.readFileSync(filename)
    const [ids, error] = await Effect.runPromise(
      Effect.provide(
        Effect.gen(function* () {
          const store = yield* EventStore
          const ids = (yield* store.read("s")).map((e) => e.id)
          const error = yield* Effect.flip(store.append("s", 2, [ev("c")]))
          return [ids, error] as const
        }),
        EventStore.layerSqlite({ filename, readonly: true }),
      ),
    )
    expect(ids).toEqual(["a", "b"])
    expect(error._tag).toBe("StoreUnavailable")
    expect(Buffer.compare(fs.readFileSync(filename), before)).toBe(0)
  })
})
