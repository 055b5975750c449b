/**
 * `pivot forget --db FILE <session>`: erases a session without rewriting its history (crypto-shredding). Deletes
 * the session's key, so every field recorded encrypted (`encryptAtRest`) reads as `[ERASED]` from now on, and drops
 * the read models' plain copies; events, versions, usage and the compaction and prune decisions stay. The library
 * function is `SessionLog.forget`; this file only parses arguments and prints.
 */
import * as fs from "node:fs"
import { ReadModels, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { type Command, Exit, parseOptions, UsageError } from "./Command.ts"
import { runProgram } from "./Program.ts"
import { CliError, orCliError } from "./Source.ts"

/** The `forget` command. */
export const forget: Command = {
  name: "forget",
  args: "--db FILE <session>",
  summary: "erase a session's encrypted fields for good by deleting its key (crypto-shredding); history stays",
  run: (args, io) => {
    const options = parseOptions(args, { values: ["db"], flags: [], positionals: 1 })
    const db = options.values.db
    const sessionId = options.positionals[0]
    if (db === undefined) throw new UsageError("--db FILE is required")
    if (sessionId === undefined) throw new UsageError("the session to forget is required")
    const program = Effect.gen(function* () {
      // Never create a database: forgetting in a mistyped path must not leave an empty store behind.
      if (!fs.existsSync(db)) return yield* new CliError({ message: `no database at ${db}` })
      const forgotten = yield* orCliError(
        Effect.provide(SessionLog.forget(sessionId), ReadModels.layerSqlite({ filename: db })),
      )
      io.out(
        forgotten.keyDeleted
          ? `forgot session ${sessionId} in ${db}: its key is deleted; its encrypted fields now read as [ERASED]`
          : `session ${sessionId} in ${db} has no key (nothing of it was recorded encrypted, or it was forgotten before); its read models were dropped`,
      )
      if (!forgotten.logCleared)
        io.err(
          `pivot forget: another connection holds an older snapshot, so the write-ahead log could not be emptied; ` +
            `run pivot forget again once it has closed`,
        )
      return forgotten.logCleared ? Exit.ok : Exit.failure
    })
    return runProgram("forget", io, program)
  },
}
