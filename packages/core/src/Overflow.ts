/**
 * When the context is full: the usable window (spec §2.3) and the overflow check (§2.4), with pivot's two fixes —
 * a usable window of 0 disables the check instead of firing on every step, and an optional ratio threshold.
 */
import type { CompactionConfig } from "./Config.ts"
import { type ModelLimits, maxOutputTokens } from "./Model.ts"
import { contextCount, type TokenUsage } from "./Tokens.ts"

/** OpenCode's `COMPACTION_BUFFER`: the most `reserved` defaults to. */
export const COMPACTION_BUFFER = 20_000

/**
 * Tokens a request may use before it counts as overflowing (spec §2.3). With `limit.input` the buffer is `reserved`;
 * without it the whole output allowance is subtracted and `reserved` is ignored, as in OpenCode.
 */
export const usable = (config: CompactionConfig, limits: ModelLimits, cap?: number): number => {
  if (limits.context === 0) return 0
  const output = maxOutputTokens(limits, cap)
  const reserved = config.reserved ?? Math.min(COMPACTION_BUFFER, output)
  if (limits.input) return Math.max(0, limits.input - reserved)
  return Math.max(0, limits.context - output)
}

/**
 * The token count at which compaction triggers, or `undefined` when auto-compaction cannot trigger: disabled by
 * config, a context of 0, or (pivot's fix for OpenCode #45368) a usable window of 0, which OpenCode treats as
 * "always overflowing".
 *
 * A `threshold` t is a share of the room above `fixed`: the tokens every call sends besides the window (system prompt
 * and tool schemas, measured by `FixedPrompt`), which no compaction can shed. It triggers at
 * `fixed + ⌊t × (usable − fixed)⌋` (at least 1, at most `usable`; ADR 0034); `fixed` 0 (the default) is a
 * share of the whole usable window, and a `fixed` at or above the usable window leaves only the usable window.
 */
export const trigger = (config: CompactionConfig, limits: ModelLimits, cap?: number, fixed = 0): number | undefined => {
  if (config.auto === false) return undefined
  // A context of 0 (unknown limits) gives a usable window of 0, so it never triggers either.
  const room = usable(config, limits, cap)
  if (room <= 0) return undefined
  if (config.threshold === undefined) return room
  const base = Math.min(room, Math.max(0, fixed))
  return Math.min(room, Math.max(1, base + Math.floor((room - base) * config.threshold)))
}

/** The overflow comparison, the one place it lives (spec §2.4): a count at the trigger already overflows. */
export const reaches = (count: number, at: number | undefined): at is number =>
  count >= (at ?? Number.POSITIVE_INFINITY)

/** An overflow found in a call's usage: the context count and the trigger it reached. */
export interface Detected {
  readonly tokens: number
  readonly trigger: number
}

/**
 * The overflow a call's usage shows, or `undefined` when the context is not full or cannot trigger (spec §2.4);
 * `fixed` as for `trigger`.
 */
export const detect = (
  config: CompactionConfig,
  usage: TokenUsage,
  limits: ModelLimits,
  cap?: number,
  fixed?: number,
): Detected | undefined => {
  const at = trigger(config, limits, cap, fixed)
  const tokens = contextCount(usage)
  return reaches(tokens, at) ? { tokens, trigger: at } : undefined
}

/** Whether a call's usage means the context is full (spec §2.4; boundary `>=`). */
export const isOverflow = (config: CompactionConfig, usage: TokenUsage, limits: ModelLimits, cap?: number): boolean =>
  detect(config, usage, limits, cap) !== undefined

/** Whether the limits make auto-compaction impossible (usable window of 0 although the context is known). */
export const isUnusable = (config: CompactionConfig, limits: ModelLimits, cap?: number): boolean =>
  limits.context > 0 && usable(config, limits, cap) <= 0
