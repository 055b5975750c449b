/**
 * Tools that let the model see and steer its own context, as AI SDK `tool()` definitions bound to one session:
 * `context_compact` (compact now, optionally saying what to keep), `context_recall` (the exact original of what was
 * pruned or summarised, or a search of it; see `RecallTool`) and `context_pin` (keep a message verbatim after every
 * compaction; see `PinTool`). Add them to your agent's `tools`; the usage HUD (the
 * `hud` option) tells the model when to compact, and `recall: true` makes placeholders name their recall ids.
 *
 * **Example**
 * ```ts
 * const tools = { ...myTools, ...contextTools(runner, "ses_demo") }
 * ```
 */
import type { CompactDeclined, Compacted, ContextManagerShape } from "@pivot/runtime"
import { ContextManager } from "@pivot/runtime"
import { jsonSchema, type Tool, tool } from "ai"
import { Effect } from "effect"
import type { Runner } from "./Agent.ts"
import * as PinTool from "./PinTool.ts"
import * as RecallTool from "./RecallTool.ts"

/** The input of `context_compact`. */
export interface CompactInput {
  /** What the summary must keep (file names, decisions, open questions). */
  readonly focus?: string | undefined
}

/** The tools `contextTools` answers (a type, not an interface, so it is an AI SDK `ToolSet` as it is). */
export type ContextToolSet = {
  readonly context_compact: Tool<CompactInput, string>
  readonly context_recall: Tool<RecallTool.Input, string>
  readonly context_pin: Tool<PinTool.Input, string>
}

/** What `context_compact` tells the model when its request was declined. */
export const DECLINED: { readonly [K in CompactDeclined]: string } = {
  "compaction-pending": "A compaction is already under way; your next step starts from its summary. Continue the task.",
  "once-per-turn":
    "Not compacted: you already compacted once since the user's last message. Continue the task; pivot still compacts automatically before the context overflows.",
  "nothing-to-compact": "Nothing to compact: the context holds no work since the last summary. Continue the task.",
}

/** The tool result for what a `context_compact` call did. */
export const compactResult = (compacted: Compacted): string => {
  if (compacted.declined !== undefined) return DECLINED[compacted.declined]
  const outcome = compacted.outcome
  if (outcome === undefined) return DECLINED["compaction-pending"]
  if (outcome.status === "failed")
    return `The compaction failed (${outcome.error.message ?? outcome.error.name}); the context is unchanged. Continue the task.`
  return "Compacted: the conversation so far is now a summary, and your next step starts from it. Continue the task."
}

const compactSchema = jsonSchema<CompactInput>({
  type: "object",
  properties: {
    focus: {
      type: "string",
      description: "Optional: what the summary must keep (files, decisions, open questions, the next step).",
    },
  },
  additionalProperties: false,
})

/** The context tools of `sessionId`, run through `runner` (a `ManagedRuntime` or `Agent.make`'s runner). */
export const contextTools = (runner: Runner, sessionId: string): ContextToolSet => {
  const cm = <A, E>(use: (manager: ContextManagerShape) => Effect.Effect<A, E>): Promise<A> =>
    runner.runPromise(Effect.flatMap(ContextManager, use))
  return {
    context_compact: tool({
      description:
        "Compact your context now: the conversation so far is replaced by a summary and your next step starts from it. Use it at a good stopping point when the context status says the context is filling up. Optionally say what the summary must keep.",
      inputSchema: compactSchema,
      execute: async (input, { toolCallId }) =>
        compactResult(
          await cm((manager) =>
            manager.compact(sessionId, {
              requestedBy: "model",
              ...(input.focus === undefined ? {} : { focus: input.focus }),
              // The step that made this call is recorded after the pivot, with usage measured before it.
              callId: toolCallId,
            }),
          ),
        ),
    }),
    context_recall: RecallTool.tool({ recall: (request) => cm((manager) => manager.recall(sessionId, request)) }),
    context_pin: PinTool.tool({
      pin: (target, by) => cm((manager) => manager.pin(sessionId, target, by)),
      unpin: (target, by) => cm((manager) => manager.unpin(sessionId, target, by)),
      pins: () => cm((manager) => manager.pins(sessionId)),
    }),
  }
}

/**
 * The system instructions for one step: yours, then the HUD (so the stable part comes first and a prompt cache keeps
 * it). Strings are joined by a blank line; a list of system messages gets the HUD as one more.
 */
export const withHud = <I>(instructions: I, hud: string | undefined): I | string | Array<unknown> => {
  if (hud === undefined) return instructions
  if (instructions === undefined || instructions === null || instructions === "") return hud
  if (typeof instructions === "string") return `${instructions}\n\n${hud}`
  const list = Array.isArray(instructions) ? instructions : [instructions]
  return [...list, { role: "system", content: hud }]
}
