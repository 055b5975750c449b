/**
 * OpenCode 1.17.20 as a strategy (the spec, `/work/shared/spec/opencode-compaction.md`): compact when a call's usage
 * reaches the usable window, keep the last `tail_turns` turns (2 by default) within the tail budget — a quarter of
 * the compaction model's usable window clamped to [2,000, 8,000] tokens, or `preserve_recent_tokens` when set — and
 * prune with OpenCode's walk after each step when pruning is on. The budget's rule lives in `Tail.tailBudget`, the
 * tail's in `Tail.selectTail`; this module names the release.
 */

import { make } from "./internal/openCodeRules.ts"
import type { Strategy } from "./Strategy.ts"
import * as Tail from "./Tail.ts"

/** The tail budget's cap in 1.17, in tokens (`Tail.MAX_PRESERVE_RECENT_TOKENS`). */
export const TAIL_CAP: number = Tail.MAX_PRESERVE_RECENT_TOKENS

/** OpenCode 1.17.20: named `opencode-1.17`; the config's `opencode` key removed (1.17 is its absence). */
export const strategy: Strategy = make("1.17")
