/**
 * The strategy drive mode runs, as opencode.json can name it: a built-in strategy by name (`BuiltInStrategies`,
 * e.g. `"cache-aware"`) and zero-cost prune rules by name (`RULES`), composed with `Strategy.withRules`. A plugin
 * file of your own can pass any `Strategy.Strategy` value instead of a name.
 */
import { BuiltInStrategies, Strategy } from "@pivot/core"

/** The prune rules opencode.json can name (`rules`), by their names. */
export const RULES: Readonly<Record<string, Strategy.Rule>> = Object.fromEntries(
  BuiltInStrategies.rules.map((rule) => [rule.name, rule]),
)

/** The rule a prune in place of a compaction is recorded with (`atCall`). */
export const INSTEAD_OF_COMPACTION = "instead-of-compaction"

/**
 * The prune drive runs where its strategy would compact at a turn's start on a warm cache: every completed output
 * older than the current turn cleared (as cache-aware's cold prune: the current turn stays whole), recorded with
 * `INSTEAD_OF_COMPACTION` and why the strategy wanted the compaction.
 */
export const insteadOfCompaction = (input: Strategy.Input, why: string): Strategy.Decision => ({
  _tag: "Prune",
  walk: {
    protect: 0,
    minimum: 0,
    turns: 1,
    ...(input.prune.protectedTools === undefined ? {} : { protectedTools: input.prune.protectedTools }),
    rule: INSTEAD_OF_COMPACTION,
    reason: `the strategy would compact now (${why}): the older turns' outputs are cleared instead, before OpenCode's own limit compacts`,
  },
  parts: [],
})

/**
 * `strategy` as drive mode runs it: OpenCode calls the plugin only before a model call, so there its prune decision
 * is taken — the one before a call (`beforeCall`: cache-aware's cold-cache prune) when it prunes, else the one after
 * a step (`afterStep`: the walk and the rules), which in the AI SDK entry runs right after the previous step, with
 * nothing between. Only when the cache is cold or the window was just pivoted: then the provider writes the prefix
 * again anyway, while a prune on a warm cache rewrites from its first cleared output on what the next request would
 * read (`Strategy.withRules` lets a batched strategy's rules in whenever its decision is a prune, even one whose walk
 * clears nothing). A compaction the strategy would start before the call is not taken here: OpenCode compacts.
 *
 * One exception on a warm cache (`compacts` false: pivot does not ask OpenCode for compactions): where the strategy's
 * decision before the call is to compact — at a turn's start, cache-aware's trigger expected to be reached in the
 * turn, or rent-or-buy — the older turns' outputs are cleared instead (`insteadOfCompaction`). OpenCode would
 * otherwise compact at its own limit in the turn: a summariser call written whole (it shares no prefix with the
 * agent's requests) and the summary and tail written again, against a prune that rewrites only what follows its first
 * cleared output, mostly placeholders. The current turn is never cleared; every cleared output stays recallable.
 */
export const atCall = (
  strategy: Strategy.Strategy,
  options: { readonly compacts?: boolean } = {},
): Strategy.Strategy => ({
  ...strategy,
  afterStep: (input) => {
    if (!input.cache.cold && !input.cache.atPivot) {
      if (options.compacts === true) return Strategy.nothing
      const before = strategy.beforeCall?.(input)
      return before?._tag === "Compact" ? insteadOfCompaction(input, before.reason) : Strategy.nothing
    }
    const before = strategy.beforeCall?.(input)
    return before?._tag === "Prune" ? before : (strategy.afterStep?.(input) ?? Strategy.nothing)
  },
})

/** Options naming a strategy: unresolved, as opencode.json gives them (unchecked). */
export interface Named {
  readonly strategy?: Strategy.Strategy | string | undefined
  readonly rules?: ReadonlyArray<string> | undefined
}

/**
 * The strategy `options` name: `undefined` when they name none (OpenCode decides, pivot records), else the strategy
 * with its rules, or a one-line reason when a name is unknown.
 */
export const resolve = (
  options: Named,
):
  | { readonly _tag: "None" }
  | { readonly _tag: "Strategy"; readonly strategy: Strategy.Strategy }
  | { readonly _tag: "Invalid"; readonly reason: string } => {
  const named = options.strategy
  const rules = options.rules ?? []
  if (named === undefined && rules.length === 0) return { _tag: "None" }
  if (!Array.isArray(rules) || rules.some((r) => typeof r !== "string" || RULES[r] === undefined))
    return {
      _tag: "Invalid",
      reason: `rules must name prune rules (${Object.keys(RULES).join(", ")}), got ${JSON.stringify(rules)}`,
    }
  const base =
    named === undefined
      ? BuiltInStrategies.named("opencode-1.18")
      : typeof named === "string"
        ? BuiltInStrategies.named(named)
        : named
  if (base === undefined)
    return {
      _tag: "Invalid",
      reason: `strategy must be one of ${BuiltInStrategies.names.join(", ")} or a strategy value, got ${JSON.stringify(named)}`,
    }
  return { _tag: "Strategy", strategy: Strategy.withRules(base, ...rules.map((r) => RULES[r]!)) }
}
