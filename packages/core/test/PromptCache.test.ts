/**
 * The simulated prompt cache at its boundaries: the TTL (a request ttl − 1, ttl and ttl + 1 ms after the entry was
 * touched), OpenAI's 1,024-token minimum and 128-token steps, Anthropic's longest exact prefix, and a read refreshing
 * the entry it read.
 */
import { describe, expect, it } from "vitest"
import { ANTHROPIC_MIN, bill, empty, OPENAI_MIN, OPENAI_STEP, type State, TTL } from "../src/PromptCache.ts"

/** A text of exactly `tokens` tokens (4 characters each). */
const text = (tokens: number, c = "a") => c.repeat(tokens * 4)

/** Anthropic's rules without the minimum prefix, for the read and write mechanics on small prompts. */
const anthropic = (state: State, t: string, at: number) => bill(state, "anthropic", t, at, TTL, { minimum: 0 })

describe("PromptCache, anthropic", () => {
  it("reads the previous prompt up to ttl after it, and writes everything after that", () => {
    const [first, cache] = anthropic(empty, text(100), 0)
    expect(first).toEqual({ input: 0, cacheRead: 0, cacheWrite: 100 })
    const longer = `${text(100)}${text(50, "b")}`
    expect(anthropic(cache, longer, TTL - 1)[0]).toEqual({ input: 0, cacheRead: 100, cacheWrite: 50 })
    expect(anthropic(cache, longer, TTL)[0]).toEqual({ input: 0, cacheRead: 100, cacheWrite: 50 })
    expect(anthropic(cache, longer, TTL + 1)[0]).toEqual({ input: 0, cacheRead: 0, cacheWrite: 150 })
  })

  it("reads only an exact prefix, the longest one cached", () => {
    let cache = empty
    for (const t of [text(10), text(30), `${text(10)}${text(5, "x")}`]) cache = anthropic(cache, t, 0)[1]
    expect(anthropic(cache, text(40), 1)[0]).toEqual({ input: 0, cacheRead: 30, cacheWrite: 10 })
    // Not a prefix of anything cached but the 10-token one.
    expect(anthropic(cache, `${text(10)}${text(5, "y")}`, 1)[0].cacheRead).toBe(10)
  })

  it("a read refreshes the entry it read: it lives ttl from the read", () => {
    const cache = anthropic(empty, text(100), 0)[1]
    const refreshed = anthropic(cache, `${text(100)}b`, TTL)[1]
    expect(anthropic(refreshed, `${text(100)}c`, 2 * TTL)[0].cacheRead).toBe(100)
    expect(anthropic(refreshed, `${text(100)}c`, 2 * TTL + 1)[0].cacheRead).toBe(0)
  })

  it.each([
    [ANTHROPIC_MIN - 1, { input: ANTHROPIC_MIN - 1, cacheRead: 0, cacheWrite: 0 }],
    [ANTHROPIC_MIN, { input: 0, cacheRead: 0, cacheWrite: ANTHROPIC_MIN }],
    [ANTHROPIC_MIN + 1, { input: 0, cacheRead: 0, cacheWrite: ANTHROPIC_MIN + 1 }],
  ])("a prefix of %i tokens at the breakpoint is cached only from ANTHROPIC_MIN on", (tokens, billed) => {
    const [first, cache] = bill(empty, "anthropic", text(tokens), 0)
    expect(first).toEqual(billed)
    expect(bill(cache, "anthropic", text(tokens), 1)[0].cacheRead).toBe(tokens < ANTHROPIC_MIN ? 0 : tokens)
  })

  it("with breakpoints, reads at the longest cached one, writes up to its own last one, and the rest is input", () => {
    const a = text(1_100)
    const b = text(400, "b")
    const [first, cache] = bill(empty, "anthropic", `${a}${b}${text(100, "c")}`, 0, TTL, {
      breakpoints: [a.length, a.length + b.length],
    })
    expect(first).toEqual({ input: 100, cacheRead: 0, cacheWrite: 1_500 })
    const other = `${a}${text(600, "d")}`
    expect(bill(cache, "anthropic", other, 1, TTL, { breakpoints: [a.length, other.length] })[0]).toEqual({
      input: 0,
      cacheRead: 1_100,
      cacheWrite: 600,
    })
  })
})

describe("PromptCache, openai", () => {
  it.each([
    [OPENAI_MIN - 1, 0],
    [OPENAI_MIN, OPENAI_MIN],
    [OPENAI_MIN + 1, OPENAI_MIN],
    [OPENAI_MIN + OPENAI_STEP - 1, OPENAI_MIN],
    [OPENAI_MIN + OPENAI_STEP, OPENAI_MIN + OPENAI_STEP],
  ])("a shared prefix of %i tokens reads %i (from 1,024 on, in steps of 128)", (shared, read) => {
    const cache = bill(empty, "openai", `${text(shared)}${text(10, "b")}`, 0)[1]
    expect(bill(cache, "openai", `${text(shared)}${text(20, "c")}`, 1)[0]).toEqual({
      input: shared + 20 - read,
      cacheRead: read,
      cacheWrite: 0,
    })
  })

  it("reads nothing past the ttl", () => {
    const cache = bill(empty, "openai", text(2_000), 0)[1]
    expect(bill(cache, "openai", text(2_000), TTL)[0].cacheRead).toBe(1_920)
    expect(bill(cache, "openai", text(2_000), TTL + 1)[0].cacheRead).toBe(0)
  })
})
