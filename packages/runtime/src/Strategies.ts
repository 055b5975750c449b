/**
 * The built-in context strategies by name, and what selects each one today: the `ContextManager` options it sets.
 * `strategyOptions` is the one place a name becomes options; `pivot whatif`, the viewer's comparison and the cost
 * benchmark all go through it, so pointing a name at another definition (a strategy value) is a change here alone.
 *
 * - `opencode-1.17`: OpenCode's rules as of v1.17 (the spec): compaction at the usable window with its 2,000–8,000
 *   token verbatim tail, prune after each turn with its absolute thresholds (protect 40,000, act above 20,000), no
 *   facts block;
 * - `opencode-1.18`: the same with v1.18's 15,000-token tail cap (`compaction.opencode: "1.18"`);
 * - `pivot`: `createPivot`'s defaults (the `sized` preset): prune thresholds sized to the model's window, summaries
 *   with the facts block;
 * - `cache-aware`: the `sized` preset with `cacheAware` (ADR 0017): compaction when it pays, no tail, prune in
 *   batches or on a cold cache, the summariser request the conversation's own prompt.
 */
import { Prune } from "@pivot/core"
import type { Options } from "./ContextManager.ts"

/** The built-in strategies, in the order comparisons list them. */
export const NAMES = ["opencode-1.17", "opencode-1.18", "pivot", "cache-aware"] as const

/** A built-in strategy's name. */
export type Name = (typeof NAMES)[number]

/** Whether `name` is a built-in strategy's. */
export const isName = (name: string): name is Name => (NAMES as ReadonlyArray<string>).includes(name)

/** The options a strategy sets; the caller adds the model and anything else (summariser, clock, store). */
export type StrategyOptions = Pick<Options, "config" | "prune" | "factsBlock" | "cacheAware">

/** What the strategy needs to know about the session it runs on. */
export interface Context {
  /** The model's context window in tokens (the `sized` prune thresholds are a share of it). */
  readonly context: number
  /**
   * The conversation's system prompt, for cache-aware's summariser request (which starts with it, so the provider's
   * cache serves the window). Default: the compaction agent's.
   */
  readonly system?: string | undefined
}

/** The `ContextManager` options that select the strategy `name`. */
export const strategyOptions = (name: Name, context: Context): StrategyOptions => {
  switch (name) {
    case "opencode-1.17":
      return { config: { auto: true, prune: true, opencode: "1.17" }, factsBlock: false }
    case "opencode-1.18":
      return { config: { auto: true, prune: true, opencode: "1.18" }, factsBlock: false }
    case "pivot":
      return { config: { auto: true, prune: true }, prune: Prune.sized(context.context) }
    case "cache-aware":
      return {
        config: { auto: true, prune: true },
        prune: Prune.sized(context.context),
        cacheAware: context.system === undefined ? true : { system: context.system },
      }
  }
}
