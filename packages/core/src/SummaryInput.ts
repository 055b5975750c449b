/**
 * What the summariser sees (spec §2.8 steps 1–8): which turn is replayed after an overflow, which messages are
 * summarised (the head), which stay verbatim (the tail), and the previous summary to update. Pure functions over the
 * current window, i.e. the messages in the order the model sees them with earlier pivots applied.
 *
 * Deviations from OpenCode (they fix defects of its implicit tail range): the tail is an explicit list of message
 * ids; it never holds older markers or summaries, nor the replayed message or anything after it.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { CompactionConfig } from "./Config.ts"
import { MessageId } from "./Ids.ts"
import { compactionPartOf, isFinishedSummary, isMarker, type Message, summaryText } from "./Message.ts"
import type { ModelLimits, ModelRef } from "./Model.ts"
import type { ModelMessage } from "./ModelMessage.ts"
import { type Options as RenderOptions, toModelMessages } from "./Render.ts"
import { DEFAULT_TAIL_TURNS, selectTail, tailBudget } from "./Tail.ts"
import * as ValidWindow from "./ValidWindow.ts"

/** The compaction's parent is missing from the window or is not a user message (spec §2.8 step 1, test C1). */
export class CompactionParentNotUser extends Schema.TaggedError<CompactionParentNotUser>()("CompactionParentNotUser", {
  parentId: MessageId,
}) {
  override get message(): string {
    return `Compaction parent must be a user message: ${this.parentId}`
  }
}

/** Everything the summariser input and the pivot need, as message ids. */
export interface CompactionPlan {
  /** The user message the compaction answers (normally the marker). */
  readonly parentId: MessageId
  /** The user turn replayed after the summary (overflow compactions only). */
  readonly replayOf?: MessageId
  /** The text of the last finished summary in the window, which the new summary updates. */
  readonly previousSummary?: string
  /** Messages summarised, in window order. */
  readonly head: ReadonlyArray<MessageId>
  /** Messages kept verbatim after the summary, in window order. */
  readonly tail: ReadonlyArray<MessageId>
  /** The first tail message; undefined when the tail is empty. */
  readonly tailStartId?: MessageId
}

/** Inputs of `plan` besides the window. */
export interface PlanInput {
  readonly parentId: MessageId
  /** The marker's overflow flag: a provider rejected the request, so the last real user turn is replayed. */
  readonly overflow: boolean
  readonly config: CompactionConfig
  /** Limits of the model that writes the summary; they size the tail budget. */
  readonly compactionLimits: ModelLimits
  /**
   * Messages a strategy keeps verbatim besides the tail (the turn in progress, `Strategy.Keep`): moved from the head
   * to the tail in window order, unless that would leave the head empty (then nothing moves).
   */
  readonly keep?: ReadonlyArray<MessageId> | undefined
}

const isRealUser = (message: Message): boolean => message.role === "user" && !isMarker(message)

/** Step 2: the replayed turn and the messages before it, or none when nothing real would be left to summarise. */
const selectReplay = (
  window: ReadonlyArray<Message>,
  parentIndex: number,
): { readonly replay: Message; readonly before: ReadonlyArray<Message> } | undefined => {
  for (let i = parentIndex - 1; i >= 0; i--) {
    const message = window[i]!
    if (!isRealUser(message)) continue
    const before = window.slice(0, i)
    return before.some(isRealUser) ? { replay: message, before } : undefined
  }
  return undefined
}

/**
 * Plans a compaction over `window` (spec §2.8 steps 1–6): finds the parent, picks the replayed turn on overflow,
 * removes the marker and completed marker/summary pairs from the history, takes the previous summary from the last
 * completed pair, and splits the rest into head and tail.
 */
export const plan = (
  window: ReadonlyArray<Message>,
  input: PlanInput,
): Result.Result<CompactionPlan, CompactionParentNotUser> => {
  const parentIndex = window.findLastIndex((m) => m.id === input.parentId)
  const parent = window[parentIndex]
  if (parent === undefined || parent.role !== "user") {
    return Result.fail(new CompactionParentNotUser({ parentId: input.parentId }))
  }
  const replay = input.overflow ? selectReplay(window, parentIndex) : undefined
  const messages = replay ? replay.before : window
  // The marker itself is not history. (OpenCode drops it only when it is the last message.)
  const parentIsMarker = compactionPartOf(parent) !== undefined
  const history = parentIsMarker ? messages.filter((m) => m.id !== parent.id) : messages

  // A pair is completed when a finished summary answers a marker that is in the history; both are hidden.
  const markers = new Set(history.filter(isMarker).map((m) => m.id))
  const hidden = new Set<MessageId>()
  let previousSummary: string | undefined
  for (const message of history) {
    if (isFinishedSummary(message) && markers.has(message.parentId)) {
      hidden.add(message.id)
      hidden.add(message.parentId)
      previousSummary = summaryText(message)
    }
  }
  const visible = hidden.size === 0 ? history : history.filter((m) => !hidden.has(m.id))

  const selection = selectTail(visible, {
    tailTurns: input.config.tail_turns ?? DEFAULT_TAIL_TURNS,
    budget: tailBudget(input.config, input.compactionLimits),
  })
  const kept = withKept(selection, input.keep)
  // The tail keeps conversation only: leftover markers and summaries of unfinished compactions are not re-shown.
  const tail = kept.tail.filter((m) => !isMarker(m) && !(m.role === "assistant" && m.summary === true)).map((m) => m.id)
  const tailStartId = tail[0]
  return Result.succeed({
    parentId: input.parentId,
    ...(replay ? { replayOf: replay.replay.id } : {}),
    ...(previousSummary !== undefined ? { previousSummary } : {}),
    head: kept.head.map((m) => m.id),
    tail,
    ...(tailStartId !== undefined ? { tailStartId } : {}),
  })
}

/** The selection with the `keep` messages of its head moved to its tail (see `PlanInput.keep`). */
const withKept = (
  selection: { readonly head: ReadonlyArray<Message>; readonly tail: ReadonlyArray<Message> },
  keep: ReadonlyArray<MessageId> | undefined,
): { readonly head: ReadonlyArray<Message>; readonly tail: ReadonlyArray<Message> } => {
  if (keep === undefined || keep.length === 0) return selection
  const ids = new Set(keep)
  const moved = selection.head.filter((m) => ids.has(m.id) && !isMarker(m))
  if (moved.length === 0 || moved.length === selection.head.length) return selection
  const movedIds = new Set(moved.map((m) => m.id))
  return { head: selection.head.filter((m) => !movedIds.has(m.id)), tail: [...moved, ...selection.tail] }
}

/** Options of `summarizerMessages`. */
export interface SummarizerOptions {
  /** The compaction model; assistants of other models get their reasoning as text. */
  readonly model?: ModelRef | undefined
  /** Whether the compaction model's provider accepts media in tool results (moot here: media is stripped). */
  readonly mediaInToolResults?: boolean | undefined
}

/** The head's character cap per tool output in the summariser input. */
export const TOOL_OUTPUT_MAX_CHARS = 2_000

/**
 * The summariser's messages (spec §2.8 steps 8 and 10): the head rendered with media stripped and tool outputs cut
 * to 2_000 characters, then one user message with `prompt`. Ids missing from `messagesById` are skipped.
 */
export const summarizerMessages = (
  compactionPlan: CompactionPlan,
  messagesById: (id: MessageId) => Message | undefined,
  prompt: string,
  options: SummarizerOptions = {},
): Array<ModelMessage> => {
  const head: Array<Message> = []
  for (const id of compactionPlan.head) {
    const message = messagesById(id)
    if (message !== undefined) head.push(message)
  }
  return [
    ...toModelMessages(head, {
      stripMedia: true,
      toolOutputMaxChars: TOOL_OUTPUT_MAX_CHARS,
      model: options.model,
      mediaInToolResults: options.mediaInToolResults,
    }),
    { role: "user", content: [{ type: "text", text: prompt }] },
  ]
}

/**
 * The cache-aware summariser messages (ADR 0017): the window exactly as the conversation renders it for its next call
 * (the marker left out), then the prompt as the last user message. The request then starts with the bytes the
 * conversation's last call sent, so a provider cache serves them; the summariser also reads the tail it keeps.
 */
export const cacheAwareMessages = (
  window: ReadonlyArray<Message>,
  markerId: MessageId,
  prompt: string,
  options: RenderOptions = {},
): Array<ModelMessage> => [
  ...ValidWindow.render(
    window.filter((m) => m.id !== markerId),
    options,
  ).map((r) => r.message),
  { role: "user", content: [{ type: "text", text: prompt }] },
]
