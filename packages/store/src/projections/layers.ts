// The store layers with users' projections: the built-in read models plus the `Projections` service.
import type * as Layer from "effect/Layer"
import type { SqlClient } from "effect/sql"
import { EventStore, type PostgresStoreOptions, type SqliteStoreOptions, type SqlStoreOptions } from "../EventStore.ts"
import type { ReadError } from "../StoreError.ts"
import { ledger, names, type ProjectedOptions, type ReadModels, withStore } from "../session/ReadModels.ts"
import type { InvalidProjection, Projections, Status } from "./Projections.ts"

/** One read model of a store's read side: a built-in one, or a projection with its stored status. */
export interface ReadSideEntry {
  readonly name: string
  readonly version: number
  readonly kind: "built-in" | "projection"
  readonly mode: "inline" | "async"
  readonly scope: "session" | "global"
  readonly status?: Status | undefined
}

/**
 * The whole read side: the built-in read models (inline, per session; with their status when `builtIns` holds it, see
 * `Projections.builtIns`), then the projections stored.
 */
export const readSide = (stored: ReadonlyArray<Status>, builtIns: ReadonlyArray<Status> = []): Array<ReadSideEntry> => {
  const builtIn = new Set(names.map((model) => model.name))
  return [
    ...names.map(
      (model): ReadSideEntry => ({
        ...model,
        kind: "built-in",
        mode: "inline",
        scope: "session",
        status: builtIns.find((status) => status.name === model.name && status.version === model.version),
      }),
    ),
    ...stored
      .filter((status) => !builtIn.has(status.name))
      .map(
        (status): ReadSideEntry => ({
          name: status.name,
          version: status.version,
          // The ledger is built in, though async: stored like users' projections.
          kind: status.name === ledger.NAME ? "built-in" : "projection",
          mode: status.mode,
          scope: status.scope,
          status,
        }),
      ),
  ]
}

/** What the layers provide: the store, its built-in read models and the projections. */
export type Provided = ReadModels | EventStore | Projections

/** A layer's failures: with projections given, one may be invalid; without, only the store can fail. */
export type LayerError<O> = O extends { readonly projections: ReadonlyArray<unknown> }
  ? ReadError | InvalidProjection
  : ReadError

/** The SQLite store (see `EventStore.layerSqlite`) with the built-in read models and your projections. */
export const layerSqlite = <O extends SqliteStoreOptions & ProjectedOptions>(
  options: O,
): Layer.Layer<Provided, LayerError<O>> =>
  withStore({ ...options, path: options.filename }, (hooks) =>
    EventStore.layerSqlite({ ...options, ...hooks }),
  ) as Layer.Layer<Provided, LayerError<O>>

/** The PostgreSQL store (see `EventStore.layerPostgres`) with the built-in read models and your projections. */
export const layerPostgres = <O extends PostgresStoreOptions & ProjectedOptions>(
  options: O,
): Layer.Layer<Provided, LayerError<O>> =>
  withStore(options, (hooks) => EventStore.layerPostgres({ ...options, ...hooks })) as Layer.Layer<
    Provided,
    LayerError<O>
  >

/** The store over the `SqlClient` provided, with the built-in read models and your projections. */
export const layerSql = <O extends SqlStoreOptions & ProjectedOptions>(
  options: O,
): Layer.Layer<Provided, LayerError<O>, SqlClient.SqlClient> =>
  withStore(options, (hooks) => EventStore.layerSql({ ...options, ...hooks })) as Layer.Layer<
    Provided,
    LayerError<O>,
    SqlClient.SqlClient
  >
