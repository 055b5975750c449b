/**
 * The `context_recall` tool for AI SDK agents: the model gets back the exact original of an output pivot pruned (by the
 * id its placeholder names) or a summary, or searches them with a query. Every call is recorded (`ContextRecalled`),
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
import { ContextManager, type Recall } from "@pivot/runtime"
import { tool as aiTool, jsonSchema, type Tool } from "ai"
import { Effect } from "effect"

/** The tool's name, as the model sees it. */
export const NAME = "context_recall"

/** What the model passes: an `id` (from a placeholder or a search result) or a `query`; `offset` to read on. */
export interface Input {
  readonly id?: string | undefined
  readonly query?: string | undefined
  readonly offset?: number | undefined
}

/** What the model reads about the tool. */
export const DESCRIPTION =
  "Get back the exact original of earlier context that was cleared or summarised away. Pass the id shown in an " +
  '"[Old tool result content cleared — recall id: …]" placeholder (or in a search result) as `id`, or search old ' +
  "tool outputs and earlier summaries with `query` (words to look for) to get ranked snippets with their ids. Long " +
  "originals are cut; the note says which `offset` reads on."

/** The tool's input as JSON Schema (what the provider receives). */
export const inputSchema = jsonSchema<Input>({
  type: "object",
  properties: {
    id: { type: "string", description: "A recall id: prt_… (a cleared tool output) or msg_… (a summary)." },
    query: { type: "string", description: "Words to search cleared tool outputs and earlier summaries for." },
    offset: { type: "integer", minimum: 0, description: "With id: the character to start from (read on)." },
  },
  additionalProperties: false,
})

/** Anything that can recall for one session: a `createPivot` handle, a `Pivot.session` handle, or your own function. */
export interface Recaller {
  readonly recall: (request: Recall.Request) => Promise<Recall.Recalled>
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
