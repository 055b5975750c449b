/**
 * Compaction settings, with OpenCode's keys (spec §2.15) plus a ratio threshold.
 */
import * as Schema from "effect/Schema"

const NonNegativeInt = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))

/** The `compaction` settings of a session. Every key is optional; `resolve` fills the defaults. */
export const CompactionConfig = Schema.Struct({
  /** `false` disables overflow checks and provider-error auto-compaction; manual compaction still works. */
  auto: Schema.optionalKey(Schema.Boolean),
  /** Enables tool-output pruning (opt-in, as in OpenCode since April 2026). */
  prune: Schema.optionalKey(Schema.Boolean),
  /** Buffer kept free below `limit.input`; defaults to `min(20_000, maxOutputTokens)`. */
  reserved: Schema.optionalKey(NonNegativeInt),
  /** Recent turns kept verbatim after a pivot; 0 keeps none. */
  tail_turns: Schema.optionalKey(NonNegativeInt),
  /** Token budget of the kept tail; derived from the compaction model when absent. */
  preserve_recent_tokens: Schema.optionalKey(NonNegativeInt),
  /** Cap on requested output tokens (OpenCode's `OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX`); positive integers only. */
  output_token_max: Schema.optionalKey(Schema.Number.check(Schema.isInt(), Schema.isGreaterThan(0))),
  /**
   * Not in OpenCode: compact once usage reaches this fraction of the usable window (0 < t ≤ 1). The effective trigger
   * is the lower of this and the absolute `usable`.
   */
  threshold: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(1))),
  /**
   * The OpenCode release whose rules apply where releases differ: `"1.17"` (default; the spec, v1.17.20) or `"1.18"`
   * (v1.18.33, checked against the real binary). Today only the tail budget's cap differs (8_000 / 15_000);
   * docs/adr/0015-opencode-versions.md.
   */
  opencode: Schema.optionalKey(Schema.Literals(["1.17", "1.18"])),
  /**
   * Not in OpenCode: pin the session's first message (the task and its constraints) when it is recorded, so that it
   * stays verbatim in every window after every pivot (`Pins`). Default false (OpenCode's behaviour); `createPivot`'s
   * default preset (`sized`) turns it on.
   */
  pin_first_message: Schema.optionalKey(Schema.Boolean),
  /** Not in OpenCode: the share of the usable window pinned messages may take (0 ≤ s ≤ 1); default 0.1 (`Pins`). */
  pin_share: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(1))),
})
export type CompactionConfig = typeof CompactionConfig.Type

/** The settings OpenCode ships with: auto on, prune off. */
export const defaults: CompactionConfig = { auto: true, prune: false }

const isBoolean = (v: unknown): boolean => typeof v === "boolean"
const isNonNegativeInt = (v: unknown): boolean => typeof v === "number" && Number.isSafeInteger(v) && v >= 0
const isRatio =
  (low: "open" | "closed") =>
  (v: unknown): boolean =>
    typeof v === "number" && Number.isFinite(v) && (low === "open" ? v > 0 : v >= 0) && v <= 1
/** Each key of `CompactionConfig` and what its schema accepts, by hand. */
const checks: { readonly [K in keyof CompactionConfig]-?: (value: unknown) => boolean } = {
  auto: isBoolean,
  prune: isBoolean,
  reserved: isNonNegativeInt,
  tail_turns: isNonNegativeInt,
  preserve_recent_tokens: isNonNegativeInt,
  output_token_max: (v) => isNonNegativeInt(v) && (v as number) > 0,
  threshold: isRatio("open"),
  opencode: (v) => v === "1.17" || v === "1.18",
  pin_first_message: isBoolean,
  pin_share: isRatio("closed"),
}

/**
 * Whether `CompactionConfig`'s schema surely decodes `value`, checked by hand: a plain object whose own keys are all
 * the schema's, each valid. `false` does not mean invalid (an extra key, a prototype the schema may accept): the
 * schema then judges it and names what is wrong. What `ContextManager.layer` checks its `config` option with before it
 * builds the schema's parser, which a restart would otherwise pay for on its first call (issue 32, ADR 0055);
 * `test/Config.property.test.ts` holds it to the schema.
 */
export const surelyValid = (value: unknown): boolean => {
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false
  const keys = Object.keys(value)
  // Only what an object literal or JSON makes: every own key an enumerable string.
  if (Reflect.ownKeys(value).length !== keys.length) return false
  for (const key of keys) {
    const check = Object.hasOwn(checks, key) ? checks[key as keyof CompactionConfig] : undefined
    if (check === undefined || !check((value as Record<string, unknown>)[key])) return false
  }
  return true
}
