/** The simulated provider cache of bench:cost: exact prefixes, the 5-minute TTL, and each provider's billing. */
import { describe, expect, it } from "vitest"
import { equivalents, OPENAI_MIN, ProviderCache, TTL } from "../bench/support/providerCache.ts"

const text = (tokens: number, fill = "a") => fill.repeat(tokens * 4)

describe("ProviderCache (Anthropic)", () => {
  it("given a request that extends a cached one, then the cached one is read and only the rest written", () => {
    const cache = new ProviderCache("anthropic")
    expect(cache.bill(text(1_000), 0)).toEqual({ input: 0, cacheRead: 0, cacheWrite: 1_000 })
    expect(cache.bill(text(1_000) + text(200, "b"), 60_000)).toEqual({ input: 0, cacheRead: 1_000, cacheWrite: 200 })
  })

  it("given a request that changes one character inside the cached prompt, then nothing is read", () => {
    const cache = new ProviderCache("anthropic")
    expect(cache.bill(`${text(600)}x${text(600)}`, 0).cacheWrite).toBe(1_200)
    expect(cache.bill(`${text(600)}y${text(600)}`, 1_000).cacheRead).toBe(0)
  })

  it("given a gap longer than the TTL, then the cache is cold; a read refreshes the TTL", () => {
    const cache = new ProviderCache("anthropic")
    cache.bill(text(1_000), 0)
    expect(cache.bill(text(1_000), TTL).cacheRead).toBe(1_000)
    // Refreshed at TTL: still warm at 2 × TTL, cold just after.
    expect(cache.bill(text(1_000), 2 * TTL).cacheRead).toBe(1_000)
    expect(cache.bill(text(1_000), 4 * TTL + 1).cacheRead).toBe(0)
  })

  it("bills writes at 1.25× and reads at 0.1×", () => {
    expect(equivalents({ input: 0, cacheRead: 1_000, cacheWrite: 200 }, "anthropic")).toBeCloseTo(350, 9)
  })
})

describe("ProviderCache (OpenAI)", () => {
  it("given a shared prefix of at least 1,024 tokens, then it is read in 128-token steps, from any earlier request", () => {
    const cache = new ProviderCache("openai")
    cache.bill(text(2_000) + text(500, "x"), 0)
    expect(cache.bill(text(2_000) + text(500, "y"), 1_000)).toEqual({
      input: 2_500 - 1_920,
      cacheRead: 1_920,
      cacheWrite: 0,
    })
  })

  it("given a shared prefix under 1,024 tokens, then nothing is read", () => {
    const cache = new ProviderCache("openai")
    cache.bill(text(OPENAI_MIN - 1) + "x", 0)
    expect(cache.bill(text(OPENAI_MIN - 1) + "y", 1_000).cacheRead).toBe(0)
  })

  it("bills reads at 0.5× and nothing for writes", () => {
    expect(equivalents({ input: 580, cacheRead: 1_920, cacheWrite: 0 }, "openai")).toBeCloseTo(1_540, 9)
  })
})
