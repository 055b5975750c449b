/**
 * What pivot needs to know about a model: who serves it and its token limits (spec §2.3).
 */
import * as Schema from "effect/Schema"

const Limit = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))

/** A model's token limits. `input` is optional (0 / missing = not reported), as in models.dev. */
export const ModelLimits = Schema.Struct({
  context: Limit,
  input: Schema.optionalKey(Limit),
  output: Limit,
}).annotate({ identifier: "ModelLimits" })
export type ModelLimits = typeof ModelLimits.Type

/** Which model served (or will serve) a call. */
export const ModelRef = Schema.Struct({
  providerId: Schema.String,
  modelId: Schema.String,
  variant: Schema.optionalKey(Schema.String),
}).annotate({ identifier: "ModelRef" })
export type ModelRef = typeof ModelRef.Type

/** A model with its limits. */
export const ModelInfo = Schema.Struct({
  ref: ModelRef,
  limits: ModelLimits,
})
export type ModelInfo = typeof ModelInfo.Type

/** OpenCode's default output cap, `OUTPUT_TOKEN_MAX`. */
export const OUTPUT_TOKEN_MAX = 32_000

/** The output tokens requested from a model: `min(limit.output, cap) || cap` (spec §2.3). */
export const maxOutputTokens = (limits: ModelLimits, cap: number = OUTPUT_TOKEN_MAX): number =>
  Math.min(limits.output, cap) || cap
