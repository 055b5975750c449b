// A new SQLite store gets its whole schema in one script (ADR 0061). It must be the database the migrators would have
// left: the same tables, indexes and virtual tables, the same migrators' records and the same rows (the recall
// table's FTS5 settings). The script is skipped when the database already has tables.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, describe, expect, it } from "vitest"
import { ReadModels, SqliteClient } from "../src/index.ts"
import * as Migrations from "../src/internal/migrations.ts"
import * as Projections from "../src/projections/Projections.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-fresh-schema-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** Everything a database holds that a migration decides: its schema and every table's rows, in a stable order. */
const contents = (filename: string) => {
  const db = new DatabaseSync(filename, { readOnly: true })
  try {
    const schema = db
      .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
      .all() as Array<{ type: string; name: string }>
    const rows = Object.fromEntries(
      schema
        .filter((entry) => entry.type === "table")
        .map((entry) => [
          entry.name,
          (db.prepare(`SELECT * FROM "${entry.name}"`).all() as Array<Record<string, unknown>>)
            // The migrators' records carry the time they were applied.
            .map(({ created_at: _at, ...row }) => JSON.stringify(row))
            .sort(),
        ]),
    )
    return { schema, rows }
  } finally {
    db.close()
  }
}

describe("a new SQLite store's schema in one script", () => {
  it("given an empty file, then the store holds what the migrators leave in one", async () => {
    const migrated = path.join(dir, "migrated.db")
    await Effect.runPromise(
      Effect.gen(function* () {
        yield* Migrations.run
        yield* ReadModels.migrate
        yield* Projections.migrate
      }).pipe(Effect.provide(SqliteClient.layer({ filename: migrated, disableWAL: true }))),
    )
    const fresh = path.join(dir, "fresh.db")
    await Effect.runPromise(Effect.provide(Effect.void, ReadModels.layerSqlite({ filename: fresh })))
    const expected = contents(migrated)
    expect(expected.schema.length).toBeGreaterThan(20)
    expect(contents(fresh)).toEqual(expected)
  })

  it("given a database that already has a table, then the script is skipped and nothing is written", async () => {
    const filename = path.join(dir, "taken.db")
    const db = new DatabaseSync(filename)
    db.exec("CREATE TABLE other (x INTEGER)")
    db.close()
    const ran = await Effect.runPromise(
      Effect.gen(function* () {
        const client = yield* SqliteClient.SqliteClient
        const ran = yield* client.createIfEmpty("CREATE TABLE mine (y INTEGER)")
        const sql = yield* SqlClient.SqlClient
        const names = yield* sql<{ readonly name: string }>`SELECT name FROM sqlite_master ORDER BY name`
        return { ran, names: names.map((row) => row.name) }
      }).pipe(Effect.provide(SqliteClient.layer({ filename, disableWAL: true }))),
    )
    expect(ran).toEqual({ ran: false, names: ["other"] })
  })

  it("given an empty database, then the script runs in one transaction and is committed", async () => {
    const filename = path.join(dir, "empty.db")
    const ran = await Effect.runPromise(
      Effect.gen(function* () {
        const client = yield* SqliteClient.SqliteClient
        return yield* client.createIfEmpty("CREATE TABLE a (x INTEGER); CREATE TABLE b (y INTEGER);")
      }).pipe(Effect.provide(SqliteClient.layer({ filename, disableWAL: true }))),
    )
    expect(ran).toBe(true)
    expect(contents(filename).schema.map((entry) => entry.name)).toEqual(["a", "b"])
  })
})
