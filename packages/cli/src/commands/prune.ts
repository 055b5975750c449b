/**
 * `pivot prune <export.json | --db FILE --session ID> --dry-run [--at VERSION] [--protect N] [--minimum N]
 * [--protected-tools A,B] [--format text|json]`: which old tool outputs `Prune` would clear now (spec §2.14) and how many tokens that frees.
 * It never writes: `--dry-run` is required so the command line says so. `--format json` prints
 * `{ "parts": ["<part id>", …], "tokensFreed": N }`.
 *
 * The thresholds a session ran with are not in its events (a `Prune` command's overrides leave only the
 * `PartCompacted` events they chose), so the dry run uses OpenCode's unless `--protect`/`--minimum`/`--protected-tools`
 * give the ones the session ran with (`ContextManager`'s `prune` option, `Prune.sized` by `createPivot`); the text
 * names them.
 */
import { Conversation, Prune } from "@pivot/core"
import { Replay } from "@pivot/store"
import { Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { listing } from "./Catalog.ts"
import { CliIo, type Entry, report, UsageError } from "./Command.ts"
import { countFlag, formatFlag, limitFlags, namesFlag, sourceFlags } from "./Flags.ts"
import { omitted, parseLimits, select } from "./Limits.ts"
import { orCliError, parseSource, versionOf, withSession } from "./Source.ts"
import { columns, num, plural } from "./Text.ts"

const { synopsis, summary } = listing("prune")

/** The `prune` command. */
export const prune: Entry = {
  name: "prune",
  synopsis,
  command: Command.make(
    "prune",
    {
      ...sourceFlags,
      dryRun: Flag.Boolean("dry-run").pipe(
        Flag.withDescription("required: show what a prune would clear; write nothing"),
        Flag.withDefault(false),
      ),
      at: countFlag("at", "VERSION", "as the session stood right after event VERSION"),
      protect: countFlag(
        "protect",
        "TOKENS",
        `the newest tool-output tokens a prune keeps (default OpenCode's ${num(Prune.PRUNE_PROTECT)}; the session's prune.protect if it ran with one)`,
      ),
      minimum: countFlag(
        "minimum",
        "TOKENS",
        `prune only when it frees more than this (default OpenCode's ${num(Prune.PRUNE_MINIMUM)}; the session's prune.minimum if it ran with one)`,
      ),
      protectedTools: namesFlag(
        "protected-tools",
        "A,B",
        `the tools whose outputs a prune never clears nor counts, comma-separated (default OpenCode's ${Prune.PRUNE_PROTECTED_TOOLS.join(",")}; the session's prune.protectedTools if it ran with them)`,
      ),
      format: formatFlag,
      ...limitFlags("row number"),
    },
    (options) =>
      report(
        "prune",
        synopsis,
        Effect.gen(function* () {
          const io = yield* CliIo
          const source = yield* parseSource(options)
          const limits = yield* parseLimits(options)
          const at = Option.getOrUndefined(options.at)
          if (!options.dryRun)
            return yield* new UsageError({
              message: "only --dry-run is supported: prune shows what it would clear and writes nothing",
            })
          yield* withSession(source, (opened) =>
            Effect.gen(function* () {
              const version = yield* versionOf(opened, at)
              const state = yield* orCliError(Replay.stateAt(opened.sessionId, version))
              const protect = Option.getOrElse(options.protect, () => Prune.PRUNE_PROTECT)
              const minimum = Option.getOrElse(options.minimum, () => Prune.PRUNE_MINIMUM)
              const protectedTools = Option.getOrElse(options.protectedTools, () => Prune.PRUNE_PROTECTED_TOOLS)
              const selection = Prune.selectNewestFirst(Conversation.newestFirst(state.window.conversation), {
                protect,
                minimum,
                protectedTools,
              })
              const parts = select(selection.parts, (_, i) => i + 1, limits)
              if (options.format === "json") {
                io.out(JSON.stringify({ parts: parts.map((p) => p.partId), tokensFreed: selection.tokensFreed }))
                return
              }
              const where = `session ${opened.sessionId} at version ${version} of ${opened.head}`
              // Which thresholds, since the session's own are not recorded: a user comparing with a run that pruned
              // under other thresholds sees why the answers differ, and how to ask with those.
              const given =
                Option.isSome(options.protect) ||
                Option.isSome(options.minimum) ||
                Option.isSome(options.protectedTools)
              // The tools as the flag takes them (A,B), so the commas of this list stay unambiguous.
              const thresholds =
                `protect ${num(protect)}, minimum ${num(minimum)}, protected tools ${protectedTools.join(",")}` +
                (given
                  ? ""
                  : ", OpenCode's; for a session run with others, give them: --protect N --minimum N --protected-tools A,B")
              if (selection.parts.length === 0) {
                io.out(
                  `prune --dry-run, ${where}: nothing to clear (a prune clears old tool outputs only when that frees ` +
                    `more than the minimum beyond the newest protect tokens: ${thresholds})`,
                )
                return
              }
              io.out(
                `prune --dry-run, ${where}: would clear ${plural(selection.parts.length, "tool output")}, ` +
                  `freeing ~${num(selection.tokensFreed)} tokens (${thresholds})`,
              )
              const rows = [
                ["part", "tool", "message", "tokens"],
                ...parts.map((p) => [p.partId, p.tool, p.messageId, num(p.tokens)]),
              ]
              for (const line of columns(rows)) io.out(line)
              const note = omitted(parts.length, selection.parts.length, "tool outputs")
              if (note !== undefined) io.out(note)
            }),
          )
        }),
      ),
  ).pipe(
    Command.withDescription(
      "Which old tool outputs a prune would clear now (or right after event VERSION), and the tokens that frees. It never writes: --dry-run is required so the command line says so. The thresholds and protected tools are OpenCode's unless --protect/--minimum/--protected-tools give the ones the session ran with (they are not recorded); the text names those used. --format json prints { parts: [<part id>, …], tokensFreed: N }.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([
      { command: "pivot prune session.json --dry-run", description: "what a prune would clear now" },
      {
        command: "pivot prune --db .pivot/pivot.db --dry-run --at 40 --limit 10",
        description: "at event 40, first 10",
      },
    ]),
  ),
}
