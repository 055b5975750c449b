/**
 * The session Decider (`initialState`, `evolve`, `decide`): the write side of one session's stream.
 *
 * `decide` validates a command against the folded state and answers the events it causes, or a typed refusal. It is
 * pure and idempotent: deciding the same command again on the resulting state answers no events.
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Commands from "./Commands.ts"
import type { Command } from "./Commands.ts"
import type { CompactionConfig } from "./Config.ts"
import * as Conversation from "./Conversation.ts"
import {
  CompactionOutOfOrder,
  MessageConflict,
  NotPinnable,
  PinOverBudget,
  SessionAlreadyStarted,
  SessionNotStarted,
  UnknownCompaction,
  UnknownMessage,
  UnknownPart,
} from "./Errors.ts"
import type { CompactionPlan, Event } from "./Events.ts"
import type { MessageId, PartId, SessionId } from "./Ids.ts"
import type * as BloomFilter from "./internal/BloomFilter.ts"
import { jsonEqual } from "./internal/jsonEqual.ts"
import type { AssistantMessage, Message, UserMessage, UserPart } from "./Message.ts"
import { attachedPlaceholder, isMedia } from "./Message.ts"
import type { ModelRef } from "./Model.ts"
import * as Overflow from "./Overflow.ts"
import * as Pins from "./Pins.ts"
import * as Prompt from "./Prompt.ts"
import * as Prune from "./Prune.ts"
import * as Render from "./Render.ts"
import * as SummaryInput from "./SummaryInput.ts"
import { estimate as estimateTokens } from "./Tokens.ts"
import * as Window from "./Window.ts"

/** Where one compaction stands. */
export interface Compaction {
  readonly markerId: MessageId
  readonly auto: boolean
  readonly overflow: boolean
  readonly status: "requested" | "started" | "finished" | "failed" | "continued"
  readonly summaryId?: MessageId
  readonly model?: ModelRef
  readonly plan?: CompactionPlan
  readonly startedAt?: number
}

/** The folded state of a session. */
export interface State {
  readonly sessionId: SessionId | undefined
  /** Events folded so far: the stream version this state stands at. */
  readonly version: number
  readonly window: Window.State
  readonly compactions: HashMap.HashMap<MessageId, Compaction>
  /** The marker of the compaction not yet settled (finished or failed), if any. */
  readonly pending: MessageId | undefined
  /** The newest assistant message with a finish reason (OpenCode's `lastFinished`). */
  readonly lastFinished: MessageId | undefined
  /** The message the latest `OverflowDetected` was about, so the same overflow is reported once. */
  readonly overflowReported: MessageId | undefined
  /** Messages a live state no longer holds (`Retention.retain`); absent on a state folded from the events alone. */
  readonly retired?: Retired | undefined
}

/**
 * What `Retention.retain` dropped from a live state: how many messages, and where their ids are. Ids are sortable
 * in creation order, so while the dropped ids ascend they are all ≤ `below` and nothing more is kept; ids dropped
 * after one broke that order go into a Bloom filter.
 */
export interface Retired {
  readonly count: number
  /** The greatest id dropped while they ascended (undefined: none). */
  readonly below: MessageId | undefined
  /** The ids dropped after one did not ascend. */
  readonly ids: BloomFilter.BloomFilter
}

/** The state of a stream with no events. */
export const initialState: State = {
  sessionId: undefined,
  version: 0,
  window: Window.initial,
  compactions: HashMap.empty(),
  pending: undefined,
  lastFinished: undefined,
  overflowReported: undefined,
}

/** A refusal `decide` can answer. */
export type DomainError =
  | SessionNotStarted
  | SessionAlreadyStarted
  | MessageConflict
  | UnknownMessage
  | UnknownPart
  | UnknownCompaction
  | CompactionOutOfOrder
  | SummaryInput.CompactionParentNotUser
  | NotPinnable
  | PinOverBudget

/** The compaction requested with this marker, if any. */
export const compaction = (state: State, markerId: MessageId): Compaction | undefined =>
  Option.getOrUndefined(HashMap.get(state.compactions, markerId))

/** The stored message with this id, if any. */
export const message = (state: State, id: MessageId): Message | undefined =>
  Conversation.get(state.window.conversation, id)

const withCompaction = (state: State, markerId: MessageId, update: (c: Compaction) => Compaction): State => {
  const current = compaction(state, markerId)
  return current ? { ...state, compactions: HashMap.set(state.compactions, markerId, update(current)) } : state
}

const finished = (state: State, m: AssistantMessage): State =>
  m.finish !== undefined && (state.lastFinished === undefined || m.id > state.lastFinished)
    ? { ...state, lastFinished: m.id }
    : state

/** Folds one event into the state. */
export const evolve = (state: State, event: Event): State => {
  const next: State = { ...state, version: state.version + 1, window: Window.evolve(state.window, event) }
  switch (event._tag) {
    case "SessionStarted":
      return { ...next, sessionId: event.sessionId }
    case "AssistantStepRecorded":
    case "ProviderErrorReported":
      return finished(next, event.message)
    case "OverflowDetected":
      return { ...next, overflowReported: event.messageId }
    case "CompactionRequested": {
      const part = event.marker.parts.find((p) => p.type === "compaction")
      const requested: Compaction = {
        markerId: event.marker.id,
        auto: part?.type === "compaction" ? part.auto : false,
        overflow: part?.type === "compaction" ? part.overflow === true : false,
        status: "requested",
      }
      return {
        ...next,
        compactions: HashMap.set(next.compactions, event.marker.id, requested),
        pending: event.marker.id,
      }
    }
    case "CompactionStarted":
      return withCompaction(next, event.markerId, (c) => ({
        ...c,
        status: "started",
        summaryId: event.summaryId,
        model: event.model,
        plan: event.plan,
        startedAt: event.at,
      }))
    case "SummaryFinished":
      return finished(
        { ...withCompaction(next, event.markerId, (c) => ({ ...c, status: "finished" })), pending: undefined },
        event.summary,
      )
    case "SummaryFailed":
      return { ...withCompaction(next, event.markerId, (c) => ({ ...c, status: "failed" })), pending: undefined }
    case "TurnReplayed":
    case "ContinueRequested":
      return withCompaction(next, event.markerId, (c) => ({ ...c, status: "continued" }))
    default:
      return next
  }
}

/** Folds events onto a state (from the initial state by default). */
export const fold = (events: Iterable<Event>, from: State = initialState): State => {
  let state = from
  for (const event of events) state = evolve(state, event)
  return state
}

type Decision = Result.Result<ReadonlyArray<Event>, DomainError>

const none: Decision = Result.succeed([])
const emit = (...events: ReadonlyArray<Event>): Decision => Result.succeed(events)
/** The message without the times its recorder stamps: a retry recorded later is the same message. */
const untimed = ({ createdAt: _created, completedAt: _completed, ...rest }: Message & { completedAt?: number }) => rest

/** A part id derived from a message id: fresh, unique and sortable without asking the id service again. */
const derivedPartId = (messageId: MessageId, index: number) =>
  `prt_${messageId.slice(4)}_${String(index).padStart(3, "0")}` as PartId

const existing = (state: State, incoming: Message): Decision | undefined => {
  const stored = message(state, incoming.id)
  if (stored === undefined) return undefined
  // A retry (same id, same content, time aside) is acknowledged and adds nothing; other content under the id conflicts.
  return jsonEqual(untimed(stored), untimed(incoming))
    ? none
    : Result.fail(new MessageConflict({ messageId: incoming.id }))
}

const recordAssistantStep = (state: State, command: typeof Commands.RecordAssistantStep.Type): Decision => {
  const { message: step } = command
  const seen = existing(state, step)
  if (seen) return seen
  if (message(state, step.parentId) === undefined)
    return Result.fail(new UnknownMessage({ messageId: step.parentId, expected: "parent" }))
  const recorded: Event = { _tag: "AssistantStepRecorded", at: step.completedAt ?? step.createdAt, message: step }
  // Rule A: checked at every finished step with the default output cap; a summary is never checked.
  const config: CompactionConfig = command.config ?? {}
  const overflow =
    command.limits && !step.summary
      ? Overflow.detect(config, step.tokens, command.limits, undefined, command.fixed)
      : undefined
  if (overflow === undefined) return emit(recorded)
  return emit(recorded, {
    _tag: "OverflowDetected",
    at: recorded.at,
    messageId: step.id,
    source: "usage",
    tokens: overflow.tokens,
    trigger: overflow.trigger,
  })
}

const reportProviderError = (state: State, command: typeof Commands.ReportProviderError.Type): Decision => {
  const overflow = command.error.name === "ContextOverflowError"
  // As OpenCode: an overflow that will be compacted leaves no error on the message (and no finish, so the
  // compaction replays the turn); with auto off, the error is stored and the turn ends.
  const compactable = overflow && (command.config?.auto !== false || command.message.summary === true)
  const stored: AssistantMessage = compactable
    ? command.message
    : { ...command.message, error: command.error, finish: "error", completedAt: command.at }
  const seen = existing(state, stored)
  if (seen) return seen
  if (message(state, stored.parentId) === undefined)
    return Result.fail(new UnknownMessage({ messageId: stored.parentId, expected: "parent" }))
  const reported: Event = {
    _tag: "ProviderErrorReported",
    at: command.at,
    message: stored,
    error: command.error,
    overflow,
  }
  if (!compactable) return emit(reported)
  return emit(reported, {
    _tag: "OverflowDetected",
    at: command.at,
    messageId: stored.id,
    source: "provider-error",
    tokens: 0,
  })
}

const checkOverflow = (state: State, command: typeof Commands.CheckOverflow.Type): Decision => {
  if (state.pending !== undefined || state.lastFinished === undefined) return none
  if (state.overflowReported === state.lastFinished) return none
  const last = message(state, state.lastFinished)
  if (last?.role !== "assistant" || last.summary === true) return none
  const overflow = Overflow.detect(
    command.config,
    last.tokens,
    command.limits,
    command.config.output_token_max,
    command.fixed,
  )
  if (overflow === undefined) return none
  return emit({
    _tag: "OverflowDetected",
    at: command.at,
    messageId: last.id,
    source: "pre-check",
    tokens: overflow.tokens,
    trigger: overflow.trigger,
  })
}

const createCompaction = (state: State, command: typeof Commands.CreateCompaction.Type): Decision => {
  if (compaction(state, command.markerId) !== undefined) return none
  // One compaction at a time: a second request while one is unsettled adds no second marker.
  if (state.pending !== undefined) return none
  if (message(state, command.markerId) !== undefined)
    return Result.fail(new MessageConflict({ messageId: command.markerId }))
  const part: UserPart =
    command.overflow === undefined
      ? { type: "compaction", id: command.partId, auto: command.auto }
      : { type: "compaction", id: command.partId, auto: command.auto, overflow: command.overflow }
  const marker: UserMessage = {
    role: "user",
    id: command.markerId,
    createdAt: command.at,
    ...(command.agent === undefined ? {} : { agent: command.agent }),
    ...(command.model === undefined ? {} : { model: command.model }),
    parts: [part],
  }
  return emit({
    _tag: "CompactionRequested",
    at: command.at,
    marker,
    ...(command.reason === undefined ? {} : { reason: command.reason }),
  })
}

const requireCompaction = (state: State, markerId: MessageId): Result.Result<Compaction, DomainError> => {
  const found = compaction(state, markerId)
  return found ? Result.succeed(found) : Result.fail(new UnknownCompaction({ markerId }))
}

const outOfOrder = (c: Compaction, command: Command): Decision =>
  Result.fail(new CompactionOutOfOrder({ markerId: c.markerId, status: c.status, command: command._tag }))

const processCompaction = (state: State, command: typeof Commands.ProcessCompaction.Type): Decision => {
  const found = requireCompaction(state, command.markerId)
  if (Result.isFailure(found)) return Result.fail(found.failure)
  const c = found.success
  if (c.status !== "requested") return c.status === "failed" ? outOfOrder(c, command) : none
  const planned = SummaryInput.plan(Window.messages(state.window), {
    parentId: command.markerId,
    overflow: c.overflow,
    config: command.config,
    compactionLimits: command.compactionLimits,
    keep: command.keep,
  })
  if (Result.isFailure(planned)) return Result.fail(planned.failure)
  const plan = planned.success
  const prompt =
    command.prompt ??
    Prompt.buildPrompt({
      ...(plan.previousSummary === undefined ? {} : { previousSummary: plan.previousSummary }),
      context: command.pluginContext ?? [],
    })
  return emit({
    _tag: "CompactionStarted",
    at: command.at,
    markerId: command.markerId,
    summaryId: command.summaryId,
    model: command.model,
    plan: {
      head: plan.head,
      tail: plan.tail,
      ...(plan.tailStartId === undefined ? {} : { tailStartId: plan.tailStartId }),
      ...(plan.previousSummary === undefined ? {} : { previousSummary: plan.previousSummary }),
      ...(plan.replayOf === undefined ? {} : { replayOf: plan.replayOf }),
    },
    prompt,
    ...(command.pluginContext === undefined ? {} : { pluginContext: command.pluginContext }),
  })
}

const summaryMessage = (c: Compaction, at: number, summaryId: MessageId): AssistantMessage => ({
  role: "assistant",
  id: summaryId,
  parentId: c.markerId,
  createdAt: c.startedAt ?? at,
  completedAt: at,
  model: c.model ?? { providerId: "pivot", modelId: "unknown" },
  agent: "compaction",
  mode: "compaction",
  summary: true,
  tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
  parts: [],
})

const finishSummary = (state: State, command: typeof Commands.FinishSummary.Type): Decision => {
  const found = requireCompaction(state, command.markerId)
  if (Result.isFailure(found)) return Result.fail(found.failure)
  const c = found.success
  if (c.status === "finished" || c.status === "continued") return none
  if (c.status !== "started" || c.summaryId === undefined) return outOfOrder(c, command)
  const summary: AssistantMessage = {
    ...summaryMessage(c, command.at, c.summaryId),
    tokens: command.tokens,
    finish: command.finish ?? "stop",
    parts: [{ type: "text", id: command.partId, text: command.text }],
  }
  return emit({ _tag: "SummaryFinished", at: command.at, markerId: command.markerId, summary })
}

const failSummary = (state: State, command: typeof Commands.FailSummary.Type): Decision => {
  const found = requireCompaction(state, command.markerId)
  if (Result.isFailure(found)) return Result.fail(found.failure)
  const c = found.success
  if (c.status === "failed") return none
  if (c.status !== "started" || c.summaryId === undefined) return outOfOrder(c, command)
  const summary: AssistantMessage = {
    ...summaryMessage(c, command.at, c.summaryId),
    error: command.error,
    finish: "error",
  }
  return emit({ _tag: "SummaryFailed", at: command.at, markerId: command.markerId, summary })
}

/** The replayed copy of a user turn: fresh ids, no compaction parts, media as placeholders (spec §2.8 step 13). */
const replayCopy = (original: UserMessage, messageId: MessageId, at: number): UserMessage => {
  const parts: Array<UserPart> = []
  for (const part of original.parts) {
    if (part.type === "compaction") continue
    const id = derivedPartId(messageId, parts.length)
    if (part.type === "file" && isMedia(part.mime)) parts.push({ type: "text", id, text: attachedPlaceholder(part) })
    else parts.push({ ...part, id })
  }
  return { ...original, id: messageId, createdAt: at, parts }
}

const continueAfter = (state: State, command: typeof Commands.Continue.Type): Decision => {
  const found = requireCompaction(state, command.markerId)
  if (Result.isFailure(found)) return Result.fail(found.failure)
  const c = found.success
  if (c.status === "continued") return none
  if (c.status !== "finished") return outOfOrder(c, command)
  if (!c.auto) return none
  const replayOf = c.plan?.replayOf
  const original = replayOf === undefined ? undefined : message(state, replayOf)
  if (original?.role === "user") {
    const replayed = replayCopy(original, command.messageId, command.at)
    return emit({
      _tag: "TurnReplayed",
      at: command.at,
      markerId: c.markerId,
      replayOf: original.id,
      message: replayed,
    })
  }
  if (command.autoContinue === false) return none
  const marker = message(state, c.markerId)
  const continued: UserMessage = {
    role: "user",
    id: command.messageId,
    createdAt: command.at,
    ...(marker?.role === "user" && marker.agent !== undefined ? { agent: marker.agent } : {}),
    ...(marker?.role === "user" && marker.model !== undefined ? { model: marker.model } : {}),
    parts: [
      {
        type: "text",
        id: derivedPartId(command.messageId, 0),
        text: Prompt.continueText(c.overflow),
        synthetic: true,
        metadata: { compaction_continue: true },
      },
    ],
  }
  return emit({ _tag: "ContinueRequested", at: command.at, markerId: c.markerId, message: continued })
}

const recordToolResult = (state: State, command: typeof Commands.RecordToolResult.Type): Decision => {
  const target = message(state, command.messageId)
  if (target?.role !== "assistant")
    return Result.fail(new UnknownMessage({ messageId: command.messageId, expected: "assistant" }))
  const part = target.parts.find((p) => p.id === command.partId)
  if (part?.type !== "tool")
    return Result.fail(new UnknownPart({ messageId: command.messageId, partId: command.partId }))
  if (jsonEqual(part.state, command.state)) return none
  // A result is final: a settled call keeps its first result.
  if (part.state.status === "completed" || part.state.status === "error")
    return Result.fail(
      new MessageConflict({ messageId: command.messageId, partId: command.partId, status: part.state.status }),
    )
  return emit({ ...command, _tag: "ToolResultRecorded" })
}

const prune = (state: State, command: typeof Commands.Prune.Type): Decision => {
  if (command.parts !== undefined) return pruneParts(state, command.at, command.parts)
  const why = {
    ...(command.rule === undefined ? {} : { rule: command.rule }),
    ...(command.reason === undefined ? {} : { reason: command.reason }),
  }
  const selection = Prune.selectNewestFirst(Conversation.newestFirst(state.window.conversation), {
    ...(command.protect === undefined ? {} : { protect: command.protect }),
    ...(command.minimum === undefined ? {} : { minimum: command.minimum }),
    ...(command.protectedTools === undefined ? {} : { protectedTools: command.protectedTools }),
    ...(command.turns === undefined ? {} : { turns: command.turns }),
  })
  // A pinned message's tool outputs stay verbatim: pruning skips them.
  const pinned = new Set<string>(state.window.pins.map(Pins.key))
  return emit(
    ...selection.parts
      .filter((p) => !pinned.has(p.messageId) && !pinned.has(p.partId))
      .map(
        (p): Event => ({
          _tag: "PartCompacted",
          at: command.at,
          messageId: p.messageId,
          partId: p.partId,
          tokens: p.tokens,
          ...why,
        }),
      ),
  )
}

const pin = (state: State, command: typeof Commands.Pin.Type): Decision => {
  const target = message(state, command.messageId)
  if (target === undefined) return Result.fail(new UnknownMessage({ messageId: command.messageId }))
  const reason = Pins.unpinnable(target, command.partId)
  if (reason !== undefined) return Result.fail(new NotPinnable({ messageId: command.messageId, reason }))
  const k = Pins.key(command)
  if (state.window.pins.some((p) => Pins.key(p) === k)) return none
  const tokens = Pins.sizeOfMessage(target)
  const fit = Pins.fit(state.window.pins, { messageId: command.messageId, tokens }, command.budget)
  if (!fit.fits)
    return command.by === "default"
      ? none
      : Result.fail(new PinOverBudget({ messageId: command.messageId, tokens: fit.tokens, budget: fit.budget }))
  return emit(
    ...fit.evicted.map(
      (p): Event => ({
        _tag: "ContextUnpinned",
        at: command.at,
        messageId: p.messageId,
        ...(p.partId === undefined ? {} : { partId: p.partId }),
        reason: "budget",
        for: k,
      }),
    ),
    {
      _tag: "ContextPinned",
      at: command.at,
      messageId: command.messageId,
      ...(command.partId === undefined ? {} : { partId: command.partId }),
      by: command.by,
      tokens,
      budget: command.budget,
    },
  )
}

const unpin = (state: State, command: typeof Commands.Unpin.Type): Decision =>
  emit(
    ...state.window.pins
      .filter((p) => p.messageId === command.messageId && (command.partId === undefined || p.partId === command.partId))
      .map(
        (p): Event => ({
          _tag: "ContextUnpinned",
          at: command.at,
          messageId: p.messageId,
          ...(p.partId === undefined ? {} : { partId: p.partId }),
          reason: command.by,
        }),
      ),
  )

/**
 * A strategy's own choice: each target that is still a completed output not cleared yet is cleared, with its rule and
 * reason; the rest (unknown, not an output, cleared already, named twice) is passed over, so deciding again is a no-op.
 * An input target (`target: "input"`) is cleared when its call is completed or errored, its input is not cleared yet
 * and clearing sheds something (`Render.inputShed` > 0); the event carries `target: "input"` and those tokens.
 */
const pruneParts = (state: State, at: number, targets: ReadonlyArray<Commands.PruneTarget>): Decision => {
  // A pinned message's tool outputs stay verbatim, whatever a strategy asks.
  const pinned = new Set<string>(state.window.pins.map(Pins.key))
  const seen = new Set<string>()
  const events: Array<Event> = []
  for (const target of targets) {
    const key = target.target === "input" ? Render.inputRecallId(target.partId) : target.partId
    if (seen.has(key) || pinned.has(target.messageId) || pinned.has(target.partId)) continue
    seen.add(key)
    const found = message(state, target.messageId)
    if (found?.role !== "assistant") continue
    const part = found.parts.find((p) => p.id === target.partId)
    if (part?.type !== "tool") continue
    const why = { rule: target.rule, reason: target.reason }
    const where = { _tag: "PartCompacted", at, messageId: target.messageId, partId: target.partId } as const
    if (target.target === "input") {
      const s = part.state
      if ((s.status !== "completed" && s.status !== "error") || s.inputClearedAt !== undefined) continue
      const tokens = Render.inputShed(s.input)
      if (tokens > 0) events.push({ ...where, tokens, ...why, target: "input" })
      continue
    }
    if (part.state.status !== "completed" || part.state.compactedAt !== undefined) continue
    events.push({ ...where, tokens: estimateTokens(part.state.output), ...why })
  }
  return emit(...events)
}

/** Decides what a command causes on the given state. */
export const decide = (command: Command, state: State): Decision => {
  if (command._tag === "StartSession") {
    if (state.sessionId === undefined) return emit({ ...command, _tag: "SessionStarted" })
    return state.sessionId === command.sessionId
      ? none
      : Result.fail(new SessionAlreadyStarted({ sessionId: state.sessionId }))
  }
  if (state.sessionId === undefined) return Result.fail(new SessionNotStarted())
  switch (command._tag) {
    case "AddUserMessage":
      return (
        existing(state, command.message) ??
        emit({ _tag: "UserMessageAdded", at: command.message.createdAt, message: command.message })
      )
    case "RecordAssistantStep":
      return recordAssistantStep(state, command)
    case "RecordToolResult":
      return recordToolResult(state, command)
    case "ReportProviderError":
      return reportProviderError(state, command)
    case "CheckOverflow":
      return checkOverflow(state, command)
    case "CreateCompaction":
      return createCompaction(state, command)
    case "ProcessCompaction":
      return processCompaction(state, command)
    case "FinishSummary":
      return finishSummary(state, command)
    case "FailSummary":
      return failSummary(state, command)
    case "Continue":
      return continueAfter(state, command)
    case "Prune":
      return prune(state, command)
    case "Pin":
      return pin(state, command)
    case "Unpin":
      return unpin(state, command)
  }
}

/** The Decider as one value, for generic command handlers. */
export const decider = { initialState, evolve, decide } as const
