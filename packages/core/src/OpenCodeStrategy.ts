/**
 * OpenCode's own strategy (spec §2; docs/adr/0015-opencode-versions.md): compact when a call's usage reaches the
 * usable window (the Decider's overflow rules, which every strategy keeps as the hard limit), keep the newest turns
 * within the tail budget, and — when pruning is on — clear old tool outputs with OpenCode's walk after each step. The
 * two releases differ only in the tail budget's cap: 8,000 tokens in 1.17, 15,000 in 1.18 (`Tail.tailBudget`);
 * `preserve_recent_tokens` and `tail_turns` of the config win over the derived budget in both. Each release has its
 * own module (`OpenCode117Strategy`, `OpenCode118Strategy`); this one gathers them under their familiar names.
 */
import { make } from "./internal/openCodeRules.ts"
import * as OpenCode117Strategy from "./OpenCode117Strategy.ts"
import * as OpenCode118Strategy from "./OpenCode118Strategy.ts"
import type { Strategy } from "./Strategy.ts"

export { afterStep, configure, make, type Release } from "./internal/openCodeRules.ts"

/** OpenCode 1.17.20 (the spec): the tail budget capped at 8,000 tokens (`OpenCode117Strategy.strategy`). */
export const v1_17: Strategy = OpenCode117Strategy.strategy

/** OpenCode 1.18.33 (checked against the real binary): the tail budget capped at 15,000 tokens. */
export const v1_18: Strategy = OpenCode118Strategy.strategy

/** pivot's default: OpenCode's rules, the release named by the config's `opencode` key (1.17 without one). */
export const byConfig: Strategy = make()
