import { Events } from "@pivot/core"
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
import * as window from "../readmodels/window.ts"
import { type ReadError, StoreUnavailable } from "../StoreError.ts"
import {
  NO_READ_MODELS,
  ReadModels,
  type ReadModelsShape,
  type StoredTimeline,
  sessionsOf,
} from "./ReadModelsService.ts"
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

export type { Verified } from "../readmodels/verify.ts"
export {
  NO_READ_MODELS,
  type ReadModelError,
  ReadModels,
  type ReadModelsShape,
  type StoredTimeline,
} from "./ReadModelsService.ts"

/** The read models' options with users' projections (see `Projections.layerSqlite`). */
export interface ProjectedOptions extends Options {
  /** Your projections, kept beside the built-in read models (inline or async). */
  readonly projections?: ReadonlyArray<Projections.AnyDefinition> | undefined
  /** The options of the projections' background work. */
  readonly projector?: Omit<Projections.Options, "projections"> | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// The service

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

  const sessions = query(sessionsOf(sql)) as Effect.Effect<
    ReadonlyArray<{ readonly sessionId: string; readonly version: number }>,
    ReadError
  >

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

/**
 * The read models' queries over a read-only connection the caller opened (`ReadOnly.layerSqlite` loads this module
 * once the database has their tables): no projector of users' projections, nothing written.
 */
export const readOnlyService = (sql: Sql, path: string | undefined): ReadModelsShape =>
  makeService(sql, makeProjector({}, []), path, true)
