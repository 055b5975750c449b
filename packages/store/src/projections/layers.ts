// The store layers with users' projections: the built-in read models plus the `Projections` service.
import type * as Layer from "effect/Layer"
import type { SqlClient } from "effect/sql"
import { EventStore, type PostgresStoreOptions, type SqliteStoreOptions, type SqlStoreOptions } from "../EventStore.ts"
import type { ReadError } from "../StoreError.ts"
import { type ProjectedOptions, type ReadModels, withStore } from "../session/ReadModels.ts"
import type { InvalidProjection, Projections } from "./Projections.ts"

/** What the layers provide: the store, its built-in read models and the projections. */
export type Provided = ReadModels | EventStore | Projections

/** The SQLite store (see `EventStore.layerSqlite`) with the built-in read models and your projections. */
export const layerSqlite = (
  options: SqliteStoreOptions & ProjectedOptions,
): Layer.Layer<Provided, ReadError | InvalidProjection> =>
  withStore({ ...options, path: options.filename }, (hooks) => EventStore.layerSqlite({ ...options, ...hooks }))

/** The PostgreSQL store (see `EventStore.layerPostgres`) with the built-in read models and your projections. */
export const layerPostgres = (
  options: PostgresStoreOptions & ProjectedOptions,
): Layer.Layer<Provided, ReadError | InvalidProjection> =>
  withStore(options, (hooks) => EventStore.layerPostgres({ ...options, ...hooks }))

/** The store over the `SqlClient` provided, with the built-in read models and your projections. */
export const layerSql = (
  options: SqlStoreOptions & ProjectedOptions = {},
): Layer.Layer<Provided, ReadError | InvalidProjection, SqlClient.SqlClient> =>
  withStore(options, (hooks) => EventStore.layerSql({ ...options, ...hooks }))
