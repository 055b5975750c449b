/**
 * `pivot fork --db FILE <session> --into NAME [--at VERSION] [--encrypt]`: forks a stored session into a new one
 * whose window at the fork is the parent's at VERSION (default: its newest); the parent is unchanged (spec F8). The
 * library function is `ContextManager.fork` (`Sessions.fork`); this file only parses arguments and prints.
 */
import { Ids } from "@pivot/core"
import { ReadModels } from "@pivot/store"
import { Argument, Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { listing } from "./Catalog.ts"
import { CliIo, type Entry, report, UsageError } from "./Command.ts"
import { countFlag, sqliteFile } from "./Flags.ts"
import { checkReadable, checkSessionName, orCliError, storedSessionId } from "./Source.ts"

const { synopsis, summary } = listing("fork")

/** The `fork` command. */
export const fork: Entry = {
  name: "fork",
  synopsis,
  command: Command.make(
    "fork",
    {
      session: Argument.String("session").pipe(Argument.withDescription("the session to fork"), Argument.optional),
      db: Flag.String("db").pipe(
        sqliteFile,
        Flag.withMetavar("FILE"),
        Flag.withDescription("the pivot database (required; it must exist)"),
        Flag.optional,
      ),
      into: Flag.String("into").pipe(
        Flag.withMetavar("NAME"),
        Flag.withDescription("the new session: an id (ses_…) or any name, mapped as createPivot maps names"),
        Flag.optional,
      ),
      at: countFlag("at", "VERSION", "fork the session as it stood right after event VERSION (default: now)"),
      encrypt: Flag.Boolean("encrypt").pipe(
        Flag.withDescription(
          "store the child's text encrypted with its own key (see pivot forget); a fork of an encrypted session always is",
        ),
        Flag.withDefault(false),
      ),
    },
    (options) =>
      report(
        "fork",
        synopsis,
        Effect.gen(function* () {
          const io = yield* CliIo
          if (Option.isNone(options.db)) return yield* new UsageError({ message: "--db FILE is required" })
          if (Option.isNone(options.session))
            return yield* new UsageError({ message: "the session to fork is required" })
          yield* checkSessionName(options.session.value, "the session")
          if (Option.isNone(options.into))
            return yield* new UsageError({ message: "--into NAME is required (the new session's id or name)" })
          const db = options.db.value
          const child = Ids.sessionIdOf(options.into.value)
          if (child === undefined)
            return yield* new UsageError({
              message: `--into ${JSON.stringify(options.into.value)} cannot name a session: 1 to ${Ids.MAX_SESSION_NAME} characters, not blank, no control characters`,
            })
          // Never create a database: a fork needs a stored parent.
          yield* checkReadable(db)
          const parent = yield* storedSessionId(db, options.session.value)
          // Loaded only when forking: the runtime's modules (and its model catalogue) cost every other command
          // start-up time, an import's included.
          const { Sessions } = yield* Effect.promise(() => import("@pivot/runtime"))
          const layer = Sessions.Sessions.layer({ encryptAtRest: options.encrypt }).pipe(
            Layer.provide(Ids.Ids.layer),
            Layer.provide(ReadModels.layerSqlite({ filename: db })),
          )
          const forked = yield* orCliError(
            Effect.provide(
              Effect.flatMap(Sessions.Sessions, (sessions) =>
                sessions.fork(parent, child, Option.getOrUndefined(options.at)),
              ),
              layer,
            ),
          )
          const lineage = forked.version - forked.parentVersion
          io.out(
            `forked session ${forked.parent} at version ${forked.parentVersion} into ${forked.sessionId} ` +
              `(${forked.version} events: the parent's first ${forked.parentVersion}, then ${lineage === 1 ? "SessionForked" : `${lineage} SessionForked, one per ancestor`}); ` +
              `the parent is unchanged${forked.encrypted && !options.encrypt ? "; encrypted like its parent (with its own key)" : ""}`,
          )
        }),
      ),
  ).pipe(
    Command.withDescription(
      "Forks a stored session into a new one: the child starts with copies of the parent's events up to VERSION (default: all), then a SessionForked event naming its parent, so its window there is the parent's window at VERSION; the parent is unchanged and both go on independently. Never creates a database.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([
      {
        command: "pivot fork --db .pivot/pivot.db ses_abc --into try-another-fix --at 120",
        description: "fork ses_abc as it stood after event 120",
      },
    ]),
  ),
}
