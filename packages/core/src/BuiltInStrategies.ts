/**
 * The built-in strategies by name, for what names one in text (a command-line flag, a config file, a comparison's
 * rows): `opencode-1.17`, `opencode-1.18`, `cache-aware` (its defaults). The zero-cost prune rules are named too
 * (`rules`: `duplicate-calls`, `superseded-writes`, `errored-inputs` after `PruneRules.ERRORED_TURNS` turns), to be
 * composed onto a strategy with `Strategy.withRules`.
 */
import * as CacheAwareStrategy from "./CacheAwareStrategy.ts"
import * as OpenCode117Strategy from "./OpenCode117Strategy.ts"
import * as OpenCode118Strategy from "./OpenCode118Strategy.ts"
import * as PruneRules from "./PruneRules.ts"
import type { Rule, Strategy } from "./Strategy.ts"

/** Every built-in strategy, in the order a comparison lists them. */
export const all: ReadonlyArray<Strategy> = [
  OpenCode117Strategy.strategy,
  OpenCode118Strategy.strategy,
  CacheAwareStrategy.strategy,
]

/** Their names. */
export const names: ReadonlyArray<string> = all.map((strategy) => strategy.name)

/** The built-in strategy of that name, if there is one. */
export const named = (name: string): Strategy | undefined => all.find((strategy) => strategy.name === name)

/** The built-in zero-cost prune rules, with their defaults. */
export const rules: ReadonlyArray<Rule> = [
  PruneRules.duplicateCalls,
  PruneRules.supersededWrites,
  PruneRules.erroredInputs(PruneRules.ERRORED_TURNS),
]

/** The built-in prune rule of that name, if there is one. */
export const ruleNamed = (name: string): Rule | undefined => rules.find((rule) => rule.name === name)
