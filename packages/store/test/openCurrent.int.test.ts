// Opening a SQLite store that is already at this pivot's schema runs no migration (issue 32): the migrator's write
// transaction would wait for another process's writer. One behind the newest migration, it migrates as before; one
// ahead, it is refused (corrupt.int.test.ts). The same for the read models' and the projections' migrations (the
// store users open: `ReadModels.layerSqlite`).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore, ReadModels } from "../src/index.ts"
import { latestMigration } from "../src/internal/migrations.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-open-current-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let n = 0

type Open = (filename: string, busyTimeout?: "200 millis") => ReturnType<typeof EventStore.layerSqlite>
const plain: Open = (filename, busyTimeout) => EventStore.layerSqlite({ filename, busyTimeout })
const withReadModels: Open = (filename, busyTimeout) => ReadModels.layerSqlite({ filename, busyTimeout })

/** A store file holding one event, at the current schema, in WAL mode. */
const storeFile = async (open: Open = plain) => {
  const filename = path.join(dir, `store-${++n}.db`)
  await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      yield* store.append("s", "no-stream", [{ id: "evt_1", type: "Happened", version: 1, data: { n: 1 } }])
    }).pipe(Effect.provide(open(filename))),
  )
  return filename
}

/** Opens the store with a short busy timeout while another connection holds the write lock; what it read, or its error. */
const openWhileLocked = async (filename: string, open: Open = plain) => {
  const writer = new DatabaseSync(filename)
  writer.exec("BEGIN IMMEDIATE")
  try {
    return await Effect.runPromise(
      Effect.gen(function* () {
        return (yield* (yield* EventStore).read("s")).map((e) => e.id)
      }).pipe(
        Effect.provide(open(filename, "200 millis")),
        Effect.catch((error) => Effect.succeed(error._tag)),
      ),
    )
  } finally {
    writer.exec("ROLLBACK")
    writer.close()
  }
}

const migrations = (filename: string, table = "pivot_migrations") => {
  const db = new DatabaseSync(filename, { readOnly: true })
  try {
    return (
      db.prepare(`SELECT migration_id FROM ${table} ORDER BY migration_id`).all() as Array<{
        migration_id: number
      }>
    ).map((row) => row.migration_id)
  } finally {
    db.close()
  }
}

describe("opening a store at the current schema", () => {
  it("given the newest migration applied, when another process holds the write lock, then it opens and reads", async () => {
    const filename = await storeFile()
    expect(Math.max(...migrations(filename))).toBe(latestMigration)
    expect(await openWhileLocked(filename)).toEqual(["evt_1"])
  })

  it("given one migration behind the newest, then it migrates (and so waits for the writer's lock)", async () => {
    const filename = await storeFile()
    const db = new DatabaseSync(filename)
    db.prepare("DELETE FROM pivot_migrations WHERE migration_id = ?").run(latestMigration)
    db.close()
    expect(await openWhileLocked(filename)).toBe("StoreUnavailable")
    expect(Math.max(...migrations(filename))).toBe(latestMigration - 1)
    // Without the writer it migrates: the newest migration is recorded again.
    await Effect.runPromise(Effect.provide(Effect.void, EventStore.layerSqlite({ filename })))
    expect(migrations(filename)).toEqual(Array.from({ length: latestMigration }, (_, i) => i + 1))
  })
})

describe("opening a store with read models (the store users open)", () => {
  it("given the store's, the read models' and the projections' newest migrations applied, when another process holds the write lock, then it opens", async () => {
    const filename = await storeFile(withReadModels)
    expect(await openWhileLocked(filename, withReadModels)).toEqual(["evt_1"])
  })

  it("given the read models one migration behind their newest, then they are migrated again (waiting for the lock)", async () => {
    const filename = await storeFile(withReadModels)
    const all = migrations(filename, "pivot_rm_migrations")
    const db = new DatabaseSync(filename)
    db.prepare("DELETE FROM pivot_rm_migrations WHERE migration_id = ?").run(Math.max(...all))
    db.close()
    expect(await openWhileLocked(filename, withReadModels)).toBe("StoreUnavailable")
    await Effect.runPromise(Effect.provide(Effect.void, withReadModels(filename)))
    expect(migrations(filename, "pivot_rm_migrations")).toEqual(all)
  })
})
