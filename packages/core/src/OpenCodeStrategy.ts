/**
 * OpenCode's own strategy (spec §2; docs/adr/0015-opencode-versions.md): compact when a call's usage reaches the
 * usable window (the Decider's overflow rules, which every strategy keeps as the hard limit), keep the newest turns
 * within the tail budget, and — when pruning is on — clear old tool outputs with OpenCode's walk after each step. The
 * two releases differ only in the tail budget's cap: 8,000 tokens in 1.17, 15,000 in 1.18 (`Tail.tailBudget`);
 * `preserve_recent_tokens` and `tail_turns` of the config win over the derived budget in both.
 */
import type { CompactionConfig } from "./Config.ts"
import * as Prune from "./Prune.ts"
import { type Decision, nothing, type Strategy } from "./Strategy.ts"

/** The OpenCode releases pivot reproduces. */
export type Release = "1.17" | "1.18"

/** `config` under `release`'s rules: its `opencode` key set to it (1.17, the default, is the key's absence). */
export const configure =
  (release: Release | undefined) =>
  (config: CompactionConfig): CompactionConfig => {
    if (release === undefined || config.opencode === release) return config
    if (release === "1.18") return { ...config, opencode: "1.18" }
    const { opencode: _opencode, ...rest } = config
    return rest
  }

/** After a step: OpenCode's walk with the application's thresholds when pruning is on (spec §2.14), else nothing. */
export const afterStep = (input: { readonly config: CompactionConfig; readonly prune: Prune.Options }): Decision => {
  if (!Prune.isEnabled(input.config)) return nothing
  const { protect, minimum, protectedTools } = input.prune
  return {
    _tag: "Prune",
    walk: {
      ...(protect === undefined ? {} : { protect }),
      ...(minimum === undefined ? {} : { minimum }),
      ...(protectedTools === undefined ? {} : { protectedTools }),
    },
    parts: [],
  }
}

/**
 * OpenCode's strategy under `release`'s rules; without one, the config's `opencode` key decides (pivot's default
 * strategy: what `ContextManager` does without a `strategy` or `cacheAware`).
 */
export const make = (release?: Release | undefined): Strategy => ({
  name: release === undefined ? "opencode" : `opencode-${release}`,
  ...(release === undefined ? {} : { configure: configure(release) }),
  form: "opencode",
  afterStep,
})

/** OpenCode 1.17.20 (the spec): the tail budget capped at 8,000 tokens. */
export const v1_17: Strategy = make("1.17")

/** OpenCode 1.18.33 (checked against the real binary): the tail budget capped at 15,000 tokens. */
export const v1_18: Strategy = make("1.18")

/** pivot's default: OpenCode's rules, the release named by the config's `opencode` key (1.17 without one). */
export const byConfig: Strategy = make()
