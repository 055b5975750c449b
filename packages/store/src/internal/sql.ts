// The event store over any effect `SqlClient` (SQLite through pivot's node:sqlite client, Postgres through
// @effect/sql-pg). Dialect differences are confined to the append lock and the notification hooks.
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { type Migrator, SqlClient, type SqlError } from "effect/sql"
import { type AppendResult, expectedVersionMatches, prepareAppend, type RecordedEvent } from "../Event.ts"
import type { EventStoreShape } from "../EventStore.ts"
import {
  DuplicateEventId,
  type MalformedEvent,
  StoreCorrupt,
  StoreUnavailable,
  WrongExpectedVersion,
} from "../StoreError.ts"
import { sqliteErrorCode } from "../sqlite/SqliteClient.ts"
import * as Migrations from "./migrations.ts"
import * as Paging from "./paging.ts"
import * as Seal from "./seal.ts"

/** How appends are announced to subscribers in other processes (Postgres LISTEN/NOTIFY). */
export interface Notifier {
  /** Runs inside the append transaction, so the announcement is delivered only if the append commits. */
  readonly publish: (position: number) => Effect.Effect<void, SqlError.SqlError>
  /** Calls `onNews` for every announcement until the scope closes; failures are retried by the store. */
  readonly listen: (onNews: Effect.Effect<void>) => Effect.Effect<void, SqlError.SqlError, Scope.Scope>
}

/** Runs once when the store opens, after its own migrations (e.g. to create read-model tables). */
export type OnOpen = (sql: SqlClient.SqlClient) => Effect.Effect<void, SqlError.SqlError | Migrator.MigrationError>

/**
 * Runs inside every non-empty append's transaction, after its rows are written, with the events as a reader will see
 * them; a failure rolls the whole append back (e.g. inline read models). `fields`, when given, holds the JSON text
 * of every object-valued top-level field of the events' data as this append serialised it (the text
 * `JSON.stringify` gives for that value), keyed by the field's value: a hook storing such a value as JSON can reuse
 * it. It lives as long as the append.
 */
export type OnAppend = (
  sql: SqlClient.SqlClient,
  events: ReadonlyArray<RecordedEvent>,
  fields?: ReadonlyMap<object, string> | undefined,
) => Effect.Effect<void, SqlError.SqlError | MalformedEvent>

/**
 * Runs inside `forget`'s transaction, after the stream's key row is deleted: derived copies of the stream's data
 * (e.g. read-model tables) are deleted with it.
 */
export type OnForget = (sql: SqlClient.SqlClient, stream: string) => Effect.Effect<void, SqlError.SqlError>

/** The current keys of some streams, from the key table of the `SqlClient` given. */
export const keysOf = (sql: SqlClient.SqlClient, streams: ReadonlyArray<string>) =>
  Effect.map(
    Effect.forEach(
      chunks(streams),
      (chunk) =>
        sql<{
          readonly stream: string
          readonly key_id: string
          readonly key: string
        }>`SELECT stream, key_id, key FROM pivot_keys WHERE ${sql.in("stream", chunk)}`,
    ),
    (pages) =>
      new Map(
        pages.flat().map((row) => [row.stream, { id: row.key_id, key: Seal.decodeKey(row.key) } as Seal.StreamKey]),
      ),
  )

/** Options of the SQL store. */
export interface SqlStoreOptions {
  /** Rows per page for `readAll` and `subscribe`; default 1000. */
  readonly pageSize?: number | undefined
  /** How often a caught-up subscription looks for events appended by other processes; default 100 ms. */
  readonly pollInterval?: Duration.Input | undefined
  /** Skip migrations (a read-only database); the schema is still verified. */
  readonly readonly?: boolean | undefined
  /** The database's file name, for error messages. */
  readonly path?: string | undefined
  readonly notifier?: Notifier | undefined
  readonly onOpen?: OnOpen | undefined
  readonly onAppend?: OnAppend | undefined
  readonly onForget?: OnForget | undefined
}

interface EventRow {
  readonly position: number | bigint | string
  readonly event_id: string
  readonly stream: string
  readonly stream_version: number | bigint | string
  readonly type: string
  readonly schema_version: number | bigint | string
  readonly data: string
  readonly metadata: string | null
  readonly recorded_at: number | bigint | string
}

const CORRUPT_SQLITE_CODES = new Set([11, 26]) // SQLITE_CORRUPT, SQLITE_NOTADB
const CHUNK = 500

const chunks = <A>(items: ReadonlyArray<A>): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK))
  return out
}

/** Classifies a database failure: a damaged file is `StoreCorrupt`, anything else `StoreUnavailable`. */
export const classify =
  (path: string | undefined) =>
  (error: SqlError.SqlError | Migrator.MigrationError): StoreUnavailable | StoreCorrupt => {
    const reason = error._tag === "SqlError" ? error.reason : undefined
    const cause = reason?.cause ?? (error._tag === "MigrationError" ? error.cause : undefined)
    const inner =
      cause !== null && typeof cause === "object" && "reason" in cause ? (cause as any).reason?.cause : cause
    const code = sqliteErrorCode(inner)
    const pgCode = inner !== null && typeof inner === "object" ? (inner as { code?: unknown }).code : undefined
    const text = inner instanceof Error ? inner.message : error.message
    if ((code !== undefined && CORRUPT_SQLITE_CODES.has(code & 0xff)) || pgCode === "XX001" || pgCode === "XX002") {
      return new StoreCorrupt({ ...(path === undefined ? {} : { path }), reason: text })
    }
    return new StoreUnavailable({ reason: text, cause: error })
  }

const decodeRows = (
  rows: ReadonlyArray<EventRow>,
  path: string | undefined,
): Result.Result<Array<RecordedEvent>, StoreCorrupt> => {
  const out: Array<RecordedEvent> = new Array(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    let data: unknown
    let metadata: unknown
    try {
      data = JSON.parse(row.data)
      metadata = row.metadata === null ? null : JSON.parse(row.metadata)
    } catch (cause) {
      const reason = `event at position ${row.position} has a payload that is not JSON (${String(cause)})`
      return Result.fail(new StoreCorrupt({ ...(path === undefined ? {} : { path }), reason }))
    }
    out[i] = {
      id: row.event_id,
      type: row.type,
      version: Number(row.schema_version),
      data,
      metadata,
      stream: row.stream,
      streamVersion: Number(row.stream_version),
      position: Number(row.position),
      recordedAt: Number(row.recorded_at),
    }
  }
  return Result.succeed(out)
}

/** Migrates, verifies the schema and builds the store over the `SqlClient` in context. */
export const make = (
  options: SqlStoreOptions,
): Effect.Effect<EventStoreShape, StoreUnavailable | StoreCorrupt, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const path = options.path
    const toStoreError = classify(path)
    const pageSize = Math.max(1, options.pageSize ?? 1000)
    const poll = Duration.fromInputUnsafe(options.pollInterval ?? Duration.millis(100))
    const corrupt = (reason: string) => new StoreCorrupt({ ...(path === undefined ? {} : { path }), reason })

    const columns = sql.literal(Migrations.eventColumns.join(", "))
    if (options.readonly !== true) {
      // An events table without pivot's columns is refused before any migration writes to the database.
      const probe = yield* Effect.result(sql`SELECT ${columns} FROM pivot_events WHERE 1 = 0`)
      if (Result.isFailure(probe) && /no such column|column .* does not exist/i.test(probe.failure.message)) {
        return yield* corrupt(`pivot_events does not have pivot's columns (${probe.failure.message})`)
      }
      yield* Effect.mapError(Migrations.run, toStoreError)
    }

    // A database someone else's program made, or a newer pivot's, is refused rather than written to.
    const applied = yield* sql<{ readonly id: number | string | null }>`SELECT MAX(migration_id) AS id FROM ${sql(
      Migrations.migrationsTable,
    )}`.pipe(Effect.mapError(() => corrupt("not a pivot event store (no migrations table)")))
    const version = Number(applied[0]?.id ?? 0)
    if (version > Migrations.latestMigration) {
      return yield* corrupt(
        `the store was written by a newer pivot (schema ${version}; this one knows up to ${Migrations.latestMigration})`,
      )
    }
    yield* sql`SELECT ${columns} FROM pivot_events WHERE 1 = 0`.pipe(
      Effect.mapError((error) =>
        error.reason._tag === "SqlSyntaxError" || error.reason._tag === "UnknownError"
          ? corrupt(`pivot_events does not have pivot's columns (${error.message})`)
          : toStoreError(error),
      ),
    )
    if (options.onOpen !== undefined) yield* Effect.mapError(options.onOpen(sql), toStoreError)
    // SQLite: every delete and update overwrites the old bytes with zeros, so text replaced in a read model (or a
    // forgotten key) leaves no stale copy in free space; `forget` relies on it.
    if (options.readonly !== true)
      yield* sql.onDialectOrElse({
        pg: () => Effect.void,
        orElse: () => Effect.mapError(sql.unsafe("PRAGMA secure_delete = ON"), toStoreError),
      })

    const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
    // Postgres: one append at a time per schema, so positions are handed out in commit order and a reader that has
    // seen position p will never later find a smaller one appear (SQLite's BEGIN IMMEDIATE already gives this).
    const lock = isPg
      ? Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.pivot_events'))`)
      : Effect.void

    const ticks = yield* SubscriptionRef.make(0)
    const bump = SubscriptionRef.update(ticks, (n) => n + 1)
    if (options.notifier !== undefined) {
      const listen = options.notifier.listen(bump)
      yield* Effect.forkScoped(
        Effect.scoped(listen).pipe(
          Effect.catchCause(() => Effect.void),
          Effect.andThen(Effect.sleep(Duration.seconds(1))),
          Effect.forever,
        ),
      )
    }

    /** Rows as recorded events, their sealed fields opened with the streams' current keys. */
    const recordedOf = (rows: ReadonlyArray<EventRow>) =>
      Effect.flatMap(Effect.fromResult(decodeRows(rows, path)), (events) =>
        Seal.openRecorded(
          events,
          rows.map((row) => row.data),
          (streams) => Effect.mapError(keysOf(sql, streams), toStoreError),
        ),
      )

    const readPage: Paging.ReadPage = (after, limit) =>
      sql<EventRow>`SELECT ${columns} FROM pivot_events WHERE position > ${after} ORDER BY position LIMIT ${limit}`.pipe(
        Effect.mapError(toStoreError),
        Effect.flatMap(recordedOf),
      )

    /** The stream's key, created (inside the caller's transaction) when it has none. */
    const keyFor = (stream: string, at: number) =>
      Effect.gen(function* () {
        const existing = (yield* keysOf(sql, [stream])).get(stream)
        if (existing !== undefined) return existing
        const key = Seal.newKey()
        yield* sql`INSERT INTO pivot_keys ${sql.insert({ stream, key_id: key.id, key: Seal.encodeKey(key.key), created_at: at })}`
        return key
      })

    const streamHead = (stream: string) =>
      Effect.map(
        sql<{
          readonly stream_version: number | string
          readonly position: number | string
        }>`SELECT stream_version, position FROM pivot_events WHERE stream = ${stream} ORDER BY stream_version DESC LIMIT 1`,
        (rows) =>
          rows[0] === undefined
            ? { version: 0, position: 0 }
            : { version: Number(rows[0].stream_version), position: Number(rows[0].position) },
      )

    const existingIds = (ids: ReadonlyArray<string>) =>
      Effect.map(
        Effect.forEach(
          chunks(ids),
          (chunk) =>
            sql<{ readonly event_id: string }>`SELECT event_id FROM pivot_events WHERE ${sql.in("event_id", chunk)}`,
        ),
        (pages) => pages.flat().map((row) => row.event_id),
      )

    const store: EventStoreShape = {
      append: Effect.fn("EventStore.append")(function* (stream, expectedVersion, events) {
        // The hook gets the JSON text of the payloads' object-valued fields, as serialised here (see `OnAppend`).
        const fields = options.onAppend === undefined ? undefined : new Map<object, string>()
        const batch = prepareAppend(stream, expectedVersion, events, fields)
        if (Result.isFailure(batch)) return yield* batch.failure
        const serialized = batch.success
        const recordedAt = yield* Clock.currentTimeMillis
        const ids = serialized.map((event) => event.id)

        const write = Effect.gen(function* () {
          yield* lock
          if (ids.length > 0) {
            const existing = yield* existingIds(ids)
            if (existing.length > 0) return yield* new DuplicateEventId({ ids: existing })
          }
          const current = yield* streamHead(stream)
          if (!expectedVersionMatches(expectedVersion, current.version)) {
            return yield* new WrongExpectedVersion({ stream, expected: expectedVersion, actual: current.version })
          }
          if (serialized.length === 0) {
            return { streamVersion: current.version, position: current.position } satisfies AppendResult
          }
          let position = 0
          let streamVersion = current.version
          const positions = new Map<number, number>()
          const stored = yield* Seal.storedData(stream, serialized, keyFor(stream, recordedAt))
          for (const [c, chunk] of chunks(serialized).entries()) {
            const rows = chunk.map((event, i) => ({
              event_id: event.id,
              stream,
              stream_version: ++streamVersion,
              type: event.type,
              schema_version: event.version,
              data: stored[c * CHUNK + i]!,
              metadata: event.metadata,
              recorded_at: recordedAt,
            }))
            const inserted = yield* sql<{
              readonly position: number | string
              readonly stream_version: number | string
            }>`INSERT INTO pivot_events ${sql.insert(rows as [(typeof rows)[0], ...typeof rows])} RETURNING position, stream_version`
            for (const row of inserted) {
              position = Math.max(position, Number(row.position))
              positions.set(Number(row.stream_version), Number(row.position))
            }
          }
          if (options.onAppend !== undefined) {
            // The hook sees what a reader will read. `serializeBatch` admitted only plain JSON values (no undefined,
            // NaN, class instances or cycles), so the payloads given are what parsing the stored JSON gives back:
            // passing them saves parsing a large batch (an import) a second time.
            const recorded = serialized.map(
              (event, i): RecordedEvent => ({
                id: event.id,
                type: event.type,
                version: event.version,
                data: events[i]!.data,
                metadata: event.metadata === null ? null : (events[i]!.metadata ?? null),
                stream,
                streamVersion: current.version + i + 1,
                position: positions.get(current.version + i + 1) ?? 0,
                recordedAt,
              }),
            )
            yield* options.onAppend(sql, recorded, fields)
          }
          if (options.notifier !== undefined) yield* options.notifier.publish(position)
          return { streamVersion, position } satisfies AppendResult
        })

        const result = yield* sql.withTransaction(write).pipe(
          Effect.catchTag("SqlError", (error) =>
            error.reason._tag === "UniqueViolation"
              ? // Backstop: another writer got in between despite the lock; report it as the conflict it is.
                Effect.flatMap(
                  Effect.all([existingIds(ids), streamHead(stream)]).pipe(Effect.mapError(toStoreError)),
                  ([existing, current]) =>
                    Effect.fail<DuplicateEventId | WrongExpectedVersion>(
                      existing.length > 0
                        ? new DuplicateEventId({ ids: existing })
                        : new WrongExpectedVersion({ stream, expected: expectedVersion, actual: current.version }),
                    ),
                )
              : Effect.fail(toStoreError(error)),
          ),
        )
        if (serialized.length > 0) yield* bump
        return result
      }),

      read: Effect.fn("EventStore.read")(function* (stream, options) {
        const from = Math.max(1, options?.from ?? 1)
        const to = options?.to
        const rows = yield* (
          to === undefined
            ? sql<EventRow>`SELECT ${columns} FROM pivot_events WHERE stream = ${stream} AND stream_version >= ${from} ORDER BY stream_version`
            : sql<EventRow>`SELECT ${columns} FROM pivot_events WHERE stream = ${stream} AND stream_version >= ${from} AND stream_version <= ${to} ORDER BY stream_version`
        ).pipe(Effect.mapError(toStoreError))
        return yield* recordedOf(rows)
      }),

      forget: Effect.fn("EventStore.forget")(function* (stream) {
        // SQLite (secure_delete is on since open): the deleted key's bytes are overwritten in their page; then the
        // WAL is copied into the database and truncated, so no earlier copy of the page is left in either file.
        const deleted = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              yield* lock
              const rows = yield* sql<{
                readonly stream: string
              }>`DELETE FROM pivot_keys WHERE stream = ${stream} RETURNING stream`
              if (options.onForget !== undefined) yield* options.onForget(sql, stream)
              return rows.length > 0
            }),
          )
          .pipe(Effect.mapError(toStoreError))
        if (isPg) return { keyDeleted: deleted, logCleared: true }
        const checkpoint = yield* sql<{ readonly busy: number | bigint }>`PRAGMA wal_checkpoint(TRUNCATE)`.pipe(
          Effect.mapError(toStoreError),
        )
        return { keyDeleted: deleted, logCleared: Number(checkpoint[0]?.busy ?? 0) === 0 }
      }),

      streamVersion: (stream) =>
        streamHead(stream).pipe(
          Effect.map((head) => head.version),
          Effect.mapError(toStoreError),
        ),
      readAll: (options) => Paging.readAll(readPage, options?.after ?? 0, options?.pageSize ?? pageSize),
      subscribe: (options) => Paging.subscribe(readPage, ticks, poll, options?.after ?? 0, pageSize),
    }
    return store
  })
