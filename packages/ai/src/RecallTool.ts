/**
 * The `context_recall` tool for AI SDK agents: the model gets back the exact original of anything before a pivot
 * (user and assistant text, reasoning, tool inputs and outputs), of an output pivot pruned (by the id its placeholder
 * names) or of a summary, searches them with a query, or lists what a pivot summarised. Every call is recorded (`ContextRecalled`),
 * and the answer is an ordinary tool result, so it is pruned later like any other.
 *
 * Turn recall on so the placeholders name their ids (`manager: { recall: true }` in `createPivot`, `recall: true` in
 * `ContextManager.layer`), then add the tool to your tool set.
 *
 * **Example**
 * ```ts
 * const pivot = await createPivot({ model, store: "./data/pivot.db", manager: { recall: true } })
 * const tools = { ...myTools, [RecallTool.NAME]: RecallTool.tool(pivot) }
 * const agent = new ToolLoopAgent(pivot.wrap({ model, tools, stopWhen: stepCountIs(20) }))
 * ```
 */
import { Recall } from "@pivot/core"
import { ContextManager, type Recall as RuntimeRecall } from "@pivot/runtime"
import { tool as aiTool, jsonSchema, type Tool } from "ai"
import { Effect } from "effect"

/** The tool's name, as the model sees it. */
export const NAME = "context_recall"

/**
 * What the model passes: an `id` (from a placeholder, a search result or a pivot's list), a `query`, or a `pivot` to
 * list (none of them: the latest pivot's list); `offset` to read on.
 */
export interface Input {
  readonly id?: string | undefined
  readonly query?: string | undefined
  readonly offset?: number | undefined
  readonly pivot?: number | undefined
}

/** What the model reads about the tool (`Recall.TOOL_DESCRIPTION`, the same on every surface). */
export const DESCRIPTION = Recall.TOOL_DESCRIPTION

/** The tool's input as JSON Schema (what the provider receives). */
export const inputSchema = jsonSchema<Input>({
  type: "object",
  properties: {
    id: { type: "string", description: Recall.ARG_DESCRIPTIONS.id },
    query: { type: "string", description: Recall.ARG_DESCRIPTIONS.query },
    offset: { type: "integer", minimum: 0, description: Recall.ARG_DESCRIPTIONS.offset },
    pivot: { type: "integer", minimum: 0, description: Recall.ARG_DESCRIPTIONS.pivot },
  },
  additionalProperties: false,
})

/** Anything that can recall for one session: a `createPivot` handle, a `Pivot.session` handle, or your own function. */
export interface Recaller {
  readonly recall: (request: RuntimeRecall.Request) => Promise<RuntimeRecall.Recalled>
}

/** The AI SDK `tool()` over a session handle: its answer is the text the model reads. */
export const tool = (session: Recaller): Tool<Input, string> =>
  aiTool({
    description: DESCRIPTION,
    inputSchema,
    execute: async (input: Input) => (await session.recall(input)).text,
  })

/**
 * The tool for a session of the `ContextManager` in context (Effect programs); the same as `tool(handle)` with the
 * handle of `Pivot.session`.
 *
 * **Example**
 * ```ts
 * const recall = yield* RecallTool.make(sessionId)
 * yield* Effect.promise(() => generateText({ model, messages, tools: { context_recall: recall } }))
 * ```
 */
export const make = (sessionId: string): Effect.Effect<Tool<Input, string>, never, ContextManager> =>
  Effect.gen(function* () {
    const manager = yield* ContextManager
    const context = yield* Effect.context<never>()
    return tool({ recall: (request) => Effect.runPromiseWith(context)(manager.recall(sessionId, request)) })
  })
