/**
 * `pivot demo [--example FILE] [--json]`: plays an example coding session through the core and shows, turn by turn,
 * the context usage, each prune and pivot, then the final window; `--json` prints the events as JSON lines instead.
 */
import { Events } from "@pivot/core"
import { play } from "../demo/Driver.ts"
import * as Example from "../demo/Example.ts"
import * as Report from "../demo/Report.ts"
import * as Story from "../demo/Story.ts"
import { forOutput } from "../demo/Style.ts"
import { type Command, Exit, parseOptions } from "./Command.ts"

/** The `demo` command. */
export const demo: Command = {
  name: "demo",
  args: "[--example FILE] [--json]",
  summary: "play an example coding session through the core: context usage, prunes, pivots, final window",
  run: (args, io) => {
    const options = parseOptions(args, { values: ["example"], flags: ["json"] })
    let example: Example.Example
    try {
      example = Example.load(options.values.example ?? Example.bundledPath)
    } catch (error) {
      io.err(`pivot demo: ${(error as Error).message}`)
      return Exit.failure
    }
    const { events } = play(example)
    if (options.flags.has("json")) {
      for (const event of events) io.out(JSON.stringify(Events.encode(event)))
      return Exit.ok
    }
    const story = Story.read(events, {
      limits: example.model.limits,
      config: example.config,
      systemPromptTokens: example.systemPromptTokens,
    })
    const width = Math.max(60, Math.min(io.columns ?? 110, 140))
    for (const line of Report.format(example, story, { style: forOutput(io.isTTY, io.env), width })) io.out(line)
    return Exit.ok
  },
}
