import { Pricing, type Tokens } from "@pivot/core"
import { describe, expect, it } from "vitest"

const usage: Tokens.TokenUsage = { input: 1_000, output: 200, reasoning: 50, cacheRead: 10_000, cacheWrite: 2_000 }
const sonnet: Pricing.Price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }

describe("Pricing", () => {
  it("given Anthropic's price, then a read costs 0.1 and a write 1.25 input tokens", () => {
    const rates = Pricing.ratesOf(sonnet)!
    expect(rates.read).toBeCloseTo(0.1, 12)
    expect(rates.write).toBeCloseTo(1.25, 12)
    expect(rates.output).toBe(5)
    // 1000 + 10000 × 0.1 + 2000 × 1.25 = 4500
    expect(Pricing.inputEquivalent(usage, rates)).toBeCloseTo(4_500, 9)
    // plus (200 + 50) × 5
    expect(Pricing.equivalent(usage, rates)).toBeCloseTo(5_750, 9)
  })

  it("given a price, then the dollars are the tokens times the per-million prices", () => {
    // (1000×3 + 10000×0.3 + 2000×3.75 + 250×15) / 1e6
    expect(Pricing.dollars(usage, sonnet)).toBeCloseTo(0.01725, 12)
  })

  it("given no price, then the provider's multipliers apply, and an unknown provider is flat", () => {
    expect(Pricing.ratesFor({ providerId: "openai", modelId: "x" }, undefined)).toMatchObject({ read: 0.5, write: 1 })
    expect(Pricing.ratesFor({ providerId: "anthropic", modelId: "x" }, undefined)).toMatchObject({
      read: 0.1,
      write: 1.25,
      priced: false,
    })
    expect(Pricing.ratesFor({ providerId: "local", modelId: "x" }, undefined)).toEqual(Pricing.FLAT)
    expect(Pricing.ratesFor(undefined, undefined)).toEqual(Pricing.FLAT)
  })

  it("given a free model (input price 0), then the rates fall back to the provider's", () => {
    const free = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
    expect(Pricing.ratesOf(free)).toBeUndefined()
    expect(Pricing.ratesFor({ providerId: "anthropic", modelId: "x" }, free).read).toBe(0.1)
  })

  it("the hit ratio is the cached share of the input", () => {
    expect(Pricing.hitRatio(usage)).toBeCloseTo(10_000 / 13_000, 12)
    expect(Pricing.hitRatio({ input: 0, output: 5, reasoning: 0, cacheRead: 0, cacheWrite: 0 })).toBe(0)
  })
})
