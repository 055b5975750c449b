// Looks at an existing SQLite file before the store writes to it, so a damaged file or somebody else's database is
// reported as `StoreCorrupt` and left byte-for-byte as it was (enabling WAL or migrating would write).
//
// The header is read from the file itself. The tables (and, when asked, `PRAGMA quick_check`) are read through a
// connection: the store's own one (`checkOn`, before it runs anything that may write) when nothing lies beside the
// file, else a read-only one of its own (`inspect`). The store's connection may write when it opens or closes only
// to recover what lies beside the file — a hot rollback journal, or a write-ahead log with frames that its close
// would checkpoint into the file — so with either present the check keeps its own read-only connection. Usually
// (a restart: the last connection's close removed the log) one connection does both, which halves the connections a
// restart opens (issue 32).

import * as fs from "node:fs"
import * as Effect from "effect/Effect"
import type { SqlClient } from "effect/sql"
import type * as SqlError from "effect/sql/SqlError"
import { StoreCorrupt, StoreUnavailable } from "../StoreError.ts"
import * as Driver from "../sqlite/driver.ts"
import { sqliteErrorCode } from "../sqlite/SqliteClient.ts"
import { migrationsTable } from "./migrations.ts"

const MAGIC = "SQLite format 3\u0000"

/** What is wrong with a SQLite header, judged against the file's length; `undefined` when it looks sound. Pure. */
export const headerProblem = (header: Uint8Array, fileSize: number, walHasFrames: boolean): string | undefined => {
  if (header.length < 100) return `truncated: ${fileSize} bytes is shorter than a SQLite header`
  if (new TextDecoder("latin1").decode(header.subarray(0, 16)) !== MAGIC) return "not a SQLite database"
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength)
  const rawPageSize = view.getUint16(16)
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return `invalid page size ${rawPageSize}`
  // The page count in the header is trusted only when it was written by the same change as the counter (byte 92).
  const pages = view.getUint32(28)
  const countValid = pages > 0 && view.getUint32(24) === view.getUint32(92)
  // Unchecked while the write-ahead log has frames: an interrupted checkpoint legitimately leaves the file short.
  if (countValid && !walHasFrames && fileSize < pages * pageSize) {
    return `truncated: the header says ${pages} pages of ${pageSize} bytes but the file has ${fileSize} bytes`
  }
  return undefined
}

const fileSize = (path: string): number | undefined => {
  try {
    return fs.statSync(path).size
  } catch {
    return undefined
  }
}

/** Whether `path` holds no database yet (missing, empty or in memory): a new store. */
export const isEmpty = (path: string): boolean => path === ":memory:" || path === "" || (fileSize(path) ?? 0) === 0

const readHeader = (path: string): Uint8Array => {
  const fd = fs.openSync(path, "r")
  try {
    const buffer = new Uint8Array(100)
    const read = fs.readSync(fd, buffer, 0, 100, 0)
    return buffer.subarray(0, read)
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * The header judged again under a SQLite read lock (SHARED: no writer is changing the main file meanwhile); `""`
 * when it is sound then, `undefined` when the lock could not be had (the first judgement stands).
 */
const underReadLock = (path: string): string | undefined => {
  let db: Driver.Database | undefined
  try {
    db = Driver.open(path, { readOnly: true, timeout: 5000 })
    db.exec("BEGIN")
    db.prepare("SELECT count(*) FROM sqlite_master").get()
    const size = fileSize(path) ?? 0
    const problem = headerProblem(readHeader(path), size, (fileSize(`${path}-wal`) ?? 0) > 32)
    db.exec("COMMIT")
    return problem ?? ""
  } catch {
    return undefined
  } finally {
    db?.close()
  }
}

const TABLES = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
const QUICK_CHECK = "PRAGMA quick_check(5)"

/** What is wrong with a file holding these tables (user tables, by name); `undefined` for a pivot store's. Pure. */
export const tablesProblem = (tables: ReadonlyArray<string>): string | undefined =>
  tables.length > 0 && !tables.includes(migrationsTable)
    ? `not a pivot event store (it has tables ${tables.slice(0, 5).join(", ")})`
    : undefined

/** What `PRAGMA quick_check` found, from its rows; `undefined` when it says ok. Pure. */
export const integrityProblem = (rows: ReadonlyArray<Record<string, unknown>>): string | undefined => {
  const messages = rows.map((row) => String(Object.values(row)[0]))
  return messages.length === 1 && messages[0] === "ok" ? undefined : `integrity check: ${messages.join("; ")}`
}

/** Whether SQLite keeps a file beside `path` that a connection able to write would recover on opening or closing. */
const recoverable = (path: string): boolean =>
  (fileSize(`${path}-wal`) ?? 0) > 32 || (fileSize(`${path}-journal`) ?? 0) > 0

/**
 * Checks `path` without writing to it: a missing or empty file is a new store; otherwise the header must be sound,
 * and a database that has tables must be a pivot store. `integrityCheck` also runs `PRAGMA quick_check` (reads the
 * whole file). Answers `"tables"` when the tables are left to the store's own connection (`checkOn`, before anything
 * that may write), `"done"` when all was checked here (a new store, or a file with a journal or log beside it).
 */
export const inspect = (
  path: string,
  integrityCheck: boolean,
): Effect.Effect<"done" | "tables", StoreCorrupt | StoreUnavailable> =>
  Effect.suspend((): Effect.Effect<"done" | "tables", StoreCorrupt | StoreUnavailable> => {
    if (path === ":memory:" || path === "") return Effect.succeed("done")
    const size = fileSize(path)
    if (size === undefined || size === 0) return Effect.succeed("done")
    const corrupt = (reason: string) => Effect.fail(new StoreCorrupt({ path, reason }))
    let header: Uint8Array
    try {
      header = readHeader(path)
    } catch (cause) {
      return Effect.fail(new StoreUnavailable({ reason: `cannot read ${path}: ${String(cause)}`, cause }))
    }
    let problem = headerProblem(header, size, (fileSize(`${path}-wal`) ?? 0) > 32)
    // A file shorter than its header says may be one another process is extending right now (a first open writes
    // the schema through a rollback journal): judge it again while holding a read lock, when the file is whole.
    if (problem?.startsWith("truncated: the header says") === true) problem = underReadLock(path) ?? problem
    if (problem !== undefined && problem !== "") return corrupt(problem)
    if (!recoverable(path)) return Effect.succeed("tables")
    let db: Driver.Database | undefined
    try {
      db = Driver.open(path, { readOnly: true, timeout: 5000 })
      const tables = tablesProblem(
        db
          .prepare(TABLES)
          .all()
          .map((row) => String(row.name)),
      )
      if (tables !== undefined) return corrupt(tables)
      const integrity = integrityCheck ? integrityProblem(db.prepare(QUICK_CHECK).all()) : undefined
      return integrity === undefined ? Effect.succeed("done") : corrupt(integrity)
    } catch (cause) {
      const code = sqliteErrorCode(cause)
      const text = cause instanceof Error ? cause.message : String(cause)
      if (code !== undefined && ((code & 0xff) === 11 || (code & 0xff) === 26)) return corrupt(text)
      return Effect.fail(new StoreUnavailable({ reason: `cannot open ${path}: ${text}`, cause }))
    } finally {
      db?.close()
    }
  })

/**
 * The tables check (and `integrityCheck`'s) of `inspect`, on the store's own connection `sql`, when `inspect` left
 * them to it: run before the store runs anything that may write. A failure of SQLite is judged by `classify` (a
 * damaged page is `StoreCorrupt`).
 */
export const checkOn = <E>(
  sql: SqlClient.SqlClient,
  path: string,
  integrityCheck: boolean,
  classify: (error: SqlError.SqlError) => E,
): Effect.Effect<void, StoreCorrupt | E> =>
  Effect.gen(function* () {
    const rows = yield* Effect.mapError(sql.unsafe<{ readonly name: unknown }>(TABLES), classify)
    const problem =
      tablesProblem(rows.map((row) => String(row.name))) ??
      (integrityCheck
        ? integrityProblem(yield* Effect.mapError(sql.unsafe<Record<string, unknown>>(QUICK_CHECK), classify))
        : undefined)
    if (problem !== undefined) return yield* new StoreCorrupt({ path, reason: problem })
  })
