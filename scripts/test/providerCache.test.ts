/** The simulated provider cache of bench:cost: exact prefixes, the 5-minute TTL, and each provider's billing. */
import { describe, expect, it } from "vitest"
import { ANTHROPIC_MIN, equivalents, OPENAI_MIN, ProviderCache, TTL } from "../bench/support/providerCache.ts"

const text = (tokens: number, fill = "a") => fill.repeat(tokens * 4)

describe("ProviderCache (Anthropic)", () => {
  it("given a request that extends a cached one, then the cached one is read and only the rest written", () => {
    const cache = new ProviderCache("anthropic")
    expect(cache.bill(text(2_000), 0)).toEqual({ input: 0, cacheRead: 0, cacheWrite: 2_000 })
    expect(cache.bill(text(2_000) + text(200, "b"), 60_000)).toEqual({ input: 0, cacheRead: 2_000, cacheWrite: 200 })
  })

  it("given a request that changes one character inside the cached prompt, then nothing is read", () => {
    const cache = new ProviderCache("anthropic")
    expect(cache.bill(`${text(600)}x${text(600)}`, 0).cacheWrite).toBe(1_200)
    expect(cache.bill(`${text(600)}y${text(600)}`, 1_000).cacheRead).toBe(0)
  })

  it("given a gap longer than the TTL, then the cache is cold; a read refreshes the TTL", () => {
    const cache = new ProviderCache("anthropic")
    cache.bill(text(2_000), 0)
    expect(cache.bill(text(2_000), TTL).cacheRead).toBe(2_000)
    // Refreshed at TTL: still warm at 2 × TTL, cold just after.
    expect(cache.bill(text(2_000), 2 * TTL).cacheRead).toBe(2_000)
    expect(cache.bill(text(2_000), 4 * TTL + 1).cacheRead).toBe(0)
  })

  it("given breakpoints, then it reads at the longest cached one and writes up to the last; the tail is input", () => {
    const cache = new ProviderCache("anthropic")
    const a = text(1_100)
    const b = text(400, "b")
    const c = text(100, "c")
    expect(cache.bill(a + b + c, 0, [a.length, (a + b).length])).toEqual({
      input: 100,
      cacheRead: 0,
      cacheWrite: 1_500,
    })
    // Another ending after `a`: the breakpoint at `a` was cached; `a + b` is not a prefix of this one.
    expect(cache.bill(a + text(600, "d"), 1_000, [a.length, a.length + 2_400])).toEqual({
      input: 0,
      cacheRead: 1_100,
      cacheWrite: 600,
    })
  })

  it.each([
    [ANTHROPIC_MIN - 1, { input: ANTHROPIC_MIN - 1, cacheRead: 0, cacheWrite: 0 }],
    [ANTHROPIC_MIN, { input: 0, cacheRead: 0, cacheWrite: ANTHROPIC_MIN }],
    [ANTHROPIC_MIN + 1, { input: 0, cacheRead: 0, cacheWrite: ANTHROPIC_MIN + 1 }],
  ])("given a prefix of %i tokens at the breakpoint, then it is cached only from the minimum on", (tokens, billed) => {
    const cache = new ProviderCache("anthropic")
    expect(cache.bill(text(tokens), 0)).toEqual(billed)
    // What was too short to cache is not read back either.
    expect(cache.bill(text(tokens), 1_000).cacheRead).toBe(tokens < ANTHROPIC_MIN ? 0 : tokens)
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
