/**
 * The `context_pin` tool for AI SDK agents: the model pins what must survive every compaction verbatim (the task, a
 * constraint, a decision), unpins it, or lists the pins. The model names a message by a quote of it (the newest
 * message containing the quote exactly) or by an id from a recall result. Every pin and unpin is an event
 * (`ContextPinned` / `ContextUnpinned`); pins share a budget, and the oldest give way (the answer says which).
 *
 * **Example**
 * ```ts
 * const pivot = await createPivot({ model, store: "./data/pivot.db" })
 * const tools = { ...myTools, [PinTool.NAME]: PinTool.tool(pivot) }
 * ```
 */
import { ContextManager, Pins } from "@pivot/runtime"
import { tool as aiTool, jsonSchema, type Tool } from "ai"
import { Effect } from "effect"

/** The tool's name, as the model sees it. */
export const NAME = "context_pin"

/** What the model passes: a `quote` or an `id` to pin (or unpin with `unpin: true`); nothing lists the pins. */
export type Input = Pins.ToolInput

/** What the model reads about the tool. */
export const DESCRIPTION = Pins.TOOL_DESCRIPTION

/** The tool's input as JSON Schema (what the provider receives). */
export const inputSchema = jsonSchema<Input>({
  type: "object",
  properties: {
    quote: { type: "string", description: "An exact passage of the message to pin (or unpin)." },
    id: { type: "string", description: "A message id (msg_…) to pin (or unpin), e.g. from a context_recall result." },
    unpin: { type: "boolean", description: "Remove the pin instead of adding one." },
  },
  additionalProperties: false,
})

/** Anything that can pin for one session: a `createPivot` handle, a `Pivot.session` handle, or your own functions. */
export type Pinner = Pins.Pinner

/** The list of pins as the model reads it. */
export const listText = Pins.listText

/** What one call does, as the text the model reads (refusals included: they are answers, not failures). */
export const run = Pins.answer

/** The AI SDK `tool()` over a session handle: its answer is the text the model reads. */
export const tool = (session: Pinner): Tool<Input, string> =>
  aiTool({ description: DESCRIPTION, inputSchema, execute: (input: Input) => run(session, input) })

/**
 * The tool for a session of the `ContextManager` in context (Effect programs).
 *
 * **Example**
 * ```ts
 * const pin = yield* PinTool.make(sessionId)
 * yield* Effect.promise(() => generateText({ model, messages, tools: { context_pin: pin } }))
 * ```
 */
export const make = (sessionId: string): Effect.Effect<Tool<Input, string>, never, ContextManager> =>
  Effect.gen(function* () {
    const manager = yield* ContextManager
    const context = yield* Effect.context<never>()
    const runP = Effect.runPromiseWith(context)
    return tool({
      pin: (target, by) => runP(manager.pin(sessionId, target, by)),
      unpin: (target, by) => runP(manager.unpin(sessionId, target, by)),
      pins: () => runP(manager.pins(sessionId)),
    })
  })
