/**
 * Cache-aware mode's rent-or-buy rule (`CacheEconomy`): where a segment begins (a pivot, a call on a cold cache: the
 * TTL boundary), what a compaction would leave, and when the rent paid reaches the buy (value −1, value, value +1).
 * The arithmetic is recomputed here by hand from the definitions, with rates chosen so that it is exact.
 */
import { CacheEconomy, Facts, Prune, type Tokens } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { assistant, summary, tool, user } from "./support/arbitraries.ts"

const RATES = { read: 0.5, write: 1, output: 2 }
const TTL = 300_000
const T0 = 1_767_000_000_000

const usage = (input: number): Tokens.TokenUsage => ({ input, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 })
/** A call of `input` tokens made at `at` (finished at once). */
const call = (id: number, at: number, input: number) =>
  assistant(id, 1, [], { tokens: usage(input), createdAt: at, completedAt: at })

describe("CacheEconomy.segmentOf", () => {
  it("given no pivot, then every call counts and the base is the first window plus a default summary and the tail", () => {
    const segment = CacheEconomy.segmentOf([user(1, "go"), call(2, T0, 1_000), call(3, T0 + 1_000, 4_000)], {
      ttl: TTL,
      kept: 500,
    })
    expect(segment).toEqual({
      windows: [1_000, 4_000],
      summary: CacheEconomy.DEFAULT_SUMMARY_TOKENS,
      base: 1_000 + CacheEconomy.DEFAULT_SUMMARY_TOKENS + 500,
    })
  })

  it("given a pivot, then the segment starts after it and its base is the first window after it, measured", () => {
    const segment = CacheEconomy.segmentOf(
      [
        user(1, "go"),
        call(2, T0, 9_000),
        summary(3, 1, "s".repeat(400), { createdAt: T0 + 1_000, completedAt: T0 + 1_000 }),
        call(4, T0 + 2_000, 5_000),
        call(5, T0 + 3_000, 6_000),
      ],
      { ttl: TTL, kept: 500 },
    )
    expect(segment).toEqual({ windows: [5_000, 6_000], summary: 100, base: 5_000 })
  })

  it("given a summary with pivot's facts block, then its size is the model's part only (the block is not output)", () => {
    const facts = `${Facts.HEADING}\n### Files read\n- ${"src/a.ts ".repeat(200)}`
    const segment = CacheEconomy.segmentOf(
      [user(1, "go"), summary(2, 1, `${"s".repeat(400)}\n\n${facts}`), call(3, T0, 5_000)],
      { ttl: TTL, kept: 0 },
    )
    expect(segment.summary).toBe(100)
  })

  // The TTL boundary: a call exactly `ttl` after the previous one still found the cache warm; one millisecond later,
  // cold, and the segment restarts at it.
  it.each([
    [TTL - 1, [1_000, 2_000, 3_000]],
    [TTL, [1_000, 2_000, 3_000]],
    [TTL + 1, [3_000]],
  ])("given a gap of %i ms before the third call, then the windows are %j", (gap, windows) => {
    const segment = CacheEconomy.segmentOf(
      [user(1, "go"), call(2, T0, 1_000), call(3, T0 + 1_000, 2_000), call(4, T0 + 1_000 + gap, 3_000)],
      { ttl: TTL, kept: 0 },
    )
    expect(segment.windows).toEqual(windows)
  })

  it("given calls without usage (imports, failures), then they are left out", () => {
    const segment = CacheEconomy.segmentOf([user(1, "go"), call(2, T0, 0), call(3, T0 + 1, 2_000)], {
      ttl: TTL,
      kept: 0,
    })
    expect(segment.windows).toEqual([2_000])
  })
})

describe("CacheEconomy.due", () => {
  // No pivot, no tail: base = 1,000 + 2,000 = 3,000. Windows [1,000, x, x]: rent = 2 × 0.5 × (x − 3,000) = x − 3,000;
  // buy = 0.5 x + 2 × 2,000 + 3,000 = 0.5 x + 7,000. Due from x = 20,000 on.
  const segment = (x: number): CacheEconomy.Segment => ({
    windows: [1_000, x, x],
    summary: CacheEconomy.DEFAULT_SUMMARY_TOKENS,
    base: 3_000,
  })

  it.each([
    [19_999, false],
    [20_000, true],
    [20_001, true],
  ])("given windows growing to %i, then due is %s", (x, expected) => {
    expect(CacheEconomy.rent(segment(x), RATES)).toBe(x - 3_000)
    expect(CacheEconomy.buy(segment(x), RATES)).toBe(0.5 * x + 7_000)
    expect(CacheEconomy.due(segment(x), RATES)).toBe(expected)
  })

  it("given a single call, then it is never due, whatever it read", () => {
    const one: CacheEconomy.Segment = { windows: [1_000_000], summary: 0, base: 0 }
    expect(CacheEconomy.rent(one, RATES)).toBeGreaterThanOrEqual(CacheEconomy.buy(one, RATES))
    expect(CacheEconomy.due(one, RATES)).toBe(false)
    expect(CacheEconomy.due({ ...one, windows: [1_000_000, 1_000_000] }, RATES)).toBe(true)
  })

  it("given windows below the base, then no rent is paid", () => {
    expect(CacheEconomy.rent({ windows: [1_000, 2_000], summary: 100, base: 5_000 }, RATES)).toBe(0)
  })
})

describe("Prune turns", () => {
  // Three user turns, each with one 1,000-token output; nothing protected by tokens, no minimum.
  const messages = [1, 2, 3].flatMap((n) => [
    user(n * 10, `turn ${n}`),
    assistant(n * 10 + 1, n * 10, [tool(n * 10 + 2, "read", "x".repeat(4_000))]),
  ])
  const cleared = (turns: number | undefined) =>
    Prune.select(messages, { protect: 0, minimum: 0, ...(turns === undefined ? {} : { turns }) }).parts.length

  it.each([
    [0, 3],
    [1, 2],
    [2, 1],
    [3, 0],
  ])("given turns %i, then %i outputs are cleared", (turns, expected) => {
    expect(cleared(turns)).toBe(expected)
  })

  it("given no turns, then OpenCode's two are kept", () => {
    expect(Prune.PRUNE_TURNS).toBe(2)
    expect(cleared(undefined)).toBe(cleared(2))
  })
})

describe("CacheEconomy.buy with the fixed prompt (ADR 0034)", () => {
  // Base 3,000 of which 1,000 is the fixed prompt, read (0.5) after a compaction, not written (1): buy = 0.5 x +
  // 2 × 2,000 + 2,000 × 1 + 1,000 × 0.5 = 0.5 x + 6,500; rent = x − 3,000. Due from x = 19,000 on (20,000 without it).
  const segment = (x: number, fixed: number): CacheEconomy.Segment => ({
    windows: [1_000, x, x],
    summary: CacheEconomy.DEFAULT_SUMMARY_TOKENS,
    base: 3_000,
    fixed,
  })

  it.each([
    [18_999, false],
    [19_000, true],
    [19_001, true],
  ])("given windows growing to %i and a 1,000-token fixed prompt, then due is %s", (x, expected) => {
    expect(CacheEconomy.buy(segment(x, 1_000), RATES)).toBe(0.5 * x + 6_500)
    expect(CacheEconomy.due(segment(x, 1_000), RATES)).toBe(expected)
  })

  it("given a fixed prompt of 0, or larger than the base, then it is priced as none, or as the whole base read", () => {
    expect(CacheEconomy.buy(segment(20_000, 0), RATES)).toBe(0.5 * 20_000 + 7_000)
    expect(CacheEconomy.buy(segment(20_000, 5_000), RATES)).toBe(0.5 * 20_000 + 4_000 + 3_000 * 0.5)
  })

  it("given the fixed prompt to segmentOf, then the segment carries it", () => {
    const messages = [call(1, T0, 1_000)]
    expect(CacheEconomy.segmentOf(messages, { ttl: 300_000, kept: 0, fixed: 700 }).fixed).toBe(700)
    expect(CacheEconomy.segmentOf(messages, { ttl: 300_000, kept: 0 }).fixed).toBeUndefined()
  })
})

describe("CacheEconomy.cacheSafePays: the summariser request form, priced (ADR 0047)", () => {
  // The cache-safe request: 10,000 tokens of which the last call cached 8,000 (read at 0.5), 2,000 written (at 1):
  // 0.5 × 8,000 + 2,000 = 6,000. OpenCode's request is written whole: its size × 1.
  const requests = (opencode: number, cached = 8_000): CacheEconomy.Requests => ({
    cacheSafe: 10_000,
    cached,
    opencode,
  })

  it.each([
    [5_999, false],
    [6_000, true],
    [6_001, true],
  ])(
    "given OpenCode's request of %i tokens against the cache-safe one's 6,000, then cache-safe pays: %s",
    (opencode, expected) => {
      expect(CacheEconomy.requestCosts(requests(opencode), RATES)).toEqual({ cacheSafe: 6_000, opencode })
      expect(CacheEconomy.cacheSafePays(requests(opencode), RATES)).toBe(expected)
    },
  )

  it("given Anthropic's and OpenAI's multipliers, then the same requests choose differently", () => {
    // A 14,000-token window whose last call cached it all, against OpenCode's 1,400-token head (outputs cut): on
    // Anthropic 1,400 read at 0.1 against 1,750 written at 1.25; on OpenAI 7,000 read at 0.5 against 1,400 at 1.
    const window = { cacheSafe: 14_000, cached: 14_000, opencode: 1_400 }
    expect(CacheEconomy.cacheSafePays(window, { read: 0.1, write: 1.25, output: 5 })).toBe(true)
    expect(CacheEconomy.cacheSafePays(window, { read: 0.5, write: 1, output: 4 })).toBe(false)
  })

  it("given a cold cache (nothing cached), or more cached than the request holds, then it is priced as such", () => {
    expect(CacheEconomy.requestCosts(requests(0, 0), RATES).cacheSafe).toBe(10_000)
    expect(CacheEconomy.requestCosts(requests(0, -5), RATES).cacheSafe).toBe(10_000)
    expect(CacheEconomy.requestCosts(requests(0, 50_000), RATES).cacheSafe).toBe(5_000)
  })
})
