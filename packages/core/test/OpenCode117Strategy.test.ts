/**
 * `opencode-1.17` in its own module (the spec): the tail budget capped at 8,000 tokens, `preserve_recent_tokens` and
 * `tail_turns` as the config gives them, each at value − 1, value and value + 1 through the rules' homes
 * (`Tail.tailBudget`, `SummaryInput.plan`).
 */
import { OpenCode117Strategy, OpenCodeStrategy } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { longLastTurn, releaseBoundaries, tailOf } from "./support/openCodeTail.ts"

describe("opencode-1.17", () => {
  it("given the module, then it is the strategy named opencode-1.17 with an 8,000-token cap, under its old name too", () => {
    expect(OpenCode117Strategy.strategy.name).toBe("opencode-1.17")
    expect(OpenCode117Strategy.TAIL_CAP).toBe(8_000)
    expect(OpenCodeStrategy.v1_17).toBe(OpenCode117Strategy.strategy)
    expect(OpenCode117Strategy.strategy.configure!({ opencode: "1.18", tail_turns: 0 })).toEqual({ tail_turns: 0 })
  })

  releaseBoundaries(OpenCode117Strategy.strategy, 8_000)

  it("given a last turn of ~10,000 tokens, then 1.17 splits it: only its reply stays verbatim", () => {
    expect(tailOf(OpenCode117Strategy.strategy, longLastTurn, { tail_turns: 1 })).toEqual(["msg_a2"])
  })
})
