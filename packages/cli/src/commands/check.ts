/**
 * `pivot check [--db FILE]`: is a database sound? Runs SQLite's `PRAGMA integrity_check` over every page, then
 * replays every session (reads and decodes each event and folds the session) and compares its stored read models and
 * their snapshot with a rebuild from the log, with progress. Read-only. Exits 1 with one line per problem when
 * anything is wrong: a damaged page is found here, not the day it is read.
 */
import { ReadModels, Replay, SessionLog, SqliteDriver } from "@pivot/store"
import { Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { listing } from "./Catalog.ts"
import { CliError, CliIo, describe, type Entry, report } from "./Command.ts"
import { sqliteFile } from "./Flags.ts"
import * as Progress from "./Progress.ts"
import { checkReadable, DEFAULT_DB, openReadOnly, orCliError } from "./Source.ts"
import { plural } from "./Text.ts"

const { synopsis, summary } = listing("check")

/**
 * SQLite's own check of every page and index, read-only: its problems (none when the file is sound), or a failure
 * when SQLite cannot read the file as a database at all.
 */
export const integrityProblems = (db: string, max = 20): Result.Result<Array<string>, string> => {
  let handle: SqliteDriver.Database | undefined
  try {
    handle = SqliteDriver.open(db, { readOnly: true })
    const rows = handle.prepare(`PRAGMA integrity_check(${max})`).all()
    const messages = rows.map((row) => String(Object.values(row)[0]))
    return Result.succeed(messages.length === 1 && messages[0] === "ok" ? [] : messages)
  } catch (error) {
    return Result.fail(describe(error))
  } finally {
    handle?.close()
  }
}

/** The `check` command. */
export const check: Entry = {
  name: "check",
  synopsis,
  command: Command.make(
    "check",
    {
      db: Flag.String("db").pipe(
        sqliteFile,
        Flag.withMetavar("FILE"),
        Flag.withDescription(`the pivot database (default ${DEFAULT_DB}); opened read-only`),
        Flag.withDefault(DEFAULT_DB),
      ),
    },
    (options) =>
      report(
        "check",
        synopsis,
        Effect.gen(function* () {
          const io = yield* CliIo
          const db = options.db
          yield* checkReadable(db)
          const checked = integrityProblems(db)
          if (Result.isFailure(checked)) return yield* new CliError({ message: `${db}: ${checked.failure}` })
          const pages = checked.success
          for (const problem of pages) io.out(`integrity: ${problem}`)
          if (pages.length > 0)
            return yield* new CliError({
              message: `${db} is damaged: PRAGMA integrity_check found ${plural(pages.length, "problem")} (listed above); restore it from a backup`,
            })
          const replay = Effect.gen(function* () {
            const readModels = yield* ReadModels.ReadModels
            const sessions = yield* orCliError(readModels.sessions)
            const total = sessions.reduce((sum, s) => sum + s.version, 0)
            const progress = Progress.start(io, "check: replaying", "events", { total })
            const problems: Array<string> = []
            const differences: Array<string> = []
            let differing = 0
            let compared = 0
            for (const session of sessions) {
              const replayed = yield* Effect.result(
                Effect.andThen(SessionLog.read(session.sessionId), Replay.stateAt(session.sessionId, session.version)),
              )
              if (replayed._tag === "Failure")
                problems.push(`session ${session.sessionId}: ${describe(replayed.failure)}`)
              else {
                // The stored read models (and their snapshot) against a rebuild from the log, computed, not written.
                const verified = yield* Effect.result(readModels.verify(session.sessionId))
                const found = verified._tag === "Failure" ? [describe(verified.failure)] : verified.success.differences
                if (verified._tag === "Success" && verified.success.models > 0) compared++
                for (const difference of found) differences.push(`session ${session.sessionId}: ${difference}`)
                if (found.length > 0) differing++
              }
              progress.advance(session.version)
            }
            progress.done()
            return { sessions: sessions.length, events: total, problems, differences, differing, compared }
          })
          const result = yield* orCliError(Effect.provide(replay, openReadOnly(db)))
          for (const problem of result.problems) io.out(`replay: ${problem}`)
          for (const difference of result.differences) io.out(`read models: ${difference}`)
          if (result.problems.length > 0)
            return yield* new CliError({
              message: `${db}: ${plural(result.problems.length, "session")} of ${result.sessions} cannot be replayed (listed above)`,
            })
          if (result.differing > 0)
            return yield* new CliError({
              message: `${db}: the read models of ${plural(result.differing, "session")} of ${result.sessions} differ from a rebuild (listed above); pivot rebuild rewrites them from the log`,
            })
          io.out(
            `${db} is sound: integrity check ok; ${plural(result.sessions, "session")} (${plural(result.events, "event")}) replayed; ${result.compared === 0 ? "no read models stored" : `read models of ${plural(result.compared, "session")} match a rebuild`}`,
          )
        }),
      ),
  ).pipe(
    Command.withDescription(
      "Checks a database: SQLite's PRAGMA integrity_check over every page, then a replay of every session (each event read, decoded and folded) and a comparison of its read models with a rebuild from the log. Read-only. Exits 1 listing each problem when the file is damaged, a session cannot be replayed, or its read models differ from a rebuild.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([{ command: "pivot check --db .pivot/pivot.db", description: "check the default database" }]),
  ),
}
