/**
 * A duration or count of the options that is not one fails when the layer is built, as a one-line `InvalidOption`
 * naming the option — not later, as a defect of the first `prepare` or summary that reads it.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Options } from "@pivot/runtime"
import { Effect } from "effect"
import { layer, SESSION, services, step, users } from "./support/harness.ts"

/** Builds the layer with `options` and runs a turn through `prepare`; answers the failure's tag and message. */
const outcome = (options: Partial<Options>) =>
  Effect.gen(function* () {
    yield* users("work")
    yield* step(1_000)
    const { cm } = yield* services
    yield* cm.prepare(SESSION)
    return "built"
  }).pipe(
    Effect.provide(layer({ options })),
    Effect.catch((error) => {
      const failed = error as { readonly _tag: string; readonly message: string }
      return Effect.succeed(`${failed._tag}: ${failed.message}`)
    }),
  )

describe("InvalidOption", () => {
  it.effect("given a duration that is not one, then building the layer fails naming the option", () =>
    Effect.gen(function* () {
      expect(yield* outcome({ cacheAware: { ttl: "bogus" as never } })).toBe(
        'InvalidOption: invalid option cacheAware.ttl: bogus; expected a duration ("5 minutes", ms)',
      )
      expect(yield* outcome({ summaryTimeout: "two minutes" as never })).toMatch(/^InvalidOption: .*summaryTimeout/)
      expect(yield* outcome({ probes: { timeout: "soon" as never } })).toMatch(
        /^InvalidOption: .*probes\.timeout: soon/,
      )
    }),
  )

  it.effect("given a negative or non-finite count, then building the layer fails naming the option", () =>
    Effect.gen(function* () {
      expect(yield* outcome({ cacheAware: { batch: Number.NaN } })).toBe(
        "InvalidOption: invalid option cacheAware.batch: NaN; expected a number of 0 or more",
      )
      expect(yield* outcome({ cacheAware: { coldTurns: -1 } })).toMatch(/^InvalidOption: .*cacheAware\.coldTurns: -1/)
      expect(yield* outcome({ cacheAware: { coldProtect: Number.POSITIVE_INFINITY } })).toMatch(/coldProtect/)
      expect(yield* outcome({ probes: { maxOutputTokens: -1 } })).toMatch(/^InvalidOption: .*probes\.maxOutputTokens/)
    }),
  )

  it.effect(
    "given the other counts and ratios negative or not numbers, then building the layer fails naming each",
    () =>
      Effect.gen(function* () {
        expect(yield* outcome({ maxConsecutiveCompactions: -1 })).toBe(
          "InvalidOption: invalid option maxConsecutiveCompactions: -1; expected a number of 0 or more",
        )
        expect(yield* outcome({ overheadTokens: Number.NaN })).toMatch(/^InvalidOption: .*overheadTokens: NaN/)
        expect(yield* outcome({ warnAt: -0.5 })).toMatch(/^InvalidOption: .*warnAt: -0\.5/)
        expect(yield* outcome({ hud: { high: Number.NaN } })).toMatch(/^InvalidOption: .*hud\.high: NaN/)
        expect(yield* outcome({ hud: { high: 0.95, critical: 0.5 } })).toBe(
          "InvalidOption: invalid option hud.high: 0.95; expected at most hud.critical (0.5)",
        )
        expect(yield* outcome({ maxConsecutiveCompactions: 0, overheadTokens: 0, warnAt: 1, hud: { high: 0.5 } })).toBe(
          "built",
        )
      }),
  )

  it.effect("given a compaction config key out of its range, then building the layer fails naming the key", () =>
    Effect.gen(function* () {
      expect(yield* outcome({ config: { threshold: 0 } })).toMatch(/^InvalidOption: invalid option config: threshold: /)
      expect(yield* outcome({ config: { opencode: "1.19" as never } })).toMatch(/^InvalidOption: .*config: opencode: /)
      expect(yield* outcome({ config: { tail_turns: -1 } })).toMatch(/^InvalidOption: .*config: tail_turns: /)
      expect(yield* outcome({ config: { threshold: 0.5, tail_turns: 0, opencode: "1.18" } })).toBe("built")
    }),
  )

  it.effect("given the cost line's prices under a key that is not provider/model, then it fails naming the key", () =>
    Effect.gen(function* () {
      const price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
      expect(yield* outcome({ hud: { cost: { prices: { "claude-sonnet-4": price } } } })).toMatch(
        /^InvalidOption: invalid option hud\.cost\.prices: .*key "claude-sonnet-4" is not provider\/model/,
      )
      expect(yield* outcome({ hud: { cost: { prices: { "anthropic/claude-sonnet-4": price } } } })).toBe("built")
    }),
  )

  it.effect("given valid values (zero included) or cacheAware off, then it builds and runs", () =>
    Effect.gen(function* () {
      expect(
        yield* outcome({
          cacheAware: { ttl: "5 minutes", batch: 0, coldTurns: 0, coldProtect: 0 },
          summaryTimeout: 10,
        }),
      ).toBe("built")
      // Off: its settings are not read, so they are not checked either.
      expect(yield* outcome({ cacheAware: false })).toBe("built")
    }),
  )
})
