/**
 * `pivot rebuild [--db FILE] [--session ID]`: rewrites the SQL read models of one session, or of every session, by
 * replaying its events (after a projection changed, or to repair tables). The events are never touched. Never
 * creates a database.
 */
import { ReadModels } from "@pivot/store"
import { Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { listing } from "./Catalog.ts"
import { CliError, CliIo, type Entry, report } from "./Command.ts"
import { sqliteFile } from "./Flags.ts"
import * as Progress from "./Progress.ts"
import { checkReadable, checkSessionName, DEFAULT_DB, orCliError, storedSessionId } from "./Source.ts"
import { plural } from "./Text.ts"

const { synopsis, summary } = listing("rebuild")

/** The `rebuild` command. */
export const rebuild: Entry = {
  name: "rebuild",
  synopsis,
  command: Command.make(
    "rebuild",
    {
      db: Flag.String("db").pipe(
        sqliteFile,
        Flag.withMetavar("FILE"),
        Flag.withDescription(`the pivot database (default ${DEFAULT_DB}); it must exist`),
        Flag.withDefault(DEFAULT_DB),
      ),
      session: Flag.String("session").pipe(
        Flag.withMetavar("ID"),
        Flag.withDescription("rebuild only this session (default: every session)"),
        Flag.optional,
      ),
    },
    (options) =>
      report(
        "rebuild",
        synopsis,
        Effect.gen(function* () {
          const io = yield* CliIo
          const db = options.db
          const given = Option.getOrUndefined(options.session)
          yield* checkSessionName(given, "--session")
          yield* checkReadable(db)
          const wanted = given === undefined ? undefined : yield* storedSessionId(db, given)
          const program = Effect.gen(function* () {
            const readModels = yield* ReadModels.ReadModels
            const sessions = yield* orCliError(readModels.sessions)
            const chosen = wanted === undefined ? sessions : sessions.filter((s) => s.sessionId === wanted)
            if (wanted !== undefined && chosen.length === 0)
              return yield* new CliError({ message: `unknown session ${wanted} in ${db}` })
            const total = chosen.reduce((sum, s) => sum + s.version, 0)
            const progress = Progress.start(io, "rebuild:", "events", { total })
            for (const session of chosen) {
              yield* orCliError(readModels.rebuild(session.sessionId))
              progress.advance(session.version)
            }
            progress.done()
            io.out(
              `rebuilt the read models of ${plural(chosen.length, "session")} (${plural(total, "event")}) in ${db}`,
            )
          })
          yield* orCliError(Effect.provide(program, ReadModels.layerSqlite({ filename: db })))
        }),
      ),
  ).pipe(
    Command.withDescription(
      "Rewrites the SQL read models (window, usage, compactions, pruned outputs, audit) of one session or of every session by replaying its events. The events are never changed; the database must exist.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([
      { command: "pivot rebuild --db .pivot/pivot.db", description: "every session" },
      { command: "pivot rebuild --db .pivot/pivot.db --session ses_abc", description: "one session" },
    ]),
  ),
}
