/**
 * `opencode-1.18` in its own module: the tail budget capped at 15,000 tokens, `preserve_recent_tokens` and
 * `tail_turns` as the config gives them, each at value − 1, value and value + 1 through the rules' homes
 * (`Tail.tailBudget`, `SummaryInput.plan`).
 */
import { OpenCode118Strategy, OpenCodeStrategy } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { longLastTurn, releaseBoundaries, tailOf } from "./support/openCodeTail.ts"

describe("opencode-1.18", () => {
  it("given the module, then it is the strategy named opencode-1.18 with a 15,000-token cap, under its old name too", () => {
    expect(OpenCode118Strategy.strategy.name).toBe("opencode-1.18")
    expect(OpenCode118Strategy.TAIL_CAP).toBe(15_000)
    expect(OpenCodeStrategy.v1_18).toBe(OpenCode118Strategy.strategy)
    expect(OpenCode118Strategy.strategy.configure!({ opencode: "1.17", tail_turns: 3 })).toEqual({
      opencode: "1.18",
      tail_turns: 3,
    })
  })

  releaseBoundaries(OpenCode118Strategy.strategy, 15_000)

  it("given a last turn of ~10,000 tokens, then 1.18 keeps it verbatim (1.17 keeps only its reply)", () => {
    expect(tailOf(OpenCode118Strategy.strategy, longLastTurn, { tail_turns: 1 })).toEqual(["msg_u2", "msg_a2"])
  })
})
