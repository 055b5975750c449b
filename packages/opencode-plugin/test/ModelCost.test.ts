// A model's price from OpenCode's `cost` (ModelCost.priceOf): what opencode.json's cost for a custom provider's model
// becomes in pivot, and what is no price (OpenCode's 0 for a model declared without one).
import { describe, expect, it } from "@effect/vitest"
import { Pricing } from "@pivot/core"
import * as ModelCost from "../src/ModelCost.ts"

describe("ModelCost.priceOf", () => {
  it("given Sonnet's cost as OpenCode carries it, then pivot's price and Anthropic's multipliers", () => {
    const price = ModelCost.priceOf({ input: 3, output: 15, cache: { read: 0.3, write: 3.75 } })
    expect(price).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })
    const rates = Pricing.ratesOf(price!)!
    expect(rates.read).toBeCloseTo(0.1)
    expect(rates.write).toBeCloseTo(1.25)
    expect(rates.output).toBeCloseTo(5)
  })

  it("given an input price of 0 (OpenCode's default), of -0.01 or none, then no price; of 0.01, a price", () => {
    expect(ModelCost.priceOf({ input: 0, output: 0, cache: { read: 0, write: 0 } })).toBeUndefined()
    expect(ModelCost.priceOf({ input: -0.01, output: 1 })).toBeUndefined()
    expect(ModelCost.priceOf(undefined)).toBeUndefined()
    expect(ModelCost.priceOf({ input: 0.01, output: 0.02 })).toEqual({
      input: 0.01,
      output: 0.02,
      cacheRead: 0.01,
      cacheWrite: 0.01,
    })
  })

  it("given no cache price (OpenCode fills 0), then reads and writes are billed as input", () => {
    expect(ModelCost.priceOf({ input: 2, output: 8, cache: { read: 0, write: 0 } })).toEqual({
      input: 2,
      output: 8,
      cacheRead: 2,
      cacheWrite: 2,
    })
  })

  it("given a rate that is not a finite number >= 0, then no price", () => {
    expect(ModelCost.priceOf({ input: 2, output: Number.NaN })).toBeUndefined()
    expect(ModelCost.priceOf({ input: 2, output: 8, cache: { read: -1 } })).toBeUndefined()
    expect(ModelCost.priceOf({ input: Number.POSITIVE_INFINITY, output: 8 })).toBeUndefined()
  })

  it("spec: the price as a model spec's field, or nothing", () => {
    expect(ModelCost.spec({ input: 1, output: 2, cache: { read: 0.5, write: 1 } })).toEqual({
      price: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 1 },
    })
    expect(ModelCost.spec({ input: 0, output: 0 })).toEqual({})
  })
})
