/**
 * OpenCode 1.18.33 as a strategy (checked against the real binary; docs/adr/0015-opencode-versions.md): 1.17's rules
 * with the tail budget's cap raised to 15,000 tokens — a quarter of the compaction model's usable window clamped to
 * [2,000, 15,000] — so a long last turn is kept verbatim where 1.17 splits it. `preserve_recent_tokens` still wins
 * over the derived budget and `tail_turns` still counts the turns kept. The budget's rule lives in `Tail.tailBudget`
 * (the config's `opencode: "1.18"`), the tail's in `Tail.selectTail`; this module names the release.
 */

import { make } from "./internal/openCodeRules.ts"
import type { Strategy } from "./Strategy.ts"
import * as Tail from "./Tail.ts"

/** The tail budget's cap in 1.18, in tokens (`Tail.MAX_PRESERVE_RECENT_TOKENS_1_18`). */
export const TAIL_CAP: number = Tail.MAX_PRESERVE_RECENT_TOKENS_1_18

/** OpenCode 1.18.33: named `opencode-1.18`; the config's `opencode` key set to `"1.18"`. */
export const strategy: Strategy = make("1.18")
