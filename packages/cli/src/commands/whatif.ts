/**
 * `pivot whatif <export.json | --db FILE --session ID> [--strategies A,B] [--prices FILE] [--context N] [--output N]
 * [--cache anthropic|openai] [--format text|json]`: the session's recorded inputs replayed under each built-in strategy
 * (`WhatIf` in the runtime), side by side: what each would have billed (input, cache reads and writes, at the model's
 * price), tokens sent, compactions (with the recorded summary or pivot's deterministic one), prunes, and the
 * session's artifacts still in view. Read-only: the database is opened read-only; every replay runs in memory.
 */
import type { WhatIf, WhatIfTable } from "@pivot/runtime"
import { Command, Flag } from "effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { listing } from "./Catalog.ts"
import { CliError, CliIo, type Entry, report, UsageError } from "./Command.ts"
import { countFlag, formatFlag, namesFlag, pricesFlag, sourceFlags } from "./Flags.ts"
import { pricesOf } from "./Prices.ts"
import { parseSource, withSession } from "./Source.ts"
import { columns, num } from "./Text.ts"

const times = (n: number): string => `${Number(n.toFixed(3))}×`

/**
 * The comparison as text: a header, one column per strategy (the rows, labels and legend of `WhatIfTable`, their one
 * home, which the viewer shows too), then what the figures include.
 */
export const formatText = (view: WhatIf.Comparison, table: typeof WhatIfTable): Array<string> => {
  const model = `${view.model.providerId}/${view.model.modelId}`
  const rates = view.rates
  const rows = [
    ["", ...view.runs.map((r) => r.strategy)],
    ...table.rows(view).map((row) => [`${row.detail ? "  " : ""}${row.label}`, ...row.cells]),
  ]
  const left = [
    view.providerErrors > 0 ? `${num(view.providerErrors)} provider error(s)` : undefined,
    view.manualCompactions > 0 ? `${num(view.manualCompactions)} manual compaction(s)` : undefined,
  ].filter((s) => s !== undefined)
  return [
    `What-if for ${view.sessionId}: ${model} (context ${num(view.limits.context)}, output ${num(view.limits.output)})`,
    `Each strategy replays the recorded inputs; system prompt and tools ~${num(view.overhead)} tokens per call (recorded usage minus the window's estimate).`,
    `Billed through a simulated ${view.rules} prompt cache (5-minute TTL) at ${view.priced ? "the model's price" : `${view.rules}'s default multipliers`}: read ${times(rates.read)}, write ${times(rates.write)}, output ${times(rates.output)} the input price.`,
    "",
    ...columns(rows),
    "",
    ...table.legend,
    ...(left.length > 0 ? [`Left out of the replay: ${left.join(", ")}.`] : []),
  ]
}

const { synopsis, summary } = listing("whatif")

/** The `whatif` command. */
export const whatif: Entry = {
  name: "whatif",
  synopsis,
  command: Command.make(
    "whatif",
    {
      ...sourceFlags,
      strategies: namesFlag(
        "strategies",
        "A,B",
        "the strategies to compare, comma-separated: opencode-1.17, opencode-1.18, pivot, cache-aware (default all, in that order)",
      ),
      prices: pricesFlag,
      context: countFlag("context", "N", "the model's context window in tokens (default the model catalog's)"),
      output: countFlag("output", "N", "the model's output limit in tokens (default the catalog's, else context / 8)"),
      cache: Flag.Literals("cache", ["anthropic", "openai"]).pipe(
        Flag.withDescription("whose prompt-cache rules bill the calls (default the model's provider's; else openai)"),
        Flag.optional,
      ),
      format: formatFlag,
    },
    (options) =>
      report(
        "whatif",
        synopsis,
        Effect.gen(function* () {
          const io = yield* CliIo
          const source = yield* parseSource(options)
          const prices = yield* pricesOf(options.prices)
          const { WhatIf, WhatIfTable } = yield* Effect.promise(() => import("@pivot/runtime"))
          const names = Option.getOrUndefined(options.strategies)
          const strategies =
            names === undefined
              ? undefined
              : yield* WhatIf.strategiesOf(names).pipe(
                  Effect.mapError((error) => new UsageError({ message: error.message })),
                )
          const context = Option.getOrUndefined(options.context)
          if (context === 0) return yield* new UsageError({ message: "--context must be above 0" })
          const outcome = yield* withSession(source, (opened) =>
            Effect.gen(function* () {
              const log = yield* opened.log
              return yield* Effect.result(
                WhatIf.session(
                  opened.sessionId,
                  log.map((l) => l.event),
                  {
                    strategies,
                    prices,
                    context,
                    output: Option.getOrUndefined(options.output),
                    rules: Option.getOrUndefined(options.cache),
                  },
                ),
              )
            }),
          )
          if (Result.isFailure(outcome)) {
            const error = outcome.failure
            // Limits the flags made impossible (--context 1, --output above --context) are wrong usage too.
            const flagged = context !== undefined || Option.isSome(options.output)
            return yield* error._tag === "UnknownLimits"
              ? new UsageError({ message: error.describe("--context", "--output") })
              : error._tag === "ImpossibleLimits" && flagged
                ? new UsageError({ message: error.message })
                : new CliError({ message: error.message })
          }
          const comparison = outcome.success
          if (options.format === "json") {
            io.out(JSON.stringify(comparison, null, 2))
            return
          }
          for (const line of formatText(comparison, WhatIfTable)) io.out(line)
        }),
      ),
  ).pipe(
    Command.withDescription(
      "What would this session have cost under another context strategy? Replays the session's recorded inputs (user messages, model steps, tool results) under each built-in strategy in memory and prints them side by side: billed input, cache reads and writes at the model's price (--prices FILE for yours), tokens sent, compactions (the recorded summary where a strategy summarised the same messages, pivot's deterministic one elsewhere), prunes, and the session's artifacts still in view. Nothing is written.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([
      { command: "pivot whatif session.json", description: "an OpenCode export under every strategy" },
      {
        command:
          "pivot whatif --db .pivot/demo.db --context 64000 --output 8000 --strategies opencode-1.17,cache-aware",
        description: "the demo's session (its scripted model is not in the catalog)",
      },
    ]),
  ),
}
