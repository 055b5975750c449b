/**
 * `pivot forget --db FILE <session>`: erases a session without rewriting its history (crypto-shredding). Deletes
 * the session's key, so every field recorded encrypted (`encryptAtRest`) reads as `[ERASED]` from now on, drops the
 * read models' plain copies, and appends `SessionForgotten` (so running writers notice); events, versions, usage and
 * the compaction and prune decisions stay. The sessions forked from it are forgotten too. A repeated forget with no
 * text recorded since the last one does nothing (and says so). The library
 * function is `SessionLog.forget`; this file only parses arguments and prints.
 */
import { ReadModels, SessionLog } from "@pivot/store"
import { Argument, Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { listing } from "./Catalog.ts"
import { CliIo, type Entry, Exit, Reported, report, UsageError } from "./Command.ts"
import { sqliteFile } from "./Flags.ts"
import { checkReadable, checkSessionName, orCliError, storedSessionId } from "./Source.ts"

const { synopsis, summary } = listing("forget")

/** The `forget` command. */
export const forget: Entry = {
  name: "forget",
  synopsis,
  command: Command.make(
    "forget",
    {
      session: Argument.String("session").pipe(
        Argument.withDescription("the session whose encrypted fields to erase"),
        Argument.optional,
      ),
      db: Flag.String("db").pipe(
        sqliteFile,
        Flag.withMetavar("FILE"),
        Flag.withDescription("the pivot database (required; it must exist)"),
        Flag.optional,
      ),
    },
    (options) =>
      report(
        "forget",
        synopsis,
        Effect.gen(function* () {
          const io = yield* CliIo
          if (Option.isNone(options.db)) return yield* new UsageError({ message: "--db FILE is required" })
          if (Option.isNone(options.session))
            return yield* new UsageError({ message: "the session to forget is required" })
          yield* checkSessionName(options.session.value, "the session")
          const db = options.db.value
          // Never create a database: forgetting in a mistyped path must not leave an empty store behind.
          yield* checkReadable(db)
          const sessionId = yield* storedSessionId(db, options.session.value)
          const forgotten = yield* orCliError(
            Effect.provide(SessionLog.forget(sessionId), ReadModels.layerSqlite({ filename: db })),
          )
          io.out(
            forgotten.alreadyForgotten
              ? `session ${sessionId} in ${db} was already forgotten, and no text was recorded since: nothing to erase, nothing recorded`
              : forgotten.keyDeleted
                ? `forgot session ${sessionId} in ${db}: its key is deleted; its encrypted fields now read as [ERASED]`
                : `session ${sessionId} in ${db} has no key (nothing of it was recorded encrypted, or it was forgotten before); its read models were dropped`,
          )
          // Forks hold copies of the session's text under their own keys: they are forgotten with it.
          const already = new Set(forgotten.forksAlreadyForgotten)
          const now = forgotten.forks.filter((fork) => !already.has(fork))
          const forks = (list: ReadonlyArray<string>) => (list.length === 1 ? "fork" : `${list.length} forks`)
          if (now.length > 0) io.out(`forgot its ${forks(now)} too: ${now.join(", ")}`)
          if (already.size > 0)
            io.out(`its ${forks([...already])} already forgotten, with no text since: ${[...already].join(", ")}`)
          if (!forgotten.logCleared) {
            io.err(
              `pivot forget: another connection holds an older snapshot, so the write-ahead log could not be emptied; ` +
                `run pivot forget again once it has closed`,
            )
            return yield* new Reported({ code: Exit.failure })
          }
        }),
      ),
  ).pipe(
    Command.withDescription(
      "Erases a session for good without rewriting its history (crypto-shredding): deletes the session's key, so every field recorded encrypted (encryptAtRest, import --encrypt) reads as [ERASED], and records SessionForgotten so that a program still running on the session drops what it read; events, usage and the compaction and prune decisions stay. The sessions forked from it (they hold copies of its text) are forgotten too. Forgetting again a session with no text recorded since its last forget changes nothing and records nothing. Never creates a database.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([{ command: "pivot forget --db .pivot/pivot.db ses_abc", description: "forget one session" }]),
  ),
}
