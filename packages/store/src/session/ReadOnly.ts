/**
 * A SQLite store opened for reading only, with the read models' service loaded on demand: what `pivot window` and
 * `pivot inspect` open. The read models' code (every read model, the projector, most of core) is imported only when a
 * query needs it and the database has their tables; a database written by the runtime alone has none, and then the
 * queries that catch up first (`sync`, `window`, …) fail as `ReadModels.layerSqlite({ readonly: true })`'s do, and
 * `sessions` answers, without loading that code (issue 32, ADR 0062).
 *
 * **Example**
 *
 * ```ts
 * const program = Effect.gen(function* () {
 *   const readModels = yield* ReadModels.ReadModels
 *   const sessions = yield* readModels.sessions
 * }).pipe(Effect.provide(ReadOnly.layerSqlite({ filename: ".pivot/pivot.db" })))
 * ```
 */
import { Events } from "@pivot/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { SqlClient, SqlError } from "effect/sql"
import { EventStore, type SqliteStoreOptions } from "../EventStore.ts"
import { classify } from "../internal/sql.ts"
import { type ReadError, StoreUnavailable } from "../StoreError.ts"
import {
  hasReadModels,
  headOf,
  NO_READ_MODELS,
  type ReadModelError,
  ReadModels,
  type ReadModelsShape,
  sessionsOf,
} from "./ReadModelsService.ts"
import { UnknownSession } from "./SessionError.ts"

/** The options of a read-only open: the SQLite store's, without hooks (nothing is written, nothing projected). */
export type ReadOnlyOptions = Omit<SqliteStoreOptions, "readonly" | "onOpen" | "onAppend" | "onForget">

/**
 * The read models' queries over a read-only connection, answering as `ReadModels.layerSqlite({ readonly: true })`
 * does: a query that catches up first (`sync`, `window`, …) asks whether the tables exist, and without them fails as
 * that `sync` fails (`UnknownSession` for a session with no events, else `StoreUnavailable`); with them, and for the
 * other queries, `ReadModels.ts` is loaded and answers.
 */
export const lazyService = (sql: SqlClient.SqlClient, path: string | undefined): ReadModelsShape => {
  const toStoreError = classify(path)
  const full = Effect.promise(() => import("./ReadModels.ts")).pipe(
    Effect.map((module) => module.readOnlyService(sql, path)),
  )
  const absent = (sessionId: string) =>
    Effect.flatMap(
      headOf(sql, Events.streamName(sessionId)),
      (head): Effect.Effect<never, UnknownSession | StoreUnavailable> =>
        head === 0
          ? Effect.fail(new UnknownSession({ sessionId }))
          : Effect.fail(new StoreUnavailable({ reason: NO_READ_MODELS })),
    )
  const query = <A>(effect: Effect.Effect<A, SqlError.SqlError | ReadModelError>): Effect.Effect<A, ReadModelError> =>
    effect.pipe(Effect.catchTag("SqlError", (error) => Effect.fail(toStoreError(error))))
  const synced =
    (sessionId: string) =>
    <A>(use: (service: ReadModelsShape) => Effect.Effect<A, ReadModelError>): Effect.Effect<A, ReadModelError> =>
      query(
        Effect.flatMap(
          hasReadModels(sql),
          (present): Effect.Effect<A, SqlError.SqlError | ReadModelError> =>
            present ? Effect.flatMap(full, use) : absent(sessionId),
        ),
      )
  return {
    sync: (sessionId) => synced(sessionId)((s) => s.sync(sessionId)),
    window: (sessionId) => synced(sessionId)((s) => s.window(sessionId)),
    usage: (sessionId) => synced(sessionId)((s) => s.usage(sessionId)),
    compactions: (sessionId) => synced(sessionId)((s) => s.compactions(sessionId)),
    pruned: (sessionId) => synced(sessionId)((s) => s.pruned(sessionId)),
    audit: (sessionId) => synced(sessionId)((s) => s.audit(sessionId)),
    origin: (sessionId, version) => synced(sessionId)((s) => s.origin(sessionId, version)),
    recall: (sessionId, query, limit) => synced(sessionId)((s) => s.recall(sessionId, query, limit)),
    sessions: query(sessionsOf(sql)) as Effect.Effect<
      ReadonlyArray<{ readonly sessionId: string; readonly version: number }>,
      ReadError
    >,
    rebuild: (target) => Effect.flatMap(full, (s) => s.rebuild(target)),
    verify: (sessionId) => Effect.flatMap(full, (s) => s.verify(sessionId)),
    timeline: (sessionId) => Effect.flatMap(full, (s) => s.timeline(sessionId)),
    tables: (sessionId) => Effect.flatMap(full, (s) => s.tables(sessionId)),
    bulk: (effect) => Effect.flatMap(full, (s) => s.bulk(effect)),
  }
}

/** The SQLite store at `options.filename` opened read-only, with the read models' queries (`lazyService`). */
export const layerSqlite = (options: ReadOnlyOptions): Layer.Layer<ReadModels | EventStore, ReadError> =>
  Layer.unwrap(
    Effect.sync(() => {
      let client: SqlClient.SqlClient | undefined
      const store = EventStore.layerSqlite({
        ...options,
        readonly: true,
        onOpen: (sql) => {
          client = sql
          return Effect.void
        },
      })
      // Built after the store: its `onOpen` hands over the connection.
      const service = Layer.effect(
        ReadModels,
        Effect.gen(function* () {
          yield* EventStore
          if (client === undefined) return yield* Effect.die(new Error("ReadOnly: the store did not open"))
          return lazyService(client, options.filename)
        }),
      )
      return Layer.provideMerge(service, store)
    }),
  )
