/**
 * Which recent turns stay verbatim after a pivot (spec §2.9): the last `tail_turns` turns that fit a token budget,
 * where the oldest turn that does not fit may still be kept from a later message on ("split turn").
 */
import type { CompactionConfig } from "./Config.ts"
import type { MessageId } from "./Ids.ts"
import { isMarker, type Message } from "./Message.ts"
import type { ModelLimits } from "./Model.ts"
import { usable } from "./Overflow.ts"
import { renderMessage } from "./Render.ts"

/** Turns kept verbatim when `tail_turns` is not configured. */
export const DEFAULT_TAIL_TURNS = 2
/** Lower bound of the derived tail budget. */
export const MIN_PRESERVE_RECENT_TOKENS = 2_000
/** Upper bound of the derived tail budget (OpenCode 1.17). */
export const MAX_PRESERVE_RECENT_TOKENS = 8_000
/** Upper bound of the derived tail budget in OpenCode 1.18 (`compaction.opencode: "1.18"`). */
export const MAX_PRESERVE_RECENT_TOKENS_1_18 = 15_000

/**
 * The tail's token budget: `preserve_recent_tokens`, else a quarter of the compaction model's usable window clamped
 * to [2_000, 8_000] (to [2_000, 15_000] with `opencode: "1.18"`). No output cap is applied here, as in OpenCode.
 */
export const tailBudget = (config: CompactionConfig, compactionModelLimits: ModelLimits): number =>
  config.preserve_recent_tokens ??
  Math.min(
    config.opencode === "1.18" ? MAX_PRESERVE_RECENT_TOKENS_1_18 : MAX_PRESERVE_RECENT_TOKENS,
    Math.max(MIN_PRESERVE_RECENT_TOKENS, Math.floor(usable(config, compactionModelLimits) * 0.25)),
  )

/** A turn: the message indices `[start, end)`, starting at a user message that is not a compaction marker. */
export interface Turn {
  readonly start: number
  readonly end: number
}

/** The turns of a history. Messages before the first real user message belong to no turn. */
export const turns = (messages: ReadonlyArray<Message>): ReadonlyArray<Turn> => {
  const starts: Array<number> = []
  messages.forEach((message, index) => {
    if (message.role === "user" && !isMarker(message)) starts.push(index)
  })
  return starts.map((start, i) => ({ start, end: starts[i + 1] ?? messages.length }))
}

/** The result of tail selection: `head` goes to the summariser, `tail` stays verbatim. */
export interface Selection {
  readonly head: ReadonlyArray<Message>
  readonly tail: ReadonlyArray<Message>
  /** The first kept message; undefined when nothing is kept. */
  readonly tailStartId?: MessageId
}

// Same arithmetic as `Tokens.estimate`, applied to a length instead of a string.
const estimateLength = (length: number): number => Math.max(0, Math.round(length / 4))

/**
 * The size of `messages` as OpenCode measures a turn: `estimate(JSON.stringify(toModelMessages(messages)))`, with no
 * stripping or truncation, so inline media counts in full.
 */
export const sizeOf = (messages: ReadonlyArray<Message>): number => sizer(messages)(0, messages.length)

/**
 * Sizes of any slice `[from, to)` in O(1) after one linear pass. A JSON array's length is 2 brackets + its items'
 * lengths + one comma between items, and each stored message renders on its own, so per-message sums suffice.
 */
const sizer = (messages: ReadonlyArray<Message>) => {
  const chars: Array<number> = [0]
  const items: Array<number> = [0]
  for (const message of messages) {
    let length = 0
    const rendered = renderMessage(message)
    for (const m of rendered) length += JSON.stringify(m).length
    chars.push(chars[chars.length - 1]! + length)
    items.push(items[items.length - 1]! + rendered.length)
  }
  return (from: number, to: number): number => {
    const count = items[to]! - items[from]!
    return estimateLength(2 + chars[to]! - chars[from]! + Math.max(0, count - 1))
  }
}

const nothingKept = (history: ReadonlyArray<Message>): Selection => ({ head: history, tail: [] })

/**
 * Splits `history` into a summarised head and a verbatim tail (spec §2.9 steps 1 and 3–7). Walks the last
 * `tailTurns` turns from newest to oldest while they fit `budget`; the first turn that does not fit may keep its
 * latest messages if they fit what is left, and ends the walk. Keeping everything from index 0 keeps nothing.
 */
export const selectTail = (
  history: ReadonlyArray<Message>,
  options: { readonly tailTurns: number; readonly budget: number },
): Selection => {
  if (options.tailTurns <= 0) return nothingKept(history)
  const all = turns(history)
  if (all.length === 0) return nothingKept(history)
  const recent = all.slice(-options.tailTurns)
  const size = sizer(history)
  let total = 0
  let keep: number | undefined
  for (let i = recent.length - 1; i >= 0; i--) {
    const turn = recent[i]!
    const turnSize = size(turn.start, turn.end)
    if (total + turnSize <= options.budget) {
      total += turnSize
      keep = turn.start
      continue
    }
    const remaining = options.budget - total
    if (remaining > 0 && turn.end - turn.start >= 2) {
      for (let s = turn.start + 1; s < turn.end; s++) {
        if (size(s, turn.end) <= remaining) {
          keep = s
          break
        }
      }
    }
    break
  }
  if (keep === undefined || keep === 0) return nothingKept(history)
  return { head: history.slice(0, keep), tail: history.slice(keep), tailStartId: history[keep]!.id }
}
