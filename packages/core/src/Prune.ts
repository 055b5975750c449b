/**
 * Tool-output pruning (spec §2.14) as a pure choice: which old completed tool outputs to clear from the model input.
 * Recording the choice (and whether pruning is on at all) is the caller's business.
 */
import type { CompactionConfig } from "./Config.ts"
import type { MessageId, PartId } from "./Ids.ts"
import type { AssistantPart, Message } from "./Message.ts"
import { estimate } from "./Tokens.ts"

/** Tokens of the newest tool output kept verbatim before anything is pruned (OpenCode's `PRUNE_PROTECT`). */
export const PRUNE_PROTECT = 40_000

/** Pruning happens only when it frees strictly more than this many tokens (OpenCode's `PRUNE_MINIMUM`). */
export const PRUNE_MINIMUM = 20_000

/** The newest user turns whose outputs are never pruned (OpenCode skips the last two). */
export const PRUNE_TURNS = 2

/** Tools whose outputs are never pruned nor counted (OpenCode's `PRUNE_PROTECTED_TOOLS`). */
export const PRUNE_PROTECTED_TOOLS: ReadonlyArray<string> = ["skill"]

/** Overrides of the constants, for tests and tuning. */
export interface Options {
  readonly protect?: number | undefined
  readonly minimum?: number | undefined
  readonly protectedTools?: ReadonlyArray<string> | undefined
  /** The newest user turns never pruned (`PRUNE_TURNS` when absent). */
  readonly turns?: number | undefined
}

/** Share of the model's context kept as the newest tool outputs by `sized` (OpenCode keeps a fixed 40,000 tokens). */
export const SIZED_PROTECT_SHARE = 0.2

/** Share of the model's context a `sized` prune must free before it acts (OpenCode: a fixed 20,000 tokens). */
export const SIZED_MINIMUM_SHARE = 0.1

/**
 * Thresholds sized to a model's context window: OpenCode's constants are absolute, so in a 32k window (protect 40k,
 * act above 20k) a prune can never fire. `sized` keeps 20% of the context as the newest outputs and acts once it
 * frees more than 10%, capped at OpenCode's constants, so large models behave exactly as OpenCode.
 */
export const sized = (context: number): Options => {
  const tokens = Math.max(0, Math.floor(context))
  return {
    protect: Math.min(PRUNE_PROTECT, Math.floor(tokens * SIZED_PROTECT_SHARE)),
    minimum: Math.min(PRUNE_MINIMUM, Math.floor(tokens * SIZED_MINIMUM_SHARE)),
  }
}

/** One tool output chosen for pruning, with its estimated size. */
export interface Target {
  readonly messageId: MessageId
  readonly partId: PartId
  readonly tool: string
  readonly tokens: number
}

/** The outcome of a prune: the outputs to clear, oldest first, and the tokens that frees. */
export interface Selection {
  readonly parts: ReadonlyArray<Target>
  readonly tokensFreed: number
}

/** A selection that prunes nothing. */
export const empty: Selection = { parts: [], tokensFreed: 0 }

/** Whether pruning is switched on: opt-in, off unless `prune` is `true` (spec §2.14 step 1). */
export const isEnabled = (config: CompactionConfig): boolean => config.prune === true

/**
 * Chooses the tool outputs to prune from all stored messages, given in chronological order (spec §2.14).
 *
 * Walking newest to oldest: the last two turns (`turns`) are skipped; the walk stops at the latest summary and at the first
 * output already compacted; protected tools are skipped and not counted; outputs are counted until they pass
 * `protect`, and every output from the one that crosses it on is selected in full. The selection is returned only
 * when it frees strictly more than `minimum` tokens.
 *
 * Deviation from OpenCode: the walk stops at the latest summary even when that summary lies inside the last two
 * turns. OpenCode's guard skips such a summary and walks on into the kept tail and the hidden history behind it,
 * clearing outputs that were just kept verbatim or that the model no longer sees.
 */
export const select = (messages: ReadonlyArray<Message>, options: Options = {}): Selection =>
  selectNewestFirst(newestFirst(messages), options)

function* newestFirst(messages: ReadonlyArray<Message>): Generator<Message> {
  for (let m = messages.length - 1; m >= 0; m--) yield messages[m]!
}

/**
 * What the prune's walk meets in a conversation: a user message (one more turn), an assistant summary (the walk ends
 * there), or a completed tool output (protected or not, compacted or not: the walk decides). An assistant message is
 * its completed tool outputs in part order; its other parts never matter to the walk.
 */
export type Step =
  | { readonly _tag: "User" }
  | { readonly _tag: "Summary" }
  | {
      readonly _tag: "Output"
      readonly target: Target
      /** The target's tool and tokens, read by every walk (the target only when chosen). */
      readonly tool: string
      readonly tokens: number
      readonly compacted: boolean
    }

const USER: Step = { _tag: "User" }
const SUMMARY: Step = { _tag: "Summary" }

/** The steps of one message, oldest first (`stepsOf(m).reverse()` is what the walk meets, newest first). */
export const stepsOf = (message: Message): ReadonlyArray<Step> => {
  if (message.role === "user") return [USER]
  if (message.summary === true) return [SUMMARY]
  const steps: Array<Step> = []
  for (const part of message.parts)
    if (part.type === "tool" && part.state.status === "completed") {
      const tokens = estimate(part.state.output)
      steps.push({
        _tag: "Output",
        target: { messageId: message.id, partId: part.id, tool: part.tool, tokens },
        tool: part.tool,
        tokens,
        compacted: part.state.compactedAt !== undefined,
      })
    }
  return steps
}

/** `select` over messages given newest first, read lazily: the walk stops early, so long histories cost little. */
export const selectNewestFirst = (messages: Iterable<Message>, options: Options = {}): Selection => {
  const source = messages[Symbol.iterator]()
  let steps: ReadonlyArray<Step> = []
  let at = 0
  return selectSteps(() => {
    while (at === 0) {
      // After a summary the walk has ended: nothing older is read.
      if (steps[0] === SUMMARY) return undefined
      const next = source.next()
      if (next.done === true) return undefined
      steps = stepsOf(next.value)
      at = steps.length
    }
    return steps[--at]
  }, options)
}

/**
 * The rule itself (see `select`), over the steps of the messages newest first (`stepsOf`, each message's steps
 * reversed), each read by `next` (undefined: no more): the one walk `select`, `selectNewestFirst` and `PruneScan`
 * share. It reads no further than it needs.
 */
export const selectSteps = (next: () => Step | undefined, options: Options = {}): Selection => {
  const protect = options.protect ?? PRUNE_PROTECT
  const minimum = options.minimum ?? PRUNE_MINIMUM
  const protectedTools = options.protectedTools ?? PRUNE_PROTECTED_TOOLS
  const guarded = options.turns ?? PRUNE_TURNS
  let total = 0
  let pruned = 0
  let turns = 0
  const chosen: Array<Target> = []
  for (let step = next(); step !== undefined; step = next()) {
    if (step._tag === "User") {
      turns++
      continue
    }
    if (step._tag === "Summary") break
    // The newest turns are skipped whole: every output of their assistant messages.
    if (turns < guarded) continue
    if (protectedTools.includes(step.tool)) continue
    if (step.compacted) break
    total += step.tokens
    if (total <= protect) continue
    pruned += step.tokens
    chosen.push(step.target)
  }
  if (pruned <= minimum) return empty
  return { parts: chosen.reverse(), tokensFreed: pruned }
}

/** Marks the selected outputs compacted at `at` (ms), as recording the prune does; other messages are kept as is. */
export const apply = (messages: ReadonlyArray<Message>, selection: Selection, at: number): ReadonlyArray<Message> => {
  if (selection.parts.length === 0) return messages
  const ids = new Set<string>(selection.parts.map((target) => target.partId))
  const mark = (part: AssistantPart): AssistantPart =>
    part.type === "tool" &&
    part.state.status === "completed" &&
    part.state.compactedAt === undefined &&
    ids.has(part.id)
      ? { ...part, state: { ...part.state, compactedAt: at } }
      : part
  return messages.map((message) =>
    message.role === "assistant" && message.parts.some((part) => ids.has(part.id))
      ? { ...message, parts: message.parts.map(mark) }
      : message,
  )
}
