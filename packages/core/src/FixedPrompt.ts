/**
 * The fixed prompt: what every model call sends besides the window's messages — the system prompt and the tool
 * schemas — which no compaction or prune can shed. The application sends it, not pivot, so it is measured from the
 * session's real usage, once: the prompt tokens the provider reported for the session's first model call (uncached
 * input, cache reads and cache writes) minus pivot's estimate of the messages that call was sent (`Tail.sizeOf` of
 * what was recorded before it: the user's first request). A fold over the session's events, O(1) per event once
 * measured. `Overflow.trigger` puts a threshold on the room above it (ADR 0034); cache-aware prices it as read, not
 * written, after a compaction (`CacheEconomy.buy`).
 */
import type { Event } from "./Events.ts"
import type { AssistantMessage } from "./Message.ts"
import { sizeOf } from "./Tail.ts"
import type { TokenUsage } from "./Tokens.ts"

/** What the fold knows. */
export interface State {
  /** Pivot's estimate of the messages recorded before the first measured call. */
  readonly before: number
  /** The fixed prompt's tokens, once a call reported its prompt; undefined before. */
  readonly tokens: number | undefined
}

/** Before any event. */
export const initial: State = { before: 0, tokens: undefined }

/** The prompt tokens a call's usage reports: uncached input, cache reads and cache writes (its output left out). */
export const promptTokens = (usage: TokenUsage): number => usage.input + usage.cacheRead + usage.cacheWrite

/**
 * The state once `step` is recorded: the first model step (not a summary) whose usage reports a prompt measures the
 * fixed prompt, as its prompt tokens minus the messages before it (0 at least); one without usage adds its own size.
 */
export const withStep = (state: State, step: AssistantMessage): State => {
  if (state.tokens !== undefined || step.summary === true) return state
  const prompt = promptTokens(step.tokens)
  if (prompt <= 0) return { ...state, before: state.before + sizeOf([step]) }
  return { before: state.before, tokens: Math.max(0, prompt - state.before) }
}

/** Folds one event. */
export const evolve = (state: State, event: Event): State => {
  if (state.tokens !== undefined) return state
  switch (event._tag) {
    case "UserMessageAdded":
      return { ...state, before: state.before + sizeOf([event.message]) }
    case "AssistantStepRecorded":
      return withStep(state, event.message)
    default:
      return state
  }
}
