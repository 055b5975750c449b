/**
 * Where the audit commands read a session from: an OpenCode export file (imported in memory, nothing written) or a
 * pivot database (`--db FILE`, default `.pivot/pivot.db`) and a session id. Both open as an event store with the
 * session's events, so `window`, `prune` and `inspect` run the same code on either; a database also brings its SQL
 * read models.
 */
import * as fs from "node:fs"
import { Tokens } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { EventStore, ReadModels, SessionLog, VersionOutOfRange } from "@pivot/store"
import { Effect, Result, Schema } from "effect"
import { type Options, UsageError } from "./Command.ts"

/** The database the commands use when `--db` is not given. */
export const DEFAULT_DB = ".pivot/pivot.db"

/** A session to read: an export file, or a database and (unless it holds one session) a session id. */
export type Source =
  | { readonly _tag: "Export"; readonly file: string }
  | { readonly _tag: "Database"; readonly db: string; readonly session: string | undefined }

/** The options every audit command takes: `<export.json>` or `--db FILE --session ID`, `--at`, `--format`. */
export const sourceSpec = { values: ["db", "session", "at", "format"], positionals: 1 } as const

/** The source named by the arguments; a `UsageError` when they name none or two. */
export const parseSource = (options: Options): Source => {
  const [file] = options.positionals
  const db = options.values.db
  const session = options.values.session
  if (file !== undefined && (db !== undefined || session !== undefined))
    throw new UsageError("give an export file or --db/--session, not both")
  if (file !== undefined) return { _tag: "Export", file }
  if (db === undefined && session === undefined) throw new UsageError("give an export file, or --db FILE --session ID")
  return { _tag: "Database", db: db ?? DEFAULT_DB, session }
}

/** `--at VERSION`: a stream version (an integer ≥ 0), or undefined for the newest. */
export const parseAt = (options: Options): number | undefined => {
  const at = options.values.at
  if (at === undefined) return undefined
  if (!/^\d+$/.test(at)) throw new UsageError(`--at needs a stream version (an integer ≥ 0), got "${at}"`)
  return Number(at)
}

/** `--format text|json` (default text). */
export const parseFormat = (options: Options): "text" | "json" => {
  const format = options.values.format ?? "text"
  if (format !== "text" && format !== "json") throw new UsageError(`--format is text or json, got "${format}"`)
  return format
}

/** A failure the command reports as one line. */
export class CliError extends Schema.TaggedError<CliError>()("CliError", { message: Schema.String }) {}

/** A session opened for reading. */
export interface Opened {
  readonly sessionId: string
  /** The export file or the database, for messages. */
  readonly where: string
  /** The number of events in the session's stream. */
  readonly head: number
  /** The session's events, decoded (read on demand: a database session can be long). */
  readonly log: Effect.Effect<ReadonlyArray<SessionLog.Logged>, CliError>
  /** The SQL read models, when the session comes from a database. */
  readonly readModels: ReadModels.ReadModelsShape | undefined
  /** What the import reported, when the session comes from an export file. */
  readonly report: Import.ImportReport | undefined
}

/** Any error of the store or the read side, as one line. */
export const describe = (error: unknown): string =>
  (error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { message: unknown }).message)
    : String(error)
  ).replace(/\s*\n\s*/g, " ")

const failWith = (message: string) => Effect.fail(new CliError({ message }))

/** Reads a file's text; a missing or unreadable file is a `CliError`. */
export const readText = (file: string): Effect.Effect<string, CliError> =>
  Effect.try({
    try: () => fs.readFileSync(file, "utf8"),
    catch: (cause) => {
      const code = (cause as NodeJS.ErrnoException).code
      const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : describe(cause)
      return new CliError({ message: `cannot read ${file}: ${why}` })
    },
  })

/** Imports an export file's text into pivot's events; an invalid export is a `CliError` naming the bad path. */
export const importFile = (file: string) =>
  Effect.flatMap(readText(file), (text) => {
    const result = Import.importText(text)
    return Result.isFailure(result) ? failWith(`${file}: ${result.failure.message}`) : Effect.succeed(result.success)
  })

/** Wraps any store or decoding failure as a `CliError` with its one-line message. */
export const orCliError = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, CliError, R> =>
  Effect.mapError(effect, (error) => (error instanceof CliError ? error : new CliError({ message: describe(error) })))

const chooseSession = (readModels: ReadModels.ReadModelsShape, db: string, wanted: string | undefined) =>
  Effect.gen(function* () {
    const sessions = yield* orCliError(readModels.sessions)
    const ids = sessions.map((s) => s.sessionId)
    const listed = `${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", …" : ""}`
    if (wanted !== undefined) {
      if (ids.includes(wanted)) return wanted
      return yield* failWith(
        ids.length === 0
          ? `unknown session ${wanted}: ${db} holds no sessions`
          : `unknown session ${wanted} in ${db} (it holds ${listed})`,
      )
    }
    if (ids.length === 1) return ids[0]!
    return yield* failWith(
      ids.length === 0
        ? `${db} holds no sessions`
        : `${db} holds ${ids.length} sessions; choose one with --session (${listed})`,
    )
  })

/**
 * Opens the source and runs `use` with the session and an event store holding it (the database's, with its read
 * models, or an in-memory one holding the imported export).
 */
export const withSession = <A, R>(
  source: Source,
  use: (opened: Opened) => Effect.Effect<A, CliError, R>,
): Effect.Effect<A, CliError, Exclude<R, EventStore | ReadModels.ReadModels>> => {
  if (source._tag === "Export")
    return Effect.gen(function* () {
      const imported = yield* importFile(source.file)
      const log = SessionLog.fromEvents(imported.sessionId, imported.events)
      return yield* Effect.gen(function* () {
        yield* orCliError(
          SessionLog.append(
            imported.sessionId,
            "no-stream",
            log.map(({ event, meta }) => ({ id: meta.id, event })),
          ),
        )
        return yield* use({
          sessionId: imported.sessionId,
          where: source.file,
          head: log.length,
          log: Effect.succeed(log),
          readModels: undefined,
          report: imported.report,
        })
      }).pipe(Effect.provide(EventStore.layerMemory()))
    }) as Effect.Effect<A, CliError, Exclude<R, EventStore | ReadModels.ReadModels>>
  const db = source.db
  return Effect.gen(function* () {
    // Reading never creates a database: a mistyped path would otherwise leave an empty one behind.
    if (!fs.existsSync(db))
      return yield* failWith(`no database at ${db} (import a session with: pivot import <export.json> --db ${db})`)
    const session = Effect.gen(function* () {
      const readModels = yield* ReadModels.ReadModels
      const sessionId = yield* chooseSession(readModels, db, source.session)
      const head = yield* orCliError(SessionLog.version(sessionId))
      const store = yield* EventStore
      return yield* use({
        sessionId,
        where: db,
        head,
        log: orCliError(SessionLog.read(sessionId)).pipe(Effect.provideService(EventStore, store)),
        readModels,
        report: undefined,
      })
    })
    // Opening can fail too (a corrupt file, a database another program made): one line, nothing written.
    return yield* orCliError(Effect.provide(session, ReadModels.layerSqlite({ filename: db })))
  }) as Effect.Effect<A, CliError, Exclude<R, EventStore | ReadModels.ReadModels>>
}

/** Checks `--at` against the stream: a version from 0 to the head, or the head when not given. */
export const versionOf = (opened: Opened, at: number | undefined): Effect.Effect<number, CliError> =>
  at === undefined
    ? Effect.succeed(opened.head)
    : at <= opened.head
      ? Effect.succeed(at)
      : failWith(new VersionOutOfRange({ sessionId: opened.sessionId, version: at, head: opened.head }).message)

/** The estimated tokens of a rendered window (the chars/4 estimate over its JSON, as the runtime does). */
export const estimateTokens = (messages: ReadonlyArray<{ readonly message: unknown }>): number =>
  Tokens.estimate(JSON.stringify(messages.map((m) => m.message)))
