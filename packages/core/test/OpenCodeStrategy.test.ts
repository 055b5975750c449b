/**
 * OpenCode's strategy, 1.17 and 1.18: the releases differ only in the tail budget's cap (8,000 / 15,000 tokens),
 * `preserve_recent_tokens` and `tail_turns` win in both, and after a step it prunes with OpenCode's walk when pruning
 * is on. Tested at the cap's boundary through `Tail.tailBudget` and `SummaryInput.plan`, the rules' homes.
 */
import { Ids, OpenCodeStrategy, type Strategy, SummaryInput, Tail } from "@pivot/core"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { assistant, marker, user } from "./support/build.ts"

// usable = input − reserved = input: a quarter of 60,000 is exactly 15,000.
const limits = (input: number) => ({ context: 1_000_000, input, output: 8_000 })
const budget = (strategy: Strategy.Strategy, config: object, input: number) =>
  Tail.tailBudget(strategy.configure!({ reserved: 0, ...config }), limits(input))

describe("opencode-1.18: the tail budget's cap", () => {
  it("given a quarter of the usable window at 15,000 − 1, 15,000 and 15,000 + 1, then 14,999, 15,000 and 15,000", () => {
    expect(budget(OpenCodeStrategy.v1_18, {}, 59_996)).toBe(14_999)
    expect(budget(OpenCodeStrategy.v1_18, {}, 60_000)).toBe(15_000)
    expect(budget(OpenCodeStrategy.v1_18, {}, 60_004)).toBe(15_000)
  })

  it("given the same windows under 1.17, then the cap is 8,000: 8,000 at 32,000, and 8,000 beyond", () => {
    expect(budget(OpenCodeStrategy.v1_17, {}, 31_996)).toBe(7_999)
    expect(budget(OpenCodeStrategy.v1_17, {}, 32_000)).toBe(8_000)
    expect(budget(OpenCodeStrategy.v1_17, {}, 60_004)).toBe(8_000)
  })

  it("given preserve_recent_tokens, then it wins over the derived budget in both releases (0 included)", () => {
    for (const strategy of [OpenCodeStrategy.v1_17, OpenCodeStrategy.v1_18]) {
      expect(budget(strategy, { preserve_recent_tokens: 20_000 }, 60_000)).toBe(20_000)
      expect(budget(strategy, { preserve_recent_tokens: 0 }, 60_000)).toBe(0)
    }
  })

  it("given the config names the other release, then the strategy's release wins; tail_turns is kept as given", () => {
    expect(OpenCodeStrategy.v1_18.configure!({ opencode: "1.17", tail_turns: 3 })).toEqual({
      opencode: "1.18",
      tail_turns: 3,
    })
    expect(OpenCodeStrategy.v1_17.configure!({ opencode: "1.18", tail_turns: 0 })).toEqual({ tail_turns: 0 })
    // pivot's default strategy reads the config's key: nothing is changed.
    const config = { opencode: "1.18" as const }
    expect(OpenCodeStrategy.byConfig.configure).toBeUndefined()
    expect(OpenCodeStrategy.v1_18.configure!(config)).toBe(config)
  })

  it("given a last turn of ~10,000 tokens, then 1.18 keeps it verbatim and 1.17 only its reply (split turn)", () => {
    const window = [
      user("u1", "old"),
      assistant("a1", "u1", "x".repeat(8_000)),
      user("u2", "y".repeat(40_000)),
      assistant("a2", "u2", "done"),
      marker("m"),
    ]
    const tailOf = (strategy: Strategy.Strategy, tailTurns: number | undefined) => {
      const config = strategy.configure!({ reserved: 0, ...(tailTurns === undefined ? {} : { tail_turns: tailTurns }) })
      const plan = SummaryInput.plan(window, {
        parentId: Ids.unsafe.message("msg_m"),
        overflow: false,
        config,
        compactionLimits: limits(60_000),
      })
      return Result.isSuccess(plan) ? plan.success.tail : undefined
    }
    expect(tailOf(OpenCodeStrategy.v1_18, 1)).toEqual(["msg_u2", "msg_a2"])
    expect(tailOf(OpenCodeStrategy.v1_17, 1)).toEqual(["msg_a2"])
    expect(tailOf(OpenCodeStrategy.v1_18, 0)).toEqual([])
  })
})

describe("OpenCode's prune after a step", () => {
  const input = (config: object, prune: object = {}) => ({ config, prune }) as unknown as Strategy.Input

  it("given pruning off (OpenCode's default), then nothing; on, OpenCode's walk with the application's thresholds", () => {
    for (const strategy of [OpenCodeStrategy.v1_17, OpenCodeStrategy.v1_18, OpenCodeStrategy.byConfig]) {
      expect(strategy.afterStep!(input({}))).toEqual({ _tag: "Nothing" })
      expect(strategy.afterStep!(input({ prune: false }))).toEqual({ _tag: "Nothing" })
      expect(strategy.afterStep!(input({ prune: true }))).toEqual({ _tag: "Prune", walk: {}, parts: [] })
      expect(
        strategy.afterStep!(input({ prune: true }, { protect: 4_000, minimum: 2_000, protectedTools: ["x"] })),
      ).toEqual({ _tag: "Prune", walk: { protect: 4_000, minimum: 2_000, protectedTools: ["x"] }, parts: [] })
    }
  })

  it("given any state, then OpenCode never decides anything before a call nor keeps more than its tail", () => {
    expect(OpenCodeStrategy.v1_18.beforeCall).toBeUndefined()
    expect(OpenCodeStrategy.v1_18.keep).toBeUndefined()
    expect(OpenCodeStrategy.v1_18.form).toBe("opencode")
  })
})
