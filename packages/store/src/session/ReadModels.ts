/**
 * The read side in SQL: core's projections of a session kept as tables next to the event log, on SQLite or
 * PostgreSQL, through the store's own `SqlClient`.
 *
 * - `window`: one row per message the model sees, in order (the stored message as JSON);
 * - `usage`: one row per session; `compactions`: one row per compaction; `pruned`: one row per pruned output;
 * - `audit`: one row per (message, event) pair: the events each message came from;
 * - `recall`: one row per recallable document (a pruned output, a finished summary, each part of a message behind a
 *   pivot, with the pivot's summary id) with its text, searched in full text by `context_recall`: an FTS5 table on
 *   SQLite, a `tsvector` GIN index on PostgreSQL;
 * - `timeline`: one row per bucket of 200 stream versions (counts, the steps' lowest, highest and newest context, the
 *   marks): what the viewer's session page draws first (ADR 0057), read at the head by `timeline`.
 *
 * Each is an inline projection in the shape users register theirs (`Projections.Definition`), one file each under
 * `../readmodels/` (`window.ts`, `usage.ts`, `compactions.ts`, `prunes.ts`, `audit.ts`, `recall.ts`, `timeline.ts`),
 * run by the one inline projector (`../readmodels/projector.ts`) that runs users' inline projections too (ADR 0018).
 * This module is their service (the queries) and the store layers that install the projector.
 *
 * They are kept inline: the store's `onAppend` hook folds the new events into each projection inside the append's
 * transaction and writes only the rows that changed, so a committed event and its read models are never apart. Each
 * read model has a checkpoint per session (its name, projection version, stream version and position). A read first
 * catches up with the log if its checkpoint is behind (events appended by a store without the hook) or its
 * projection version changed (a bump forces a rebuild), and `rebuild` replays the log at any time. Rebuilt == inline
 * == the pure fold: the property the tests check.
 *
 * **Example**
 *
 * ```ts
 * const program = Effect.gen(function* () {
 *   const readModels = yield* ReadModels.ReadModels
 *   const window = yield* readModels.window("ses_1") // the stored messages the next model call sees
 * }).pipe(Effect.provide(ReadModels.layerSqlite({ filename: ".pivot/pivot.db" })))
 * ```
 */
import type { CompactionHistory, Message, PruneIndex, Recall, Usage } from "@pivot/core"
import { Events } from "@pivot/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqlClient, type SqlError } from "effect/sql"
import {
  EventStore,
  type PostgresStoreOptions,
  type SqlHooks,
  type SqliteStoreOptions,
  type SqlStoreOptions,
} from "../EventStore.ts"
import { classify } from "../internal/sql.ts"
import * as Projections from "../projections/Projections.ts"
import type { AuditEntry } from "../readmodels/audit.ts"
import * as audit from "../readmodels/audit.ts"
import { models } from "../readmodels/builtIns.ts"
import * as compactions from "../readmodels/compactions.ts"
import * as ledger from "../readmodels/ledger.ts"
import { makeProjector, type Options } from "../readmodels/projector.ts"
import * as prunes from "../readmodels/prunes.ts"
import type { Sql } from "../readmodels/ReadModel.ts"
import * as recall from "../readmodels/recall.ts"
import { status as builtInStatus } from "../readmodels/status.ts"
import {
  checkpointsOf,
  freshSqlite,
  hasReadModels,
  headOf,
  isCurrent,
  lock,
  migrate,
  readRecorded,
  type Tables,
  tablesOf,
} from "../readmodels/tables.ts"
import * as timeline from "../readmodels/timeline.ts"
import * as usage from "../readmodels/usage.ts"
import type { Verified } from "../readmodels/verify.ts"
import * as window from "../readmodels/window.ts"
import { type ReadError, StoreUnavailable } from "../StoreError.ts"
import { type UndecodableEvent, UnknownSession } from "./SessionError.ts"
import * as SessionLog from "./SessionLog.ts"

// The read models themselves live in `../readmodels/` (one file each); this module is their service and layers.
export type { AuditEntry } from "../readmodels/audit.ts"
export { models as builtIns, names } from "../readmodels/builtIns.ts"
export * as ledger from "../readmodels/ledger.ts"
export type { Options } from "../readmodels/projector.ts"
export type { ReadModel } from "../readmodels/ReadModel.ts"
export { projection as recallProjection } from "../readmodels/recall.ts"
export { evolveStates, foldStates, initialStates, type States } from "../readmodels/States.ts"
export {
  type SnapshotOwner,
  snapshotFormat,
  snapshotKey,
  snapshotOf,
  statesOfSnapshot,
} from "../readmodels/snapshot.ts"
export { type Checkpoint, migrate, type Tables } from "../readmodels/tables.ts"
export * as Timeline from "../readmodels/timeline.ts"

/** A session's timeline rows and compactions as stored, at the stream version (and position) they stand for. */
export interface StoredTimeline {
  readonly head: number
  readonly position: number
  readonly buckets: ReadonlyArray<timeline.Bucket>
  readonly compactions: ReadonlyArray<CompactionHistory.Entry>
}
export type { Verified } from "../readmodels/verify.ts"

/** The read models' options with users' projections (see `Projections.layerSqlite`). */
export interface ProjectedOptions extends Options {
  /** Your projections, kept beside the built-in read models (inline or async). */
  readonly projections?: ReadonlyArray<Projections.AnyDefinition> | undefined
  /** The options of the projections' background work. */
  readonly projector?: Omit<Projections.Options, "projections"> | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// The service

/** Why a read-model query failed. */
export type ReadModelError = ReadError | UndecodableEvent | UnknownSession

/** The read side's queries. Each first brings the session's read models up to date with its log. */
export interface ReadModelsShape {
  /** Catches the session's read models up with its log (a no-op when they are); answers its stream version. */
  readonly sync: (sessionId: string) => Effect.Effect<number, ReadModelError>
  /** The stored messages the next model call sees, in order. */
  readonly window: (sessionId: string) => Effect.Effect<ReadonlyArray<Message.Message>, ReadModelError>
  /** Context usage as folded from the log (turn it into tokens and a level with `Usage.report`). */
  readonly usage: (sessionId: string) => Effect.Effect<Usage.State, ReadModelError>
  /** Every compaction, oldest first. */
  readonly compactions: (sessionId: string) => Effect.Effect<ReadonlyArray<CompactionHistory.Entry>, ReadModelError>
  /** Every pruned tool output, oldest prune first, and the tokens they freed. */
  readonly pruned: (sessionId: string) => Effect.Effect<PruneIndex.State, ReadModelError>
  /** Each window message with the ids of the events it came from. */
  readonly audit: (sessionId: string) => Effect.Effect<ReadonlyArray<AuditEntry>, ReadModelError>
  /**
   * The stream version to start the window fold from to get the window at `version`: where the oldest message kept
   * by the latest pivot at or before `version` was added (1 when there is none). See `Replay.windowAt`.
   */
  readonly origin: (sessionId: string, version: number) => Effect.Effect<number, ReadModelError>
  /**
   * The session's recallable documents (`Recall.documents`) matching any word of `query`, best first (FTS5
   * `bm25` on SQLite, `ts_rank_cd` normalised by length on PostgreSQL; ties newest id first), at most `limit`.
   */
  readonly recall: (
    sessionId: string,
    query: string,
    limit: number,
  ) => Effect.Effect<ReadonlyArray<Recall.Document>, ReadModelError>
  /** Replays the log into the read models of one session, or of every session; answers how many were rebuilt. */
  readonly rebuild: (target: string | { readonly all: true }) => Effect.Effect<number, ReadModelError>
  /** Every session in the store with its stream version. */
  readonly sessions: Effect.Effect<ReadonlyArray<{ readonly sessionId: string; readonly version: number }>, ReadError>
  /**
   * Compares the session's stored read models (and their snapshot) with a fold of its whole log, writing nothing:
   * what `pivot check` reports. A difference means a rebuild would change them.
   */
  readonly verify: (sessionId: string) => Effect.Effect<Verified, ReadModelError>
  /** The raw rows and checkpoints of a session, as stored (no catching up). */
  /**
   * The timeline read model's rows and the compaction history, as stored, when both stand at the session's head
   * (ADR 0057); `undefined` when they do not (a store whose rows are behind, of another version, or without the table:
   * the caller folds the log). Never catches up, so a read-only reader can ask: nothing is written.
   */
  readonly timeline: (sessionId: string) => Effect.Effect<StoredTimeline | undefined, ReadError>
  readonly tables: (sessionId: string) => Effect.Effect<Tables, ReadError>
  /**
   * Runs `effect` (appends through the same store) as ONE transaction, all or nothing, with the read models of the
   * sessions it appends to folded in memory and written once at the end: how a large import appends in batches.
   */
  readonly bulk: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ReadError, R>
}

/**
 * Why the read models of a read-only store cannot answer when the database has none of their tables (a store written
 * by the runtime alone, opened read-only): the reason of the `StoreUnavailable` their queries fail with.
 */
export const NO_READ_MODELS = "the database has no read-model tables, and a read-only connection does not create them"

const TIMELINE = timeline.model.projection
const COMPACTIONS = compactions.model.projection

/**
 * The timeline rows at the head, read without a transaction: where the two checkpoints stand is read before and after
 * the rows (a writer between them moves them: read again, at most three times). A missing table (a store migrated
 * before the timeline existed, opened read-only) reads as no rows.
 */
const storedTimeline = (sql: Sql, sessionId: string): Effect.Effect<StoredTimeline | undefined, ReadError> =>
  Effect.gen(function* () {
    const stream = Events.streamName(sessionId)
    const at = Effect.map(checkpointsOf(sql, sessionId), (cps) => {
      const t = cps.get(TIMELINE.name)
      const c = cps.get(COMPACTIONS.name)
      return t !== undefined &&
        c !== undefined &&
        t.projectionVersion === TIMELINE.version &&
        c.projectionVersion === COMPACTIONS.version &&
        t.streamVersion === c.streamVersion
        ? t
        : undefined
    })
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = yield* at
      if (before === undefined || before.streamVersion !== (yield* headOf(sql, stream))) return undefined
      const buckets = yield* timeline.read(sql, sessionId)
      const entries = yield* compactions.read(sql, sessionId)
      const after = yield* at
      if (after?.streamVersion === before.streamVersion)
        return { head: before.streamVersion, position: before.position, buckets, compactions: entries }
    }
    return undefined
  }).pipe(Effect.catchTag("SqlError", () => Effect.succeed(undefined)))

/** The read models service. */
export class ReadModels extends Context.Service<ReadModels, ReadModelsShape>()("@pivot/store/ReadModels") {}

const makeService = (
  sql: Sql,
  projector: ReturnType<typeof makeProjector>,
  path: string | undefined,
  readonly: boolean,
): ReadModelsShape => {
  const toStoreError = classify(path)
  const query = <A>(
    effect: Effect.Effect<A, SqlError.SqlError | UndecodableEvent | UnknownSession | StoreUnavailable>,
  ) => effect.pipe(Effect.catchTag("SqlError", (error) => Effect.fail(toStoreError(error))))

  const sync = (sessionId: string) =>
    query(
      Effect.gen(function* () {
        const stream = Events.streamName(sessionId)
        const head = yield* headOf(sql, stream)
        if (head === 0) return yield* new UnknownSession({ sessionId })
        // A read-only connection never creates the read models' tables (a database written by the runtime alone has
        // none): asked first, so the answer is not a failing statement, whose error costs a read-only command such
        // as `pivot window` more than its own read of the log (issue 32).
        if (readonly && !(yield* hasReadModels(sql))) return yield* new StoreUnavailable({ reason: NO_READ_MODELS })
        if (isCurrent(yield* checkpointsOf(sql, sessionId), head)) return head
        return yield* sql.withTransaction(
          Effect.gen(function* () {
            yield* lock(sql, sessionId)
            const now = yield* headOf(sql, stream)
            const checkpoints = yield* checkpointsOf(sql, sessionId)
            if (isCurrent(checkpoints, now)) return now
            const base = Math.min(
              ...models.map((m) => {
                const cp = checkpoints.get(m.projection.name)
                return cp !== undefined && cp.projectionVersion === m.projection.version
                  ? Math.min(cp.streamVersion, now)
                  : 0
              }),
            )
            const recorded = yield* readRecorded(sql, stream, base + 1, now)
            // Forgotten since the checkpoint (by a store without these hooks): rebuilt from the whole log.
            if (base > 0 && SessionLog.forgottenIn(recorded))
              yield* projector.project(sql, sessionId, 0, yield* readRecorded(sql, stream, 1, now))
            else yield* projector.project(sql, sessionId, base, recorded)
            return now
          }),
        )
      }),
    ).pipe(Effect.withSpan("ReadModels.sync"))

  const synced = <A>(sessionId: string, read: Effect.Effect<A, SqlError.SqlError>) =>
    Effect.andThen(sync(sessionId), query(read))

  const rebuildOne = (sessionId: string) =>
    query(sql.withTransaction(Effect.andThen(lock(sql, sessionId), projector.rewrite(sql, sessionId))))

  const sessions = query(
    sql<{
      readonly stream: string
      readonly version: number | string
    }>`SELECT stream, MAX(stream_version) AS version FROM pivot_events WHERE stream LIKE 'session-%' GROUP BY stream ORDER BY stream`,
  ).pipe(
    Effect.map((rows) =>
      rows.map((row) => ({ sessionId: SessionLog.sessionIdOf(row.stream)!, version: Number(row.version) })),
    ),
  ) as Effect.Effect<ReadonlyArray<{ readonly sessionId: string; readonly version: number }>, ReadError>

  return {
    sync,
    window: (sessionId) => synced(sessionId, window.read(sql, sessionId)),
    usage: (sessionId) => synced(sessionId, usage.read(sql, sessionId)),
    compactions: (sessionId) => synced(sessionId, compactions.read(sql, sessionId)),
    pruned: (sessionId) => synced(sessionId, prunes.read(sql, sessionId)),
    audit: (sessionId) => synced(sessionId, audit.read(sql, sessionId)),
    origin: (sessionId, version) => synced(sessionId, compactions.origin(sql, sessionId, version)),
    recall: (sessionId, query, limit) => synced(sessionId, recall.search(sql, sessionId, query, limit)),
    rebuild: (target) =>
      Effect.gen(function* () {
        if (typeof target === "string") {
          yield* rebuildOne(target)
          return 1
        }
        const all = yield* sessions
        for (const { sessionId } of all) yield* rebuildOne(sessionId)
        return all.length
      }).pipe(Effect.withSpan("ReadModels.rebuild")),
    sessions,
    bulk: (effect) =>
      projector.bulk(sql, effect).pipe(
        Effect.catchIf(
          (error): error is SqlError.SqlError => (error as { _tag?: unknown })?._tag === "SqlError",
          (error) => Effect.fail(toStoreError(error)),
        ),
      ),
    verify: (sessionId) => query(projector.verify(sql, sessionId)).pipe(Effect.withSpan("ReadModels.verify")),
    tables: (sessionId) => query(tablesOf(sql, sessionId)) as Effect.Effect<Tables, ReadError>,
    timeline: (sessionId) => storedTimeline(sql, sessionId),
  }
}

/**
 * The read models over a store layer built with the given hooks: the store projects inline on every append, and
 * the service queries the same connection.
 */
export const withStore = <E, R>(
  options: ProjectedOptions & { readonly readonly?: boolean | undefined; readonly path?: string | undefined },
  store: (hooks: SqlHooks) => Layer.Layer<EventStore, E, R>,
): Layer.Layer<ReadModels | EventStore | Projections.Projections, E | ReadError | Projections.InvalidProjection, R> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const definitions = options.projections ?? []
      yield* Effect.fromResult(Projections.validate(definitions, [...models, ledger.definition]))
      // The ledger runs behind the appends, as an async projection, in the processes that ask for it.
      const registered = options.ledger === true ? [ledger.definition, ...definitions] : definitions
      // Without projections to run the projector's options are not used (and the layer's type promises no such error).
      if (registered.length > 0) yield* Effect.fromResult(Projections.validateOptions(options.projector))
      // One projector for every inline projection: the built-in read models, then users' inline ones.
      const projector = makeProjector(options, definitions)
      const decoder = SessionLog.makeDecoder(options)
      const user = Projections.hooks(options.readonly === true)
      let client: Sql | undefined
      const hooks: SqlHooks = {
        onOpen: (sql) => {
          client = sql
          return options.readonly === true
            ? Effect.void
            : Effect.andThen(Effect.asVoid(Effect.provideService(migrate, SqlClient.SqlClient, sql)), user.onOpen(sql))
        },
        onAppend: projector.onAppend,
        onForget: (sql, stream) => Effect.andThen(projector.onForget(sql, stream), user.onForget(sql, stream)),
        // A new SQLite file gets these tables with the store's own, so `onOpen`'s migrators find them current.
        ...(options.readonly === true ? {} : { freshSqlite: `${freshSqlite}\n${Projections.freshSqlite}` }),
      }
      // Built after the store: its `onOpen` hands over the connection.
      const opened = Effect.gen(function* () {
        yield* EventStore
        if (client === undefined) return yield* Effect.die(new Error("ReadModels: the store did not open"))
        return client
      })
      const service = Layer.effect(
        ReadModels,
        Effect.map(opened, (sql) => makeService(sql, projector, options.path, options.readonly === true)),
      )
      const projections = Layer.effect(
        Projections.Projections,
        Effect.gen(function* () {
          const sql = yield* opened
          return yield* Projections.make(sql, yield* EventStore, {
            ...options.projector,
            projections: registered,
            decoder,
            readonly: options.readonly,
            path: options.path,
            builtIns: builtInStatus(sql),
          })
        }),
      )
      return Layer.provideMerge(Layer.merge(service, projections), store(hooks))
    }),
  )

// The layers without users' projections (`Projections.layerSqlite` & co. take them): with none, none is invalid.
const withoutProjections = <R>(
  layer: Layer.Layer<ReadModels | EventStore | Projections.Projections, ReadError | Projections.InvalidProjection, R>,
) => layer as Layer.Layer<ReadModels | EventStore, ReadError, R>

/** The SQLite event store with inline read models (see `EventStore.layerSqlite` for the options). */
export const layerSqlite = (options: SqliteStoreOptions & Options): Layer.Layer<ReadModels | EventStore, ReadError> =>
  withStore({ ...options, path: options.filename }, (hooks) => EventStore.layerSqlite({ ...options, ...hooks })).pipe(
    withoutProjections,
  )

/** The PostgreSQL event store with inline read models (see `EventStore.layerPostgres` for the options). */
export const layerPostgres = (
  options: PostgresStoreOptions & Options,
): Layer.Layer<ReadModels | EventStore, ReadError> =>
  withStore(options, (hooks) => EventStore.layerPostgres({ ...options, ...hooks })).pipe(withoutProjections)

/** The store over the `SqlClient` provided, with inline read models. */
export const layerSql = (
  options: SqlStoreOptions & Options = {},
): Layer.Layer<ReadModels | EventStore, ReadError, SqlClient.SqlClient> =>
  withStore(options, (hooks) => EventStore.layerSql({ ...options, ...hooks })).pipe(withoutProjections)
