/**
 * The `pivot inspect` command as effect/cli declares it: its flags, help and examples. The handler is `inspect.ts`'s
 * `run`, which does not import effect/cli, so the plain command line (`Fast.ts`, ADR 0048) runs it without this module.
 */
import { Command } from "effect/cli"
import { listing } from "./Catalog.ts"
import type { Entry } from "./Command.ts"
import { formatFlag, limitFlags, pivotFlag, pricesFlag, sourceFlags } from "./Flags.ts"
import { run } from "./inspect.ts"

const { synopsis, summary } = listing("inspect")

/** The flags and arguments of `pivot inspect` (written at build time for the plain command line, `Precompute.ts`). */
export const flags = {
  ...sourceFlags,
  format: formatFlag,
  prices: pricesFlag,
  ...limitFlags("stream version"),
  pivot: pivotFlag,
}

/** The `inspect` command. */
export const inspect: Entry = {
  name: "inspect",
  synopsis,
  flags,
  command: Command.make("inspect", flags, run).pipe(
    Command.withDescription(
      "A session at a glance for an audit: its events by type, every pivot (what it summarised and kept, tokens before → after, the summariser, the --at version to replay it), compactions that formed no pivot, the prune index, context usage over time, the ledger (what each call was billed with cache reads and writes priced, what each compaction and prune shed, cost, invalidated and saved, which artifacts each summary kept, each call's prefix stability; --prices FILE for your prices), and what the model re-read through context_recall. --limit/--tail/--from/--to keep the rows of those listings by stream version.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([
      { command: "pivot inspect session.json", description: "an export at a glance" },
      { command: "pivot inspect --db .pivot/pivot.db --session ses_abc --tail 30", description: "the latest 30 rows" },
      { command: "pivot inspect --db .pivot/pivot.db --from 1000 --to 2000 --format json", description: "a range" },
    ]),
  ),
}
