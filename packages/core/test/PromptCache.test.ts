/**
 * The simulated prompt cache at its boundaries: the TTL (a request ttl − 1, ttl and ttl + 1 ms after the entry was
 * touched), OpenAI's 1,024-token minimum and 128-token steps, Anthropic's longest exact prefix, and a read refreshing
 * the entry it read.
 */
import { describe, expect, it } from "vitest"
import { bill, empty, OPENAI_MIN, OPENAI_STEP, TTL } from "../src/PromptCache.ts"

/** A text of exactly `tokens` tokens (4 characters each). */
const text = (tokens: number, c = "a") => c.repeat(tokens * 4)

describe("PromptCache, anthropic", () => {
  it("reads the previous prompt up to ttl after it, and writes everything after that", () => {
    const [first, cache] = bill(empty, "anthropic", text(100), 0)
    expect(first).toEqual({ input: 0, cacheRead: 0, cacheWrite: 100 })
    const longer = `${text(100)}${text(50, "b")}`
    expect(bill(cache, "anthropic", longer, TTL - 1)[0]).toEqual({ input: 0, cacheRead: 100, cacheWrite: 50 })
    expect(bill(cache, "anthropic", longer, TTL)[0]).toEqual({ input: 0, cacheRead: 100, cacheWrite: 50 })
    expect(bill(cache, "anthropic", longer, TTL + 1)[0]).toEqual({ input: 0, cacheRead: 0, cacheWrite: 150 })
  })

  it("reads only an exact prefix, the longest one cached", () => {
    let cache = empty
    for (const t of [text(10), text(30), `${text(10)}${text(5, "x")}`]) cache = bill(cache, "anthropic", t, 0)[1]
    expect(bill(cache, "anthropic", text(40), 1)[0]).toEqual({ input: 0, cacheRead: 30, cacheWrite: 10 })
    // Not a prefix of anything cached but the 10-token one.
    expect(bill(cache, "anthropic", `${text(10)}${text(5, "y")}`, 1)[0].cacheRead).toBe(10)
  })

  it("a read refreshes the entry it read: it lives ttl from the read", () => {
    const cache = bill(empty, "anthropic", text(100), 0)[1]
    const refreshed = bill(cache, "anthropic", `${text(100)}b`, TTL)[1]
    expect(bill(refreshed, "anthropic", `${text(100)}c`, 2 * TTL)[0].cacheRead).toBe(100)
    expect(bill(refreshed, "anthropic", `${text(100)}c`, 2 * TTL + 1)[0].cacheRead).toBe(0)
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
