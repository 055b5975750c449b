/**
 * The compaction history: every compaction of the session with what it summarised, which tail it kept, the tokens
 * before and after, the prompt and the model used, how it ended — and what pivot did beyond OpenCode (a fallback
 * summary, head messages budgeted out, secrets redacted, a continue message skipped). A pure fold: replaying the log rebuilds it.
 */
import type {
  CompactionPlan,
  CompactionReason,
  CompactionRequestedByStrategy,
  Event,
  FallbackReason,
} from "./Events.ts"
import type { MessageId } from "./Ids.ts"
import { summaryText } from "./Message.ts"
import type { ModelRef } from "./Model.ts"
import type { Projection } from "./Projection.ts"
import { contextCount, estimate } from "./Tokens.ts"

/** One compaction, as far as it got. */
export interface Entry {
  readonly markerId: MessageId
  readonly auto: boolean
  readonly overflow: boolean
  /** Why it was asked for, when the log recorded it (not in older logs nor imported OpenCode sessions). */
  readonly reason?: CompactionReason
  readonly requestedAt: number
  /** Stream version of the request (fold up to `version - 1` for the window before it). */
  readonly requestedVersion: number
  readonly status: "requested" | "started" | "finished" | "failed" | "continued"
  readonly startedAt?: number
  readonly model?: ModelRef
  readonly prompt?: string
  readonly plan?: CompactionPlan
  readonly summaryId?: MessageId
  readonly summary?: string
  readonly summaryTokens?: number
  /** Stream version of the event that settled it (the window right after the pivot is the fold up to it). */
  readonly settledVersion?: number
  readonly error?: string
  /** Context tokens reported by the last model call before the request. */
  readonly tokensBefore?: number
  /** Context tokens reported by the first model call after the pivot. */
  readonly tokensAfter?: number
  readonly continuation?: "continue" | "replay"
  /** Why no continue message followed (the agent was waiting for the user, or a plugin vetoed). */
  readonly continueSkipped?: "waiting-for-user" | "plugin-veto"
  /** Why the deterministic extractive summary replaced the model's, when it did. */
  readonly fallback?: FallbackReason
  /** What went wrong with the model's summary when the fallback replaced it (the recorded error's message). */
  readonly fallbackError?: string
  /** Head messages left out of the model call to fit the compaction model (summarised deterministically instead). */
  readonly budgetedOut?: ReadonlyArray<MessageId>
  /** Secrets redacted on the way to the summariser or from the summary (count of findings). */
  readonly redactions?: number
  /** Set when the model asked for it (`context_compact`), with its focus note when it gave one. */
  readonly requestedByModel?: { readonly focus?: string }
  /**
   * Set when pivot's strategy asked the host to compact (`CompactionRequestedByStrategy`, drive mode): why, what the
   * last call measured, the strategy's trigger, and the host's own limit it compacted before. Without it, a
   * compaction of an imported session was the host's own.
   */
  readonly requestedByStrategy?: Omit<CompactionRequestedByStrategy, "_tag" | "markerId">
}

/** The history so far. */
export interface State {
  readonly entries: ReadonlyArray<Entry>
  readonly lastCallTokens: number | undefined
}

/** No compactions yet. */
export const initial: State = { entries: [], lastCallTokens: undefined }

const updateLast = (state: State, markerId: MessageId, update: (e: Entry) => Entry): State => {
  const index = state.entries.findLastIndex((e) => e.markerId === markerId)
  if (index < 0) return state
  const entries = state.entries.slice()
  entries[index] = update(entries[index]!)
  return { ...state, entries }
}

/** Folds one event (O(1) amortised: the entry touched is almost always the newest). */
export const evolve = (state: State, event: Event, version: number): State => {
  switch (event._tag) {
    case "AssistantStepRecorded": {
      if (event.message.summary === true) return state
      const tokens = contextCount(event.message.tokens)
      if (tokens === 0) return state
      const last = state.entries[state.entries.length - 1]
      const waiting =
        last && (last.status === "finished" || last.status === "continued") && last.tokensAfter === undefined
      const next = { ...state, lastCallTokens: tokens }
      return waiting ? updateLast(next, last.markerId, (e) => ({ ...e, tokensAfter: tokens })) : next
    }
    case "CompactionRequestedByModel":
      return updateLast(state, event.markerId, (e) => ({
        ...e,
        requestedByModel: event.focus === undefined ? {} : { focus: event.focus },
      }))
    case "CompactionRequestedByStrategy": {
      const { _tag, markerId, ...asked } = event
      return updateLast(state, markerId, (e) => ({
        ...e,
        ...(e.reason === undefined ? { reason: asked.reason } : {}),
        requestedByStrategy: asked,
      }))
    }
    case "CompactionRequested": {
      const part = event.marker.parts.find((p) => p.type === "compaction")
      const entry: Entry = {
        markerId: event.marker.id,
        auto: part?.type === "compaction" && part.auto,
        overflow: part?.type === "compaction" && part.overflow === true,
        ...(event.reason === undefined ? {} : { reason: event.reason }),
        requestedAt: event.at,
        requestedVersion: version,
        status: "requested",
        ...(state.lastCallTokens === undefined ? {} : { tokensBefore: state.lastCallTokens }),
      }
      return { ...state, entries: [...state.entries, entry] }
    }
    case "CompactionStarted":
      return updateLast(state, event.markerId, (e) => ({
        ...e,
        status: "started",
        startedAt: event.at,
        model: event.model,
        prompt: event.prompt,
        plan: event.plan,
        summaryId: event.summaryId,
      }))
    case "SummaryFinished": {
      const text = summaryText(event.summary)
      return updateLast(state, event.markerId, (e) => ({
        ...e,
        status: "finished",
        settledVersion: version,
        ...(text === undefined ? {} : { summary: text }),
        // A summary written without a model (the extractive one) reports no usage: estimate its size instead.
        summaryTokens: event.summary.tokens.output || (text === undefined ? 0 : estimate(text)),
      }))
    }
    case "SummaryFailed":
      return updateLast(state, event.markerId, (e) => ({
        ...e,
        status: "failed",
        settledVersion: version,
        error: event.summary.error?.message ?? "failed",
      }))
    case "ContinueRequested":
    case "TurnReplayed":
      return updateLast(state, event.markerId, (e) => ({
        ...e,
        status: "continued",
        continuation: event._tag === "TurnReplayed" ? "replay" : "continue",
      }))
    case "AutoContinueSkipped":
      return updateLast(state, event.markerId, (e) => ({ ...e, continueSkipped: event.reason }))
    case "SummaryFallbackUsed":
      return updateLast(state, event.markerId, (e) => ({
        ...e,
        fallback: event.reason,
        ...(event.error === undefined ? {} : { fallbackError: event.error.message }),
      }))
    case "SummaryInputBudgeted":
      return updateLast(state, event.markerId, (e) => ({ ...e, budgetedOut: event.dropped }))
    case "SecretsRedacted":
      return updateLast(state, event.markerId, (e) => ({
        ...e,
        redactions: (e.redactions ?? 0) + event.findings.length,
      }))
    default:
      return state
  }
}

/** The compaction-history projection. */
export const projection: Projection<State> = {
  name: "compaction-history",
  version: 4,
  initial,
  evolve: (state, event, meta) => evolve(state, event, meta.version),
}

/** The pivots: compactions whose summary finished. */
export const pivots = (state: State): ReadonlyArray<Entry> =>
  state.entries.filter((e) => e.status === "finished" || e.status === "continued")
