/**
 * Where the viewer reads sessions from: a pivot SQLite database (the default, `.pivot/pivot.db`, as the CLI uses), a
 * PostgreSQL URL, or an OpenCode export file (imported into an in-memory store; the file is only read). Databases
 * are opened read-only: SQLite with a read-only connection and no migrations, PostgreSQL with read-only
 * transactions, so serving can never modify a store.
 */
import * as fs from "node:fs"
import { PgClient } from "@effect/sql-pg"
import { Import } from "@pivot/opencode"
import { EventStore, Projections, type ReadError, ReadModels, SessionLog } from "@pivot/store"
import { Context, Effect, Layer, Redacted, Result, type Scope } from "effect"
import type { SqlError } from "effect/sql"
import * as Catalog from "./Catalog.ts"
import { describe, StartupError } from "./ServeError.ts"

/** The database the CLI uses when none is named. */
export const DEFAULT_DB = ".pivot/pivot.db"

/** A source of sessions. */
export type Source =
  | { readonly _tag: "Sqlite"; readonly file: string }
  | { readonly _tag: "Postgres"; readonly url: string; readonly schema: string }
  | { readonly _tag: "Export"; readonly file: string }

/**
 * The source an argument names: a `postgres://` URL (`?schema=NAME` for a schema other than `public`), a `.json`
 * export, or a SQLite file (default `DEFAULT_DB`).
 */
export const parse = (arg: string | undefined): Effect.Effect<Source, StartupError> => {
  const value = arg ?? DEFAULT_DB
  if (/^postgres(ql)?:\/\//.test(value)) {
    if (!URL.canParse(value))
      return Effect.fail(new StartupError({ message: `not a valid PostgreSQL URL: ${withoutPassword(value)}` }))
    // `?schema=NAME` picks the Postgres schema holding pivot's tables (as `EventStore.layerPostgres`'s option).
    const url = new URL(value)
    const schema = url.searchParams.get("schema") ?? "public"
    url.searchParams.delete("schema")
    return Effect.succeed({ _tag: "Postgres", url: url.toString(), schema })
  }
  if (value.toLowerCase().endsWith(".json")) return Effect.succeed({ _tag: "Export", file: value })
  return Effect.succeed({ _tag: "Sqlite", file: value })
}

// A URL that does not parse, for messages: whatever stands between "user:" and "@" masked.
const withoutPassword = (url: string): string => url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*:)[^@]*@/i, "$1***@")

/** The source for messages (a PostgreSQL URL without its password). */
export const label = (source: Source): string => {
  if (source._tag !== "Postgres") return source.file
  try {
    const url = new URL(source.url)
    url.password = ""
    return url.toString()
  } catch {
    return "postgres"
  }
}

/** Opens a source's catalog in the current scope; a source that cannot be read is a `StartupError` naming it. */
export const open = (source: Source): Effect.Effect<Catalog.CatalogShape, StartupError, Scope.Scope> =>
  Layer.build(catalog(source)).pipe(
    Effect.map((context) => Context.get(context, Catalog.Catalog)),
    Effect.mapError((error) => (error instanceof StartupError ? error : startup(source)(error))),
  )

const startup = (source: Source) => (error: unknown) => {
  const where = label(source)
  const what = describe(error)
  // A store error may already begin with the path (`StoreCorrupt`): say it once.
  return new StartupError({
    message: `cannot open ${where}: ${what.startsWith(`${where}: `) ? what.slice(where.length + 2) : what}`,
  })
}

const overReadModels = Layer.effect(
  Catalog.Catalog,
  Effect.gen(function* () {
    const readModels = yield* ReadModels.ReadModels
    const projections = yield* Projections.Projections
    return yield* Catalog.make(yield* EventStore, readModels.sessions, { projections, timeline: readModels.timeline })
  }),
)

/** The catalog of a source's sessions (see `open` for its failures as one line). */
export const catalog = (source: Source): Layer.Layer<Catalog.Catalog, StartupError | ReadError | SqlError.SqlError> => {
  switch (source._tag) {
    case "Sqlite":
      return Layer.unwrap(
        Effect.gen(function* () {
          // Reading never creates a database: a mistyped path would otherwise leave an empty one behind.
          if (!fs.existsSync(source.file))
            return yield* new StartupError({
              message: `no database at ${source.file} (run npm start for a demo one, or pivot import <export.json> --db ${source.file})`,
            })
          // As the CLI's read commands say it (a folder or an empty file is no database).
          const stat = fs.statSync(source.file)
          if (!stat.isFile()) return yield* new StartupError({ message: `${source.file} is not a file` })
          if (stat.size === 0)
            return yield* new StartupError({ message: `${source.file} is empty (0 bytes): not a pivot database` })
          return overReadModels.pipe(Layer.provide(Projections.layerSqlite({ filename: source.file, readonly: true })))
        }),
      )
    case "Postgres":
      if (!/^[a-z_][a-z0-9_]{0,47}$/.test(source.schema))
        return Layer.effect(
          Catalog.Catalog,
          Effect.fail(new StartupError({ message: `invalid Postgres schema name ${JSON.stringify(source.schema)}` })),
        )
      return overReadModels.pipe(
        Layer.provide(Projections.layerSql({ readonly: true })),
        Layer.provide(
          PgClient.layer({
            url: Redacted.make(source.url),
            startupParameters: { default_transaction_read_only: "on", search_path: source.schema },
          }),
        ),
      )
    case "Export":
      return Layer.unwrap(
        Effect.gen(function* () {
          const text = yield* Effect.try({
            try: () => fs.readFileSync(source.file, "utf8"),
            catch: startup(source),
          })
          const imported = Import.importText(text)
          if (Result.isFailure(imported))
            return yield* new StartupError({ message: `${source.file}: ${imported.failure.message}` })
          const { sessionId, events } = imported.success
          const log = SessionLog.fromEvents(sessionId, events)
          const loaded = Effect.gen(function* () {
            yield* SessionLog.append(
              sessionId,
              "no-stream",
              log.map(({ event, meta }) => ({ id: meta.id, event })),
            )
            const store = yield* EventStore
            return yield* Catalog.make(store, Effect.succeed([{ sessionId }]))
          })
          return Layer.effect(Catalog.Catalog, Effect.mapError(loaded, startup(source))).pipe(
            Layer.provide(EventStore.layerMemory()),
          )
        }),
      )
  }
}
