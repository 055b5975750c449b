/**
 * `pivot projections [list|status|rebuild NAME] [--db FILE] [--format text|json]`: the read side of a database —
 * the built-in read models and users' projections (registered by the programs that write the store), with their
 * progress, and a rebuild from the events. `list` and `status` never write.
 */
import { Projections, ReadModels } from "@pivot/store"
import * as Clock from "effect/Clock"
import { Argument, Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { listing } from "./Catalog.ts"
import { CliError, CliIo, type Entry, report, UsageError } from "./Command.ts"
import { formatFlag, sqliteFile } from "./Flags.ts"
import { checkReadable, DEFAULT_DB, orCliError } from "./Source.ts"
import { plural } from "./Text.ts"

const { synopsis, summary } = listing("projections")

const ACTIONS = ["list", "status", "rebuild"] as const

const progressOf = (
  status: Projections.Status | undefined,
  kind: Projections.ReadSideEntry["kind"],
  now: number,
): string => {
  if (status === undefined) return "kept inline with every append"
  const state = status.ready ? (status.lag === 0 ? "current" : `${plural(status.lag, "event")} behind`) : "building"
  const failing = status.failures > 0 ? `, failing (${status.failures}× in a row: ${status.error ?? "?"})` : ""
  // A lease past its time is held by no one (its process ended or stalled): the next process takes it over.
  const held = status.owner !== undefined && (status.leaseUntil === undefined || status.leaseUntil >= now)
  const lease = held ? `, lease ${status.owner}` : ""
  // A built-in read model's states are its sessions' rows.
  const keys = plural(status.keys, kind === "built-in" ? "session" : "state")
  return `${state} at ${status.checkpoint}/${status.head}, ${keys}${failing}${lease}`
}

/** The `projections` command. */
export const projections: Entry = {
  name: "projections",
  synopsis,
  command: Command.make(
    "projections",
    {
      action: Argument.String("action").pipe(
        Argument.withDescription("list (default), status, or rebuild NAME"),
        Argument.optional,
      ),
      name: Argument.String("name").pipe(Argument.withDescription("the projection to rebuild"), Argument.optional),
      db: Flag.String("db").pipe(
        sqliteFile,
        Flag.withMetavar("FILE"),
        Flag.withDescription(`the pivot database (default ${DEFAULT_DB}); it must exist`),
        Flag.withDefault(DEFAULT_DB),
      ),
      format: formatFlag,
    },
    (options) =>
      report(
        "projections",
        synopsis,
        Effect.gen(function* () {
          const io = yield* CliIo
          const action = Option.getOrElse(options.action, () => "list")
          if (!(ACTIONS as ReadonlyArray<string>).includes(action))
            return yield* new UsageError({ message: `unknown action ${action}: one of ${ACTIONS.join(", ")}` })
          const name = Option.getOrUndefined(options.name)
          if (action === "rebuild" && name === undefined)
            return yield* new UsageError({ message: "rebuild needs the NAME of a projection" })
          if (action !== "rebuild" && name !== undefined)
            return yield* new UsageError({ message: `${action} takes no NAME (got ${name})` })
          const db = options.db
          yield* checkReadable(db)
          // Read-only first: `list` and `status` need nothing more, and `rebuild` of a name the database does not
          // know is refused before anything is opened for writing (opening it read-write catches up read models).
          const [stored, builtIns] = yield* orCliError(
            Effect.provide(
              Effect.gen(function* () {
                const projections = yield* Projections.Projections
                return [yield* projections.status, yield* projections.builtIns] as const
              }),
              Projections.layerSqlite({ filename: db, readonly: true }),
            ),
          )
          const rows = Projections.readSide(stored, builtIns)
          if (action !== "rebuild") {
            if (options.format === "json") {
              io.out(JSON.stringify(rows))
              return
            }
            const now = yield* Clock.currentTimeMillis
            for (const row of rows) {
              const head = `${row.name} v${row.version}  ${row.kind}, ${row.mode}, per ${row.scope === "global" ? "store" : "session"}`
              io.out(action === "status" ? `${head}: ${progressOf(row.status, row.kind, now)}` : head)
            }
            return
          }
          const builtIn = ReadModels.names.some((model) => model.name === name)
          if (!builtIn && !rows.some((row) => row.name === name))
            return yield* new CliError({
              message: `unknown projection ${name} in ${db} (known: ${rows.map((row) => row.name).join(", ")})`,
            })
          const program = Effect.gen(function* () {
            if (builtIn) {
              const sessions = yield* orCliError((yield* ReadModels.ReadModels).rebuild({ all: true }))
              io.out(
                options.format === "json"
                  ? JSON.stringify({ name, kind: "built-in", sessions })
                  : `rebuilt the built-in read models of ${plural(sessions, "session")} in ${db}`,
              )
              return
            }
            const reset = yield* orCliError((yield* Projections.Projections).rebuild(name!))
            if (reset === 0) {
              const known = Projections.readSide(yield* orCliError((yield* Projections.Projections).status)).map(
                (row) => row.name,
              )
              return yield* new CliError({
                message: `unknown projection ${name} in ${db} (known: ${known.join(", ")})`,
              })
            }
            io.out(
              options.format === "json"
                ? JSON.stringify({ name, kind: "projection", reset: true })
                : `reset ${name} in ${db}: the next process that registers it rebuilds it from the first event (its rows are deleted)`,
            )
          })
          yield* orCliError(Effect.provide(program, Projections.layerSqlite({ filename: db })))
        }),
      ),
  ).pipe(
    Command.withDescription(
      "Lists the read side of a database: the built-in read models and your projections (registered by the programs that write it), with their versions, progress, lag and failures; rebuild NAME rebuilds a built-in read model from the events, or resets one of yours so that the next process that registers it rebuilds it.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([
      { command: "pivot projections --db .pivot/pivot.db", description: "every read model and projection" },
      { command: "pivot projections status --db .pivot/pivot.db", description: "progress, lag and failures" },
      { command: "pivot projections rebuild pruned-per-tool --db .pivot/pivot.db", description: "rebuild one" },
    ]),
  ),
}
