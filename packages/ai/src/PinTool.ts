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
import { ContextManager, type Pins } from "@pivot/runtime"
import { tool as aiTool, jsonSchema, type Tool } from "ai"
import { Effect } from "effect"

/** The tool's name, as the model sees it. */
export const NAME = "context_pin"

/** What the model passes: a `quote` or an `id` to pin (or unpin with `unpin: true`); nothing lists the pins. */
export interface Input {
  readonly quote?: string | undefined
  readonly id?: string | undefined
  readonly unpin?: boolean | undefined
}

/** What the model reads about the tool. */
export const DESCRIPTION =
  "Pin what must survive every compaction word for word: the task, a constraint, a decision. Pass `quote` (an exact " +
  "passage of the message to pin; the newest message containing it is pinned) or `id` (a msg_… id from a recall " +
  "result). A pinned message stays verbatim in your context after every summary. Pins share a budget: the oldest " +
  "give way when it is full. `unpin: true` removes a pin; no arguments lists the pins."

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
export interface Pinner {
  readonly pin: (target: Pins.Target, by?: Pins.Actor) => Promise<Pins.Pinned>
  readonly unpin: (target: Pins.Target, by?: Pins.Actor) => Promise<Pins.Unpinned>
  readonly pins: () => Promise<Pins.PinList>
}

/** The list of pins as the model reads it. */
export const listText = (list: Pins.PinList): string =>
  list.pins.length === 0
    ? `Nothing is pinned (budget ${list.budget} tokens).`
    : [
        `Pinned (${list.tokens} of ${list.budget} tokens), oldest first:`,
        ...list.pins.map(
          (p) =>
            `- ${p.partId ?? p.messageId} (${p.role ?? "message"}, pinned by ${p.by}, ~${p.tokens} tokens)${p.preview === undefined ? "" : `: ${JSON.stringify(p.preview)}`}`,
        ),
      ].join("\n")

/** What one call does, as the text the model reads (refusals included: they are answers, not failures). */
export const run = async (session: Pinner, input: Input): Promise<string> => {
  const target: Pins.Target = {
    ...(input.id === undefined || input.id === "" ? {} : { messageId: input.id }),
    ...(input.quote === undefined || input.quote === "" ? {} : { quote: input.quote }),
  }
  if (target.messageId === undefined && target.quote === undefined) return listText(await session.pins())
  try {
    if (input.unpin === true) {
      const { removed } = await session.unpin(target, "model")
      return removed === 0 ? "That message was not pinned; nothing changed." : "Unpinned."
    }
    const pinned = await session.pin(target, "model")
    if (!pinned.pinned) return "Already pinned; nothing changed."
    const gave =
      pinned.unpinned.length === 0
        ? ""
        : ` To make room, these older pins were removed: ${pinned.unpinned.map((t) => t.partId ?? t.messageId).join(", ")}.`
    return `Pinned: it stays verbatim in your context after every compaction (pins use ${pinned.tokens} of ${pinned.budget} tokens).${gave}`
  } catch (error) {
    return `Not pinned: ${error instanceof Error ? error.message : String(error)}`
  }
}

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
