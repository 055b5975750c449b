/**
 * The `EventStore` service: append events to a stream with an expected version, read a stream, read the whole log
 * in global order, and subscribe to it. Generic over payloads (JSON); the domain's event schemas are applied on
 * read with `Upcast.decodeRecorded`.
 *
 * **Example**
 *
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { EventStore } from "@pivot/store"
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* EventStore
 *   yield* store.append("session-1", "no-stream", [{ id: "evt_1", type: "SessionStarted", version: 1, data: {} }])
 *   const events = yield* store.read("session-1")
 *   const everything = yield* Stream.runCollect(store.readAll())
 * }).pipe(Effect.provide(EventStore.layerSqlite({ filename: ".pivot/pivot.db" })))
 * ```
 */
import type { PgClient } from "@effect/sql-pg"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Reactivity from "effect/reactivity/Reactivity"
import type * as Stream from "effect/Stream"
import { SqlClient } from "effect/sql"
import type { AppendResult, ExpectedVersion, NewEvent, NewSnapshot, RecordedEvent, StoredSnapshot } from "./Event.ts"
import * as Busy from "./internal/busy.ts"
import * as Memory from "./internal/memory.ts"
import * as Migrations from "./internal/migrations.ts"
import * as Seal from "./internal/seal.ts"
import * as Sql from "./internal/sql.ts"
import * as SqliteFile from "./internal/sqliteFile.ts"
import { type AppendError, type ReadError, StoreUnavailable } from "./StoreError.ts"
import * as Sqlite from "./sqlite/SqliteClient.ts"

/** Bounds of a stream read, both inclusive stream versions (the first event has version 1). */
export interface ReadOptions {
  readonly from?: number | undefined
  readonly to?: number | undefined
}

/** Where `readAll` starts: after a global position (0 = from the beginning), and its page size. */
export interface ReadAllOptions {
  readonly after?: number | undefined
  readonly pageSize?: number | undefined
}

/** Where a subscription starts: after a global position (0 = from the beginning). */
export interface SubscribeOptions {
  readonly after?: number | undefined
}

/** The operations of an event store. */
export interface EventStoreShape {
  /**
   * Appends a batch atomically (all or nothing) if the stream's version matches `expectedVersion`. Fails with
   * `WrongExpectedVersion`, `DuplicateEventId` (an id already stored or repeated in the batch), `MalformedEvent`,
   * `StoreUnavailable` or `StoreCorrupt`. An empty batch only checks the expected version.
   */
  readonly append: (
    stream: string,
    expectedVersion: ExpectedVersion,
    events: ReadonlyArray<NewEvent>,
  ) => Effect.Effect<AppendResult, AppendError>
  /** The events of a stream in stream order, optionally between two inclusive versions; `[]` for no stream. */
  readonly read: (stream: string, options?: ReadOptions) => Effect.Effect<ReadonlyArray<RecordedEvent>, ReadError>
  /** The current version of a stream (its number of events; 0 when it does not exist). */
  readonly streamVersion: (stream: string) => Effect.Effect<number, ReadError>
  /**
   * True only when the store knows, without waiting on any I/O, that the stream has no event after `version` (the
   * memory store always knows; SQLite knows after a read of the stream when no connection has written since); false
   * when it does not know. Lets a reader skip asking for new events when there can be none (issue 23).
   */
  readonly nothingAfter?: ((stream: string, version: number) => boolean) | undefined
  /** Every event after a global position, in global order, read page by page; ends at the current head. */
  readonly readAll: (options?: ReadAllOptions) => Stream.Stream<RecordedEvent, ReadError>
  /** Catches up from a global position, then emits events as they are appended, in global order; never ends. */
  readonly subscribe: (options?: SubscribeOptions) => Stream.Stream<RecordedEvent, ReadError>
  /**
   * Crypto-shredding: deletes the stream's key, so every sealed field of its events reads as `ERASED` from now on
   * (events, versions and positions stay). A later sealed append gives the stream a new key. With a `marker`, that
   * event is appended in the same transaction (so readers and writers holding the stream's text notice the erasure).
   */
  readonly forget: (stream: string, options?: ForgetOptions) => Effect.Effect<Forgotten, ReadError>
  /** Whether the stream has a key: some of its fields are stored sealed (and `forget` has not deleted it since). */
  readonly isSealed: (stream: string) => Effect.Effect<boolean, ReadError>
  /**
   * Every event of one type, across all streams, in global order (a scan of the log: for rare questions such as
   * "which sessions were forked from this one").
   */
  readonly readType: (type: string) => Effect.Effect<ReadonlyArray<RecordedEvent>, ReadError>
  /**
   * Stores a snapshot of the stream's folded state, replacing the stream's previous one, with a checksum of its data.
   * Snapshots are an optimisation beside the events, never a source of truth: `forget` deletes them.
   */
  readonly writeSnapshot: (stream: string, snapshot: NewSnapshot) => Effect.Effect<void, ReadError>
  /** The stream's latest snapshot as stored (check it with `Snapshot.intact`), if any. */
  readonly readSnapshot: (stream: string) => Effect.Effect<StoredSnapshot | undefined, ReadError>
}

/** Options of `forget`. */
export interface ForgetOptions {
  /** An event appended to the stream atomically with the key's deletion (any expected version). */
  readonly marker?: NewEvent | undefined
  /**
   * With a `marker`: which event types hold text a forget erases. When the stream was forgotten before (it holds an
   * event of the marker's type) and nothing since is of such a type nor sealed, the forget does nothing — no key
   * deletion, no read-model drop, no marker — and reports `alreadyForgotten` (`alreadyForgotten` in `Event.ts` is
   * the rule). Without it every forget appends its marker.
   */
  readonly erasable?: ((type: string) => boolean) | undefined
}

/** What `forget` did. */
export interface Forgotten {
  /** The marker's stream version, when a marker was appended. */
  readonly version?: number | undefined
  /**
   * The forget did nothing: the stream was forgotten before and holds no text recorded since (see
   * `ForgetOptions.erasable`); no marker was appended.
   */
  readonly alreadyForgotten: boolean
  /** Whether the stream had a key (false: nothing of it was sealed, or it was forgotten before). */
  readonly keyDeleted: boolean
  /**
   * SQLite: whether the write-ahead log was copied into the database and emptied (false while another connection
   * reads an older snapshot: the deleted key may then remain in the WAL until the next checkpoint). Always true for
   * the other backends.
   */
  readonly logCleared: boolean
}

/** What a sealed field reads as once its stream's key is deleted. */
export const ERASED = Seal.ERASED

/** Options shared by every backend. */
export interface StoreOptions {
  /** Events per page for `readAll` and `subscribe`; default 1000. */
  readonly pageSize?: number | undefined
}

/** Runs once when a SQL store opens, after its own migrations (e.g. to create read-model tables). */
export type OnOpen = Sql.OnOpen

/** Runs inside every non-empty append's transaction of a SQL store; a failure rolls the append back. */
export type OnAppend = Sql.OnAppend

/** Runs inside `forget`'s transaction of a SQL store, after the key row is deleted (e.g. to drop read-model rows). */
export type OnForget = Sql.OnForget

/** Hooks that extend a SQL store inside its own connection and transactions, such as inline read models. */
export interface SqlHooks {
  /** Called once the store's schema is migrated and verified. */
  readonly onOpen?: OnOpen | undefined
  /** Called in each append's transaction with the events as recorded. */
  readonly onAppend?: OnAppend | undefined
  /** Called in `forget`'s transaction with the stream forgotten. */
  readonly onForget?: OnForget | undefined
  /**
   * SQLite only: the tables (and their migrators' records) a new, empty database gets in the same script and
   * transaction as the store's own, so that `onOpen`'s migrations find them current (ADR 0061).
   */
  readonly freshSqlite?: string | undefined
}

/** Options of `EventStore.layerSql`, the store over a `SqlClient` you provide. */
export interface SqlStoreOptions extends StoreOptions, SqlHooks {
  /** How often a caught-up subscription looks for events appended by other processes; default 100 ms. */
  readonly pollInterval?: Duration.Input | undefined
  /** Skip migrations (a read-only database); the schema is still verified. */
  readonly readonly?: boolean | undefined
}

/** Options of `EventStore.layerSqlite`: the SQLite client's options plus the store's. */
export interface SqliteStoreOptions extends Omit<Sqlite.SqliteClientConfig, "transactionMode">, StoreOptions, SqlHooks {
  /** How often a caught-up subscription looks for events appended by other processes; default 100 ms. */
  readonly pollInterval?: Duration.Input | undefined
  /** Read the whole file with `PRAGMA quick_check` before opening it (slow for big files); default false. */
  readonly integrityCheck?: boolean | undefined
  /**
   * `"full"` (default) syncs the log on every commit, so an acknowledged append survives a power cut; `"normal"`
   * survives a crash of the process (not of the machine) and appends one event at a time about 3× faster.
   */
  readonly synchronous?: "full" | "normal" | undefined
}

/** Options of `EventStore.layerPostgres`: `@effect/sql-pg`'s pool options plus the store's. */
export interface PostgresStoreOptions extends Omit<PgClient.PgPoolConfig, "url">, StoreOptions, SqlHooks {
  /** The connection URL, e.g. `postgres://user@127.0.0.1:5432/db`. */
  readonly url?: string | Redacted.Redacted | undefined
  /** The Postgres schema holding the tables (created if missing); default `public`. */
  readonly schema?: string | undefined
  /** How often a caught-up subscription re-reads in case a notification was lost; default 1 s. */
  readonly pollInterval?: Duration.Input | undefined
  /**
   * `"stream"` (default): appends to different streams run in parallel, positions are assigned after commit in
   * commit order (ADR 0012). `"store"`: every append holds the store-wide lock for its whole transaction, one at a
   * time, as before; kept to measure the difference.
   */
  readonly appendLock?: "stream" | "store" | undefined
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/

/** The page size of a new SQLite store (bytes). */
const PAGE_SIZE = 16384

/** The event store service. */
export class EventStore extends Context.Service<EventStore, EventStoreShape>()("@pivot/store/EventStore") {
  /** What a sealed field reads as once its stream's key is deleted (`forget`). */
  static readonly ERASED = Seal.ERASED

  /** An in-memory store: the reference behaviour, for tests and throwaway sessions. */
  static readonly layerMemory = (options: StoreOptions = {}): Layer.Layer<EventStore> =>
    Layer.effect(EventStore, Memory.make(options))

  /** The store over whatever effect `SqlClient` is provided (SQLite or Postgres dialect); migrates on start. */
  static readonly layerSql = (options: SqlStoreOptions = {}): Layer.Layer<EventStore, ReadError, SqlClient.SqlClient> =>
    Layer.effect(EventStore, Sql.make(options))

  /**
   * The embedded default: a SQLite file in WAL mode with a busy timeout, through pivot's `node:sqlite` client.
   * A file that is damaged or is not a pivot store fails with `StoreCorrupt` and is not written to.
   */
  static readonly layerSqlite = (options: SqliteStoreOptions): Layer.Layer<EventStore, ReadError> =>
    Layer.effect(
      EventStore,
      Effect.gen(function* () {
        const {
          pageSize,
          pollInterval,
          integrityCheck,
          synchronous,
          onOpen,
          onAppend,
          onForget,
          freshSqlite,
          ...client
        } = options
        const classify = Sql.classify(options.filename)
        const left = yield* SqliteFile.inspect(options.filename, integrityCheck ?? false)
        const empty = options.readonly !== true && SqliteFile.isEmpty(options.filename)
        // WAL is switched on only once the schema is verified: switching rewrites the header of a file we may refuse.
        const sql = yield* Effect.mapError(Sqlite.make({ ...client, disableWAL: true }), classify)
        // The file's tables checked on this connection, before anything here may write (see internal/sqliteFile.ts).
        if (left === "tables") yield* SqliteFile.checkOn(sql, options.filename, integrityCheck ?? false, classify)
        // A new file gets 16 KiB pages instead of SQLite's 4 KiB: events and window rows are JSON of a few KiB, which
        // at 4 KiB mostly spill into chains of overflow pages (a 20,000-message import: 95 MB of pages and ~0.25 s
        // more of SQLite, against 79 MB). Only a database without tables takes it; an existing one keeps its size.
        if (options.readonly !== true) yield* Effect.mapError(sql.unsafe(`PRAGMA page_size = ${PAGE_SIZE}`), classify)
        // A new file: every table at its newest migration in one script and transaction (ADR 0061), where the
        // migrators took ~70–90 ms more CPU in round trips; the migrators then find it current. Another process
        // that created the schema first wins: the script is skipped and the migrators judge what it left.
        if (empty)
          yield* Effect.mapError(
            sql.createIfEmpty(
              freshSqlite === undefined ? Migrations.freshSqlite : `${Migrations.freshSqlite}\n${freshSqlite}`,
            ),
            classify,
          )
        // Several processes opening a new file at once: the migration and the WAL switch may meet SQLITE_BUSY
        // without SQLite waiting (see internal/busy.ts); both are idempotent, so they are retried.
        const whileBusy = Busy.retryWhileBusy(client.busyTimeout ?? "5 seconds")
        const store = yield* Sql.make({
          pageSize,
          pollInterval,
          readonly: options.readonly,
          path: options.filename,
          busyTimeout: client.busyTimeout,
          onOpen,
          onAppend,
          onForget,
        }).pipe(Effect.provideService(SqlClient.SqlClient, sql), whileBusy)
        if (options.disableWAL !== true && options.readonly !== true) {
          yield* whileBusy(Effect.mapError(sql`PRAGMA journal_mode = WAL`, classify))
        }
        if (options.readonly !== true) {
          yield* Effect.mapError(
            sql.unsafe(`PRAGMA synchronous = ${synchronous === "normal" ? "NORMAL" : "FULL"}`),
            classify,
          )
        }
        return store
      }),
    ).pipe(Layer.provide(Reactivity.layer))

  /** The store on PostgreSQL through `@effect/sql-pg`, for many processes sharing sessions; LISTEN/NOTIFY wakes subscribers. */
  static readonly layerPostgres = (options: PostgresStoreOptions): Layer.Layer<EventStore, ReadError> =>
    Layer.effect(
      EventStore,
      Effect.gen(function* () {
        const {
          pageSize,
          pollInterval,
          schema = "public",
          url,
          onOpen,
          onAppend,
          onForget,
          appendLock,
          ...pool
        } = options
        if (!SCHEMA_NAME.test(schema)) {
          return yield* new StoreUnavailable({ reason: `invalid Postgres schema name ${JSON.stringify(schema)}` })
        }
        // Loaded only for Postgres: its driver's modules cost every SQLite user start-up time.
        const { PgClient } = yield* Effect.promise(() => import("@effect/sql-pg"))
        const pg = yield* PgClient.make({
          ...pool,
          ...(url === undefined ? {} : { url: typeof url === "string" ? Redacted.make(url) : url }),
          startupParameters: { ...pool.startupParameters, search_path: schema },
        }).pipe(Effect.mapError(Sql.classify(undefined)))
        yield* pg`CREATE SCHEMA IF NOT EXISTS ${pg(schema)}`.pipe(
          // Two processes creating it at once: the loser sees a unique violation, and the schema exists.
          Effect.catchIf(
            (error) => error.reason._tag === "UniqueViolation",
            () => Effect.void,
          ),
          Effect.mapError(Sql.classify(undefined)),
        )
        const channel = `pivot_events_${schema}`
        const notifier: Sql.Notifier = {
          publish: (position) => Effect.asVoid(pg`SELECT pg_notify(${channel}, ${String(position)})`),
          listen: (onNews) =>
            Effect.flatMap(pg.listen(channel), (queue) => Effect.forever(Effect.andThen(Queue.take(queue), onNews))),
        }
        return yield* Sql.make({
          pageSize,
          pollInterval: pollInterval ?? "1 second",
          notifier,
          notifyChannel: channel,
          appendLock,
          onOpen,
          onAppend,
          onForget,
        }).pipe(Effect.provideService(SqlClient.SqlClient, pg))
      }),
    ).pipe(Layer.provide(Reactivity.layer))
}
