/**
 * The plugin's tools as OpenCode registers them when it loads the plugin: their descriptions and argument shapes.
 * Kept apart from Plugin.ts (the hooks' logic) so that the entry (index.ts) can hand them to OpenCode without
 * loading pivot's store and runtime, which wait for the first hook that needs them.
 */
import { z } from "zod"

/**
 * The recall tool's description: core's `Recall.TOOL_DESCRIPTION`, repeated here so the entry need not load core (a
 * test checks the two are equal).
 */
export const RECALL_DESCRIPTION =
  "Get back, word for word, anything that left your context: earlier user and assistant messages, reasoning, tool " +
  "calls and their outputs that a summary replaced, tool outputs that were cleared, earlier summaries. Search with " +
  "`query` (words to look for) for ranked snippets with their ids and the pivot each fell behind; pass an `id` (from " +
  'a search result, a pivot\'s list or a "[Old tool result content cleared — recall id: …]" placeholder) for the ' +
  "exact original; pass `pivot` (a number; none, with no id nor query: the latest) to list what a summary replaced: " +
  "its messages with their ids and sizes, and the files, commands and errors in them. Check there before you guess. " +
  "Long originals are cut; the note says which `offset` reads on."

/** The compaction tool's description. */
export const COMPACT_DESCRIPTION =
  "Compact the conversation now: when this step ends, OpenCode summarises the history into a working-memory summary " +
  "and the turn ends; the next one starts from the summary. Use it at a good stopping point when the context status " +
  "says the context is filling up."

/** The recall tool's arguments (their descriptions are core's `Recall.ARG_DESCRIPTIONS`; a test checks them). */
export const recallArgs = z.object({
  query: z
    .string()
    .optional()
    .describe("Words to search for in everything before a pivot, cleared tool outputs and earlier summaries."),
  id: z
    .string()
    .optional()
    .describe("A recall id: prt_… (a part or a tool output), prt_…-input (a tool call's input) or msg_… (a summary)."),
  offset: z.number().int().min(0).optional().describe("With id: the character to start from (read on)."),
  pivot: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("List what this pivot (1 = the first) summarised; 0 or none, with no id nor query: the latest."),
})
export type RecallArgs = z.infer<typeof recallArgs>

/**
 * The pin tool's description: the runtime's `Pins.TOOL_DESCRIPTION`, repeated here so the entry need not load the
 * runtime (a test checks the two are equal).
 */
export const PIN_DESCRIPTION =
  "Pin what must survive every compaction word for word: the task, a constraint, a decision. Pass `quote` (an exact " +
  "passage of the message to pin; the newest message containing it is pinned) or `id` (a msg_… id from a recall " +
  "result). A pinned message stays verbatim in your context after every summary. Pins share a budget: the oldest " +
  "give way when it is full. `unpin: true` removes a pin; no arguments lists the pins."

/** The pin tool's arguments. */
export const pinArgs = z.object({
  quote: z.string().optional().describe("An exact passage of the message to pin (or unpin)."),
  id: z.string().optional().describe("A message id (msg_…) to pin (or unpin), e.g. from a context_recall result."),
  unpin: z.boolean().optional().describe("Remove the pin instead of adding one."),
})
export type PinArgs = z.infer<typeof pinArgs>

/**
 * What each tool answers when pivot cannot serve it (its store unreadable, its worker gone): the model is told to go on
 * without it. One text for the hooks on either thread (Plugin.ts, Thread.ts).
 */
export const UNAVAILABLE = {
  context_recall: "context_recall is unavailable right now (pivot could not read its store); go on without it.",
  context_compact:
    "context_compact is unavailable right now; go on, OpenCode still compacts on its own when the context fills.",
  context_pin: "context_pin is unavailable right now (pivot could not read its store); go on without it.",
} as const
