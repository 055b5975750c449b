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

/**
 * `strategy` as drive mode runs it: OpenCode calls the plugin only before a model call, so there its prune decision
 * is taken — the one before a call (`beforeCall`: cache-aware's cold-cache prune) when it prunes, else the one after
 * a step (`afterStep`: the walk and the rules), which in the AI SDK entry runs right after the previous step, with
 * nothing between. Only when the cache is cold or the window was just pivoted: then the provider writes the prefix
 * again anyway, while a prune on a warm cache rewrites from its first cleared output on what the next request would
 * read (`Strategy.withRules` lets a batched strategy's rules in whenever its decision is a prune, even one whose walk
 * clears nothing). A compaction the strategy would start before the call is not taken here: OpenCode compacts.
 */
export const atCall = (strategy: Strategy.Strategy): Strategy.Strategy => ({
  ...strategy,
  afterStep: (input) => {
    if (!input.cache.cold && !input.cache.atPivot) return Strategy.nothing
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
