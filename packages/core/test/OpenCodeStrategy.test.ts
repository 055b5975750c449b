/**
 * OpenCode's strategy under its gathered names (`OpenCodeStrategy.v1_17`, `v1_18`, `byConfig`): the release a config
 * names, and OpenCode's prune after a step when pruning is on. Each release's tail boundaries are tested in its own
 * module's file (`OpenCode117Strategy.test.ts`, `OpenCode118Strategy.test.ts`).
 */
import { OpenCodeStrategy, type Strategy, Tail } from "@pivot/core"
import { describe, expect, it } from "vitest"

// usable = input − reserved = input: a quarter of 60,000 is exactly 15,000.
const limits = (input: number) => ({ context: 1_000_000, input, output: 8_000 })
const _budget = (strategy: Strategy.Strategy, config: object, input: number) =>
  Tail.tailBudget(strategy.configure!({ reserved: 0, ...config }), limits(input))

describe("OpenCode's releases under their gathered names", () => {
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
