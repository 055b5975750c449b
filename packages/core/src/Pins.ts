/**
 * Pins: messages (or parts of them) kept verbatim in every window after every pivot (issue 31). The one home of the
 * pin rules; the window projection (`Window`) restores pinned messages at each pivot, the Decider (`Session`) decides
 * `Pin` / `Unpin` with them, and the summariser's prompt names them (`promptLine`).
 *
 * - A pin names a message, or one part of it. A part cannot be shown without its message, so a pinned part keeps its
 *   whole message in view; the budget counts each pinned message once.
 * - Pins have a budget: a share of the session model's usable window (`pin_share`, default 10 %). A pin that would
 *   take the pinned messages over it unpins the oldest pins first (each recorded as `ContextUnpinned` with reason
 *   `budget`); a message larger than the whole budget is refused (`PinOverBudget`), and the default pin of the first
 *   user message is then simply not made.
 * - Compaction markers and summaries cannot be pinned: a pivot already shows the newest summary, and a marker is not
 *   conversation.
 * - A pin takes effect at the next pivot: a pinned message already in view stays where it is, and one out of view (an
 *   earlier pivot summarised it) comes back right after the summary when the next pivot forms, so a pin never
 *   changes the window between pivots (the provider's prompt cache keeps its prefix).
 */
import * as Schema from "effect/Schema"
import type { CompactionConfig } from "./Config.ts"
import type { MessageId, PartId } from "./Ids.ts"
import { isFinishedSummary, isMarker, type Message } from "./Message.ts"
import type { ModelLimits } from "./Model.ts"
import { usable } from "./Overflow.ts"
import { sizeOf } from "./Tail.ts"
import * as Text from "./Text.ts"

/** Who pinned: the user (API, CLI), the model (`context_pin`), or the session's default (its first user message). */
export const PinnedBy = Schema.Literals(["user", "model", "default"])
export type PinnedBy = typeof PinnedBy.Type

/** Why a pin was removed: the user or the model unpinned it, or a newer pin needed its room in the budget. */
export const UnpinReason = Schema.Literals(["user", "model", "budget"])
export type UnpinReason = typeof UnpinReason.Type

/** The share of the usable window pins may take when `pin_share` is not configured. */
export const DEFAULT_SHARE = 0.1

/** One pin, as the window holds it: oldest first. */
export interface Pin {
  readonly messageId: MessageId
  readonly partId?: PartId | undefined
  readonly by: PinnedBy
  /** The pinned message's size (`sizeOfMessage`) when it was pinned. */
  readonly tokens: number
  readonly at: number
}

/** What a pin is known by: its part id, or its message id for a whole-message pin. */
export const key = (pin: { readonly messageId: MessageId; readonly partId?: PartId | undefined }): string =>
  pin.partId ?? pin.messageId

/** The pin budget in tokens: `pin_share` (default 10 %) of the usable window, rounded down. */
export const budget = (config: CompactionConfig, limits: ModelLimits): number =>
  Math.max(0, Math.floor(usable(config, limits) * (config.pin_share ?? DEFAULT_SHARE)))

/**
 * Whether a session's first message is pinned when it is recorded (`pin_first_message`). Off in the compaction
 * config's defaults, which are OpenCode's (its compaction pins nothing); `createPivot`'s default preset turns it on.
 */
export const pinsFirstMessage = (config: CompactionConfig): boolean => config.pin_first_message === true

/** A message's size as the budget counts it: what the tail rule counts for it (`Tail.sizeOf`). */
export const sizeOfMessage = (message: Message): number => sizeOf([message])

/** Why a message cannot be pinned, or undefined when it can. */
export const unpinnable = (message: Message, partId?: PartId): string | undefined => {
  const parts: ReadonlyArray<{ readonly id: string }> = message.parts
  if (isMarker(message)) return "it is a compaction marker"
  if (message.role === "assistant" && (message.summary === true || isFinishedSummary(message)))
    return "it is a summary (the newest summary is always in view)"
  if (partId !== undefined && !parts.some((p) => p.id === partId)) return `it has no part ${partId}`
  return undefined
}

/** The tokens the pinned messages take: each message counted once. */
export const pinnedTokens = (pins: ReadonlyArray<Pin>): number => {
  const sizes = new Map<MessageId, number>()
  for (const pin of pins) sizes.set(pin.messageId, pin.tokens)
  let total = 0
  for (const tokens of sizes.values()) total += tokens
  return total
}

/** The outcome of fitting a new pin into the budget. */
export type Fit =
  | { readonly fits: true; readonly evicted: ReadonlyArray<Pin> }
  | { readonly fits: false; readonly tokens: number; readonly budget: number }

/**
 * Fits a pin of `messageId` (of `tokens`) into `limit` beside `pins` (oldest first): the oldest pins of other messages
 * that must be unpinned, oldest first, so that the pinned messages take at most `limit`; refused when the message alone
 * is larger than `limit`.
 */
export const fit = (
  pins: ReadonlyArray<Pin>,
  incoming: { readonly messageId: MessageId; readonly tokens: number },
  limit: number,
): Fit => {
  if (incoming.tokens > limit) return { fits: false, tokens: incoming.tokens, budget: limit }
  let kept = pins
  const evicted: Array<Pin> = []
  const total = () => pinnedTokens([...kept, { ...incoming, by: "user", at: 0 }])
  while (total() > limit) {
    const oldest = kept.find((p) => p.messageId !== incoming.messageId)
    if (oldest === undefined) break
    evicted.push(oldest)
    kept = kept.filter((p) => p !== oldest)
  }
  return { fits: true, evicted }
}

/** The distinct pinned message ids, in pin order. */
export const messageIds = (pins: ReadonlyArray<Pin>): ReadonlyArray<MessageId> => [
  ...new Set(pins.map((p) => p.messageId)),
]

/** The prompt's context line naming the pinned messages (given in window order); undefined when there are none. */
export const promptLine = (pinned: ReadonlyArray<Message>): string | undefined => {
  if (pinned.length === 0) return undefined
  const items = pinned.map((m) => `- ${m.id} (${m.role}): ${JSON.stringify(Text.clip(firstText(m), 120))}`)
  return [
    "Pinned messages: these stay verbatim in the conversation right after your summary, so do not restate them in full; summarise what happened around them.",
    ...items,
  ].join("\n")
}

const firstText = (message: Message): string => {
  for (const part of message.parts) if (part.type === "text" && part.text.trim() !== "") return part.text.trim()
  const tool = message.parts.find((p) => p.type === "tool")
  return tool?.type === "tool" ? `[tool ${tool.tool}]` : `[${message.parts[0]?.type ?? "empty"}]`
}

/**
 * The message a quote points at: the newest of `newestFirst` (markers and summaries skipped) with a text, reasoning
 * or tool output containing `quote` exactly; undefined when none does or the quote is blank.
 */
export const findQuoted = (newestFirst: Iterable<Message>, quote: string): Message | undefined => {
  if (quote.trim() === "") return undefined
  for (const message of newestFirst) {
    if (unpinnable(message) !== undefined) continue
    for (const part of message.parts as ReadonlyArray<Message["parts"][number]>) {
      if ((part.type === "text" || part.type === "reasoning") && part.text.includes(quote)) return message
      if (part.type === "tool" && part.state.status === "completed" && part.state.output.includes(quote)) return message
    }
  }
  return undefined
}

/**
 * The pinned messages in force, by pin key, updated by one event (`ContextPinned` / `ContextUnpinned`; others leave it
 * as it is). For readers that fold only part of a log (a replay's origin): a pivot also keeps these messages.
 */
export const track = (
  inForce: Map<string, MessageId>,
  event: { readonly _tag: string; readonly messageId?: MessageId; readonly partId?: PartId | undefined },
): void => {
  if (event.messageId === undefined) return
  const target = { messageId: event.messageId, partId: event.partId }
  if (event._tag === "ContextPinned") inForce.set(key(target), event.messageId)
  else if (event._tag === "ContextUnpinned") inForce.delete(key(target))
}
