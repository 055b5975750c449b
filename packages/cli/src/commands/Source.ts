/**
 * Where the audit commands read a session from: an OpenCode export file (imported in memory, nothing written) or a
 * pivot database (`--db FILE`, default `.pivot/pivot.db`) and a session id. Both open as an event store with the
 * session's events, so `window`, `prune` and `inspect` run the same code on either; a database also brings its SQL
 * read models.
 */
import * as fs from "node:fs"
import { Ids, Tokens } from "@pivot/core"
import type { Import, ImportError } from "@pivot/opencode"
import { EventStore, ReadModels, ReadOnly, SessionLog, VersionOutOfRange } from "@pivot/store/read"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { DEFAULT_DB } from "./Catalog.ts"
import { CliError, describe, type Io, UsageError } from "./Command.ts"
import * as Progress from "./Progress.ts"
import { num } from "./Text.ts"

export { CliError, describe } from "./Command.ts"

export { DEFAULT_DB }

/** A session to read: an export file, or a database and (unless it holds one session) a session id. */
export type Source =
  | { readonly _tag: "Export"; readonly file: string }
  | { readonly _tag: "Database"; readonly db: string; readonly session: string | undefined }

/**
 * A stream version or a count typed on the command line: an integer from 0 to `Number.MAX_SAFE_INTEGER`. Anything
 * else (a sign, a fraction, an exponent, or digits beyond the safe range, which a float would round) is refused.
 */
export const parseCount = (flag: string, text: string): Result.Result<number, string> => {
  const trimmed = text.trim()
  const value = Number(trimmed)
  return /^\d+$/.test(trimmed) && Number.isSafeInteger(value)
    ? Result.succeed(value)
    : Result.fail(`an integer from 0 to ${Number.MAX_SAFE_INTEGER} for --${flag}`)
}

/**
 * A comma-separated list of names typed on the command line (`--protected-tools skill,task`): each trimmed, repeats
 * dropped, in the order given. An empty name (an empty value, `a,,b`, a trailing comma) is refused: it would match no
 * tool, so it is a typo, not a choice.
 */
export const parseNames = (flag: string, text: string): Result.Result<ReadonlyArray<string>, string> => {
  const names = text.split(",").map((name) => name.trim())
  return names.some((name) => name === "")
    ? Result.fail(`a comma-separated list of names with no empty one for --${flag}`)
    : Result.succeed([...new Set(names)])
}

/**
 * Whether `--db` names a PostgreSQL URL rather than a SQLite file: a `postgres://` URL would be taken as a relative
 * path (folders named after the URL, its password included, and a SQLite file in them). Only `pivot serve` reads
 * PostgreSQL; the flag refuses it (`Flags.sqliteFile`).
 */
export const isPostgresUrl = (db: string): boolean => /^postgres(ql)?:\/\//i.test(db)

/** The source flags as a command's handler gets them (`Flags.sourceFlags`). */
export interface SourceOptions {
  readonly file: Option.Option<string>
  readonly db: Option.Option<string>
  readonly session: Option.Option<string>
}

/** The source named by the arguments; a `UsageError` when they name none or two, or an empty or blank session. */
export const parseSource = (options: SourceOptions): Effect.Effect<Source, UsageError> =>
  Effect.andThen(checkSessionName(Option.getOrUndefined(options.session), "--session"), sourceOf(options))

const sourceOf = (options: SourceOptions): Effect.Effect<Source, UsageError> => {
  const file = Option.getOrUndefined(options.file)
  const db = Option.getOrUndefined(options.db)
  const session = Option.getOrUndefined(options.session)
  if (file !== undefined && (db !== undefined || session !== undefined))
    return Effect.fail(new UsageError({ message: "give an export file or --db/--session, not both" }))
  if (file !== undefined) return Effect.succeed({ _tag: "Export", file })
  // Nothing named: the default database when there is one (as `pivot import x.json` left it), else ask.
  if (db === undefined && session === undefined && !fs.existsSync(DEFAULT_DB))
    return Effect.fail(new UsageError({ message: "give an export file, or --db FILE --session ID" }))
  return Effect.succeed({ _tag: "Database", db: db ?? DEFAULT_DB, session })
}

const isBlank = (name: string) => name.trim() === ""

/**
 * A session named on the command line (`--session`, or a writing command's `<session>`): refused as wrong usage when
 * empty or blank, saying so (it read "unknown session  in …", the empty name between two spaces). Every command
 * taking a session checks its name here, before it opens anything.
 */
export const checkSessionName = (
  name: string | undefined,
  as: "--session" | "the session",
): Effect.Effect<void, UsageError> =>
  name === undefined || !isBlank(name)
    ? Effect.void
    : Effect.fail(
        new UsageError({
          message: `${as} ${name === "" ? "is empty" : `is blank (${JSON.stringify(name)})`}: name a session by its id (ses_…) or its name`,
        }),
      )

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

const failWith = (message: string) => Effect.fail(new CliError({ message }))

/**
 * The most bytes a command reads from an input file (an export, a price table): 1 GiB. Exports are decoded from
 * memory, so an endless or huge input would otherwise grow the process until the system kills it.
 */
export const MAX_INPUT_BYTES = 1024 ** 3

/**
 * Reads a regular file's bytes, up to `MAX_INPUT_BYTES`; a missing or unreadable file, a device or FIFO (`/dev/zero`
 * never ends), or a larger file is a `CliError`. The size and kind come from the opened descriptor, so they describe
 * the file that is read.
 */
export const readBytes = (file: string): Effect.Effect<Uint8Array, CliError> =>
  Effect.try({
    try: () => {
      // Non-blocking open: a FIFO without a writer would otherwise block before it can be refused.
      const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
      try {
        const stat = fs.fstatSync(fd)
        if (stat.isDirectory()) throw Object.assign(new Error("directory"), { code: "EISDIR" })
        if (!stat.isFile()) throw new CliError({ message: `${file} is not a regular file` })
        if (stat.size > MAX_INPUT_BYTES)
          throw new CliError({
            message: `${file} is ${num(stat.size)} bytes, more than the ${num(MAX_INPUT_BYTES)} (1 GiB) pivot reads (MAX_INPUT_BYTES)`,
          })
        return fs.readFileSync(fd)
      } finally {
        fs.closeSync(fd)
      }
    },
    catch: (cause) => {
      if (cause instanceof CliError) return cause
      const code = (cause as NodeJS.ErrnoException).code
      const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : describe(cause)
      return new CliError({ message: `cannot read ${file}: ${why}` })
    },
  })

/**
 * Imports an export file into pivot's events; an invalid export (not UTF-8, not JSON, a bad field) is a `CliError`
 * naming the file and the bad path. Reports progress when `io` asks for it.
 */
export const importFile = (file: string, io?: Io) =>
  Effect.flatMap(readBytes(file), (bytes) =>
    // The importer is loaded when an export is read, not by every command that may read one (issue 32).
    Effect.flatMap(
      Effect.promise(() => import("@pivot/opencode")),
      (opencode) => {
        const decoding = io === undefined ? Progress.silent : Progress.start(io, "import: decoding", "messages")
        const result = importBytes(opencode, bytes, decoding)
        decoding.done()
        return Result.isFailure(result)
          ? failWith(`${file}: ${result.failure.message}`)
          : Effect.succeed(result.success)
      },
    ),
  )

// Decoded message by message from the bytes (never the whole text and parsed tree at once), then turned into events.
const importBytes = (
  { Export, Import }: typeof import("@pivot/opencode"),
  bytes: Uint8Array,
  progress: Progress.Progress,
): Result.Result<Import.ImportResult, ImportError.ImportError> => {
  let seen = 0
  const decoded = Export.decodeExportBytes(bytes, (done, total) => {
    if (done === 1) progress.total(total)
    progress.advance(done - seen)
    seen = done
  })
  return Result.isFailure(decoded) ? Result.fail(decoded.failure) : Import.fromExport(decoded.success)
}

/** Wraps any store or decoding failure as a `CliError` with its one-line message. */
export const orCliError = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, CliError, R> =>
  Effect.mapError(effect, (error) => (error instanceof CliError ? error : new CliError({ message: describe(error) })))

/**
 * The stored session a writing command's `<session>` argument names, as the read commands' `--session` finds it: the
 * id as given when `db` holds events of it, else the id a name maps to (`Ids.sessionIdOf`, as `createPivot` and `fork
 * --into` map it: "try-b" → "ses_try-b") when `db` holds events of that one. A `CliError` when neither has events:
 * read through a read-only connection of its own, so an unknown session is refused before the command opens the
 * store for writing (a read-write open creates and catches up the read models: a failing command wrote them).
 */
export const storedSessionId = (db: string, wanted: string): Effect.Effect<string, CliError> =>
  orCliError(
    Effect.gen(function* () {
      const store = yield* EventStore
      if ((yield* store.streamVersion(`session-${wanted}`)) > 0) return wanted
      const mapped = Ids.sessionIdOf(wanted)
      if (mapped !== undefined && mapped !== wanted && (yield* store.streamVersion(`session-${mapped}`)) > 0)
        return mapped
      return yield* new CliError({ message: `unknown session ${wanted} in ${db} (the store has no events for it)` })
    }).pipe(Effect.provide(EventStore.layerSqlite({ filename: db, readonly: true }))),
  )

const chooseSession = (readModels: ReadModels.ReadModelsShape, db: string, wanted: string | undefined) =>
  Effect.gen(function* () {
    const sessions = yield* orCliError(readModels.sessions)
    const ids = sessions.map((s) => s.sessionId)
    const listed = `${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", …" : ""}`
    if (wanted !== undefined) {
      if (ids.includes(wanted)) return wanted
      // A name maps to its id as createPivot and `fork --into` map it ("try-b" → "ses_try-b"); an id stored as given
      // wins above.
      const mapped = Ids.sessionIdOf(wanted)
      if (mapped !== undefined && ids.includes(mapped)) return mapped
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
 * What a read command checks before opening a database: it exists, is a file, and is not empty. Reading never creates
 * or migrates a store (a mistyped path would otherwise leave an empty database behind, and an empty file would get
 * pivot's schema written into it).
 */
export const checkReadable = (db: string): Effect.Effect<void, CliError> =>
  Effect.suspend(() => {
    let stat: fs.Stats
    try {
      stat = fs.statSync(db)
    } catch {
      return failWith(`no database at ${db} (import a session with: pivot import <export.json> --db ${db})`)
    }
    if (!stat.isFile()) return failWith(`${db} is not a file`)
    if (stat.size === 0) return failWith(`${db} is empty (0 bytes): not a pivot database`)
    return Effect.void
  })

/**
 * A database opened read-only: no migrations, no WAL switch, nothing written (a corrupt file fails, untouched). The
 * read models' code loads only if the database has their tables (issue 32).
 */
export const openReadOnly = (db: string) => ReadOnly.layerSqlite({ filename: db })

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
    yield* checkReadable(db)
    const session = Effect.gen(function* () {
      const readModels = yield* ReadModels.ReadModels
      const sessionId = yield* chooseSession(readModels, db, source.session)
      const head = yield* orCliError(SessionLog.version(sessionId))
      const store = yield* EventStore
      // The SQL read models answer only when they are current: opened read-only, they cannot catch up (a database
      // written by the runtime alone has none). Then everything is folded from the log, which gives the same answers.
      const current = (yield* Effect.exit(readModels.sync(sessionId)))._tag === "Success"
      const used = use({
        sessionId,
        where: db,
        head,
        log: orCliError(SessionLog.read(sessionId)).pipe(Effect.provideService(EventStore, store)),
        readModels: current ? readModels : undefined,
        report: undefined,
      })
      // Replay asks the read models when they are in context: take them out when they are not current.
      return yield* current
        ? used
        : Effect.updateContext(used, (context) => Context.omit(ReadModels.ReadModels)(context) as typeof context)
    })
    // Opening can fail too (a corrupt file, a database another program made): one line, nothing written.
    return yield* orCliError(Effect.provide(session, openReadOnly(db)))
  }) as Effect.Effect<A, CliError, Exclude<R, EventStore | ReadModels.ReadModels>>
}

/** Checks `--at` against the stream: a version from 0 to the head, or the head when not given. */
export const versionOf = (opened: Opened, at: number | undefined): Effect.Effect<number, CliError> =>
  at === undefined
    ? Effect.succeed(opened.head)
    : at <= opened.head
      ? Effect.succeed(at)
      : failWith(new VersionOutOfRange({ sessionId: opened.sessionId, version: at, head: opened.head }).message)

/** The estimated tokens of a rendered window (`Tokens.estimateWindow` of its model messages, as the runtime does). */
export const estimateTokens = (messages: ReadonlyArray<{ readonly message: unknown }>): number =>
  Tokens.estimateWindow(messages.map((m) => m.message))
