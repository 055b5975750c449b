/**
 * The strategy contract (core, pure): the cache as a strategy sees it (cold past the TTL, at a pivot), a decision's
 * prune as the Decider's commands, and `withRules` composing rules onto a strategy.
 */
import {
  BuiltInStrategies,
  Ids,
  type Message,
  OpenCodeStrategy,
  PruneRules,
  Render,
  Session,
  Strategy,
  Tokens,
} from "@pivot/core"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { assistant, started, toolPart, user } from "./support/events.ts"
import { given } from "./support/given.ts"

const LIMITS = { context: 100_000, output: 32_000 }
const at = (lastAt: number) =>
  ({
    role: "assistant",
    id: Ids.unsafe.message("msg_a"),
    parentId: Ids.unsafe.message("msg_u"),
    createdAt: lastAt - 10,
    completedAt: lastAt,
    model: { providerId: "p", modelId: "m" },
    tokens: Tokens.zero,
    finish: "stop",
    parts: [],
  }) satisfies Message.Message

const inputOf = (
  messages: ReadonlyArray<Message.Message>,
  overrides: Partial<Strategy.Input> = {},
): Strategy.Input => ({
  messages,
  now: 0,
  cache: Strategy.cacheAt(undefined, 0, Strategy.DEFAULT_TTL),
  config: {},
  limits: LIMITS,
  compactionLimits: LIMITS,
  prune: {},
  rates: undefined,
  mayCompact: true,
  ...overrides,
})

describe("Strategy.cacheAt", () => {
  it("given the last call TTL − 1, TTL and TTL + 1 ms ago, then the cache is warm, warm, cold", () => {
    const ttl = 300_000
    expect(Strategy.cacheAt(at(1_000), 1_000 + ttl - 1, ttl).cold).toBe(false)
    expect(Strategy.cacheAt(at(1_000), 1_000 + ttl, ttl).cold).toBe(false)
    expect(Strategy.cacheAt(at(1_000), 1_000 + ttl + 1, ttl).cold).toBe(true)
  })

  it("given no finished call, then the cache is cold and has no last call; a summary last is at a pivot", () => {
    expect(Strategy.cacheAt(undefined, 5, 10)).toEqual({ lastCallAt: undefined, ttl: 10, cold: true, atPivot: false })
    expect(Strategy.cacheAt({ ...at(4), summary: true }, 5, 10)).toEqual({
      lastCallAt: 4,
      ttl: 10,
      cold: false,
      atPivot: true,
    })
  })
})

describe("Strategy.pruneCommands", () => {
  const target = {
    messageId: Ids.unsafe.message("msg_a1"),
    partId: Ids.unsafe.part("prt_t1"),
    rule: "r",
    reason: "why",
  }

  it("given a walk and parts, then the walk's Prune comes first, then one Prune naming the parts", () => {
    expect(
      Strategy.pruneCommands({ _tag: "Prune", walk: { minimum: 0, turns: 1, rule: "cold-cache" }, parts: [target] }, 7),
    ).toEqual([
      { _tag: "Prune", at: 7, minimum: 0, turns: 1, rule: "cold-cache" },
      { _tag: "Prune", at: 7, parts: [target] },
    ])
  })

  it("given nothing or a compaction, then no command", () => {
    expect(Strategy.pruneCommands(Strategy.nothing, 7)).toEqual([])
    expect(Strategy.pruneCommands({ _tag: "Compact", reason: "threshold" }, 7)).toEqual([])
  })
})

describe("Prune with parts (the Decider)", () => {
  const events = [
    started(),
    user("u1", "go"),
    assistant("a1", "u1", [toolPart("t1", "read", "x".repeat(400)), toolPart("t2", "read", "y", 5)]),
  ]
  const target = (part: string, message = "msg_a1") => ({
    messageId: Ids.unsafe.message(message),
    partId: Ids.unsafe.part(part),
    rule: "duplicate-calls",
    reason: "same read call as prt_t9",
  })

  it("given a completed output, then it is cleared with its rule, reason and size; deciding again adds nothing", () => {
    given(...events)
      .when({ _tag: "Prune", at: 9, parts: [target("prt_t1")] })
      .then({
        _tag: "PartCompacted",
        at: 9,
        messageId: Ids.unsafe.message("msg_a1"),
        partId: Ids.unsafe.part("prt_t1"),
        tokens: 100,
        rule: "duplicate-calls",
        reason: "same read call as prt_t9",
      })
  })

  it("given an output cleared already, an unknown part or message, or a part named twice, then it is passed over", () => {
    given(...events)
      .when({ _tag: "Prune", at: 9, parts: [target("prt_t2"), target("prt_zz"), target("prt_t1", "msg_none")] })
      .thenNothing()
    given(...events)
      .when({ _tag: "Prune", at: 9, parts: [target("prt_t1"), target("prt_t1")] })
      .thenMatch((emitted) => expect(emitted).toHaveLength(1))
  })

  it("given a cleared part, then the window shows pivot's placeholder with its recall id", () => {
    const state = given(...events)
      .when({ _tag: "Prune", at: 9, parts: [target("prt_t1")] })
      .thenMatch(() => {})
    const messages = [Session.message(state, Ids.unsafe.message("msg_a1"))!]
    expect(JSON.stringify(Render.toModelMessages(messages, { recallIds: true }))).toContain(
      Render.clearedText("prt_t1"),
    )
  })
})

describe("Strategy.withRules", () => {
  const dup = [
    started(),
    user("u1", "go"),
    assistant("a1", "u1", [toolPart("t1", "read", "old")]),
    user("u2", "again"),
    assistant("a2", "u2", [toolPart("t2", "read", "new")]),
  ]
  const windowOf = (events: typeof dup) => {
    const state = Session.fold(events)
    return ["msg_u1", "msg_a1", "msg_u2", "msg_a2"].map((id) => Session.message(state, Ids.unsafe.message(id))!)
  }

  it("given OpenCode with pruning off and the duplicate rule, then after a step the older duplicate is cleared", () => {
    const strategy = Strategy.withRules(OpenCodeStrategy.v1_17, PruneRules.duplicateCalls)
    expect(strategy.name).toBe("opencode-1.17+duplicate-calls")
    const decision = strategy.afterStep!(inputOf(windowOf(dup)))
    expect(decision).toEqual({
      _tag: "Prune",
      parts: [
        {
          messageId: Ids.unsafe.message("msg_a1"),
          partId: Ids.unsafe.part("prt_t1"),
          rule: "duplicate-calls",
          reason: "same read call as prt_t2, whose output is newer",
        },
      ],
    })
    // Executed as commands, the Decider records it with its rule and reason.
    const decided = Session.decide(Strategy.pruneCommands(decision, 50)[0]!, Session.fold(dup))
    expect(Result.isSuccess(decided) && decided.success.map((e) => e._tag === "PartCompacted" && e.rule)).toEqual([
      "duplicate-calls",
    ])
  })

  it("given OpenCode with pruning on, then its walk comes first and the rule's parts after it", () => {
    const strategy = Strategy.withRules(OpenCodeStrategy.v1_17, PruneRules.duplicateCalls)
    const decision = strategy.afterStep!(inputOf(windowOf(dup), { config: { prune: true } }))
    expect(decision._tag === "Prune" && decision.walk).toEqual({})
    expect(decision._tag === "Prune" && decision.parts.map((p) => p.partId)).toEqual(["prt_t1"])
  })

  it("given a batched strategy on a warm cache that does not prune, then the rules wait; cold, they apply", () => {
    const batched: Strategy.Strategy = { name: "b", batched: true, afterStep: () => Strategy.nothing }
    const strategy = Strategy.withRules(batched, PruneRules.duplicateCalls)
    const warm = { lastCallAt: 0, ttl: 10, cold: false, atPivot: false }
    expect(strategy.afterStep!(inputOf(windowOf(dup), { cache: warm }))).toEqual(Strategy.nothing)
    expect(strategy.afterStep!(inputOf(windowOf(dup), { cache: { ...warm, cold: true } }))._tag).toBe("Prune")
    expect(strategy.afterStep!(inputOf(windowOf(dup), { cache: { ...warm, atPivot: true } }))._tag).toBe("Prune")
  })

  it("given a compaction decided by the base, then it wins over the rules", () => {
    const compacting: Strategy.Strategy = { name: "c", afterStep: () => ({ _tag: "Compact", reason: "threshold" }) }
    expect(Strategy.withRules(compacting, PruneRules.duplicateCalls).afterStep!(inputOf(windowOf(dup)))).toEqual({
      _tag: "Compact",
      reason: "threshold",
    })
  })

  it("given two rules naming one output, then it is cleared once, with the first rule's reason", () => {
    const again: Strategy.Rule = {
      ...PruneRules.duplicateCalls,
      name: "again",
      select: (i) => PruneRules.duplicateCalls.select(i).map((p) => ({ ...p, rule: "again" })),
    }
    const decision = Strategy.withRules({ name: "x" }, PruneRules.duplicateCalls, again).afterStep!(
      inputOf(windowOf(dup)),
    )
    expect(decision._tag === "Prune" && decision.parts.map((p) => p.rule)).toEqual(["duplicate-calls"])
  })
})

describe("Strategy.outputs", () => {
  it("given calls in three turns, then each has the number of newer turns, and before: n keeps the older ones", () => {
    const state = Session.fold([
      started(),
      user("u1", "a"),
      assistant("a1", "u1", [toolPart("t1", "read", "1")]),
      user("u2", "b"),
      assistant("a2", "u2", [toolPart("t2", "read", "2")]),
      user("u3", "c"),
      assistant("a3", "u3", [toolPart("t3", "read", "3")]),
    ])
    const window = ["u1", "a1", "u2", "a2", "u3", "a3"].map(
      (id) => Session.message(state, Ids.unsafe.message(`msg_${id}`))!,
    )
    expect(Strategy.outputs(window).map((c) => [c.partId, c.turnsAfter])).toEqual([
      ["prt_t1", 2],
      ["prt_t2", 1],
      ["prt_t3", 0],
    ])
    expect(Strategy.outputs(window, { before: 1 }).map((c) => c.partId)).toEqual(["prt_t1", "prt_t2"])
    expect(Strategy.outputs(window, { before: 2 }).map((c) => c.partId)).toEqual(["prt_t1"])
    expect(Strategy.outputs(window, { before: 3 })).toEqual([])
  })
})

describe("BuiltInStrategies", () => {
  it("names opencode-1.17, opencode-1.18 and cache-aware, each found by its name, and nothing else", () => {
    expect(BuiltInStrategies.names).toEqual(["opencode-1.17", "opencode-1.18", "cache-aware"])
    for (const name of BuiltInStrategies.names) expect(BuiltInStrategies.named(name)?.name).toBe(name)
    expect(BuiltInStrategies.named("opencode")).toBeUndefined()
    expect(BuiltInStrategies.named("cache-aware ")).toBeUndefined()
  })
})
