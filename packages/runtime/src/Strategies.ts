/**
 * The strategies a comparison replays by name, and what selects each one: the `ContextManager` options it sets.
 * `strategyOptions` is the one place a name becomes options; `pivot whatif`, the viewer's comparison and the cost
 * benchmark all go through it.
 *
 * The names are the built-in strategies' (`BuiltInStrategies`), each selecting that strategy value with `strategy`,
 * plus `pivot`:
 *
 * - `opencode-1.17`: `OpenCodeStrategy.v1_17`, OpenCode's rules as of v1.17 (the spec): compaction at the usable
 *   window with its 2,000–8,000 token verbatim tail, prune after each turn with its absolute thresholds (protect
 *   40,000, act above 20,000), no facts block (OpenCode's summaries have none);
 * - `opencode-1.18`: `OpenCodeStrategy.v1_18`, the same with v1.18's 15,000-token tail cap;
 * - `cache-aware`: `CacheAwareStrategy`'s defaults (ADR 0017, 0026) with the conversation's system prompt: compaction
 *   when it pays, no tail, prune in batches or on a cold cache, the summariser request the conversation's own prompt;
 *   run as `createPivot` runs it, with the `sized` prune thresholds and the facts block;
 * - `pivot`: not a strategy value of its own but a distinct configuration, `createPivot`'s defaults (the `sized`
 *   preset): OpenCode 1.17's strategy with prune thresholds sized to the model's window and summaries with the facts
 *   block. Neither is part of a strategy, and both change what is pruned and what a summary costs, so its runs differ
 *   from `opencode-1.17`'s.
 *
 * What surrounds a built-in strategy follows one rule: OpenCode's releases (`opencode-*`) run bare, as OpenCode does;
 * any other built-in runs with pivot's defaults around it, as `createPivot` would run it.
 */
import { BuiltInStrategies, OpenCodeStrategy, Prune, type Strategy } from "@pivot/core"
import type { Options } from "./ContextManager.ts"

/** The name of pivot's own configuration (OpenCode 1.17's strategy with pivot's defaults around it; see above). */
export const PIVOT = "pivot"

/** A strategy name a comparison accepts: a built-in strategy's (`BuiltInStrategies.names`) or `pivot`. */
export type Name = "opencode-1.17" | "opencode-1.18" | "pivot" | "cache-aware"

/** Whether `strategy` is one of OpenCode's releases (`OpenCodeStrategy.make`'s `opencode-<release>`). */
const isOpenCode = (strategy: Strategy.Strategy): boolean => strategy.name.startsWith("opencode-")

/**
 * The names, in the order comparisons list them: the built-in strategies' in `BuiltInStrategies`' order, with `pivot`
 * right after OpenCode's releases, which it is built on.
 */
export const NAMES: ReadonlyArray<Name> = (() => {
  const builtIn = BuiltInStrategies.all
  const at = builtIn.findLastIndex(isOpenCode) + 1
  return [...builtIn.slice(0, at).map((s) => s.name), PIVOT, ...builtIn.slice(at).map((s) => s.name)] as Array<Name>
})()

/** Whether `name` is a strategy name a comparison accepts. */
export const isName = (name: string): name is Name => (NAMES as ReadonlyArray<string>).includes(name)

/** The options a strategy name sets; the caller adds the model and anything else (summariser, clock, store). */
export type StrategyOptions = Pick<Options, "config" | "strategy" | "prune" | "factsBlock">

/** What the strategy needs to know about the session it runs on. */
export interface Context {
  /** The model's context window in tokens (the `sized` prune thresholds are a share of it). */
  readonly context: number
  /**
   * The conversation's system prompt, for a cache-safe strategy's summariser request (cache-aware's, which starts
   * with it, so the provider's cache serves the window). Default: the compaction agent's.
   */
  readonly system?: string | undefined
}

/** Compaction and pruning on, as in every comparison. */
const ON = { auto: true, prune: true } as const

/** The `ContextManager` options that select the strategy `name`. */
export const strategyOptions = (name: Name, context: Context): StrategyOptions => {
  if (name === PIVOT) return { config: ON, strategy: OpenCodeStrategy.v1_17, prune: Prune.sized(context.context) }
  const builtIn = BuiltInStrategies.named(name)
  if (builtIn === undefined) throw new Error(`strategyOptions: ${JSON.stringify(name)} is not a built-in strategy`)
  if (isOpenCode(builtIn)) return { config: ON, strategy: builtIn, factsBlock: false }
  // A cache-safe strategy's summariser request starts with the conversation's system prompt when it is known.
  const strategy =
    builtIn.form === "cache-safe" && context.system !== undefined ? { ...builtIn, system: context.system } : builtIn
  return { config: ON, strategy, prune: Prune.sized(context.context) }
}
