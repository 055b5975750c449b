/**
 * The synchronous SQLite driver under pivot's client: Node's built-in `node:sqlite`, or, inside Bun (which has no
 * `node:sqlite`; OpenCode runs its plugins there), a thin adapter over `bun:sqlite` with the part of `DatabaseSync`
 * that pivot uses. Loaded lazily, so importing the store never fails on a runtime without one of them.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import type { DatabaseSync as NodeDatabaseSync } from "node:sqlite"
import { pathToFileURL } from "node:url"
import * as NodeSqlite from "../internal/nodeSqlite.ts"

/** The options pivot opens a database with. */
export interface OpenOptions {
  readonly readOnly?: boolean | undefined
  /** Busy timeout in milliseconds. */
  readonly timeout?: number | undefined
}

type Param = null | number | bigint | string | Uint8Array

/** The part of `node:sqlite`'s `StatementSync` pivot uses. */
export interface Statement {
  setReadBigInts(enabled: boolean): void
  setReturnArrays(enabled: boolean): void
  columns(): ReadonlyArray<unknown>
  run(...params: Array<Param>): { readonly changes: number | bigint; readonly lastInsertRowid: number | bigint }
  all(...params: Array<Param>): Array<any>
  get(...params: Array<Param>): any
  iterate(...params: Array<Param>): Iterator<any>
}

/** The part of `node:sqlite`'s `DatabaseSync` pivot uses. */
export interface Database {
  readonly isOpen: boolean
  readonly isTransaction: boolean
  exec(sql: string): void
  prepare(sql: string): Statement
  close(): void
}

// bun:sqlite's shapes, as far as the adapter reads them.
interface BunStatement {
  readonly columnNames: ReadonlyArray<string>
  safeIntegers(enabled: boolean): void
  run(...params: Array<Param>): { readonly changes: number; readonly lastInsertRowid: number | bigint }
  all(...params: Array<Param>): Array<any>
  values(...params: Array<Param>): Array<Array<any>>
  get(...params: Array<Param>): any
  iterate(...params: Array<Param>): IterableIterator<any>
}
interface BunDatabase {
  readonly inTransaction: boolean
  exec(sql: string): void
  prepare(sql: string): BunStatement
  close(): void
}
type BunDatabaseClass = new (
  filename: string,
  options: { readonly readonly?: boolean; readonly create?: boolean; readonly readwrite?: boolean },
) => BunDatabase

const bunStatement = (statement: BunStatement): Statement => {
  let arrays = false
  return {
    setReadBigInts: (enabled) => statement.safeIntegers(enabled),
    setReturnArrays: (enabled) => {
      arrays = enabled
    },
    columns: () => statement.columnNames,
    run: (...params) => statement.run(...params),
    all: (...params) => (arrays ? statement.values(...params) : statement.all(...params)),
    get: (...params) => statement.get(...params),
    iterate: (...params) => statement.iterate(...params),
  }
}

const bunDatabase = (Bun: BunDatabaseClass, filename: string, options: OpenOptions): Database => {
  const readOnly = options.readOnly === true
  const db = new Bun(filename, readOnly ? { readonly: true } : { readwrite: true, create: true })
  let open = true
  // node:sqlite's `timeout` is SQLite's busy timeout; bun:sqlite takes it as a pragma.
  if (options.timeout !== undefined) db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.round(options.timeout))}`)
  return {
    get isOpen() {
      return open
    },
    get isTransaction() {
      return db.inTransaction
    },
    exec: (sql) => db.exec(sql),
    prepare: (sql) => bunStatement(db.prepare(sql)),
    close: () => {
      open = false
      db.close()
    },
  }
}

const isBun = (): boolean => typeof (globalThis as { readonly Bun?: unknown }).Bun !== "undefined"

let opener: ((filename: string, options: OpenOptions) => Database) | undefined

/**
 * Opens a database with the runtime's driver: `bun:sqlite` inside Bun, else `node:sqlite` (on a Node without it, or
 * without its busy timeouts, the one-line reason of `NodeSqlite.load`). Throws as the driver does when the database
 * cannot be opened.
 */
export const open = (filename: string, options: OpenOptions = {}): Database => {
  if (opener === undefined) {
    if (isBun()) {
      const Bun = (createRequire(import.meta.url)("bun:sqlite") as { readonly Database: BunDatabaseClass }).Database
      opener = (file, o) => bunDatabase(Bun, file, o)
    } else {
      const DatabaseSync: typeof NodeDatabaseSync = NodeSqlite.load().DatabaseSync
      opener = (file, o) =>
        new DatabaseSync(file, {
          readOnly: o.readOnly ?? false,
          ...(o.timeout === undefined ? {} : { timeout: o.timeout }),
        }) as unknown as Database
    }
  }
  if (options.readOnly !== true || filename === ":memory:" || filename === "") return opener(filename, options)
  const sideFiles = sideFilesOf(filename)
  const opened = opener(filename, options)
  const db = folderWritable(filename) ? opened : readableOrImmutable(opener, opened, filename, options)
  return sideFiles.some((file) => fs.existsSync(file)) ? db : tidyOnClose(db, filename, sideFiles)
}

/** Whether this process may make files beside `filename` (as SQLite makes a WAL database's `-wal` and `-shm`). */
const folderWritable = (filename: string): boolean => {
  try {
    fs.accessSync(path.dirname(path.resolve(filename)), fs.constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** SQLite's extended codes for a read-only connection that cannot make a WAL database's `-shm` index. */
const SQLITE_READONLY_CANTINIT = 1288
const SQLITE_READONLY_DIRECTORY = 1544

/**
 * A read-only connection to a WAL database needs its `-shm` index, and makes it (with the `-wal`) when there is none;
 * in a folder it may not write (a read-only mount, somebody else's folder) it cannot, and every read fails with
 * "attempt to write a readonly database". (Only there: in a folder it may write, the first statement makes them, and
 * that is left to the caller's first statement as before.) With no `-wal` beside the file there is no log to read: the
 * database is the file alone, and SQLite reads it as it is with `immutable=1` (no index, no locks, nothing made
 * beside it; its documented way to read a WAL database on read-only media). Any other outcome keeps the connection
 * as it was, so its first statement fails as before.
 */
const readableOrImmutable = (
  opener: (filename: string, options: OpenOptions) => Database,
  db: Database,
  filename: string,
  options: OpenOptions,
): Database => {
  try {
    db.exec("SELECT 1 FROM sqlite_master LIMIT 1")
    return db
  } catch (cause) {
    const code = (cause as { readonly errcode?: unknown }).errcode
    if ((code !== SQLITE_READONLY_DIRECTORY && code !== SQLITE_READONLY_CANTINIT) || fs.existsSync(`${filename}-wal`))
      return db
    let immutable: Database | undefined
    try {
      immutable = opener(`${pathToFileURL(path.resolve(filename)).href}?immutable=1`, options)
      immutable.exec("SELECT 1 FROM sqlite_master LIMIT 1")
    } catch {
      immutable?.close()
      return db
    }
    db.close()
    return immutable
  }
}

/** The files SQLite keeps beside a database in WAL mode while a connection is open on it. */
const sideFilesOf = (filename: string): ReadonlyArray<string> => [`${filename}-wal`, `${filename}-shm`]

/**
 * A read-only connection to a WAL database makes its `-wal` and `-shm` files when none exist, and cannot remove
 * them when it closes (only a connection that may write does, when it is the last one). So when there were none
 * before, the close opens the file once more to read one row and close: SQLite then removes them itself if no other
 * connection is open, under its own locks, and checkpoints nothing (the log is empty). Nothing in the database
 * changes; a read-only command leaves the folder as it found it.
 */
const tidyOnClose = (db: Database, filename: string, sideFiles: ReadonlyArray<string>): Database => ({
  get isOpen() {
    return db.isOpen
  },
  get isTransaction() {
    return db.isTransaction
  },
  exec: (sql) => db.exec(sql),
  prepare: (sql) => db.prepare(sql),
  close: () => {
    db.close()
    if (opener === undefined || !sideFiles.some((file) => fs.existsSync(file))) return
    let tidy: Database | undefined
    try {
      tidy = opener(filename, { readOnly: false, timeout: 0 })
      tidy.prepare("SELECT count(*) FROM sqlite_master").get()
    } catch {
      // Not writable, busy or damaged: the side files stay, as they would have.
    } finally {
      try {
        tidy?.close()
      } catch {}
    }
  },
})
