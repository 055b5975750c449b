/**
 * The `pivot window` command as effect/cli declares it: its flags, help and examples. The handler is `window.ts`'s
 * `run`, which does not import effect/cli, so the plain command line (`Fast.ts`, ADR 0048) runs it without this module.
 */
import { Command, Flag } from "effect/cli"
import { listing } from "./Catalog.ts"
import type { Entry } from "./Command.ts"
import { countFlag, formatFlag, limitFlags, sourceFlags } from "./Flags.ts"
import { run } from "./window.ts"

const { synopsis, summary } = listing("window")

/** The flags and arguments of `pivot window` (written at build time for the plain command line, `Precompute.ts`). */
export const flags = {
  ...sourceFlags,
  at: countFlag("at", "VERSION", "the window right after event VERSION (0 … the session's head)"),
  format: formatFlag,
  sources: Flag.Boolean("sources").pipe(
    Flag.withDefault(false),
    Flag.withDescription("under each message, the ids of the events it came from (text format)"),
  ),
  ...limitFlags("model-message number"),
}

/** The `window` command. */
export const window: Entry = {
  name: "window",
  synopsis,
  flags,
  command: Command.make("window", flags, run).pipe(
    Command.withDescription(
      "The model input of the next model call (or of the call right after event VERSION): one line per model message, a rule where a pivot starts the window, pruned tool outputs marked. --format json prints exactly { messages: [{ sourceMessageId, message }] }.",
    ),
    Command.withShortDescription(summary),
    Command.withExamples([
      { command: "pivot window session.json", description: "the window of an export" },
      { command: "pivot window --db .pivot/pivot.db --session ses_abc --tail 20", description: "its last 20 messages" },
      { command: "pivot window --db .pivot/pivot.db --at 120 --format json", description: "replayed after event 120" },
      {
        command: "pivot window session.json --sources --from 10 --to 20",
        description: "messages 10 to 20 and their events",
      },
    ]),
  ),
}
