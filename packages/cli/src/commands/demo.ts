/**
 * `pivot demo [--example FILE] [--json] [--db FILE]`: a long coding-agent session through the AI SDK on pivot's
 * runtime, stored in SQLite (`.pivot/demo.db` by default, a fresh session each run). The models are scripted, or an
 * OpenAI-compatible endpoint when `PIVOT_BASE_URL` and `PIVOT_MODEL` are set. It shows each call's context usage,
 * every prune, pivot and continue as it happens, and ends with the `pivot` commands that replay each pivot. `--json`
 * prints the session's events as JSON lines instead.
 */

import { Events } from "@pivot/core"
import { Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Example from "../demo/Example.ts"
import { forOutput, plain } from "../demo/Style.ts"
import { listing } from "./Catalog.ts"
import { CliError, CliIo, type Entry, Exit, Reported, report } from "./Command.ts"
import { sqliteFile } from "./Flags.ts"

const { synopsis, summary } = listing("demo")

/** Where the demo stores its sessions (the same as `Demo.DEFAULT_DB`, which is loaded only when the demo runs). */
const DEFAULT_DB = ".pivot/demo.db"

/** The `demo` command. */
export const demo: Entry = {
  name: "demo",
  synopsis,
  command: Command.make(
    "demo",
    {
      example: Flag.String("example").pipe(
        Flag.withMetavar("FILE"),
        Flag.withDescription("a scripted session to play (default: the bundled one)"),
        Flag.optional,
      ),
      json: Flag.Boolean("json").pipe(
        Flag.withDescription("print the session's events as JSON lines instead"),
        Flag.withDefault(false),
      ),
      db: Flag.String("db").pipe(
        sqliteFile,
        Flag.withMetavar("FILE"),
        Flag.withDescription(`the SQLite database (default ${DEFAULT_DB}; a fresh session each run)`),
        Flag.withDefault(DEFAULT_DB),
      ),
    },
    (options) =>
      report(
        "demo",
        synopsis,
        Effect.gen(function* () {
          const io = yield* CliIo
          const example = yield* Effect.try({
            try: () => Example.load(Option.getOrElse(options.example, () => Example.bundledPath)),
            catch: (error) => new CliError({ message: (error as Error).message }),
          })
          // The AI SDK and the runtime load only when the demo runs: the other commands start faster and smaller.
          const { endpointFrom, run: runDemo } = yield* Effect.promise(() => import("../demo/Demo.ts"))
          const outcome = yield* Effect.tryPromise({
            try: () =>
              runDemo({
                example,
                db: options.db,
                out: options.json ? () => {} : io.out,
                style: options.json ? plain : forOutput(io.isTTY, io.env),
                width: Math.max(60, Math.min(io.columns ?? 100, 120)),
                endpoint: endpointFrom(io.env),
              }),
            catch: (error) => new CliError({ message: error instanceof Error ? error.message : String(error) }),
          })
          if (options.json) for (const { event } of outcome.events) io.out(JSON.stringify(Events.encode(event)))
          // The commentary has told the story of its failure: exit 1 without a second line. With --json there is no
          // commentary, so the failure is the command's one line on stderr.
          if (outcome.error !== undefined)
            return yield* options.json
              ? new CliError({ message: `the turn failed: ${outcome.error}` })
              : new Reported({ code: Exit.failure })
        }),
      ),
  ).pipe(
    Command.withDescription(
      "A coding-agent session on pivot through the AI SDK: each call's context usage, every prune, pivot and continue as it happens, then the pivot commands that replay each pivot. Scripted models, or an OpenAI-compatible endpoint when PIVOT_BASE_URL and PIVOT_MODEL are set.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([
      { command: "pivot demo", description: "the scripted session (what npm start runs)" },
      { command: "pivot demo --json --db /tmp/demo.db | head", description: "its events as JSON lines" },
    ]),
  ),
}
