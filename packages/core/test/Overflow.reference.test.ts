/**
 * The overflow rule against a reference model: spec §2.3 / §2.4 restated here (not read from `Overflow`), compared
 * with `Overflow.trigger` and with what the Decider emits, on generated limits and config (0-token models, tiny
 * windows, every config key) and usage aimed at the reference trigger − 1, exactly, and + 1.
 */

import { type Commands, type Config, type Events, type Model, Overflow, Session } from "@pivot/core"
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compactionConfigArb, limitsArb, usageOfCountArb } from "./support/arbitraries.ts"
import { assistantMessage, started, user } from "./support/events.ts"
import { RUNS } from "./support/runs.ts"

/**
 * Spec §2.3: output = min(limit.output, cap) || cap (cap 32_000); usable = limit.input − reserved (reserved defaulting
 * to min(20_000, output)) when an input limit is known, else context − output; never below 0. §2.4: overflow when the
 * count is at least usable. pivot: usable 0 or context 0 never trigger; a threshold t triggers at
 * max(1, floor(usable × t)) when that is lower; auto false never triggers. ADR 0034: with a fixed prompt f (clamped
 * to [0, usable]) the threshold is a share of what is left above it: f + floor((usable − f) × t).
 */
const referenceTrigger = (
  config: Config.CompactionConfig,
  limits: Model.ModelLimits,
  cap = 32_000,
  fixed = 0,
): number | undefined => {
  if (config.auto === false || limits.context === 0) return undefined
  const output = Math.min(limits.output, cap) || cap
  const reserved = config.reserved ?? Math.min(20_000, output)
  const usable = limits.input ? limits.input - reserved : limits.context - output
  if (usable <= 0) return undefined
  const f = Math.min(usable, Math.max(0, fixed))
  const ratio = config.threshold === undefined ? usable : Math.max(1, f + Math.floor((usable - f) * config.threshold))
  return Math.min(usable, ratio)
}

/** A count around the reference trigger (− 1, exactly, + 1), or anywhere when nothing can trigger. */
const aroundArb = (trigger: number | undefined): fc.Arbitrary<number> =>
  trigger === undefined
    ? fc.nat({ max: 3_000_000 })
    : fc.constantFrom(-1, 0, 1).map((delta) => Math.max(0, trigger + delta))

/** A fixed prompt: none, 0, any size, or the usable window − 1, exactly, + 1 (the clamp's edges). */
const fixedArb = (
  config: Config.CompactionConfig,
  limits: Model.ModelLimits,
  cap: number | undefined,
): fc.Arbitrary<number | undefined> => {
  const { threshold: _threshold, auto: _auto, ...rest } = config
  const room = referenceTrigger(rest, limits, cap) ?? 0
  return fc.oneof(
    fc.constant(undefined),
    fc.constant(0),
    fc.nat({ max: 3_000_000 }),
    fc.constantFrom(-1, 0, 1).map((delta) => Math.max(0, room + delta)),
  )
}

/** Limits, config, the reference triggers (rule A: default cap; rule B: the config's cap) and a usage near one. */
const caseArb = fc
  .record({ config: compactionConfigArb, limits: limitsArb, ruleB: fc.boolean() })
  .chain(({ config, limits, ruleB }) => {
    const cap = ruleB ? config.output_token_max : undefined
    return fixedArb(config, limits, cap).chain((fixed) => {
      const trigger = referenceTrigger(config, limits, cap, fixed)
      return aroundArb(trigger).chain((count) =>
        usageOfCountArb(count).map((usage) => ({ config, limits, ruleB, fixed, trigger, count, usage })),
      )
    })
  })

const decide = (command: Commands.Command, events: ReadonlyArray<Events.Event>) => {
  const decision = Session.decide(command, Session.fold(events))
  if (Result.isFailure(decision)) throw new Error(decision.failure._tag)
  return decision.success
}

describe("the overflow rule against its reference model (spec §2.3, §2.4)", () => {
  it("Overflow.trigger equals the reference trigger, with and without an output cap", () => {
    fc.assert(
      fc.property(
        compactionConfigArb.chain((config) =>
          limitsArb.chain((limits) => fixedArb(config, limits, undefined).map((fixed) => ({ config, limits, fixed }))),
        ),
        ({ config, limits, fixed }) => {
          expect(Overflow.trigger(config, limits)).toBe(referenceTrigger(config, limits))
          expect(Overflow.trigger(config, limits, config.output_token_max)).toBe(
            referenceTrigger(config, limits, config.output_token_max),
          )
          expect(Overflow.trigger(config, limits, undefined, fixed)).toBe(
            referenceTrigger(config, limits, undefined, fixed),
          )
        },
      ),
      RUNS,
    )
  })

  it("the Decider reports an overflow exactly when the count reaches the reference trigger, on both paths", () => {
    fc.assert(
      fc.property(caseArb, ({ config, limits, ruleB, fixed, trigger, count, usage }) => {
        const expected =
          trigger !== undefined && count >= trigger
            ? [{ tokens: count, trigger }]
            : ([] as ReadonlyArray<{ tokens: number; trigger: number }>)
        const step = assistantMessage("a1", "u1", "ok", { tokens: usage })
        const base = [started(), user("u1", "hi")]
        const events = ruleB
          ? decide({ _tag: "CheckOverflow", at: 1, config, limits, ...(fixed === undefined ? {} : { fixed }) }, [
              ...base,
              { _tag: "AssistantStepRecorded", at: 1, message: step },
            ])
          : decide(
              { _tag: "RecordAssistantStep", message: step, config, limits, ...(fixed === undefined ? {} : { fixed }) },
              base,
            )
        const detected = events.flatMap((e) =>
          e._tag === "OverflowDetected" ? [{ tokens: e.tokens, trigger: e.trigger }] : [],
        )
        expect(detected).toEqual(expected)
      }),
      RUNS,
    )
  })

  it("the generators reach the edges: 0-token models, no trigger, counts at trigger − 1, trigger, trigger + 1, fixed prompts", () => {
    const sample = fc.sample(caseArb, { numRuns: 3_000, seed: 12 })
    expect(sample.some((c) => c.limits.context === 0 && c.limits.output === 0)).toBe(true)
    expect(sample.some((c) => c.trigger === undefined)).toBe(true)
    for (const delta of [-1, 0, 1])
      expect(sample.some((c) => c.trigger !== undefined && c.count === c.trigger + delta)).toBe(true)
    expect(sample.some((c) => c.usage.total !== undefined)).toBe(true)
    // A fixed prompt with a threshold, and one at or past the usable window (the clamp).
    expect(sample.some((c) => c.fixed !== undefined && c.fixed > 0 && c.config.threshold !== undefined)).toBe(true)
    expect(sample.some((c) => c.fixed !== undefined && c.trigger !== undefined && c.fixed >= c.trigger)).toBe(true)
  })
})
