/**
 * pivot's own `SqlClient` over Node's built-in `node:sqlite` (`DatabaseSync`), or `bun:sqlite` inside Bun (see driver.ts).
 *
 * The official `@effect/sql-sqlite-node` has no release for stable effect 4, so this module provides the same
 * service shape and options (`filename`, `readonly`, `prepareCacheSize`, `prepareCacheTTL`, `disableWAL`,
 * `spanAttributes`, `transformResultNames`, `transformQueryNames`) and can be swapped for it later. Additions:
 * `busyTimeout` (how long a writer waits for another connection's lock) and `transactionMode` (top-level
 * transactions start with `BEGIN IMMEDIATE` by default, so writers from several processes queue up instead of
 * failing when a read transaction tries to upgrade).
 *
 * One connection per client, shared through a semaphore: `DatabaseSync` is synchronous, so a second connection in
 * the same process would only add lock contention.
 *
 * Waiting for a lock never blocks the event loop (ADR 0014): SQLite's own busy handler sleeps inside the synchronous
 * call, so a connection waiting for another one of the same process would stall the very loop that other one needs
 * to commit. The busy handler is off (timeout 0); a statement refused with `SQLITE_BUSY` is run again after a
 * jittered, growing delay (`busySchedule`), for at most `busyTimeout`, while other fibers run.
 */

import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import { SqlClient as Client, type SqlConnection, SqlError, Statement } from "effect/sql"
import * as Driver from "./driver.ts"

/** The options of a SQLite client; the same shape as `@effect/sql-sqlite-node` plus two pivot additions. */
export interface SqliteClientConfig {
  /** Path of the database file (created when missing, unless `readonly`), or `":memory:"`. */
  readonly filename: string
  /** Open the database read-only. */
  readonly readonly?: boolean | undefined
  /** How many prepared statements to keep (least recently used are dropped); default 200. */
  readonly prepareCacheSize?: number | undefined
  /** How long an unused prepared statement is kept; default 10 minutes. */
  readonly prepareCacheTTL?: Duration.Input | undefined
  /** Keep SQLite's rollback journal instead of switching the database to write-ahead logging. */
  readonly disableWAL?: boolean | undefined
  /**
   * How long to wait for a lock held by another connection before failing with `SQLITE_BUSY`; default 5 s. The wait
   * suspends the fiber (retries with backoff), never the thread.
   */
  readonly busyTimeout?: Duration.Input | undefined
  /** How top-level transactions begin; default `"immediate"` (take the write lock at `BEGIN`). */
  readonly transactionMode?: "deferred" | "immediate" | "exclusive" | undefined
  /** Extra attributes on every SQL span. */
  readonly spanAttributes?: Record<string, unknown> | undefined
  /** Renames result columns (e.g. snake_case to camelCase). */
  readonly transformResultNames?: ((str: string) => string) | undefined
  /** Renames identifiers in queries (e.g. camelCase to snake_case). */
  readonly transformQueryNames?: ((str: string) => string) | undefined
}

/** The SQLite client service: a `SqlClient` plus the options it was opened with. */
export interface SqliteClient extends Client.SqlClient {
  /** The options the client was opened with. */
  readonly config: SqliteClientConfig
  /**
   * Runs `script` (several statements) in one write transaction if the database has no schema yet, under the write
   * lock; answers whether it ran. One `exec` instead of a round trip per statement (ADR 0061). For opening only: it
   * does not queue behind the client's other statements.
   */
  readonly createIfEmpty: (script: string) => Effect.Effect<boolean, SqlError.SqlError>
}

/**
 * What `changeStamp` of a SQLite client answers: a value that changes whenever the database may have changed since it
 * was taken (a write through this connection, or a commit by any other connection or process); undefined when the
 * connection cannot tell (closed).
 */
export type ChangeStamp = () => Stamp | undefined

/**
 * A change stamp: the statements this connection ran that may have written, and SQLite's `data_version` (which moves
 * when another connection commits). Equal stamps: nothing was written in between.
 */
export interface Stamp {
  readonly writes: number
  readonly data: number
}

/** The `changeStamp` of a client made by `make` (see `ChangeStamp`), undefined for any other `SqlClient`. */
export const changeStampOf = (client: Client.SqlClient): ChangeStamp | undefined =>
  (client as { readonly changeStamp?: ChangeStamp }).changeStamp

/** The service tag of the SQLite client (the layers also provide it as the generic `SqlClient`). */
export const SqliteClient = Context.Service<SqliteClient>("@pivot/store/SqliteClient")

/** The numeric SQLite result code of a failure raised by `node:sqlite` (`SQLITE_CORRUPT` is 11), if any. */
export const sqliteErrorCode = (cause: unknown): number | undefined => {
  if (typeof cause !== "object" || cause === null) return undefined
  const c = cause as { readonly errcode?: unknown; readonly errno?: unknown; readonly cause?: unknown }
  if (typeof c.errcode === "number") return c.errcode
  if (typeof c.errno === "number") return c.errno
  return c.cause === undefined || c.cause === cause ? undefined : sqliteErrorCode(c.cause)
}

// node:sqlite reports `code: "ERR_SQLITE_ERROR"` and the SQLite code as `errcode`; effect's classifier reads `errno`.
const toSqlError = (cause: unknown, message: string, operation: string): SqlError.SqlError => {
  const errno = sqliteErrorCode(cause)
  const text = cause instanceof Error ? cause.message : String(cause)
  const normalized = errno === undefined ? cause : { message: text, errno, errcode: errno, cause }
  return new SqlError.SqlError({
    reason: SqlError.classifySqliteError(normalized, { message: `${message}: ${text}`, operation }),
  })
}

const SQLITE_BUSY = 5

/**
 * The waits between attempts at a statement refused with `SQLITE_BUSY`: `first`, doubling, each at most `cap`,
 * ±20% jitter, for at most `budget` in all. SQLite's own handler waits 1 to 100 ms; the defaults are alike.
 */
export const busySchedule = (
  budget: Duration.Input,
  options: { readonly first?: Duration.Input | undefined; readonly cap?: Duration.Input | undefined } = {},
) => {
  const cap = Duration.fromInputUnsafe(options.cap ?? Duration.millis(100))
  return Schedule.exponential(options.first ?? Duration.millis(2)).pipe(
    Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, cap))),
    Schedule.jittered,
    Schedule.upTo({ duration: budget }),
  )
}

interface CachedStatement {
  readonly statement: Driver.Statement
  usedAt: number
}

/** Opens the database and builds the client; the connection closes with the scope. */
export const make = (
  options: SqliteClientConfig,
): Effect.Effect<SqliteClient, SqlError.SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const compiler = Statement.makeCompilerSqlite(options.transformQueryNames)
    const transformRows = options.transformResultNames
      ? Statement.defaultTransforms(options.transformResultNames).array
      : undefined
    const busyMillis = Duration.toMillis(options.busyTimeout ?? Duration.seconds(5))
    const cacheSize = Math.max(0, options.prepareCacheSize ?? 200)
    const cacheTtl = Duration.toMillis(options.prepareCacheTTL ?? Duration.minutes(10))

    // No busy handler: SQLite would wait inside the synchronous call (see the module comment); `run` retries instead.
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => Driver.open(options.filename, { readOnly: options.readonly ?? false, timeout: 0 }),
        catch: (cause) => toSqlError(cause, "Failed to open database", "open"),
      }),
      (db) => Effect.sync(() => db.isOpen && db.close()),
    )
    const busyRetry = busySchedule(Duration.millis(busyMillis))
    /**
     * Runs `effect` again while it fails with `SQLITE_BUSY` and no transaction is left open by it (a `BEGIN`, a
     * statement on its own or a `COMMIT` that could not get the lock: trying it again is safe). Inside a transaction
     * a refused statement cannot succeed by waiting (a read transaction upgrading), so it fails at once.
     */
    const whileBusy = <A>(sql: string, effect: Effect.Effect<A, SqlError.SqlError>) =>
      busyMillis <= 0
        ? effect
        : Effect.retry(effect, {
            schedule: busyRetry,
            while: (error) =>
              ((sqliteErrorCode(error.reason.cause) ?? 0) & 0xff) === SQLITE_BUSY &&
              (!db.isTransaction || /^\s*(COMMIT|END)\b/i.test(sql)),
          })
    if (options.disableWAL !== true && options.readonly !== true) {
      yield* whileBusy(
        "PRAGMA journal_mode = WAL",
        Effect.try({
          try: () => db.exec("PRAGMA journal_mode = WAL"),
          catch: (cause) => toSqlError(cause, "Failed to enable WAL", "open"),
        }),
      )
    }

    // Least recently used first: a Map keeps insertion order, and a hit re-inserts the entry.
    const cache = new Map<string, CachedStatement>()
    const prepare = (sql: string, now: number): Driver.Statement => {
      const hit = cache.get(sql)
      if (hit !== undefined && now - hit.usedAt <= cacheTtl) {
        cache.delete(sql)
        hit.usedAt = now
        cache.set(sql, hit)
        return hit.statement
      }
      const statement = db.prepare(sql)
      if (cacheSize > 0) {
        cache.delete(sql)
        cache.set(sql, { statement, usedAt: now })
        while (cache.size > cacheSize) cache.delete(cache.keys().next().value!)
      }
      return statement
    }

    // Statements run through this connection that may have written (anything but a SELECT): other connections'
    // commits are told by `PRAGMA data_version`, which does not count this connection's own.
    let writes = 0
    let dataVersion: Driver.Statement | undefined
    const changeStamp: ChangeStamp = () => {
      if (!db.isOpen) return undefined
      try {
        dataVersion ??= db.prepare("PRAGMA data_version")
        return { writes, data: Number((dataVersion.get() as { readonly data_version: number }).data_version) }
      } catch {
        return undefined
      }
    }

    type Mode = "objects" | "arrays" | "raw"
    const run = (sql: string, params: ReadonlyArray<unknown>, mode: Mode, prepared: boolean) =>
      Effect.withFiber<any, SqlError.SqlError>((fiber) => {
        const bigints = Context.get(fiber.context, Client.SafeIntegers)
        const now = Context.get(fiber.context, Clock.Clock).currentTimeMillisUnsafe()
        return whileBusy(
          sql,
          Effect.try({
            try: () => {
              const statement = prepared ? prepare(sql, now) : db.prepare(sql)
              statement.setReadBigInts(bigints)
              const args = params as Array<any>
              if (statement.columns().length === 0) {
                writes++
                const result = statement.run(...args)
                return mode === "raw" ? { changes: result.changes, lastInsertRowid: result.lastInsertRowid } : []
              }
              statement.setReturnArrays(mode === "arrays")
              if (!/^\s*SELECT\b/i.test(sql)) writes++
              return statement.all(...args)
            },
            catch: (cause) => toSqlError(cause, "Failed to execute statement", "execute"),
          }),
        )
      })

    // Rows are pulled in pages while the stream's consumer holds the connection lease.
    const stream = (sql: string, params: ReadonlyArray<unknown>): Stream.Stream<any, SqlError.SqlError> =>
      Stream.suspend(() => {
        let iterator: Iterator<unknown> | undefined
        return Stream.paginate(undefined, () =>
          Effect.try({
            try: () => {
              if (iterator === undefined) {
                const statement = db.prepare(sql)
                statement.setReturnArrays(false)
                iterator = statement.iterate(...(params as Array<any>))
              }
              const page: Array<unknown> = []
              let done = false
              while (page.length < 256) {
                const next = iterator.next()
                if (next.done === true) {
                  done = true
                  break
                }
                page.push(next.value)
              }
              return [page, done ? Option.none() : Option.some(undefined)] as const
            },
            catch: (cause) => toSqlError(cause, "Failed to stream statement", "stream"),
          }),
        )
      })

    const createIfEmpty = (script: string) =>
      whileBusy(
        "BEGIN IMMEDIATE",
        Effect.try({
          try: () => {
            db.exec("BEGIN IMMEDIATE")
            try {
              const found = db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { readonly n: unknown }
              const empty = Number(found.n) === 0
              if (empty) {
                writes++
                db.exec(script)
              }
              db.exec(empty ? "COMMIT" : "ROLLBACK")
              return empty
            } catch (cause) {
              // Left open, a failed COMMIT (busy) would hold the lock; rolled back, the whole step can be retried.
              if (db.isTransaction) db.exec("ROLLBACK")
              throw cause
            }
          },
          catch: (cause) => toSqlError(cause, "Failed to create the schema", "execute"),
        }),
      )

    const connection: SqlConnection.Connection = {
      execute: (sql, params, transform) =>
        transform ? Effect.map(run(sql, params, "objects", true), transform) : run(sql, params, "objects", true),
      executeRaw: (sql, params) => run(sql, params, "raw", true),
      executeStream: (sql, params, transform) =>
        transform ? Stream.mapArray(stream(sql, params), (rows) => transform(rows) as any) : stream(sql, params),
      executeValues: (sql, params) => run(sql, params, "arrays", true),
      executeValuesUnprepared: (sql, params) => run(sql, params, "arrays", false),
      executeUnprepared: (sql, params, transform) =>
        transform ? Effect.map(run(sql, params, "objects", false), transform) : run(sql, params, "objects", false),
    }

    const semaphore = yield* Semaphore.make(1)
    const acquirers = Client.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore,
      isTransaction: () => db.isTransaction,
    })
    const mode = options.transactionMode ?? "immediate"
    const client = yield* Client.make({
      ...acquirers,
      compiler,
      driver: "sqlite-node",
      spanAttributes: [
        ...(options.spanAttributes ? Object.entries(options.spanAttributes) : []),
        ["db.system.name", "sqlite"],
      ],
      transformRows,
      beginTransaction: `BEGIN ${mode.toUpperCase()}`,
    })
    return Object.assign(client, { config: options, changeStamp, createIfEmpty }) as SqliteClient
  })

/** A layer providing both `SqliteClient` and the generic `SqlClient`; fails when the database cannot be opened. */
export const layer = (config: SqliteClientConfig): Layer.Layer<SqliteClient | Client.SqlClient, SqlError.SqlError> =>
  Layer.effectContext(
    Effect.map(make(config), (client) =>
      Context.make(SqliteClient, client).pipe(Context.add(Client.SqlClient, client)),
    ),
  ).pipe(Layer.provide(Reactivity.layer))
