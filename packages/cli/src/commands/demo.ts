/**
 * `pivot demo [--example FILE] [--json] [--db FILE]`: a long coding-agent session through the AI SDK on pivot's
 * runtime, stored in SQLite (`.pivot/demo.db` by default, a fresh session each run). The models are scripted, or an
 * OpenAI-compatible endpoint when `PIVOT_BASE_URL` and `PIVOT_MODEL` are set. It shows each call's context usage,
 * every prune, pivot and continue as it happens, and ends with the `pivot` commands that replay each pivot. `--json`
 * prints the session's events as JSON lines instead.
 */
import { Events } from "@pivot/core"
import { DEFAULT_DB, endpointFrom, run as runDemo } from "../demo/Demo.ts"
import * as Example from "../demo/Example.ts"
import { forOutput, plain } from "../demo/Style.ts"
import { type Command, Exit, parseOptions } from "./Command.ts"

/** The `demo` command. */
export const demo: Command = {
  name: "demo",
  args: "[--example FILE] [--json] [--db FILE]",
  summary: "a coding-agent session on pivot through the AI SDK: usage, prunes, pivots, then the replay commands",
  run: async (args, io) => {
    const options = parseOptions(args, { values: ["example", "db"], flags: ["json"] })
    let example: Example.Example
    try {
      example = Example.load(options.values.example ?? Example.bundledPath)
    } catch (error) {
      io.err(`pivot demo: ${(error as Error).message}`)
      return Exit.failure
    }
    const json = options.flags.has("json")
    const endpoint = endpointFrom(io.env)
    let outcome: Awaited<ReturnType<typeof runDemo>>
    try {
      outcome = await runDemo({
        example,
        db: options.values.db ?? DEFAULT_DB,
        out: json ? () => {} : io.out,
        style: json ? plain : forOutput(io.isTTY, io.env),
        width: Math.max(60, Math.min(io.columns ?? 100, 120)),
        endpoint,
      })
    } catch (error) {
      io.err(`pivot demo: ${error instanceof Error ? error.message : String(error)}`)
      return Exit.failure
    }
    if (json) for (const { event } of outcome.events) io.out(JSON.stringify(Events.encode(event)))
    return outcome.error === undefined ? Exit.ok : Exit.failure
  },
}
