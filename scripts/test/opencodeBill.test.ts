/** The bill of captured OpenCode requests (bench:opencode): OpenCode's breakpoints, and a small case computed by hand. */
import { describe, expect, it } from "vitest"
import { bill, floorOf, promptOf } from "../bench/support/opencodeBill.ts"
import { TTL } from "../bench/support/providerCache.ts"

// A message whose JSON is exactly `tokens` × 4 characters (the estimate is characters / 4), filled with `fill`.
const message = (role: string, tokens: number, fill = "a", extra: Record<string, unknown> = {}) => {
  const overhead = JSON.stringify({ role, ...extra, content: "" }).length
  return { role, ...extra, content: fill.repeat(tokens * 4 - overhead) }
}
// Tool schemas serialised as exactly 100 tokens.
const tools = [
  { name: "read", description: "x".repeat(400 - JSON.stringify([{ name: "read", description: "" }]).length) },
]

const sys1 = message("system", 1_000)
const sys2 = message("system", 200)
const user1 = message("user", 500)
const assistant1 = message("assistant", 300)
const tool1 = message("tool", 1_000, "t", { tool_call_id: "call_1" })
const user1b = message("user", 200, "b")
const assistant2 = message("assistant", 300, "c")

describe("promptOf: OpenCode's cache breakpoints", () => {
  it("marks the first two system messages and the last two others, after the tool schemas", () => {
    const p = promptOf({ tools, messages: [sys1, sys2, message("system", 10), user1, assistant1, tool1] })
    expect(p.text.length).toBe(4 * (100 + 1_000 + 200 + 10 + 500 + 300 + 1_000))
    // sys1, sys2, then the assistant step and the tool result; not the third system message, not the user's.
    expect(p.breakpoints).toEqual([4 * 1_100, 4 * 1_300, 4 * 2_110, 4 * 3_110])
  })

  it("given fewer messages, marks those there are (no tool schemas: `[]`, 2 characters)", () => {
    expect(promptOf({ messages: [sys1, user1] }).breakpoints).toEqual([2 + 4 * 1_000, 2 + 4 * 1_500])
  })
})

describe("bill: four requests computed by hand", () => {
  // 1 (t 0): tools 100, system 1,000 + 200, user 500 = 1,800 tokens.
  // 2 (t 1 min): + assistant 300 + tool result 1,000 = 3,100; extends 1.
  // 3 (t 2 min): the user message rewritten (200 tokens, another text) + assistant 300 = 1,800: a break.
  // 4 (t 2 min + TTL + 1 ms): 3 again, on a cold cache.
  const requests = [
    { at: 0, body: { tools, messages: [sys1, sys2, user1] } },
    { at: 60_000, body: { tools, messages: [sys1, sys2, user1, assistant1, tool1] } },
    { at: 120_000, body: { tools, messages: [sys1, sys2, user1b, assistant2] } },
    { at: 120_000 + TTL + 1, body: { tools, messages: [sys1, sys2, user1b, assistant2] } },
  ]

  it("under Anthropic's rules: reads at the longest cached breakpoint, writes up to the last one", () => {
    const b = bill(requests, "anthropic")
    expect(b.lines.map(({ input, cacheRead, cacheWrite }) => ({ input, cacheRead, cacheWrite }))).toEqual([
      // Nothing cached yet: everything up to the last breakpoint (the user message) is written.
      { input: 0, cacheRead: 0, cacheWrite: 1_800 },
      // Request 1's last breakpoint is a prefix: read 1,800, write the 1,300 new.
      { input: 0, cacheRead: 1_800, cacheWrite: 1_300 },
      // The rewritten user message: the longest cached prefix ends at the second system message (1,300).
      { input: 0, cacheRead: 1_300, cacheWrite: 500 },
      // Every entry expired: all written again.
      { input: 0, cacheRead: 0, cacheWrite: 1_800 },
    ])
    expect(b.lines.map((l) => [l.broke, l.cold])).toEqual([
      [false, false],
      [false, false],
      [true, false],
      [false, true],
    ])
    expect([b.input, b.cacheRead, b.cacheWrite, b.breaks, b.colds]).toEqual([0, 3_100, 5_400, 1, 1])
    // 3,100 × 0.1 + 5,400 × 1.25
    expect(b.billed).toBeCloseTo(7_060, 9)
    expect(b.hitRate).toBeCloseTo(3_100 / 8_500, 12)
    expect(b.characters).toBe(4 * 8_500)
  })

  it("counts no break for a last message that the next request replaces (drive's HUD), one for a rewritten earlier one", () => {
    const hud = message("user", 50, "h")
    const hud2 = message("user", 50, "i")
    const b = bill(
      [
        { at: 0, body: { tools, messages: [sys1, sys2, user1, hud] } },
        { at: 20_000, body: { tools, messages: [sys1, sys2, user1, assistant1, tool1, hud2] } },
        { at: 40_000, body: { tools, messages: [sys1, sys2, user1b, assistant1, tool1, hud] } },
      ],
      "anthropic",
    )
    expect(b.lines.map((l) => l.broke)).toEqual([false, false, true])
  })

  it("under OpenAI's rules: reads the longest shared prefix from 1,024 tokens, in 128-token steps", () => {
    const b = bill(requests, "openai")
    expect(b.lines.map(({ input, cacheRead, cacheWrite }) => ({ input, cacheRead, cacheWrite }))).toEqual([
      { input: 1_800, cacheRead: 0, cacheWrite: 0 },
      // Shares all 1,800 tokens of request 1: 14 × 128 = 1,792 read.
      { input: 1_308, cacheRead: 1_792, cacheWrite: 0 },
      // Shares 1,300 tokens and the user message's 26-character opening: 5,226 characters ≈ 1,307 tokens → 1,280.
      { input: 520, cacheRead: 1_280, cacheWrite: 0 },
      { input: 1_800, cacheRead: 0, cacheWrite: 0 },
    ])
    // 5,428 + 3,072 × 0.5
    expect(b.billed).toBeCloseTo(6_964, 9)
    expect([b.breaks, b.colds]).toEqual([1, 1])
  })
})

describe("bill: the model's output, at the provider's output rate", () => {
  // The same two requests, the second answered with a 2,000-token summary and the first with 20 tokens.
  const requests = [
    { at: 0, body: { tools, messages: [sys1, sys2, user1] }, output: 20 },
    { at: 60_000, body: { tools, messages: [sys1, sys2, user1, assistant1, tool1] }, output: 2_000 },
  ]

  it("adds output × 5 under Anthropic's rules and × 4 under OpenAI's to the billed input", () => {
    const anthropic = bill(requests, "anthropic")
    expect(anthropic.lines.map((l) => l.output)).toEqual([20, 2_000])
    expect(anthropic.output).toBe(2_020)
    // Input: 1,800 written, then 1,800 read and 1,300 written: 3,100 × 1.25 + 1,800 × 0.1 = 4,055; output 2,020 × 5.
    expect(anthropic.billed).toBeCloseTo(4_055, 9)
    expect(anthropic.total).toBeCloseTo(4_055 + 10_100, 9)
    const openai = bill(requests, "openai")
    // Input: 1,800, then 1,308 uncached and 1,792 read at 0.5× = 4,004; output 2,020 × 4.
    expect(openai.billed).toBeCloseTo(4_004, 9)
    expect(openai.total).toBeCloseTo(4_004 + 8_080, 9)
  })

  it("bills no output for a request that carries none (the input-only bill of earlier runs)", () => {
    const b = bill(
      requests.map(({ at, body }) => ({ at, body })),
      "anthropic",
    )
    expect([b.output, b.total]).toEqual([0, b.billed])
  })
})

describe("floorOf: what any strategy pays, computed by hand", () => {
  // The four requests above, then a summariser call (no tools: 1,000 + 500 tokens, an answer of 2,000) and a fifth
  // conversation request after it, within the TTL of the fourth. Fixed prompt: tools 100 + system 1,200 = 1,300.
  const summary = { at: 120_000 + TTL + 2, kind: "summary", output: 2_000, body: { messages: [sys1, user1] } }
  const fifth = { at: 120_000 + TTL + 3, kind: "agent", output: 10, body: { tools, messages: [sys1, sys2, user1] } }
  const requests = [
    ...[0, 60_000, 120_000, 120_000 + TTL + 1].map((at, i) => ({
      at,
      kind: "agent",
      output: 10,
      body: [
        { tools, messages: [sys1, sys2, user1] },
        { tools, messages: [sys1, sys2, user1, assistant1, tool1] },
        { tools, messages: [sys1, sys2, user1b, assistant2] },
        { tools, messages: [sys1, sys2, user1b, assistant2] },
      ][i]!,
    })),
    summary,
    fifth,
  ]

  it("writes each message once and the fixed prompt at the first call and after the TTL; reads it otherwise", () => {
    const f = floorOf(requests, "anthropic")
    // Messages: user1 500, assistant1 300, tool1 1,000, user1b 200, assistant2 300 = 2,300; the fixed prompt written
    // at requests 1 and 4 (cold): 2,600. Written 4,900 × 1.25.
    expect(f.writes).toBeCloseTo(4_900 * 1.25)
    // Read at requests 2, 3 and 5 (5 within the TTL of 4): 3 × 1,300 × 0.1.
    expect(f.reads).toBeCloseTo(3 * 1_300 * 0.1)
    // The summariser: 1,500 tokens of input (`[]` of no tools is 2 characters: 1,500.5 → 1,501) × 1.25 + 2,000 × 5.
    expect(f.summariser).toBeCloseTo(1_501 * 1.25 + 2_000 * 5)
    expect(f.output).toBeCloseTo(5 * 10 * 5)
    expect(f.billed).toBeCloseTo(4_900 * 1.25 + 390 + 1_501 * 1.25)
    expect(f.total).toBeCloseTo(f.billed + 2_000 * 5 + 250)
  })

  it("under OpenAI's rules: writes are plain input (1×), reads 0.5×, output 4×", () => {
    const f = floorOf(requests, "openai")
    expect(f.writes).toBeCloseTo(4_900)
    expect(f.reads).toBeCloseTo(3 * 1_300 * 0.5)
    expect(f.summariser).toBeCloseTo(1_501 + 2_000 * 4)
  })

  it("given the fifth request at the TTL after the fourth, it reads; one millisecond later, it writes", () => {
    const at = (t: number) => floorOf([...requests.slice(0, 4), { ...fifth, at: requests[3]!.at + t }], "anthropic")
    expect(at(TTL).reads).toBeCloseTo(3 * 130)
    expect(at(TTL + 1).reads).toBeCloseTo(2 * 130)
    expect(at(TTL + 1).writes).toBeCloseTo((4_900 + 1_300) * 1.25)
  })
})
