/**
 * What OpenCode's releases share as a strategy (spec §2): the Decider's overflow rules as the only trigger, the tail
 * of `Tail.select` (its budget from `Tail.tailBudget`, the release chosen by the config's `opencode` key), and
 * OpenCode's prune walk after a step when pruning is on. Each release's module names its rules over these.
 */
import type { CompactionConfig } from "../Config.ts"
import * as Prune from "../Prune.ts"
import { type Decision, nothing, type Strategy } from "../Strategy.ts"

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
