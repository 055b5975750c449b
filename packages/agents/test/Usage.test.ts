/** The one home of the agents' usage mapping (`Usage.ts`), at the edges of its caps. */
import { describe, expect, it } from "vitest"
import * as Usage from "../src/Usage.ts"

describe("Usage.anthropic: Claude Code's message.usage, four disjoint counts", () => {
  it("maps each count one to one; reasoning is not reported apart", () => {
    expect(
      Usage.anthropic({
        input_tokens: 3,
        output_tokens: 12,
        cache_read_input_tokens: 21_673,
        cache_creation_input_tokens: 94,
      }),
    ).toEqual({ input: 3, output: 12, reasoning: 0, cacheRead: 21_673, cacheWrite: 94 })
  })
  it("a missing, negative or non-numeric count is 0; a usage that is not an object is all 0", () => {
    expect(Usage.anthropic({ input_tokens: -1, output_tokens: "7" })).toEqual({
      input: 0,
      output: 0,
      reasoning: 0,
      cacheRead: 0,
      cacheWrite: 0,
    })
    expect(Usage.anthropic(null)).toEqual(Usage.anthropic({}))
  })
})

describe("Usage.openai: Codex's last_token_usage, cache reads and writes inside input, reasoning inside output", () => {
  const of = (input: number, cached: number, written: number, output = 10, reasoning = 0) =>
    Usage.openai({
      input_tokens: input,
      cached_input_tokens: cached,
      cache_write_input_tokens: written,
      output_tokens: output,
      reasoning_output_tokens: reasoning,
    })
  it("takes cache reads and writes out of input, reasoning out of output", () => {
    expect(of(205_678, 10_578, 195_097, 13, 4)).toEqual({
      input: 3,
      output: 9,
      reasoning: 4,
      cacheRead: 10_578,
      cacheWrite: 195_097,
    })
  })
  it("cache reads at input − 1, input and input + 1: capped at input, never a negative input", () => {
    expect(of(100, 99, 0)).toMatchObject({ input: 1, cacheRead: 99, cacheWrite: 0 })
    expect(of(100, 100, 0)).toMatchObject({ input: 0, cacheRead: 100, cacheWrite: 0 })
    expect(of(100, 101, 0)).toMatchObject({ input: 0, cacheRead: 100, cacheWrite: 0 })
  })
  it("cache writes at what the reads leave − 1, exactly and + 1: capped at what is left", () => {
    expect(of(100, 40, 59)).toMatchObject({ input: 1, cacheRead: 40, cacheWrite: 59 })
    expect(of(100, 40, 60)).toMatchObject({ input: 0, cacheRead: 40, cacheWrite: 60 })
    expect(of(100, 40, 61)).toMatchObject({ input: 0, cacheRead: 40, cacheWrite: 60 })
  })
  it("reasoning at output − 1, output and output + 1: capped at output", () => {
    expect(of(5, 0, 0, 10, 9)).toMatchObject({ output: 1, reasoning: 9 })
    expect(of(5, 0, 0, 10, 10)).toMatchObject({ output: 0, reasoning: 10 })
    expect(of(5, 0, 0, 10, 11)).toMatchObject({ output: 0, reasoning: 10 })
  })
  it("a rollout older than 0.17x (no cache_write_input_tokens) has no cache writes", () => {
    expect(Usage.openai({ input_tokens: 50, cached_input_tokens: 20, output_tokens: 5 })).toEqual({
      input: 30,
      output: 5,
      reasoning: 0,
      cacheRead: 20,
      cacheWrite: 0,
    })
  })
})
