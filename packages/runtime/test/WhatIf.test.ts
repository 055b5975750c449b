/**
 * `WhatIf` at its edges: the inputs of a log (overhead = recorded usage − the window's estimate, never below 0;
 * the runtime's own messages left out of a summary's key), the model's limits (catalog, given, or refused), the
 * strategies checked by name, and the billing rules and rates of a model.
 */
import { BuiltInStrategies, CacheAwareStrategy, Ids, OpenCodeStrategy, Pricing, Tokens } from "@pivot/core"
import { Effect, Logger, Result } from "effect"
import { describe, expect, it } from "vitest"
import { Strategies, WhatIf } from "../src/index.ts"

const at = 1_767_000_000_000
const user = (id: string, text: string) => ({
  _tag: "UserMessageAdded" as const,
  at,
  message: {
    role: "user" as const,
    id: Ids.unsafe.message(id),
    createdAt: at,
    parts: [{ type: "text" as const, id: Ids.unsafe.part(`prt_${id}`), text }],
  },
})
const step = (id: string, parent: string, input: number, model = { providerId: "test", modelId: "unknown" }) => ({
  _tag: "AssistantStepRecorded" as const,
  at: at + 1,
  message: {
    role: "assistant" as const,
    id: Ids.unsafe.message(id),
    parentId: Ids.unsafe.message(parent),
    createdAt: at + 1,
    model,
    tokens: { ...Tokens.zero, input, output: 3 },
    finish: "stop",
    parts: [{ type: "text" as const, id: Ids.unsafe.part(`prt_${id}`), text: "done" }],
  },
})

/** The window the first call sees: the one user message, rendered and serialised as the ledger does. */
const firstWindow = Tokens.estimate(JSON.stringify([{ role: "user", content: [{ type: "text", text: "hello" }] }]))

describe("WhatIf.inputsOf", () => {
  it.each([
    [firstWindow - 1, 0],
    [firstWindow, 0],
    [firstWindow + 1, 1],
    [firstWindow + 700, 700],
  ])("a call that reported %i input tokens has an overhead of %i", (input, overhead) => {
    const inputs = WhatIf.inputsOf("ses_a", [user("msg_u1", "hello"), step("msg_a1", "msg_u1", input)])
    const first = inputs.actions[1]
    expect(first?._tag === "step" ? first.overhead : undefined).toBe(overhead)
    expect(inputs.overhead).toBe(overhead)
  })

  it("keys a summary by the recorded messages of its head only", () => {
    expect(WhatIf.headKey(["msg_marker", "msg_u1", "msg_summary", "msg_a1"], new Set(["msg_u1", "msg_a1"]))).toBe(
      "msg_u1 msg_a1",
    )
  })
})

describe("WhatIf.session", () => {
  const events = [user("msg_u1", "hello"), step("msg_a1", "msg_u1", 100)]

  it("refuses a model the catalog does not know unless its context is given, then defaults its output", async () => {
    const refused = await Effect.runPromise(Effect.result(WhatIf.session("ses_a", events)))
    expect(Result.isFailure(refused) && refused.failure._tag).toBe("UnknownLimits")
    // The output defaults to an eighth of the context, at most 32,000.
    for (const [context, output] of [
      [8_000, 1_000],
      [256_000, 32_000],
      [256_008, 32_000],
      [255_992, 31_999],
    ] as const) {
      const comparison = await Effect.runPromise(WhatIf.session("ses_a", events, { context, strategies: ["pivot"] }))
      expect(comparison.limits).toEqual({ context, output })
    }
  })

  it("takes a catalog model's limits, and its provider's cache rules and price", async () => {
    const model = { providerId: "anthropic", modelId: "claude-sonnet-4" }
    const comparison = await Effect.runPromise(
      WhatIf.session("ses_a", [user("msg_u1", "hello"), step("msg_a1", "msg_u1", 100, model)], {
        strategies: ["opencode-1.17"],
      }),
    )
    expect(comparison.limits.context).toBeGreaterThan(100_000)
    expect(comparison.rules).toBe("anthropic")
    expect(comparison.priced).toBe(true)
    expect(comparison.runs.map((r) => r.calls)).toEqual([1])
  })

  it("logs nothing: a replayed compaction's fallback is a figure of the comparison, not a warning of the caller's", async () => {
    const turns = [1, 2, 3, 4].flatMap((n) => [
      user(`msg_u${n}`, `request ${n} `.repeat(40)),
      step(`msg_a${n}`, `msg_u${n}`, 300 * n),
    ])
    const logged: Array<unknown> = []
    const comparison = await Effect.runPromise(
      WhatIf.session("ses_a", turns, { context: 8, strategies: ["opencode-1.17"] }).pipe(
        Effect.provide(Logger.layer([Logger.make((entry) => void logged.push(entry.message))])),
      ),
    )
    expect(comparison.runs[0]!.compactions).toBeGreaterThan(0)
    expect(logged).toEqual([])
  })

  it("says when there is no call to replay", async () => {
    const none = await Effect.runPromise(Effect.result(WhatIf.session("ses_a", [user("msg_u1", "hello")])))
    expect(Result.isFailure(none) && none.failure._tag).toBe("NothingToReplay")
  })
})

describe("the working set", () => {
  // One turn: a request, a step reading a file, a step after it. The first step's usage fills a 20k window.
  const toolStep = (input: number) => ({
    ...step("msg_a1", "msg_u1", input),
    message: {
      ...step("msg_a1", "msg_u1", input).message,
      finish: "tool-calls",
      parts: [
        {
          type: "tool" as const,
          id: Ids.unsafe.part("prt_read"),
          callId: "call_read",
          tool: "read",
          state: { status: "completed" as const, input: { filePath: "src/a.ts" }, output: "the file's body" },
        },
      ],
    },
  })
  const turn = (input: number) => [user("msg_u1", "read src/a.ts"), toolStep(input), step("msg_a2", "msg_u1", 200)]
  const working = async (input: number, strategy: Strategies.Name) => {
    const comparison = await Effect.runPromise(
      WhatIf.session("ses_a", turn(input), { context: 20_000, output: 4_000, strategies: [strategy] }),
    )
    return comparison.runs[0]!.workingSet
  }

  it("is kept when nothing compacts in the middle of the turn", async () => {
    expect(await working(100, "opencode-1.17")).toEqual({ calls: 2, intact: 2 })
    expect(await working(100, "cache-aware")).toEqual({ calls: 2, intact: 2 })
  })

  it("is lost at the call after a compaction in the middle of the turn that keeps no tail (cache-aware)", async () => {
    expect(await working(16_000, "cache-aware")).toEqual({ calls: 2, intact: 1 })
  })

  // The same turn recorded with a compaction of its request and read, whose summary names neither: a strategy that
  // compacts the same head reuses that summary, so both artifacts leave the window but stay recallable.
  const recordedCompaction = [
    {
      _tag: "CompactionStarted" as const,
      at: at + 2,
      markerId: Ids.unsafe.message("msg_m1"),
      summaryId: Ids.unsafe.message("msg_s1"),
      model: { providerId: "test", modelId: "unknown" },
      plan: { head: [Ids.unsafe.message("msg_u1"), Ids.unsafe.message("msg_a1")], tail: [] },
      prompt: "summarise",
    },
    {
      _tag: "SummaryFinished" as const,
      at: at + 3,
      markerId: Ids.unsafe.message("msg_m1"),
      summary: {
        ...step("msg_s1", "msg_m1", 0).message,
        summary: true,
        parts: [{ type: "text" as const, id: Ids.unsafe.part("prt_s1"), text: "Nothing to report." }],
      },
    },
  ]
  const artifactsOf = async (input: number, strategy: Strategies.Name) => {
    const comparison = await Effect.runPromise(
      WhatIf.session("ses_a", [...turn(input), ...recordedCompaction], {
        context: 20_000,
        output: 4_000,
        strategies: [strategy],
      }),
    )
    return { artifacts: comparison.runs[0]!.artifacts, summaries: comparison.runs[0]!.summaries }
  }

  it("counts artifacts out of view that context_recall gives back as in view or recallable", async () => {
    // OpenCode 1.17's overflow compacts the request and the read: the recorded summary stands for them.
    const { artifacts, summaries } = await artifactsOf(16_000, "opencode-1.17")
    expect(summaries).toEqual({ recorded: 1, extractive: 0 })
    // The file read and the request: neither in the last window, both in the pivot's head.
    expect(artifacts).toMatchObject({ total: 2, inView: 0, inViewOrRecallable: 2 })
  })

  it("reads only the text the window shows the model, without facts too: no keyword found in a field name", async () => {
    // The request "read src/a.ts" has the keywords "read" and "src/a.ts"; half of them name it. Its step's stored usage
    // has a `cacheRead` field: a check that read the stored messages' JSON found "read" there and named the request.
    const { artifacts } = await artifactsOf(16_000, "opencode-1.17")
    expect(artifacts).toEqual({ total: 2, inView: 0, inViewWithoutFacts: 0, inViewOrRecallable: 2 })
  })

  it("counts what the window still holds as in view, and so in view or recallable (no compaction)", async () => {
    const { artifacts, summaries } = await artifactsOf(100, "opencode-1.17")
    expect(summaries).toEqual({ recorded: 0, extractive: 0 })
    expect(artifacts).toEqual({ total: 2, inView: 2, inViewWithoutFacts: 2, inViewOrRecallable: 2 })
  })
})

describe("strategies and billing", () => {
  it("checks names against the built-in strategies", async () => {
    expect(await Effect.runPromise(WhatIf.strategiesOf(["cache-aware", "pivot"]))).toEqual(["cache-aware", "pivot"])
    const unknown = await Effect.runPromise(Effect.result(WhatIf.strategiesOf(["pivot", "opencode"])))
    expect(Result.isFailure(unknown) && unknown.failure.message).toBe(
      'unknown strategy "opencode": expected one of opencode-1.17, opencode-1.18, pivot, cache-aware',
    )
  })

  it("maps each built-in strategy's name to its value, and pivot to OpenCode 1.17's with pivot's defaults", () => {
    expect(Strategies.NAMES).toEqual(["opencode-1.17", "opencode-1.18", "pivot", "cache-aware"])
    // Every name but pivot is a built-in strategy's, and selects that value.
    expect(Strategies.NAMES.filter((name) => name !== Strategies.PIVOT)).toEqual(BuiltInStrategies.names)
    expect(Strategies.strategyOptions("opencode-1.18", { context: 64_000 }).strategy).toBe(OpenCodeStrategy.v1_18)
    const v1_17 = Strategies.strategyOptions("opencode-1.17", { context: 64_000 })
    expect(v1_17.strategy).toBe(OpenCodeStrategy.v1_17)
    expect(v1_17.factsBlock).toBe(false)
    expect(v1_17.prune).toBeUndefined()
    const pivot = Strategies.strategyOptions("pivot", { context: 64_000 })
    expect(pivot.strategy).toBe(OpenCodeStrategy.v1_17)
    expect(pivot.prune).toEqual({ protect: 12_800, minimum: 6_400 })
    expect(pivot.factsBlock).toBeUndefined()
    expect(Strategies.strategyOptions("cache-aware", { context: 64_000 }).strategy).toBe(CacheAwareStrategy.strategy)
    const cacheAware = Strategies.strategyOptions("cache-aware", { context: 64_000, system: "s" }).strategy
    expect({ name: cacheAware?.name, form: cacheAware?.form, system: cacheAware?.system }).toEqual({
      name: "cache-aware",
      form: "cache-safe",
      system: "s",
    })
  })

  it("bills at a price's rates, else the rules' provider multipliers", () => {
    const ref = { providerId: "other", modelId: "x" }
    expect(WhatIf.billingFor(ref, undefined)).toEqual({
      rules: "openai",
      rates: Pricing.PROVIDER_RATES.openai,
      price: undefined,
    })
    const price = { input: 2, output: 8, cacheRead: 0.2, cacheWrite: 2.5 }
    expect(WhatIf.billingFor(ref, price, "anthropic").rates).toEqual({
      read: 0.1,
      write: 1.25,
      output: 4,
      priced: true,
    })
  })
})
