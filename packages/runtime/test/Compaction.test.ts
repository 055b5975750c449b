// The runtime's own compaction rules, each at its boundaries: the summariser's input room, which head messages are
// budgeted out, and the texts of a plugin failure and of the fallback warning.
import { Ids, Model } from "@pivot/core"
import { Compaction } from "@pivot/runtime"
import { describe, expect, it } from "vitest"

describe("Compaction.inputRoom", () => {
  it("given a 0-token context (the window is unknown), when the room is read, then it is unbounded", () => {
    expect(Compaction.inputRoom({ context: 0, output: 0 })).toBe(Number.POSITIVE_INFINITY)
    expect(Compaction.inputRoom({ context: 0, input: 1_000, output: 100 })).toBe(Number.POSITIVE_INFINITY)
  })

  it("given limit.input, when the room is read, then it is 90 % of the input limit, rounded down", () => {
    // 999 × 0.9 = 899.1, 1000 × 0.9 = 900, 1001 × 0.9 = 900.9
    expect(Compaction.inputRoom({ context: 50_000, input: 999, output: 100 })).toBe(899)
    expect(Compaction.inputRoom({ context: 50_000, input: 1_000, output: 100 })).toBe(900)
    expect(Compaction.inputRoom({ context: 50_000, input: 1_001, output: 100 })).toBe(900)
  })

  it("given no input limit (absent or 0), when the room is read, then it is 90 % of the context less the output tokens", () => {
    // 10_000 − min(1_000, 32_000) = 9_000 → 8_100
    expect(Compaction.inputRoom({ context: 10_000, output: 1_000 })).toBe(8_100)
    expect(Compaction.inputRoom({ context: 10_000, input: 0, output: 1_000 })).toBe(8_100)
    // the output cap bounds the reserved output: 10_000 − min(5_000, 2_000) = 8_000 → 7_200
    expect(Compaction.inputRoom({ context: 10_000, output: 5_000 }, 2_000)).toBe(7_200)
    // an output limit of 0 reserves OpenCode's default cap: 40_000 − 32_000 = 8_000 → 7_200
    expect(Compaction.inputRoom({ context: 40_000, output: 0 })).toBe(0.9 * (40_000 - Model.OUTPUT_TOKEN_MAX))
  })

  it("given an output reservation at the context's size − 1, the size and + 1, when the room is read, then it is 0 at and past it", () => {
    expect(Compaction.inputRoom({ context: 10_000, output: 9_999 })).toBe(0) // room 1 → floor(0.9) = 0
    expect(Compaction.inputRoom({ context: 20_000, output: 19_998 })).toBe(1) // room 2 → floor(1.8) = 1
    expect(Compaction.inputRoom({ context: 10_000, output: 10_000 })).toBe(0)
    expect(Compaction.inputRoom({ context: 10_000, output: 10_001 }, 20_000)).toBe(0) // room −1: never negative
  })
})

describe("Compaction.dropOldest", () => {
  it("given sizes whose sum is the budget − 1, the budget and + 1, when fitted, then nothing is dropped at or under it", () => {
    const sizes = [3, 4, 5] // 12 in all
    expect(Compaction.dropOldest(sizes, 13)).toBe(0)
    expect(Compaction.dropOldest(sizes, 12)).toBe(0)
    expect(Compaction.dropOldest(sizes, 11)).toBe(1)
  })

  it("given a budget met exactly after dropping some, when fitted, then the oldest are dropped until the rest fits", () => {
    const sizes = [3, 4, 5]
    expect(Compaction.dropOldest(sizes, 9)).toBe(1) // 12 − 3 = 9
    expect(Compaction.dropOldest(sizes, 8)).toBe(2) // 9 > 8, 9 − 4 = 5
    expect(Compaction.dropOldest(sizes, 5)).toBe(2)
    expect(Compaction.dropOldest(sizes, 4)).toBe(3)
  })

  it("given a budget nothing fits (0 or negative) or no messages, when fitted, then every message is dropped and no more", () => {
    expect(Compaction.dropOldest([3, 4, 5], 0)).toBe(3)
    expect(Compaction.dropOldest([3, 4, 5], -1)).toBe(3)
    expect(Compaction.dropOldest([0, 0], 0)).toBe(0)
    expect(Compaction.dropOldest([], 0)).toBe(0)
    expect(Compaction.dropOldest([], -1)).toBe(0)
  })
})

describe("Compaction.pluginFailed", () => {
  const failure = (message: string) =>
    ({ plugin: "p", hook: "redact", reason: "threw", message }) as Parameters<typeof Compaction.pluginFailed>[1]

  it("given a failure message of 1_999, 2_000 and 2_001 characters, when recorded, then it is cut to 2_000", () => {
    for (const length of [1_999, 2_000, 2_001])
      expect(Compaction.pluginFailed(7, failure("x".repeat(length)))).toStrictEqual({
        _tag: "PluginFailed",
        at: 7,
        plugin: "p",
        hook: "redact",
        reason: "threw",
        message: "x".repeat(Math.min(length, 2_000)),
      })
  })

  it("given a marker, when recorded, then the event names it; without one it has no markerId key", () => {
    const markerId = Ids.unsafe.message("msg_m1")
    expect(Compaction.pluginFailed(7, failure("boom"), markerId)).toMatchObject({ markerId })
    expect(Compaction.pluginFailed(7, failure("boom"))).not.toHaveProperty("markerId")
  })
})

describe("Compaction.fallbackWarning", () => {
  it("given no summariser error, when warned, then the line names the session, the compaction and the reason", () => {
    expect(Compaction.fallbackWarning("ses_1", "msg_m1", "empty", undefined)).toBe(
      "pivot: session ses_1, compaction msg_m1: the summariser's summary was replaced by the extractive fallback (empty)",
    )
  })

  it("given a multi-line error, when warned, then it is appended on the same line with its whitespace collapsed", () => {
    expect(Compaction.fallbackWarning("ses_1", "msg_m1", "failed", "  HTTP 500\n\tupstream   down \n")).toBe(
      "pivot: session ses_1, compaction msg_m1: the summariser's summary was replaced by the extractive fallback " +
        "(failed: HTTP 500 upstream down)",
    )
  })
})
