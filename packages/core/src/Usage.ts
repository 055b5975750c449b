/**
 * Context usage for a HUD: how full the context was at the last model call, as a fold, and as tokens, percent of the
 * usable window and a status level once the model's limits are known.
 *
 * The one home of the staleness rule: a call's count measures the window it was sent, so once a pivot forms or
 * outputs are pruned after it, it no longer says how big the window is (the window is estimated until the next call
 * reports). A step that asked for a compaction with `context_compact` is recorded after the pivot its call formed,
 * yet its count was measured before it: that step measures nothing about the new window, and no overflow is detected
 * from it (`predatesPivot`).
 */
import type { CompactionConfig } from "./Config.ts"
import type { Event } from "./Events.ts"
import type { MessageId } from "./Ids.ts"
import type { AssistantMessage } from "./Message.ts"
import type { ModelLimits } from "./Model.ts"
import * as Overflow from "./Overflow.ts"
import type { Projection } from "./Projection.ts"
import { contextCount } from "./Tokens.ts"

/** What made the last call's count stale: a pivot formed, or tool outputs were pruned, after it was measured. */
export type Staleness = "pivot" | "prune"

/** What the log says about the context's size. */
export interface State {
  /** The newest model call that reported usage. */
  readonly lastCall: { readonly messageId: MessageId; readonly tokens: number; readonly at: number } | undefined
  /** Set when the window changed after `lastCall` measured it (a pivot wins over a prune): its count is stale. */
  readonly stale: Staleness | undefined
  /** A compaction is requested and not settled. */
  readonly compacting: boolean
  readonly calls: number
  /** The tool call (`context_compact`) that asked for the compaction in flight, when it said. */
  readonly askedBy: string | undefined
  /** The tool call that asked for the latest pivot, until a model step is recorded after it. */
  readonly pivotAskedBy: string | undefined
}

/** Usage before any call. */
export const initial: State = {
  lastCall: undefined,
  stale: undefined,
  compacting: false,
  calls: 0,
  askedBy: undefined,
  pivotAskedBy: undefined,
}

/**
 * Whether `step`'s count was measured before the latest pivot: it carries the tool call that asked for that pivot
 * (the AI SDK records a step after its tools ran, so the step that called `context_compact` comes after the summary).
 */
export const predatesPivot = (state: State, step: AssistantMessage): boolean =>
  state.pivotAskedBy !== undefined &&
  step.parts.some((part) => part.type === "tool" && part.callId === state.pivotAskedBy)

/** The last call's count while it still measures the window; undefined when no call reported or it is stale. */
export const measured = (state: State): number | undefined =>
  state.stale === undefined ? state.lastCall?.tokens : undefined

/** Folds one event. */
export const evolve = (state: State, event: Event): State => {
  switch (event._tag) {
    case "AssistantStepRecorded": {
      const m = event.message
      if (m.summary === true) return state
      const tokens = contextCount(m.tokens)
      if (tokens === 0) return state
      return {
        ...state,
        lastCall: { messageId: m.id, tokens, at: event.at },
        stale: predatesPivot(state, m) ? "pivot" : undefined,
        calls: state.calls + 1,
        pivotAskedBy: undefined,
      }
    }
    case "CompactionRequested":
      return { ...state, compacting: true, askedBy: undefined }
    case "CompactionRequestedByModel":
      return event.callId === undefined ? state : { ...state, askedBy: event.callId }
    case "SummaryFinished":
      return {
        ...state,
        compacting: false,
        stale: state.lastCall === undefined ? state.stale : "pivot",
        askedBy: undefined,
        pivotAskedBy: state.askedBy,
      }
    case "SummaryFailed":
      return { ...state, compacting: false, askedBy: undefined }
    case "PartCompacted":
      return state.lastCall === undefined || state.stale !== undefined ? state : { ...state, stale: "prune" }
    default:
      return state
  }
}

/** The usage projection. */
export const projection: Projection<State> = { name: "usage", version: 2, initial, evolve: (s, e) => evolve(s, e) }

/** How full the context is, for people. */
export type Level = "ok" | "warn" | "compacting" | "over"

/** Usage against a model's limits. `tokens` is the last call's count (or `estimate` when a pivot made it stale). */
export interface Report {
  readonly tokens: number
  readonly estimated: boolean
  readonly usable: number
  /** Where auto-compaction triggers; undefined when it cannot (auto off, unknown or unusable limits). */
  readonly trigger: number | undefined
  /** Percent of the usable window (0 when the usable window is 0). */
  readonly percent: number
  readonly level: Level
}

/** The share of the trigger at which the level turns to `warn`. */
export const WARN_AT = 0.8

/**
 * Usage against limits. `estimate` is the token estimate of the current window, used when no call reported yet or the
 * last call's count is stale (`measured`).
 */
export const report = (state: State, config: CompactionConfig, limits: ModelLimits, estimate: number): Report => {
  const count = measured(state)
  const estimated = count === undefined
  const tokens = count ?? estimate
  const usable = Overflow.usable(config, limits, config.output_token_max)
  const trigger = Overflow.trigger(config, limits, config.output_token_max)
  const percent = usable > 0 ? Math.round((tokens / usable) * 1000) / 10 : 0
  const level: Level = state.compacting
    ? "compacting"
    : Overflow.reaches(tokens, trigger)
      ? "over"
      : trigger !== undefined && tokens >= trigger * WARN_AT
        ? "warn"
        : "ok"
  return { tokens, estimated, usable, trigger, percent, level }
}
