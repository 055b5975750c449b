/**
 * `pivot import <export.json> [--db FILE] [--encrypt]`: stores an OpenCode session (the JSON `opencode export <id>` prints) in a
 * pivot database, with its read models, and prints the session id and what was stored.
 *
 * Importing is all or nothing, and idempotent per session: importing the same export again is a no-op (exit 0,
 * "nothing to import"); importing a different export of a session already stored is refused (exit 1), since events
 * are never rewritten. `--encrypt` stores the session's text encrypted with its own key (crypto-shredding), so
 * `pivot forget` can erase it later.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Events } from "@pivot/core"
import { ReadModels, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { type Command, Exit, parseOptions, UsageError } from "./Command.ts"
import { runProgram } from "./Program.ts"
import { CliError, DEFAULT_DB, describe, importFile, orCliError } from "./Source.ts"
import { countByType, num, plural } from "./Text.ts"

const sameEvents = (a: ReadonlyArray<Events.Event>, b: ReadonlyArray<Events.Event>) =>
  a.length === b.length &&
  a.every((event, i) => JSON.stringify(Events.encode(event)) === JSON.stringify(Events.encode(b[i]!)))

/** The `import` command. */
export const importCommand: Command = {
  name: "import",
  args: "<export.json> [--db FILE] [--encrypt]",
  summary: `store an OpenCode session export in a pivot database (default ${DEFAULT_DB}), with its read models`,
  run: (args, io) => {
    const options = parseOptions(args, { values: ["db"], flags: ["encrypt"], positionals: 1 })
    const [file] = options.positionals
    if (file === undefined) throw new UsageError("give the export file to import")
    const db = options.values.db ?? DEFAULT_DB
    const program = Effect.gen(function* () {
      const imported = yield* importFile(file)
      const { sessionId, events, report } = imported
      yield* Effect.try({
        try: () => fs.mkdirSync(path.dirname(path.resolve(db)), { recursive: true }),
        catch: (cause) => new CliError({ message: `cannot create the directory of ${db}: ${describe(cause)}` }),
      })
      const store = Effect.gen(function* () {
        const readModels = yield* ReadModels.ReadModels
        const stored = yield* SessionLog.version(sessionId)
        if (stored > 0) {
          const log = yield* SessionLog.read(sessionId)
          if (
            sameEvents(
              log.map((l) => l.event),
              events,
            )
          ) {
            io.out(`session ${sessionId} is already in ${db} (${plural(stored, "event")}, the same): nothing to import`)
            return Exit.ok
          }
          return yield* new CliError({
            message: `session ${sessionId} is already in ${db} with ${plural(stored, "event")} that differ from this export (${plural(events.length, "event")}); nothing imported`,
          })
        }
        const entries = SessionLog.fromEvents(sessionId, events).map(({ event, meta }) => ({ id: meta.id, event }))
        yield* SessionLog.append(sessionId, "no-stream", entries, { seal: options.flags.has("encrypt") })
        const window = yield* readModels.window(sessionId)
        const pivots = (yield* readModels.compactions(sessionId)).filter(
          (c) => c.status === "finished" || c.status === "continued",
        )
        const pruned = yield* readModels.pruned(sessionId)
        io.out(`imported session ${sessionId} into ${db}`)
        io.out(
          `  ${plural(events.length, "event")}: ${countByType(events)
            .map(([type, n]) => `${num(n)} ${type}`)
            .join(", ")}`,
        )
        const dropped = Object.entries(report.dropped)
        io.out(
          `  ${plural(report.messages, "message")}, ${plural(report.parts, "part")}` +
            (dropped.length === 0 ? "" : ` (left out: ${dropped.map(([type, n]) => `${n} ${type}`).join(", ")})`),
        )
        io.out(
          `  window: ${plural(window.length, "message")} · ${plural(pivots.length, "pivot")} · ${plural(pruned.entries.length, "pruned output")}`,
        )
        for (const warning of report.warnings) io.out(`  note: ${warning}`)
        io.out(`next: pivot inspect --db ${db} --session ${sessionId}`)
        return Exit.ok
      })
      return yield* orCliError(Effect.provide(store, ReadModels.layerSqlite({ filename: db })))
    })
    return runProgram("import", io, program)
  },
}
