import { type Config, type Model, Overflow, Tokens } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compactionConfigArb as configArb, limitsArb } from "./support/arbitraries.ts"
import { RUNS } from "./support/runs.ts"

const limits = (context: number, input: number | undefined, output: number): Model.ModelLimits =>
  input === undefined ? { context, output } : { context, input, output }

const tokens = (input: number, output: number, cacheRead = 0): Tokens.TokenUsage => ({
  ...Tokens.zero,
  input,
  output,
  cacheRead,
})

describe("Overflow.isOverflow — spec §3.1 (total absent, so the sum is used)", () => {
  const cases: ReadonlyArray<{
    id: string
    limits: Model.ModelLimits
    tokens: Tokens.TokenUsage
    config?: Config.CompactionConfig
    expected: boolean
    why: string
  }> = [
    {
      id: "O1",
      limits: limits(100_000, undefined, 32_000),
      tokens: tokens(75_000, 5_000),
      expected: true,
      why: "80k ≥ 68k",
    },
    {
      id: "O2",
      limits: limits(200_000, undefined, 32_000),
      tokens: tokens(100_000, 10_000),
      expected: false,
      why: "110k < 168k",
    },
    {
      id: "O3",
      limits: limits(100_000, undefined, 32_000),
      tokens: tokens(60_000, 10_000, 10_000),
      expected: true,
      why: "cache counts: 80k ≥ 68k",
    },
    {
      id: "O5",
      limits: limits(400_000, 272_000, 128_000),
      tokens: tokens(200_000, 20_000, 10_000),
      expected: false,
      why: "230k < 272k − 20k",
    },
    {
      id: "O6",
      limits: limits(200_000, 120_000, 10_000),
      tokens: tokens(50_000, 9_999),
      expected: false,
      why: "reserved = min(20k, 10k); 59_999 < 110k",
    },
    {
      id: "O7",
      limits: limits(200_000, 200_000, 32_000),
      tokens: tokens(180_000, 15_000, 3_000),
      expected: true,
      why: "input limit keeps a 20k buffer: 198k ≥ 180k",
    },
    {
      id: "O8",
      limits: limits(200_000, undefined, 32_000),
      tokens: tokens(180_000, 15_000, 3_000),
      expected: true,
      why: "same tokens as O7 without input limit: 198k ≥ 168k",
    },
    {
      id: "O10",
      limits: limits(0, undefined, 32_000),
      tokens: tokens(100_000, 10_000),
      expected: false,
      why: "context 0",
    },
    {
      id: "O11",
      limits: limits(100_000, undefined, 32_000),
      tokens: tokens(75_000, 5_000),
      config: { auto: false },
      expected: false,
      why: "auto disabled",
    },
  ]

  it.each(cases)("$id: $why → $expected", ({ limits, tokens, config, expected }) => {
    expect(Overflow.isOverflow(config ?? {}, tokens, limits)).toBe(expected)
  })

  it("O1 and O11 differ only by auto: the same tokens overflow once auto is back on", () => {
    expect(Overflow.isOverflow({ auto: true }, tokens(75_000, 5_000), limits(100_000, undefined, 32_000))).toBe(true)
  })
})

describe("Overflow.usable (spec §2.3)", () => {
  it("given no input limit, then usable is context minus the output allowance", () =>
    expect(Overflow.usable({}, limits(100_000, undefined, 32_000))).toBe(68_000))

  it("given an input limit, then usable is the input limit minus min(20k, output)", () => {
    expect(Overflow.usable({}, limits(400_000, 272_000, 128_000))).toBe(252_000)
    expect(Overflow.usable({}, limits(200_000, 120_000, 10_000))).toBe(110_000)
  })

  it("given reserved and an input limit, then reserved is the buffer", () =>
    expect(Overflow.usable({ reserved: 5_000 }, limits(200_000, 120_000, 10_000))).toBe(115_000))

  it("given reserved but no input limit, then reserved is ignored, as in OpenCode", () =>
    expect(Overflow.usable({ reserved: 5_000 }, limits(100_000, undefined, 32_000))).toBe(68_000))

  it("given an output limit of 0, then the 32k default output is subtracted", () =>
    expect(Overflow.usable({}, limits(100_000, undefined, 0))).toBe(68_000))

  it("given an output cap, then the smaller of limit and cap is subtracted", () =>
    expect(Overflow.usable({}, limits(100_000, undefined, 32_000), 8_000)).toBe(92_000))

  it("given context 0, then usable is 0", () => expect(Overflow.usable({}, limits(0, 50_000, 32_000))).toBe(0))
})

describe("Overflow boundary (spec §2.4: `>=`)", () => {
  const model = limits(100_000, undefined, 32_000)

  it("given exactly the usable count, then it overflows", () =>
    expect(Overflow.isOverflow({}, tokens(68_000, 0), model)).toBe(true))

  it("given one token less, then it does not", () =>
    expect(Overflow.isOverflow({}, tokens(67_999, 0), model)).toBe(false))

  it("given a provider total, then the total is compared, reasoning included", () => {
    const usage = { ...tokens(10_000, 0), reasoning: 60_000, total: 70_000 }
    expect(Overflow.isOverflow({}, usage, model)).toBe(true)
    expect(Overflow.isOverflow({}, { ...usage, total: 0 }, model)).toBe(false)
  })
})

describe("Overflow with a usable window of 0 (pivot's fix for OpenCode #45368)", () => {
  // Context 16_384 with no output limit: 32k is subtracted, so usable is 0. OpenCode overflows on every step.
  const tiny = limits(16_384, undefined, 0)

  it("given usable 0, then the check is disabled instead of firing on every step", () => {
    expect(Overflow.usable({}, tiny)).toBe(0)
    expect(Overflow.trigger({}, tiny)).toBeUndefined()
    expect(Overflow.isOverflow({}, tokens(1, 0), tiny)).toBe(false)
    expect(Overflow.isOverflow({}, tokens(1_000_000, 0), tiny)).toBe(false)
  })

  it("given usable 0 with a known context, then the limits are reported unusable", () => {
    expect(Overflow.isUnusable({}, tiny)).toBe(true)
    expect(Overflow.isUnusable({}, limits(100_000, undefined, 32_000))).toBe(false)
  })

  it("given context 0, then the limits are unknown, not unusable", () =>
    expect(Overflow.isUnusable({}, limits(0, undefined, 32_000))).toBe(false))

  it("given an input limit below the buffer, then usable is 0 and the check is disabled", () => {
    const model = limits(100_000, 10_000, 32_000)
    expect(Overflow.usable({}, model)).toBe(0)
    expect(Overflow.isOverflow({}, tokens(50_000, 0), model)).toBe(false)
  })
})

describe("Overflow threshold ratio (pivot's addition)", () => {
  const model = limits(100_000, undefined, 32_000) // usable 68k

  it("given threshold 0.5, then compaction triggers at half the usable window", () => {
    expect(Overflow.trigger({ threshold: 0.5 }, model)).toBe(34_000)
    expect(Overflow.isOverflow({ threshold: 0.5 }, tokens(34_000, 0), model)).toBe(true)
    expect(Overflow.isOverflow({ threshold: 0.5 }, tokens(33_999, 0), model)).toBe(false)
  })

  it("given threshold 1, then the trigger is the usable window itself", () =>
    expect(Overflow.trigger({ threshold: 1 }, model)).toBe(68_000))

  it("given no threshold, then the trigger is the usable window", () =>
    expect(Overflow.trigger({}, model)).toBe(68_000))

  it("given a fractional result, then the trigger is floored", () =>
    expect(Overflow.trigger({ threshold: 0.333 }, model)).toBe(Math.floor(68_000 * 0.333)))

  it("given a tiny usable window and a tiny ratio, then the trigger stays at least 1 (never always-overflowing)", () => {
    const small = limits(100, 60, 40) // usable 20; 20 × 0.01 floors to 0
    expect(Overflow.trigger({ threshold: 0.01 }, small)).toBe(1)
    expect(Overflow.isOverflow({ threshold: 0.01 }, Tokens.zero, small)).toBe(false)
  })

  it("given auto false, then a threshold does not re-enable the check", () => {
    expect(Overflow.trigger({ auto: false, threshold: 0.5 }, model)).toBeUndefined()
    expect(Overflow.isOverflow({ auto: false, threshold: 0.5 }, tokens(99_000, 0), model)).toBe(false)
  })
})

describe("Overflow properties", () => {
  it("the trigger is never above the usable window and never 0", () => {
    fc.assert(
      fc.property(configArb, limitsArb, (config, raw) => {
        const model = limits(raw.context, raw.input, raw.output)
        const at = Overflow.trigger(config, model)
        if (at === undefined) return
        expect(at).toBeGreaterThan(0)
        expect(at).toBeLessThanOrEqual(Overflow.usable(config, model))
      }),
      RUNS,
    )
  })

  it("overflow is monotone: more tokens never turn an overflow back into none", () => {
    fc.assert(
      fc.property(
        configArb,
        limitsArb,
        fc.nat({ max: 3_000_000 }),
        fc.nat({ max: 100_000 }),
        (config, raw, n, more) => {
          const model = limits(raw.context, raw.input, raw.output)
          if (Overflow.isOverflow(config, tokens(n, 0), model)) {
            expect(Overflow.isOverflow(config, tokens(n + more, 0), model)).toBe(true)
          }
        },
      ),
      RUNS,
    )
  })
})

describe("Overflow.reaches / detect — the one overflow comparison (boundary `>=`)", () => {
  it("a count reaches the trigger at trigger, not at trigger − 1; no trigger is never reached", () => {
    expect(Overflow.reaches(67_999, 68_000)).toBe(false)
    expect(Overflow.reaches(68_000, 68_000)).toBe(true)
    expect(Overflow.reaches(68_001, 68_000)).toBe(true)
    expect(Overflow.reaches(Number.MAX_SAFE_INTEGER, undefined)).toBe(false)
    expect(Overflow.reaches(0, 0)).toBe(true)
  })
  it("detect answers the count and the trigger it reached (context 100k, output 32k → 68_000)", () => {
    const model = limits(100_000, undefined, 32_000)
    expect(Overflow.detect({}, tokens(67_999, 0), model)).toBeUndefined()
    expect(Overflow.detect({}, tokens(60_000, 8_000), model)).toEqual({ tokens: 68_000, trigger: 68_000 })
    expect(Overflow.detect({}, tokens(68_001, 0), model)).toEqual({ tokens: 68_001, trigger: 68_000 })
    expect(Overflow.detect({ auto: false }, tokens(1_000_000, 0), model)).toBeUndefined()
  })
  it("a context of 0 never triggers, even with an input limit", () => {
    expect(Overflow.trigger({}, limits(0, 50_000, 0))).toBeUndefined()
    expect(Overflow.usable({}, limits(0, 50_000, 0))).toBe(0)
  })
})

describe("Overflow threshold above the fixed prompt (ADR 0034)", () => {
  // usable 68,000; threshold 0.75. A fixed prompt f puts the trigger at f + ⌊0.75 × (68,000 − f)⌋.
  const model = limits(100_000, undefined, 32_000)
  const config = { threshold: 0.75 }

  it("given no fixed prompt (or 0), then the threshold is a share of the whole usable window", () => {
    expect(Overflow.trigger(config, model)).toBe(51_000)
    expect(Overflow.trigger(config, model, undefined, 0)).toBe(51_000)
  })

  it("given a 20,000-token fixed prompt, then the trigger is 20,000 + 0.75 × 48,000", () =>
    expect(Overflow.trigger(config, model, undefined, 20_000)).toBe(56_000))

  it("given the count at that trigger − 1, at it and + 1, then no overflow, overflow, overflow", () => {
    expect(Overflow.detect(config, tokens(55_999, 0), model, undefined, 20_000)).toBeUndefined()
    expect(Overflow.detect(config, tokens(56_000, 0), model, undefined, 20_000)).toEqual({
      tokens: 56_000,
      trigger: 56_000,
    })
    expect(Overflow.detect(config, tokens(56_001, 0), model, undefined, 20_000)).toEqual({
      tokens: 56_001,
      trigger: 56_000,
    })
  })

  it("given a fixed prompt at the usable window − 1, at it and above it, then the trigger is that, then usable", () => {
    expect(Overflow.trigger(config, model, undefined, 67_999)).toBe(67_999)
    expect(Overflow.trigger(config, model, undefined, 68_000)).toBe(68_000)
    expect(Overflow.trigger(config, model, undefined, 68_001)).toBe(68_000)
  })

  it("given a fixed prompt but no threshold, then the trigger is the usable window (OpenCode's rule unchanged)", () =>
    expect(Overflow.trigger({}, model, undefined, 20_000)).toBe(68_000))

  it("given auto false or an unusable window, then a fixed prompt does not re-enable the check", () => {
    expect(Overflow.trigger({ ...config, auto: false }, model, undefined, 20_000)).toBeUndefined()
    expect(Overflow.trigger(config, limits(0, undefined, 32_000), undefined, 20_000)).toBeUndefined()
  })
})
