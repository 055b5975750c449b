import { Tokens } from "@pivot/core"
import { describe, expect, it } from "vitest"

describe("Tokens.estimate (spec §2.2)", () => {
  it("T1 estimate of 4000 chars is 1000", () => expect(Tokens.estimate("x".repeat(4000))).toBe(1000))

  it("T2 estimate of 20_000 chars is 5000", () => expect(Tokens.estimate("y".repeat(20_000))).toBe(5000))

  it("T3 estimate of the empty string is 0", () => expect(Tokens.estimate("")).toBe(0))

  it("given lengths off a multiple of 4, then it rounds half up", () => {
    expect(Tokens.estimate("a")).toBe(0)
    expect(Tokens.estimate("ab")).toBe(1)
    expect(Tokens.estimate("abcde")).toBe(1)
    expect(Tokens.estimate("abcdef")).toBe(2)
  })

  it("given astral characters, then it counts UTF-16 code units", () => {
    // "😀" is two code units: 4 of them are 8 units, so 2 tokens.
    expect(Tokens.estimate("😀".repeat(4))).toBe(2)
  })
})

describe("Tokens.estimateWindow (a window's size, as pivot prints and reports it)", () => {
  it("given an empty window, then it is 0 tokens, not the 1 that the JSON [] rounds to", () => {
    expect(Tokens.estimate("[]")).toBe(1)
    expect(Tokens.estimateWindow([])).toBe(0)
    expect(Tokens.estimateWindowLength(0, 2)).toBe(0)
  })

  it("given a window with messages, then it is the estimate of their JSON array", () => {
    const messages = [
      { role: "user", content: "x".repeat(400) },
      { role: "assistant", content: "ok" },
    ]
    expect(Tokens.estimateWindow(messages)).toBe(Tokens.estimate(JSON.stringify(messages)))
    expect(Tokens.estimateWindowLength(messages.length, 403)).toBe(Tokens.estimateLength(403))
  })
})

describe("Tokens.fromProvider (spec §2.1; the cost cases of U1–U12 are out of scope: pivot has no cost module)", () => {
  it("U1 given input 1000, output 500, total 1500, then input 1000, output 500, total 1500", () => {
    expect(Tokens.fromProvider({ inputTokens: 1000, outputTokens: 500, totalTokens: 1500 })).toEqual({
      input: 1000,
      output: 500,
      reasoning: 0,
      cacheRead: 0,
      cacheWrite: 0,
      total: 1500,
    })
  })

  it("U2 given cache read 200, then input 800 and cache read 200", () => {
    const usage = Tokens.fromProvider({
      inputTokens: 1000,
      outputTokens: 500,
      totalTokens: 1500,
      cacheReadInputTokens: 200,
    })
    expect(usage.input).toBe(800)
    expect(usage.cacheRead).toBe(200)
  })

  it("U2 given only the older cachedInputTokens, then it is the cache read", () => {
    const usage = Tokens.fromProvider({ inputTokens: 1000, outputTokens: 500, cachedInputTokens: 200 })
    expect(usage.input).toBe(800)
    expect(usage.cacheRead).toBe(200)
  })

  it("U3 given anthropic cacheCreationInputTokens 300, then cache write 300", () => {
    const usage = Tokens.fromProvider(
      { inputTokens: 1000, outputTokens: 500, totalTokens: 1500 },
      { anthropic: { cacheCreationInputTokens: 300 } },
    )
    expect(usage.cacheWrite).toBe(300)
    expect(usage.input).toBe(700)
  })

  it("U4 given reasoning 100, then output 400, reasoning 100 and total 1500", () => {
    const usage = Tokens.fromProvider({ inputTokens: 1000, outputTokens: 500, totalTokens: 1500, reasoningTokens: 100 })
    expect(usage.output).toBe(400)
    expect(usage.reasoning).toBe(100)
    expect(usage.total).toBe(1500)
  })

  const combined = { inputTokens: 1000, outputTokens: 500, totalTokens: 1500, cacheReadInputTokens: 200 }
  it.each([
    ["anthropic", { anthropic: { cacheCreationInputTokens: 300 } }],
    ["bedrock", { bedrock: { usage: { cacheWriteInputTokens: 300 } } }],
    ["vertex-anthropic", { vertex: { cacheCreationInputTokens: 300 } }],
  ])(
    "U5 given %s with cache read 200 and cache write 300 in metadata, then input 500 and total 1500",
    (_, metadata) => {
      expect(Tokens.fromProvider(combined, metadata)).toEqual({
        input: 500,
        output: 500,
        reasoning: 0,
        cacheRead: 200,
        cacheWrite: 300,
        total: 1500,
      })
    },
  )

  it("given venice usage metadata, then its cache creation is the cache write", () => {
    expect(
      Tokens.fromProvider({ inputTokens: 1000 }, { venice: { usage: { cacheCreationInputTokens: 50 } } }).cacheWrite,
    ).toBe(50)
  })

  it("given cacheWriteInputTokens on the usage, then it wins over provider metadata", () => {
    const usage = Tokens.fromProvider(
      { inputTokens: 1000, cacheWriteInputTokens: 10 },
      { anthropic: { cacheCreationInputTokens: 300 } },
    )
    expect(usage.cacheWrite).toBe(10)
    expect(usage.input).toBe(990)
  })

  it("given metadata sources, then the first one present wins in the documented order", () => {
    const usage = Tokens.fromProvider(
      { inputTokens: 1000 },
      { vertex: { cacheCreationInputTokens: 7 }, anthropic: { cacheCreationInputTokens: 5 } },
    )
    expect(usage.cacheWrite).toBe(5)
  })

  it("given no totalTokens, then total stays absent", () => {
    expect(Tokens.fromProvider({ inputTokens: 10, outputTokens: 5 })).not.toHaveProperty("total")
  })

  it("given NaN, infinite, negative or missing values, then each is clamped to 0", () => {
    expect(
      Tokens.fromProvider({ inputTokens: Number.NaN, outputTokens: -5, reasoningTokens: Number.POSITIVE_INFINITY }),
    ).toEqual(Tokens.zero)
    expect(Tokens.fromProvider({})).toEqual(Tokens.zero)
  })

  it("given cache larger than input, then input is clamped to 0 rather than negative", () => {
    expect(Tokens.fromProvider({ inputTokens: 100, cacheReadInputTokens: 150 }).input).toBe(0)
  })
})

describe("Tokens.contextCount (spec §2.4 step 3)", () => {
  const usage = { input: 100, output: 20, reasoning: 1000, cacheRead: 30, cacheWrite: 4 }

  it("given no total, then it sums input, output and cache, leaving reasoning out", () =>
    expect(Tokens.contextCount(usage)).toBe(154))

  it("given a total, then the total is the count (reasoning counted through it)", () =>
    expect(Tokens.contextCount({ ...usage, total: 2000 })).toBe(2000))

  it("given a total of 0, then it counts as missing", () =>
    expect(Tokens.contextCount({ ...usage, total: 0 })).toBe(154))
})
