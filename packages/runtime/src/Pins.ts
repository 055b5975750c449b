/**
 * Pins in the runtime (issue 31): pin and unpin a message or a part for the user (API, CLI) or the model
 * (`context_pin`), list the pins in force, and the default pin of a session's first user message. The rules — the
 * budget, which older pins give way, what cannot be pinned — are core's (`Pins`, decided by `Session.decide`); this
 * module turns requests into `Pin` / `Unpin` commands and their events into answers.
 */
import {
  type Commands,
  Conversation,
  type Config as CoreConfig,
  type Events,
  Ids,
  type Message,
  type Model,
  Pins,
  Text,
  Traced,
} from "@pivot/core"
import { Clock, Effect, Schema } from "effect"
import type { ExecuteError, SessionsShape, State } from "./Sessions.ts"

type CompactionConfig = CoreConfig.CompactionConfig
type ModelLimits = Model.ModelLimits

/** What to pin or unpin: a message, or one part of it, or the newest message containing a quote. */
export interface Target {
  readonly messageId?: string | undefined
  /** Only this part (a pinned part keeps its whole message in view). */
  readonly partId?: string | undefined
  /** Without `messageId`: the newest message whose text or tool output contains this exactly (`Pins.findQuoted`). */
  readonly quote?: string | undefined
}

/** Who asks: the user (API, CLI; the default) or the model (`context_pin`). */
export type Actor = "user" | "model"

/** A pin in force, as `pins` lists it. */
export interface PinView {
  readonly messageId: string
  readonly partId?: string | undefined
  readonly by: Pins.PinnedBy
  /** The pinned message's size as the budget counts it. */
  readonly tokens: number
  readonly at: number
  /** The message's role, and its first text (clipped), when the session still holds it. */
  readonly role?: "user" | "assistant" | undefined
  readonly preview?: string | undefined
}

/** The answer of `pin`. */
export interface Pinned {
  /** False: it was already pinned (nothing recorded). */
  readonly pinned: boolean
  /** Older pins removed to make room in the budget, oldest first. */
  readonly unpinned: ReadonlyArray<Target>
  /** Tokens the pinned messages take now, and the budget. */
  readonly tokens: number
  readonly budget: number
}

/** The answer of `unpin`: how many pins were removed (0: it was not pinned; nothing recorded). */
export interface Unpinned {
  readonly removed: number
}

/** The pins in force and the budget, for a HUD, `inspect` and the model. */
export interface PinList {
  readonly pins: ReadonlyArray<PinView>
  readonly tokens: number
  readonly budget: number
}

/** An id that is not a message id (`msg_…`) or a part id (`prt_…`). */
export class InvalidPinTarget extends Schema.TaggedError<InvalidPinTarget>()("InvalidPinTarget", {
  id: Schema.String,
  expected: Schema.String,
}) {
  override get message(): string {
    return `${JSON.stringify(this.id)} is not a ${this.expected} id`
  }
}

const isMessageId = Schema.is(Ids.MessageId)
const isPartId = Schema.is(Ids.PartId)

const preview = (message: Message.Message | undefined): string | undefined => {
  if (message === undefined) return undefined
  for (const part of message.parts) if (part.type === "text" && part.text.trim() !== "") return part.text.trim()
  return undefined
}

/** The pins in force on a state, with the budget for these settings. */
export const listOf = (state: State, config: CompactionConfig, limits: ModelLimits): PinList => {
  const window = state.session.window
  return {
    pins: window.pins.map((p) => {
      const message = Conversation.get(window.conversation, p.messageId)
      const text = preview(message)
      return {
        messageId: p.messageId,
        ...(p.partId === undefined ? {} : { partId: p.partId }),
        by: p.by,
        tokens: p.tokens,
        at: p.at,
        ...(message === undefined ? {} : { role: message.role }),
        ...(text === undefined ? {} : { preview: text.length > 120 ? `${text.slice(0, 119)}…` : text }),
      }
    }),
    tokens: Pins.pinnedTokens(window.pins),
    budget: Pins.budget(config, limits),
  }
}

/** The first line of `pinnedBlock`. */
export const BLOCK_HEADER = "[pivot pinned context]"

/**
 * The pinned messages' text, verbatim, as a system-prompt block: for a host whose own compaction drops them (OpenCode
 * through the plugin), so they stay in every window after every pivot. Undefined before the first pivot (the messages
 * are still in the host's window) or when nothing is pinned; the text changes only when the pins do.
 */
export const pinnedBlock = (state: State): string | undefined => {
  const window = state.session.window
  if (window.pivot === undefined || window.pins.length === 0) return undefined
  const parts: Array<string> = [
    BLOCK_HEADER,
    "These messages are pinned: they stay word for word in your context after every compaction.",
  ]
  for (const id of Pins.messageIds(window.pins)) {
    const message = Conversation.get(window.conversation, id)
    if (message === undefined) continue
    const texts: Array<string> = []
    for (const part of message.parts as ReadonlyArray<Message.Message["parts"][number]>) {
      if (part.type === "text") texts.push(part.text)
      else if (part.type === "tool" && part.state.status === "completed")
        texts.push(`[${part.tool} output]\n${part.state.output}`)
    }
    parts.push(`--- ${id} (${message.role})`, texts.join("\n"))
  }
  return parts.join("\n")
}

/**
 * The default pin of a session's first message, to decide in the batch that records it: when `pin_first_message` is
 * on (the default) and the session holds no message yet. A first message larger than the budget is not pinned.
 */
export const defaultPin = (
  state: State,
  message: Message.UserMessage,
  config: CompactionConfig,
  limits: ModelLimits,
  at: number,
): ReadonlyArray<Commands.Command> =>
  Pins.pinsFirstMessage(config) &&
  state.session.window.conversation.order.length === 0 &&
  state.session.retired === undefined
    ? [{ _tag: "Pin", at, messageId: message.id, by: "default", budget: Pins.budget(config, limits) }]
    : []

/** No message contains the quote a pin or unpin was given (or neither an id nor a quote was). */
export class PinTargetNotFound extends Schema.TaggedError<PinTargetNotFound>()("PinTargetNotFound", {
  quote: Schema.String,
}) {
  override get message(): string {
    return this.quote === ""
      ? "give a message id or a quote to pin"
      : `no message of this session contains ${JSON.stringify(this.quote.length > 80 ? `${this.quote.slice(0, 79)}…` : this.quote)}`
  }
}

const checkTarget = (target: Target & { readonly messageId: string }): InvalidPinTarget | undefined => {
  if (!isMessageId(target.messageId)) return new InvalidPinTarget({ id: String(target.messageId), expected: "message" })
  if (target.partId !== undefined && !isPartId(target.partId))
    return new InvalidPinTarget({ id: String(target.partId), expected: "part" })
  return undefined
}

/** Why a pin or unpin failed: a refusal (`NotPinnable`, `PinOverBudget`, `UnknownMessage`…), a bad target, the store. */
export type PinError = ExecuteError | InvalidPinTarget | PinTargetNotFound

/** The pin operations of `make`. */
export interface Operations {
  readonly pin: (
    sessionId: string,
    target: Target,
    by: Actor,
    config: CompactionConfig,
    limits: ModelLimits,
  ) => Effect.Effect<Pinned, PinError>
  readonly unpin: (sessionId: string, target: Target, by: Actor) => Effect.Effect<Unpinned, PinError>
}

/** The pin operations over a session handler. */
export const make = (sessions: SessionsShape): Operations => {
  /** The target with its message id: a quote is looked up in the session (the whole log when the live state dropped some). */
  const resolve = Effect.fnUntraced(function* (sessionId: string, target: Target) {
    if (target.messageId !== undefined) return target as Target & { readonly messageId: string }
    const quote = target.quote ?? ""
    const live = yield* sessions.load(sessionId)
    const found =
      Pins.findQuoted(Conversation.newestFirst(live.session.window.conversation), quote) ??
      (live.session.retired === undefined
        ? undefined
        : Pins.findQuoted(
            Conversation.newestFirst((yield* sessions.history(sessionId)).session.window.conversation),
            quote,
          ))
    if (found === undefined) return yield* new PinTargetNotFound({ quote })
    return { ...target, messageId: found.id as string }
  })

  const pin = Traced.fn("Pins.pin")(function* (
    sessionId: string,
    asked: Target,
    by: Actor,
    config: CompactionConfig,
    limits: ModelLimits,
  ) {
    const resolved = yield* resolve(sessionId, asked)
    const target = resolved
    const bad = checkTarget(target)
    if (bad !== undefined) return yield* bad
    const at = yield* Clock.currentTimeMillis
    const budget = Pins.budget(config, limits)
    const executed = yield* sessions.execute(sessionId, {
      _tag: "Pin",
      at,
      messageId: target.messageId as Ids.MessageId,
      ...(target.partId === undefined ? {} : { partId: target.partId as Ids.PartId }),
      by,
      budget,
    })
    const unpinned = executed.events.flatMap(
      (e: Events.Event): ReadonlyArray<Target> =>
        e._tag === "ContextUnpinned"
          ? [{ messageId: e.messageId, ...(e.partId === undefined ? {} : { partId: e.partId }) }]
          : [],
    )
    return {
      pinned: executed.events.some((e) => e._tag === "ContextPinned"),
      unpinned,
      tokens: Pins.pinnedTokens(executed.state.session.window.pins),
      budget,
    } satisfies Pinned
  })

  const unpin = Traced.fn("Pins.unpin")(function* (sessionId: string, asked: Target, by: Actor) {
    const target = yield* resolve(sessionId, asked)
    const bad = checkTarget(target)
    if (bad !== undefined) return yield* bad
    const at = yield* Clock.currentTimeMillis
    const executed = yield* sessions.execute(sessionId, {
      _tag: "Unpin",
      at,
      messageId: target.messageId as Ids.MessageId,
      ...(target.partId === undefined ? {} : { partId: target.partId as Ids.PartId }),
      by,
    })
    return { removed: executed.events.length } satisfies Unpinned
  })

  return { pin, unpin }
}

const grouped = (n: number): string => Text.thousands(Math.max(0, n))

// ── The `context_pin` tool as the model sees it, shared by the AI SDK tool (`@pivot/ai` PinTool) and the OpenCode plugin.

/** What the model passes: a `quote` or an `id` to pin (or unpin with `unpin: true`); nothing lists the pins. */
export interface ToolInput {
  readonly quote?: string | undefined
  readonly id?: string | undefined
  readonly unpin?: boolean | undefined
}

/** What the model reads about the tool. */
export const TOOL_DESCRIPTION =
  "Pin what must survive every compaction word for word: the task, a constraint, a decision. Pass `quote` (an exact " +
  "passage of the message to pin; the newest message containing it is pinned) or `id` (a msg_… id from a recall " +
  "result). A pinned message stays verbatim in your context after every summary. Pins share a budget: the oldest " +
  "give way when it is full. `unpin: true` removes a pin; no arguments lists the pins."

/** Anything that can pin for one session: a `createPivot` handle, a `Pivot.session` handle, or your own functions. */
export interface Pinner {
  readonly pin: (target: Target, by?: Actor) => Promise<Pinned>
  readonly unpin: (target: Target, by?: Actor) => Promise<Unpinned>
  readonly pins: () => Promise<PinList>
}

/** The list of pins as the model reads it. */
export const listText = (list: PinList): string =>
  list.pins.length === 0
    ? `Nothing is pinned (budget ${grouped(list.budget)} tokens).`
    : [
        `Pinned (${grouped(list.tokens)} of ${grouped(list.budget)} tokens), oldest first:`,
        ...list.pins.map(
          (p) =>
            `- ${p.partId ?? p.messageId} (${p.role ?? "message"}, pinned by ${p.by}, ~${grouped(p.tokens)} tokens)${p.preview === undefined ? "" : `: ${JSON.stringify(p.preview)}`}`,
        ),
      ].join("\n")

const refused =
  (what: string) =>
  (error: unknown): string =>
    `${what}: ${error instanceof Error ? error.message : String(error)}`

/** What one call does, as the text the model reads (refusals included: they are answers, not failures). */
export const answer = async (session: Pinner, input: ToolInput): Promise<string> => {
  const target: Target = {
    ...(input.id === undefined || input.id === "" ? {} : { messageId: input.id }),
    ...(input.quote === undefined || input.quote === "" ? {} : { quote: input.quote }),
  }
  if (target.messageId === undefined && target.quote === undefined) return listText(await session.pins())
  if (input.unpin === true)
    return session
      .unpin(target, "model")
      .then(
        ({ removed }) => (removed === 0 ? "That message was not pinned; nothing changed." : "Unpinned."),
        refused("Not unpinned"),
      )
  return session.pin(target, "model").then((pinned) => {
    if (!pinned.pinned) return "Already pinned; nothing changed."
    const gave =
      pinned.unpinned.length === 0
        ? ""
        : ` To make room, these older pins were removed: ${pinned.unpinned.map((t) => t.partId ?? t.messageId).join(", ")}.`
    return `Pinned: it stays verbatim in your context after every compaction (pins use ${grouped(pinned.tokens)} of ${grouped(pinned.budget)} tokens).${gave}`
  }, refused("Not pinned"))
}
