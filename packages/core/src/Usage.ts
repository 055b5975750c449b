/**
 * Context usage for a HUD: how full the context was at the last model call, as a fold, and as tokens, percent of the
 * usable window and a status level once the model's limits are known.
 */
import type { CompactionConfig } from "./Config.ts"
import type { Event } from "./Events.ts"
import type { MessageId } from "./Ids.ts"
import type { ModelLimits } from "./Model.ts"
import * as Overflow from "./Overflow.ts"
import type { Projection } from "./Projection.ts"
import { contextCount } from "./Tokens.ts"

/** What the log says about the context's size. */
export interface State {
  /** The newest model call that reported usage. */
  readonly lastCall: { readonly messageId: MessageId; readonly tokens: number; readonly at: number } | undefined
  /** A pivot formed after that call: its count is stale until the next call reports. */
  readonly pivotSinceLastCall: boolean
  /** A compaction is requested and not settled. */
  readonly compacting: boolean
  readonly calls: number
}

/** Usage before any call. */
export const initial: State = { lastCall: undefined, pivotSinceLastCall: false, compacting: false, calls: 0 }

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
        pivotSinceLastCall: false,
        calls: state.calls + 1,
      }
    }
    case "CompactionRequested":
      return { ...state, compacting: true }
    case "SummaryFinished":
      return { ...state, compacting: false, pivotSinceLastCall: state.lastCall !== undefined }
    case "SummaryFailed":
      return { ...state, compacting: false }
    default:
      return state
  }
}

/** The usage projection. */
export const projection: Projection<State> = { name: "usage", version: 1, initial, evolve: (s, e) => evolve(s, e) }

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
 * Usage against limits. `estimate` is the token estimate of the current window, used when no call reported yet or a
 * pivot happened since the last call.
 */
export const report = (state: State, config: CompactionConfig, limits: ModelLimits, estimate: number): Report => {
  const estimated = state.lastCall === undefined || state.pivotSinceLastCall
  const tokens = estimated ? estimate : state.lastCall!.tokens
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
