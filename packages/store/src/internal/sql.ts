// The event store over any effect `SqlClient` (SQLite through pivot's node:sqlite client, Postgres through
// @effect/sql-pg). Dialect differences are confined to the append's locking and numbering (Postgres assigns positions
// after commit, ADR 0012) and the notification hooks.

import { Traced } from "@pivot/core"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { type Migrator, SqlClient, type SqlError } from "effect/sql"
import {
  type AppendResult,
  alreadyForgotten,
  expectedVersionMatches,
  prepareAppend,
  type RecordedEvent,
} from "../Event.ts"
import type { EventStoreShape } from "../EventStore.ts"
import * as Snapshot from "../Snapshot.ts"
import {
  DuplicateEventId,
  type MalformedEvent,
  StoreCorrupt,
  StoreUnavailable,
  WrongExpectedVersion,
} from "../StoreError.ts"
import { busySchedule, changeStampOf, type Stamp, sqliteErrorCode } from "../sqlite/SqliteClient.ts"
import * as Migrations from "./migrations.ts"
import * as Paging from "./paging.ts"
import * as Seal from "./seal.ts"

/** How appends are announced to subscribers in other processes (Postgres LISTEN/NOTIFY). */
export interface Notifier {
  /**
   * Announces new events. Postgres stores built by `layerPostgres` announce from the sequencer itself (the
   * `notifyChannel` option); otherwise it runs after positions are assigned (on Postgres) or inside the append
   * transaction, so the announcement is delivered only if the events are there to read.
   */
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

/**
 * Postgres: the store-wide lock (one per schema), held only while positions are assigned (ADR 0012), and by an append
 * made inside a caller's transaction.
 */
export const storeLock = (sql: SqlClient.SqlClient) =>
  Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.pivot_events'))`)

/**
 * Postgres: the lock of one stream (two-key advisory locks, a space apart from the store-wide one), held by an
 * append's transaction for its version check, by `forget` and by a read model catching up with the stream.
 */
export const streamLock = (sql: SqlClient.SqlClient, stream: string) =>
  Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.pivot_events'), hashtext(${stream}))`)

interface Numbered {
  readonly seq: number | string
  readonly position: number | string
}

/** The largest position given to the rows `seqs` (0 when none of them was among `numbered`). */
const positionOf = (seqs: ReadonlyArray<number>, numbered: ReadonlyArray<Numbered>): number => {
  if (numbered.length === 0) return 0
  const mine = new Set(seqs)
  let last = 0
  for (const row of numbered) if (mine.has(Number(row.seq))) last = Math.max(last, Number(row.position))
  return last
}

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
  /**
   * SQLite: how long `forget` keeps trying to empty the write-ahead log while other connections use it (the busy
   * timeout; the wait suspends the fiber, ADR 0014); default 5 s.
   */
  readonly busyTimeout?: Duration.Input | undefined
  readonly notifier?: Notifier | undefined
  /** Postgres: the LISTEN channel the sequencer notifies when it assigns positions (the notifier's channel). */
  readonly notifyChannel?: string | undefined
  /**
   * Postgres: `"stream"` (default) locks only the appended stream and numbers the rows after commit (ADR 0012);
   * `"store"` holds the store-wide lock for the whole append transaction and numbers the rows inside it, so appends
   * run one at a time as before ADR 0012 (kept to measure the difference, `npm run bench:pg-scale`).
   */
  readonly appendLock?: "stream" | "store" | undefined
  readonly onOpen?: OnOpen | undefined
  readonly onAppend?: OnAppend | undefined
  readonly onForget?: OnForget | undefined
}

interface EventRow {
  readonly position: number | bigint | string | null
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
    // The newest migration applied, one cheap read; failing (no table yet) is judged below, as before.
    const appliedVersion = Migrations.newestApplied(sql, Migrations.migrationsTable)
    const seen = yield* Effect.result(appliedVersion)
    // A store already at this pivot's schema (every restart but the first) skips the migrator, whose write
    // transaction would wait for any other process's writer (issue 32): the migrations commit in one transaction,
    // so seeing the newest one applied means they all are.
    const current = Result.isSuccess(seen) && seen.success === Migrations.latestMigration
    if (options.readonly !== true && !current) {
      // An events table without pivot's columns is refused before any migration writes to the database.
      const probe = yield* Effect.result(sql`SELECT ${columns} FROM pivot_events WHERE 1 = 0`)
      if (Result.isFailure(probe) && /no such column|column .* does not exist/i.test(probe.failure.message)) {
        return yield* corrupt(`pivot_events does not have pivot's columns (${probe.failure.message})`)
      }
      yield* Effect.mapError(Migrations.run, toStoreError)
    }

    // A database someone else's program made, or a newer pivot's, is refused rather than written to.
    const applied =
      current && Result.isSuccess(seen)
        ? seen.success
        : yield* appliedVersion.pipe(
            // Only a missing table says "not pivot's"; a refused connection or a denied read is the store's availability.
            Effect.mapError((error) =>
              error.reason._tag === "SqlSyntaxError" || error.reason._tag === "UnknownError"
                ? corrupt("not a pivot event store (no migrations table)")
                : toStoreError(error),
            ),
          )
    const version = applied
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
    // Postgres (ADR 0012): an append locks only its stream, for the version check, and inserts its rows without
    // positions; once it has committed, a short sequencing transaction under the store-wide lock numbers every
    // committed unnumbered row in insert order. Positions are thus handed out in commit order, and a reader that has
    // seen position p never later finds a smaller one appear. SQLite's BEGIN IMMEDIATE already gives this.
    const globalLock = isPg ? storeLock(sql) : Effect.void
    const lockStream = (stream: string) => (isPg ? streamLock(sql, stream) : Effect.void)

    /**
     * Postgres: numbers every committed row without a position (and the caller's own uncommitted rows when it runs
     * inside the caller's transaction), in insert order, after the largest position so far, and announces the news
     * (`pivot_sequence`, migration 4: one statement, so the store-wide lock is never held across a round trip).
     * `wait: false` gives up at once when another sequencer holds the lock (it is numbering the same rows).
     */
    const sequence = (wait: boolean) =>
      Effect.gen(function* () {
        const rows = yield* sql<{
          readonly numbered_seq: number | string
          readonly numbered_position: number | string
        }>`SELECT numbered_seq, numbered_position FROM pivot_sequence(${wait}, ${options.notifyChannel ?? null})`
        const numbered = rows.map((row): Numbered => ({ seq: row.numbered_seq, position: row.numbered_position }))
        // A notifier without a channel the function can notify (a caller's own `layerSql`): announced from here.
        if (numbered.length > 0 && options.notifier !== undefined && options.notifyChannel === undefined)
          yield* options.notifier.publish(numbered.reduce((max, row) => Math.max(max, Number(row.position)), 0))
        return numbered
      })

    const sequenceNow = sequence(true)

    // Group commit within the process: an append that has committed joins the next sequencing call instead of making
    // its own. At most one call runs at a time; the appends that commit while it runs share the one after it (which
    // starts after they committed, so it covers them). Each gets the positions that call assigned, by `seq`.
    type Round = Deferred.Deferred<ReadonlyMap<number, number>, SqlError.SqlError>
    const storeScope = yield* Scope.Scope
    let running: Round | undefined
    let queued: Round | undefined
    const startRound = (round: Round): Effect.Effect<void> =>
      Effect.asVoid(
        Effect.forkIn(
          Effect.gen(function* () {
            const exit = yield* Effect.exit(
              Effect.map(sequenceNow, (rows) => new Map(rows.map((row) => [Number(row.seq), Number(row.position)]))),
            )
            yield* Deferred.done(round, exit)
            running = queued
            queued = undefined
            if (running !== undefined) yield* startRound(running)
          }),
          storeScope,
        ),
      )
    const sequenced: Effect.Effect<ReadonlyMap<number, number>, SqlError.SqlError> = Effect.suspend(() => {
      if (running === undefined) {
        const round: Round = Deferred.makeUnsafe()
        running = round
        return Effect.andThen(startRound(round), Deferred.await(round))
      }
      queued ??= Deferred.makeUnsafe()
      return Deferred.await(queued)
    })

    /** Readers (Postgres): rows a crashed writer committed but never numbered get numbered, if nobody else is at it. */
    const sequencePending = isPg
      ? Effect.gen(function* () {
          const pending = yield* sql<{
            readonly seq: number | string
          }>`SELECT seq FROM pivot_events WHERE position IS NULL ORDER BY seq LIMIT 1`
          if (pending.length > 0) yield* sequence(false)
        })
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

    // Rows without a position (Postgres, between an append's commit and its numbering) are not read yet.
    const readPage: Paging.ReadPage = (after, limit) =>
      Effect.andThen(
        sequencePending,
        sql<EventRow>`SELECT ${columns} FROM pivot_events WHERE position > ${after} ORDER BY position LIMIT ${limit}`,
      ).pipe(Effect.mapError(toStoreError), Effect.flatMap(recordedOf))

    /** The stream's key, created (inside the caller's transaction) when it has none. */
    const keyFor = (stream: string, at: number) =>
      Effect.gen(function* () {
        const existing = (yield* keysOf(sql, [stream])).get(stream)
        if (existing !== undefined) return existing
        const key = Seal.newKey()
        yield* sql`INSERT INTO pivot_keys ${sql.insert({ stream, key_id: key.id, key: Seal.encodeKey(key.key), created_at: at })}`
        return key
      })

    /** The stream's version and last position (null on Postgres while its last append is not numbered yet). */
    const streamHead = (stream: string) =>
      Effect.map(
        sql<{
          readonly stream_version: number | string
          readonly position: number | string | null
        }>`SELECT stream_version, position FROM pivot_events WHERE stream = ${stream} ORDER BY stream_version DESC LIMIT 1`,
        (rows) =>
          rows[0] === undefined
            ? { version: 0, position: 0 as number | null }
            : {
                version: Number(rows[0].stream_version),
                position: rows[0].position === null ? null : Number(rows[0].position),
              },
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

    const idsAndHead = (ids: ReadonlyArray<string>, stream: string) =>
      Effect.map(
        sql<{
          readonly event_id: string | null
          readonly stream_version: number | string | null
          readonly position: number | string | null
        }>`SELECT event_id, NULL AS stream_version, NULL AS position FROM pivot_events WHERE ${sql.in("event_id", ids)} UNION ALL (SELECT NULL, stream_version, position FROM pivot_events WHERE stream = ${stream} ORDER BY stream_version DESC LIMIT 1)`,
        (rows) => {
          const existing: Array<string> = []
          let current = { version: 0, position: 0 as number | null }
          for (const row of rows) {
            if (row.event_id !== null) existing.push(row.event_id)
            else
              current = {
                version: Number(row.stream_version),
                position: row.position === null ? null : Number(row.position),
              }
          }
          return { existing, current }
        },
      )

    // SQLite: what each stream's latest whole-tail read found (no event after `after`) and the connection's change
    // stamp taken before it; while the stamp is unchanged nothing can have been appended since (issue 23).
    const changeStamp = isPg ? undefined : changeStampOf(sql)
    const tails = new Map<string, { readonly after: number; readonly stamp: Stamp }>()
    const nothingAfter = (stream: string, version: number): boolean => {
      const tail = tails.get(stream)
      if (tail === undefined || version < tail.after) return false
      const now = changeStamp?.()
      return now !== undefined && now.writes === tail.stamp.writes && now.data === tail.stamp.data
    }
    const remember = (stream: string, after: number, stamp: Stamp) => {
      tails.delete(stream)
      tails.set(stream, { after, stamp })
      if (tails.size > 10_000) tails.delete(tails.keys().next().value!)
    }

    const store: EventStoreShape = {
      ...(changeStamp === undefined ? {} : { nothingAfter }),
      append: Traced.fn("EventStore.append")(function* (stream, expectedVersion, events) {
        // The hook gets the JSON text of the payloads' object-valued fields, as serialised here (see `OnAppend`).
        const fields = options.onAppend === undefined ? undefined : new Map<object, string>()
        const batch = prepareAppend(stream, expectedVersion, events, fields)
        if (Result.isFailure(batch)) return yield* batch.failure
        const serialized = batch.success
        // Whole milliseconds: the column is an INTEGER, and a clock may answer fractions (a test clock moved by
        // jittered sleeps).
        const recordedAt = Math.floor(yield* Clock.currentTimeMillis)
        const ids = serialized.map((event) => event.id)

        const appendInOne = (stored: ReadonlyArray<string>) =>
          Effect.gen(function* () {
            const rows = serialized.map((event, i) => ({
              id: event.id,
              type: event.type,
              version: event.version,
              data: stored[i]!,
              metadata: event.metadata,
            }))
            const code =
              expectedVersion === "any"
                ? -1
                : expectedVersion === "no-stream"
                  ? -2
                  : expectedVersion === "stream-exists"
                    ? -3
                    : expectedVersion
            const [row] = yield* sql<{
              readonly outcome: string
              readonly existing: ReadonlyArray<string> | null
              readonly head_version: number | string | null
              readonly head_position: number | string | null
              readonly seqs: ReadonlyArray<number | string> | null
            }>`SELECT outcome, existing, head_version, head_position, seqs FROM pivot_append(${stream}, ${code}, ${JSON.stringify(rows)}::json, ${recordedAt})`
            if (row?.outcome === "duplicate") return yield* new DuplicateEventId({ ids: [...(row.existing ?? [])] })
            const version = Number(row?.head_version ?? 0)
            if (row?.outcome !== "ok") {
              return yield* new WrongExpectedVersion({ stream, expected: expectedVersion, actual: version })
            }
            return {
              streamVersion: version,
              position: row.head_position === null ? null : Number(row.head_position),
              seqs: (row.seqs ?? []).map(Number),
              stamp: undefined as Stamp | undefined,
            }
          })

        const write = (nested: boolean) =>
          Effect.gen(function* () {
            if (nested) yield* globalLock
            yield* lockStream(stream)
            // Postgres, a batch of up to CHUNK events: the duplicate check and the stream's head in one round trip.
            const { existing, current } =
              isPg && ids.length > 0 && ids.length <= CHUNK
                ? yield* idsAndHead(ids, stream)
                : {
                    existing: ids.length > 0 ? yield* existingIds(ids) : [],
                    current: yield* streamHead(stream),
                  }
            if (existing.length > 0) return yield* new DuplicateEventId({ ids: existing })
            if (!expectedVersionMatches(expectedVersion, current.version)) {
              return yield* new WrongExpectedVersion({ stream, expected: expectedVersion, actual: current.version })
            }
            if (serialized.length === 0) {
              return {
                streamVersion: current.version,
                position: current.position,
                seqs: [] as Array<number>,
                stamp: undefined as Stamp | undefined,
              }
            }
            let position = 0
            let streamVersion = current.version
            const positions = new Map<number, number>()
            const seqs: Array<number> = []
            const versionOf = new Map<number, number>()
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
              const values = sql.insert(rows as [(typeof rows)[0], ...typeof rows])
              if (isPg) {
                // No position yet: it is assigned once the row is committed (or below, inside a caller's transaction).
                const inserted = yield* sql<{
                  readonly seq: number | string
                  readonly stream_version: number | string
                }>`INSERT INTO pivot_events ${values} RETURNING seq, stream_version`
                for (const row of inserted) {
                  seqs.push(Number(row.seq))
                  versionOf.set(Number(row.seq), Number(row.stream_version))
                }
              } else {
                const inserted = yield* sql<{
                  readonly position: number | string
                  readonly stream_version: number | string
                }>`INSERT INTO pivot_events ${values} RETURNING position, stream_version`
                for (const row of inserted) {
                  position = Math.max(position, Number(row.position))
                  positions.set(Number(row.stream_version), Number(row.position))
                }
              }
            }
            if (nested) {
              const numbered = yield* sequence(true)
              position = positionOf(seqs, numbered)
              for (const row of numbered) {
                const version = versionOf.get(Number(row.seq))
                if (version !== undefined) positions.set(version, Number(row.position))
              }
            }
            if (options.onAppend !== undefined) {
              // The hook sees what a reader will read, except that on Postgres the positions are not assigned yet
              // (they are 0) unless the append runs inside a caller's transaction. `serializeBatch` admitted only plain JSON values (no undefined,
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
            if (options.notifier !== undefined && !isPg) yield* options.notifier.publish(position)
            // SQLite: the stamp as this transaction's last statement leaves it; its COMMIT is one more write.
            return { streamVersion, position, seqs: nested ? [] : seqs, stamp: changeStamp?.() }
          })

        // Postgres inside a caller's transaction (e.g. a bulk import): the rows cannot be numbered after a commit this
        // append does not control, so it numbers them in the transaction and holds the store-wide lock until the
        // caller commits (the old behaviour). The store-wide lock is taken before the stream's, as every holder of
        // both does.
        const nested =
          isPg && (options.appendLock === "store" || Option.isSome(yield* Effect.serviceOption(sql.transactionService)))
        // Postgres, the common case (no inline hook, no sealed field, not inside a caller's transaction): the whole
        // append transaction is one statement, `pivot_append` (migration 4).
        const plain =
          isPg && !nested && options.onAppend === undefined
            ? Result.getOrUndefined(
                yield* Effect.result(Seal.storedData(stream, serialized, Effect.fail("needs a key" as const))),
              )
            : undefined
        const transaction = plain === undefined ? sql.withTransaction(write(nested)) : appendInOne(plain)
        const result = yield* transaction.pipe(
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
        let position = result.position
        if (result.seqs.length > 0) {
          // Committed: number the rows (with whatever else is waiting), or read back the position another process's
          // sequencer gave them meanwhile (rows committed together are numbered together, so all or none are here).
          const numbered = yield* Effect.mapError(sequenced, toStoreError)
          position = 0
          for (const seq of result.seqs) position = Math.max(position, numbered.get(seq) ?? 0)
          if (position === 0) {
            const last = Math.max(...result.seqs)
            const rows = yield* sql<{
              readonly position: number | string | null
            }>`SELECT position FROM pivot_events WHERE seq = ${last}`.pipe(Effect.mapError(toStoreError))
            position = Number(rows[0]?.position ?? 0)
          }
        } else if (position === null) {
          // An empty batch on a stream whose last append is not numbered yet (its writer may have died).
          yield* Effect.mapError(sequenceNow, toStoreError)
          position = (yield* Effect.mapError(streamHead(stream), toStoreError)).position
        }
        if (serialized.length > 0) yield* bump
        // Nothing after the appended events while exactly the COMMIT has run since the stamp: no write came between.
        const stamp = result.stamp
        if (stamp !== undefined) remember(stream, result.streamVersion, { writes: stamp.writes + 1, data: stamp.data })
        return { streamVersion: result.streamVersion, position: position ?? 0 } satisfies AppendResult
      }),

      read: Traced.fn("EventStore.read")(function* (stream, options) {
        const from = Math.max(1, options?.from ?? 1)
        const to = options?.to
        const select =
          to === undefined
            ? sql<EventRow>`SELECT ${columns} FROM pivot_events WHERE stream = ${stream} AND stream_version >= ${from} ORDER BY stream_version`
            : sql<EventRow>`SELECT ${columns} FROM pivot_events WHERE stream = ${stream} AND stream_version >= ${from} AND stream_version <= ${to} ORDER BY stream_version`
        // Taken before the read: a write after it changes the stamp, so the tail recorded below is never trusted then.
        const stamp = to === undefined ? changeStamp?.() : undefined
        let rows = yield* Effect.mapError(select, toStoreError)
        // Postgres: rows committed but not numbered yet (their writer is about to, or died first) are numbered
        // before they are handed out, so a stream read always carries real positions.
        if (isPg && rows.some((row) => row.position === null)) {
          yield* Effect.mapError(sequenceNow, toStoreError)
          rows = yield* Effect.mapError(select, toStoreError)
        }
        const recorded = yield* recordedOf(rows)
        if (stamp !== undefined)
          remember(stream, rows.length > 0 ? Number(rows.at(-1)!.stream_version) : from - 1, stamp)
        return recorded
      }),

      forget: Traced.fn("EventStore.forget")(function* (stream, forgetOptions) {
        // SQLite (secure_delete is on since open): the deleted key's bytes are overwritten in their page; then the
        // WAL is copied into the database and truncated, so no earlier copy of the page is left in either file.
        const marker = forgetOptions?.marker
        const deleted = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              // The marker's append (nested) takes the store-wide lock on Postgres: taken first, as by every holder
              // of both.
              if (marker !== undefined) yield* globalLock
              yield* lockStream(stream)
              // A repeated forget with nothing new to erase: no write at all (the checkpoint below still runs, so
              // running it again after `logCleared: false` empties the WAL).
              const erasable = forgetOptions?.erasable
              if (marker !== undefined && erasable !== undefined) {
                const last = yield* sql<{
                  readonly at: number | bigint | string | null
                }>`SELECT MAX(stream_version) AS at FROM pivot_events WHERE stream = ${stream} AND type = ${marker.type}`
                const at = last[0]?.at
                const since =
                  at === null || at === undefined
                    ? undefined
                    : (yield* sql<{
                        readonly type: string
                      }>`SELECT type FROM pivot_events WHERE stream = ${stream} AND stream_version > ${Number(at)}`).map(
                        (row) => row.type,
                      )
                const keyed = yield* sql`SELECT 1 AS one FROM pivot_keys WHERE stream = ${stream}`
                if (alreadyForgotten(since, keyed.length > 0, erasable))
                  return { deleted: false, version: undefined, already: true }
              }
              const rows = yield* sql<{
                readonly stream: string
              }>`DELETE FROM pivot_keys WHERE stream = ${stream} RETURNING stream`
              yield* sql`DELETE FROM pivot_snapshots WHERE stream = ${stream}`
              if (options.onForget !== undefined) yield* options.onForget(sql, stream)
              // In the same transaction as the key's deletion: no reader sees the one without the other, and a
              // writer that read the stream before gets a version conflict instead of writing what it read back.
              const version =
                marker === undefined ? undefined : (yield* store.append(stream, "any", [marker])).streamVersion
              return { deleted: rows.length > 0, version, already: false }
            }),
          )
          .pipe(
            Effect.catchTag("SqlError", (error) => Effect.fail(toStoreError(error))),
            // The marker is the caller's own event with a fresh id, appended at any version: these are defects.
            Effect.catchTags({
              DuplicateEventId: (error) => Effect.die(error),
              MalformedEvent: (error) => Effect.die(error),
              WrongExpectedVersion: (error) => Effect.die(error),
            }),
          )
        const marked = deleted.version === undefined ? {} : { version: deleted.version }
        if (isPg) return { keyDeleted: deleted.deleted, logCleared: true, alreadyForgotten: deleted.already, ...marked }
        // Without a busy handler (ADR 0014) the checkpoint reports `busy` at once while another connection reads an
        // older snapshot or writes: try again on the schedule, within the busy timeout.
        const checkpoint = sql<{ readonly busy: number | bigint }>`PRAGMA wal_checkpoint(TRUNCATE)`.pipe(
          Effect.mapError(toStoreError),
          Effect.flatMap((rows) => (Number(rows[0]?.busy ?? 0) === 0 ? Effect.void : Effect.fail("busy" as const))),
        )
        const logCleared = yield* checkpoint.pipe(
          Effect.retry({
            schedule: busySchedule(options.busyTimeout ?? Duration.seconds(5)),
            while: (error) => error === "busy",
          }),
          Effect.as(true),
          Effect.catchIf(
            (error) => error === "busy",
            () => Effect.succeed(false),
          ),
        )
        return { keyDeleted: deleted.deleted, logCleared, alreadyForgotten: deleted.already, ...marked }
      }),

      streamVersion: (stream) =>
        streamHead(stream).pipe(
          Effect.map((head) => head.version),
          Effect.mapError(toStoreError),
        ),
      writeSnapshot: (stream, snapshot) =>
        Effect.gen(function* () {
          const row = {
            stream,
            stream_version: snapshot.version,
            format: snapshot.format,
            checksum: Snapshot.checksum(snapshot.data),
            data: snapshot.data,
            recorded_at: yield* Clock.currentTimeMillis,
          }
          const upsert = sql`INSERT INTO pivot_snapshots ${sql.insert(row)} ON CONFLICT (stream) DO UPDATE SET stream_version = excluded.stream_version, format = excluded.format, checksum = excluded.checksum, data = excluded.data, recorded_at = excluded.recorded_at`
          const unlessAfter = snapshot.unlessAfter
          if (unlessAfter === undefined) return yield* upsert
          // Under the stream's lock (Postgres; SQLite's `BEGIN IMMEDIATE` serialises every writer), as `forget` takes
          // it: the marker is either committed and seen here, or its transaction deletes this snapshot after.
          yield* sql.withTransaction(
            Effect.gen(function* () {
              yield* lockStream(stream)
              const later = yield* sql<{
                readonly one: number
              }>`SELECT 1 AS one FROM pivot_events WHERE stream = ${stream} AND stream_version > ${snapshot.version} AND type = ${unlessAfter} LIMIT 1`
              if (later.length === 0) yield* upsert
            }),
          )
        }).pipe(Effect.mapError(toStoreError)),
      readSnapshot: (stream) =>
        sql<{
          readonly stream_version: number | string
          readonly format: string
          readonly checksum: string
          readonly data: string
          readonly recorded_at: number | string
        }>`SELECT stream_version, format, checksum, data, recorded_at FROM pivot_snapshots WHERE stream = ${stream}`.pipe(
          Effect.map((rows) => {
            const row = rows[0]
            return row === undefined
              ? undefined
              : {
                  stream,
                  version: Number(row.stream_version),
                  format: row.format,
                  checksum: row.checksum,
                  data: row.data,
                  recordedAt: Number(row.recorded_at),
                }
          }),
          Effect.mapError(toStoreError),
        ),
      isSealed: (stream) =>
        sql<{ readonly one: number }>`SELECT 1 AS one FROM pivot_keys WHERE stream = ${stream}`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.mapError(toStoreError),
        ),
      readType: (type) =>
        Effect.andThen(
          sequencePending,
          sql<EventRow>`SELECT ${columns} FROM pivot_events WHERE type = ${type} AND position IS NOT NULL ORDER BY position`,
        ).pipe(Effect.mapError(toStoreError), Effect.flatMap(recordedOf)),
      readAll: (options) => Paging.readAll(readPage, options?.after ?? 0, options?.pageSize ?? pageSize),
      subscribe: (options) => Paging.subscribe(readPage, ticks, poll, options?.after ?? 0, pageSize),
    }
    return store
  })
