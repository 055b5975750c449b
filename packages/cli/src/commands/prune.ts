/**
 * `pivot prune <export.json | --db FILE --session ID> --dry-run [--at VERSION] [--format text|json]`: which old tool
 * outputs `Prune` would clear now (spec §2.14) and how many tokens that frees. It never writes: `--dry-run` is
 * required so the command line says so. `--format json` prints `{ "parts": ["<part id>", …], "tokensFreed": N }`.
 */
import { Conversation, Prune } from "@pivot/core"
import { Replay } from "@pivot/store"
import { Effect } from "effect"
import { type Command, Exit, parseOptions, UsageError } from "./Command.ts"
import { runProgram } from "./Program.ts"
import { orCliError, parseAt, parseFormat, parseSource, sourceSpec, versionOf, withSession } from "./Source.ts"
import { columns, num, plural } from "./Text.ts"

/** The `prune` command. */
export const prune: Command = {
  name: "prune",
  args: "<export.json | --db FILE --session ID> --dry-run [--at VERSION] [--format text|json]",
  summary: "which old tool outputs a prune would clear now, and the tokens it would free (writes nothing)",
  run: (args, io) => {
    const options = parseOptions(args, { ...sourceSpec, flags: ["dry-run"] })
    const source = parseSource(options)
    const at = parseAt(options)
    const format = parseFormat(options)
    if (!options.flags.has("dry-run"))
      throw new UsageError("only --dry-run is supported: prune shows what it would clear and writes nothing")
    const program = withSession(source, (opened) =>
      Effect.gen(function* () {
        const version = yield* versionOf(opened, at)
        const state = yield* orCliError(Replay.stateAt(opened.sessionId, version))
        const selection = Prune.selectNewestFirst(Conversation.newestFirst(state.window.conversation))
        if (format === "json") {
          io.out(JSON.stringify({ parts: selection.parts.map((p) => p.partId), tokensFreed: selection.tokensFreed }))
          return Exit.ok
        }
        const where = `session ${opened.sessionId} at version ${version} of ${opened.head}`
        if (selection.parts.length === 0) {
          io.out(
            `prune --dry-run, ${where}: nothing to clear (a prune clears old tool outputs only when that frees more ` +
              `than ${num(Prune.PRUNE_MINIMUM)} tokens beyond the newest ${num(Prune.PRUNE_PROTECT)})`,
          )
          return Exit.ok
        }
        io.out(
          `prune --dry-run, ${where}: would clear ${plural(selection.parts.length, "tool output")}, ` +
            `freeing ~${num(selection.tokensFreed)} tokens`,
        )
        const rows = [
          ["part", "tool", "message", "tokens"],
          ...selection.parts.map((p) => [p.partId, p.tool, p.messageId, num(p.tokens)]),
        ]
        for (const line of columns(rows)) io.out(line)
        return Exit.ok
      }),
    )
    return runProgram("prune", io, program)
  },
}
