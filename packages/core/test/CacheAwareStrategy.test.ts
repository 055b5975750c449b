/**
 * Cache-aware as a strategy (ADR 0017, 0026): its settings, the cold-cache prune, the batched prune, the rent-or-buy
 * trigger — and the working set: a compaction during a turn keeps the turn (its request and what it read) verbatim,
 * within `KEEP_SHARE` of the usable window, tested at that boundary; rent-or-buy waits while it cannot.
 */
import { CacheAwareStrategy, CacheEconomy, Ids, type Message, Strategy, SummaryInput, Tail, Tokens } from "@pivot/core"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { assistant, completed, marker, tool, user } from "./support/build.ts"

const LIMITS = { context: 100_000, output: 32_000 }
const WARM: Strategy.Cache = { lastCallAt: 1, ttl: 300_000, cold: false, atPivot: false }
const inputOf = (
  messages: ReadonlyArray<Message.Message>,
  overrides: Partial<Strategy.Input> = {},
): Strategy.Input => ({
  messages,
  now: 2,
  cache: WARM,
  config: CacheAwareStrategy.configure({}),
  limits: LIMITS,
  compactionLimits: LIMITS,
  prune: {},
  rates: undefined,
  mayCompact: true,
  ...overrides,
})

const used = (count: number) => ({ ...Tokens.zero, input: count })
const read = (name: string, parent: string, context: number, finish = "tool-calls") =>
  assistant(name, parent, [tool("read", completed("x".repeat(400), { input: { path: `${name}.ts` } }))], {
    tokens: used(context),
    finish,
  })

describe("cache-aware's settings", () => {
  it("given no threshold nor tail budget, then 0.75 and 0; given either, it is kept", () => {
    expect(CacheAwareStrategy.configure({})).toEqual({ threshold: 0.75, preserve_recent_tokens: 0 })
    expect(CacheAwareStrategy.configure({ threshold: 1, preserve_recent_tokens: 10, prune: true })).toEqual({
      threshold: 1,
      preserve_recent_tokens: 10,
      prune: true,
    })
    const strategy = CacheAwareStrategy.make({ system: "S", ttl: 60_000 })
    expect([strategy.form, strategy.system, strategy.ttl, strategy.batched]).toEqual(["cache-safe", "S", 60_000, true])
  })
})

describe("cache-aware prune", () => {
  const window = [user("u1", "go"), read("a1", "u1", 1_000, "stop")]
  const strategy = CacheAwareStrategy.make()
  const on = { ...CacheAwareStrategy.configure({}), prune: true }

  it("given a cold cache before a call, then old outputs go down to the current turn; warm, or pruning off, not", () => {
    const cold = { ...WARM, cold: true }
    expect(strategy.beforeCall!(inputOf(window, { config: on, cache: cold }))).toEqual({
      _tag: "Prune",
      walk: {
        protect: 0,
        minimum: 0,
        turns: 1,
        rule: "cold-cache",
        reason: "the cache is cold (last call 1 ms ago, TTL 300000 ms): the prefix is written again anyway",
      },
      parts: [],
    })
    expect(strategy.beforeCall!(inputOf(window, { config: on, cache: WARM }))).toEqual(Strategy.nothing)
    expect(strategy.beforeCall!(inputOf(window, { cache: cold }))).toEqual(Strategy.nothing)
    // No call yet: nothing is cached, nothing to clear.
    expect(strategy.beforeCall!(inputOf([], { config: on, cache: { ...cold, lastCallAt: undefined } }))).toEqual(
      Strategy.nothing,
    )
    const own = CacheAwareStrategy.make({ coldProtect: 500, coldTurns: 2 })
    expect(own.beforeCall!(inputOf(window, { config: on, cache: cold, prune: { protectedTools: ["x"] } }))).toEqual({
      _tag: "Prune",
      walk: expect.objectContaining({ protect: 500, minimum: 0, turns: 2, protectedTools: ["x"], rule: "cold-cache" }),
      parts: [],
    })
  })

  it("given a step on a warm cache, then it prunes only a batch (twice the minimum); cold or at a pivot, anything", () => {
    const minimumOf = (cache: Strategy.Cache, prune: Strategy.Input["prune"] = {}, batch?: number) => {
      const decision = CacheAwareStrategy.make(batch === undefined ? {} : { batch }).afterStep!(
        inputOf(window, { config: on, cache, prune }),
      )
      return decision._tag === "Prune" ? decision.walk?.minimum : undefined
    }
    expect(minimumOf(WARM)).toBe(40_000)
    expect(minimumOf(WARM, { minimum: 3_000 })).toBe(6_000)
    expect(minimumOf(WARM, {}, 12_345)).toBe(12_345)
    expect(minimumOf({ ...WARM, cold: true })).toBe(0)
    expect(minimumOf({ ...WARM, atPivot: true })).toBe(0)
    expect(strategy.afterStep!(inputOf(window))).toEqual(Strategy.nothing)
  })
})

describe("cache-aware rent-or-buy", () => {
  // As the runtime's test: windows [1,000, x, x], base 3,000; due from x = 20,000 on with these rates.
  const RATES = { read: 0.5, write: 1, output: 2 }
  const strategy = CacheAwareStrategy.make({ rates: RATES })
  const finishedTurn = (x: number) => [
    user("u1", "work"),
    read("a1", "u1", 1_000),
    read("a2", "u1", x),
    read("a3", "u1", x, "stop"),
  ]

  it("given the turn's end and the next request: 19,999 no, 20,000 and 20,001 compact", () => {
    const next = (x: number) => strategy.beforeCall!(inputOf([...finishedTurn(x), user("u2", "next")]))
    expect(next(19_999)).toEqual(Strategy.nothing)
    expect(next(20_000)).toEqual({ _tag: "Compact", reason: "rent-or-buy" })
    expect(next(20_001)).toEqual({ _tag: "Compact", reason: "rent-or-buy" })
  })

  it("given it due in the middle of the session's first turn, then it waits for the next turn's start", () => {
    const midTurn = finishedTurn(30_000)
      .slice(0, 3)
      .concat(read("a3", "u1", 30_000))
    expect(strategy.beforeCall!(inputOf(midTurn))).toEqual(Strategy.nothing)
    // The turn finished, no new request (a host's continuation after it, ADR 0047): still nothing.
    expect(strategy.beforeCall!(inputOf(finishedTurn(30_000)))).toEqual(Strategy.nothing)
    expect(strategy.beforeCall!(inputOf([...finishedTurn(30_000), user("u2", "next")]))).toEqual({
      _tag: "Compact",
      reason: "rent-or-buy",
    })
  })

  it("given a cold cache, no rates, rentOrBuy off, auto off or a compaction not allowed, then it does not compact", () => {
    const window = [...finishedTurn(30_000), user("u2", "next")]
    expect(strategy.beforeCall!(inputOf(window, { cache: { ...WARM, cold: true } }))).toEqual(Strategy.nothing)
    expect(CacheAwareStrategy.make().beforeCall!(inputOf(window))).toEqual(Strategy.nothing)
    expect(CacheAwareStrategy.make().beforeCall!(inputOf(window, { rates: RATES }))._tag).toBe("Compact")
    expect(CacheAwareStrategy.make({ rates: RATES, rentOrBuy: false }).beforeCall!(inputOf(window))).toEqual(
      Strategy.nothing,
    )
    expect(strategy.beforeCall!(inputOf(window, { config: { auto: false } }))).toEqual(Strategy.nothing)
    expect(strategy.beforeCall!(inputOf(window, { mayCompact: false }))).toEqual(Strategy.nothing)
  })
})

describe("cache-aware keeps the working set", () => {
  const older = [user("u0", "earlier work"), assistant("a0", "u0", "done")]
  const turn = [user("u1", "fix the parser"), read("a1", "u1", 1_000), read("a2", "u1", 2_000)]
  const size = Tail.sizeOf(turn)
  // usable = input − reserved (0): the cap is floor(input × 0.5).
  const keepAt = (input: number, messages: ReadonlyArray<Message.Message> = [...older, ...turn, marker("m")]) =>
    CacheAwareStrategy.keepOf(
      inputOf(messages, {
        config: { ...CacheAwareStrategy.configure({}), reserved: 0 },
        limits: { context: 1_000_000, input, output: 8_000 },
      }),
    )
  const ids = (names: ReadonlyArray<string>) => names.map((n) => Ids.unsafe.message(`msg_${n}`))

  it("given the turn's size at the cap − 1, at it and over it, then it is kept whole, whole, and split", () => {
    expect(keepAt(2 * size + 2)).toEqual({ ids: ids(["u1", "a1", "a2"]), whole: true })
    expect(keepAt(2 * size)).toEqual({ ids: ids(["u1", "a1", "a2"]), whole: true })
    // One token short: the request and the newest read stay, the first read goes to the summary.
    expect(keepAt(2 * size - 2)).toEqual({ ids: ids(["u1", "a2"]), whole: false })
  })

  it("given a turn between its end and the next request, then nothing is kept beyond the config's tail", () => {
    expect(keepAt(1_000_000, [...older, user("u1", "x"), read("a1", "u1", 1_000, "stop"), marker("m")])).toBeUndefined()
  })

  it("given the session's first turn, then its request and newest messages are kept, the first step summarised", () => {
    expect(keepAt(1_000_000, [...turn, marker("m")])).toEqual({ ids: ids(["u1", "a2"]), whole: false })
  })

  it("given a request larger than the cap, then nothing can be kept", () => {
    expect(keepAt(Math.floor(Tail.sizeOf([turn[0]!]) * 2) - 2)).toBeUndefined()
  })

  it("given a continue message after an earlier pivot, then the turn still starts at the user's request", () => {
    const continued = [
      ...older,
      ...turn,
      user("c1", { type: "text", text: "Continue if you have next steps", synthetic: true }),
      read("a3", "c1", 3_000),
      marker("m"),
    ]
    expect(keepAt(1_000_000, continued)).toEqual({ ids: ids(["u1", "a1", "a2", "c1", "a3"]), whole: true })
  })

  it("given the keep, then the plan keeps the request and what it read verbatim and summarises the older turn", () => {
    const window = [...older, ...turn, marker("m")]
    const keep = keepAt(1_000_000, window)!
    const plan = SummaryInput.plan(window, {
      parentId: Ids.unsafe.message("msg_m"),
      overflow: false,
      config: CacheAwareStrategy.configure({}),
      compactionLimits: LIMITS,
      keep: keep.ids,
    })
    expect(Result.isSuccess(plan) && [plan.success.head, plan.success.tail]).toEqual([
      ids(["u0", "a0"]),
      ids(["u1", "a1", "a2"]),
    ])
    // Without the keep, cache-aware's tail of 0 tokens sends the request to the summary only.
    const without = SummaryInput.plan(window, {
      parentId: Ids.unsafe.message("msg_m"),
      overflow: false,
      config: CacheAwareStrategy.configure({}),
      compactionLimits: LIMITS,
    })
    expect(Result.isSuccess(without) && without.success.tail).toEqual([])
  })

  it("given a keep of the whole history, then nothing moves (something must be left to summarise)", () => {
    const window = [...turn, marker("m")]
    const plan = SummaryInput.plan(window, {
      parentId: Ids.unsafe.message("msg_m"),
      overflow: false,
      config: CacheAwareStrategy.configure({}),
      compactionLimits: LIMITS,
      keep: ids(["u1", "a1", "a2"]),
    })
    expect(Result.isSuccess(plan) && plan.success.tail).toEqual([])
  })
})

describe("cache-aware's own compactions wait for a turn's start (ADR 0034)", () => {
  const RATES = { read: 0.5, write: 1, output: 2 }
  const strategy = CacheAwareStrategy.make({ rates: RATES })
  const older = [user("u0", "earlier work"), read("a0", "u0", 1_000, "stop")]
  const midTurn = [
    ...older,
    user("u1", "work"),
    read("a1", "u1", 1_000),
    read("a2", "u1", 30_000),
    read("a3", "u1", 30_000),
  ]

  it("given rent-or-buy due in the middle of a turn that could be kept whole, then it waits; at the next turn's start it compacts", () => {
    expect(CacheAwareStrategy.keepOf(inputOf(midTurn))?.whole).toBe(true)
    expect(strategy.beforeCall!(inputOf(midTurn))).toEqual(Strategy.nothing)
    const next = [...midTurn.slice(0, -1), read("a3", "u1", 30_000, "stop"), user("u2", "next")]
    expect(CacheAwareStrategy.atTurnStart(next)).toBe(true)
    expect(strategy.beforeCall!(inputOf(next))).toEqual({ _tag: "Compact", reason: "rent-or-buy" })
  })

  it("given a window with the request answered or steps after it, then it is not at a turn's start", () => {
    expect(CacheAwareStrategy.atTurnStart(midTurn)).toBe(false)
    expect(CacheAwareStrategy.atTurnStart([...older])).toBe(false)
    expect(CacheAwareStrategy.atTurnStart([])).toBe(false)
    expect(CacheAwareStrategy.atTurnStart([...older, user("u1", "next"), marker("m")])).toBe(true)
  })
})

describe("cache-aware compacts at the start of a turn expected to force a compaction in its middle (ADR 0034, 0041)", () => {
  // A finished turn of three calls (~3,000 tokens): its request, a read that asked for more, a read, the answer.
  const finished = [
    user("u0", `earlier work ${"y".repeat(12_000)}`),
    read("a0", "u0", 1_000),
    read("b0", "u0", 2_000),
    read("c0", "u0", 3_000, "stop"),
  ]
  const window = [...finished, user("u1", "next request")]
  const size = Tail.sizeOf(window)
  // Before its second-to-last call (the last usage checked inside the turn) and before its last call.
  const checked = Tail.sizeOf(finished.slice(0, 2))
  const sent = Tail.sizeOf(finished.slice(0, 3))
  const FIXED = 5_000
  // No reserve: the usable window is `input`; the trigger is FIXED + ⌊threshold × (input − FIXED)⌋.
  const at = (input: number, threshold: number, messages = window) =>
    CacheAwareStrategy.reachesThisTurn(
      inputOf(messages, {
        config: { ...CacheAwareStrategy.configure({}), threshold, reserved: 0 },
        limits: { context: 1_000_000, input, output: 8_000 },
        fixed: FIXED,
      }),
    )

  it("measures a finished turn up to its second-to-last call (checked) and its last call (sent)", () => {
    expect(CacheAwareStrategy.reachOf(finished)).toEqual({ checked, sent })
    expect(checked).toBe(Tail.sizeOf([finished[0]!, finished[1]!]))
    // One call: no usage is checked inside the turn; its prompt is the request.
    expect(CacheAwareStrategy.reachOf([finished[0]!, read("x0", "u0", 1_000, "stop")])).toEqual({
      checked: 0,
      sent: Tail.sizeOf([finished[0]!]),
    })
  })

  it("given the window and the largest checked reach at the trigger − 1, at it and + 1: yes, yes, no", () => {
    // threshold 0.5: the trigger is FIXED + ⌊(input − FIXED) / 2⌋; the usable window stays far above the sent reach.
    const reach = FIXED + size + checked
    const input = FIXED + 2 * (reach - FIXED)
    expect(FIXED + size + sent).toBeLessThanOrEqual(input - 2)
    expect(at(input - 2, 0.5)).toBe(true)
    expect(at(input, 0.5)).toBe(true)
    expect(at(input + 2, 0.5)).toBe(false)
  })

  it("given the window and the largest sent reach at the usable window − 1, at it and + 1: over it yes, at or below no", () => {
    // threshold 1: the trigger is the usable window, which the checked reach stays below.
    const reach = FIXED + size + sent
    expect(at(reach - 1, 1)).toBe(true)
    expect(at(reach, 1)).toBe(false)
    expect(at(reach + 1, 1)).toBe(false)
  })

  it("given the fixed prompt, a summary and the largest sent reach at the usable window − 1, at it and + 1: no, yes, yes", () => {
    // After a compaction the turn would force one in its middle too: it is compacted there anyway, so not now.
    const after = FIXED + CacheEconomy.DEFAULT_SUMMARY_TOKENS + sent
    expect(size).toBeGreaterThan(CacheEconomy.DEFAULT_SUMMARY_TOKENS + 1)
    expect(at(after - 1, 1)).toBe(false)
    expect(at(after, 1)).toBe(true)
    expect(at(after + 1, 1)).toBe(true)
  })

  it("given turns that reach the trigger only with their last call, then nothing: the hard limit compacts at the next turn's start", () => {
    // The whole finished turn would reach the trigger (ADR 0034's rule compacted here); what it added before its
    // second-to-last call does not, and its last prompt fits.
    const input = FIXED + 2 * (size + Tail.sizeOf(finished) - 1)
    expect(at(input, 0.5)).toBe(false)
    expect(
      CacheAwareStrategy.make().beforeCall!(
        inputOf(window, {
          config: { ...CacheAwareStrategy.configure({}), threshold: 0.5, reserved: 0 },
          limits: { context: 1_000_000, input, output: 8_000 },
          fixed: FIXED,
        }),
      ),
    ).toEqual(Strategy.nothing)
  })

  it("given two finished turns, then the larger one's reach decides, not their mean", () => {
    const small = [user("u2", "small"), read("a2", "u2", 1_000), read("b2", "u2", 1_000, "stop")]
    const two = [...finished, ...small, user("u3", "next request")]
    const reach = FIXED + Tail.sizeOf(two) + checked
    const input = FIXED + 2 * (reach - FIXED)
    expect(CacheAwareStrategy.reachOf(small).checked).toBeLessThan(checked)
    expect(at(input, 0.5, two)).toBe(true)
    expect(at(input + 2, 0.5, two)).toBe(false)
  })

  it("given no turn finished since the latest summary, then nothing is expected", () =>
    expect(at(1, 1, [user("u1", "first request")])).toBe(false))

  it("given an 80,000-token fixed prompt in a usable 100,000 at 0.75, then the trigger is 95,000: no compaction yet", () => {
    const input = (fixed: number) =>
      inputOf(window, {
        config: { ...CacheAwareStrategy.configure({}), reserved: 0 },
        limits: { context: 1_000_000, input: 100_000, output: 8_000 },
        fixed,
      })
    // 80,000 + the window + the checked reach is far above 75,000 (0.75 of the whole usable window), below 95,000.
    expect(CacheAwareStrategy.reachesThisTurn(input(80_000))).toBe(false)
    expect(CacheAwareStrategy.make().beforeCall!(input(80_000))).toEqual(Strategy.nothing)
    // A fixed prompt leaving 0.75 × the rest no more than the window and the checked reach: compact now.
    const close = 100_000 - Math.floor((size + checked) / 0.75)
    expect(CacheAwareStrategy.make().beforeCall!(input(close))).toEqual({ _tag: "Compact", reason: "threshold" })
  })
})
