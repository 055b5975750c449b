/**
 * Cache-aware compaction (opt-in, ADR 0017): the summariser request is the conversation's own prompt with the
 * compaction prompt appended; the trigger leaves room for it; prune clears in batches unless the cache is cold.
 * Without the option everything stays OpenCode's (the parity suites cover that; here only the contrast).
 */
import { describe, expect, it } from "@effect/vitest"
import { type Events, Prompt } from "@pivot/core"
import { CACHE_AWARE_BATCH, CACHE_AWARE_THRESHOLD } from "@pivot/runtime"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { layer, SESSION, type Setup, services, step, stub, tool, used, users } from "./support/harness.ts"

type Started = Extract<Events.Event, { _tag: "CompactionStarted" }>

const SYSTEM = "You are the coding agent. Follow the conventions."

const compactAfterTwoTurns = Effect.gen(function* () {
  const { cm, sessions } = yield* services
  yield* users("first: fix the parser")
  yield* step(1_000)
  yield* users("second: and the lexer")
  yield* step(2_000, "stop")
  const prepared = yield* cm.prepare(SESSION)
  yield* cm.compact(SESSION)
  const started = (yield* sessions.events(SESSION)).find((e): e is Started => e._tag === "CompactionStarted")!
  return { prepared, started }
})

// One kept turn: the head is the first turn only, so OpenCode's request (head + prompt) differs from the window.
const TAIL = { tail_turns: 1, preserve_recent_tokens: 10_000 }
const withStub = (options: Setup["options"]) => {
  const s = stub("the summary")
  return { s, layer: layer({ summarizer: s, options: { ...options, config: { ...TAIL, ...options?.config } } }) }
}

describe("cache-aware summariser request", () => {
  it.effect("given cacheAware, then the request is the conversation's system and window, then the prompt", () => {
    const { s, layer: l } = withStub({ cacheAware: { system: SYSTEM } })
    return Effect.gen(function* () {
      const { prepared, started } = yield* compactAfterTwoTurns
      const request = s.requests[0]!
      expect(request.system).toBe(SYSTEM)
      expect(request.messages.slice(0, -1)).toEqual(prepared.modelMessages)
      expect(request.messages.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: started.prompt }] })
    }).pipe(Effect.provide(l))
  })

  it.effect(
    "given no cacheAware, then the request is OpenCode's: the compaction agent's system, no shared prefix",
    () => {
      const { s, layer: l } = withStub({})
      return Effect.gen(function* () {
        const { prepared } = yield* compactAfterTwoTurns
        const request = s.requests[0]!
        expect(request.system).toBe(Prompt.SYSTEM_PROMPT)
        expect(request.messages.slice(0, -1)).not.toEqual(prepared.modelMessages)
      }).pipe(Effect.provide(l))
    },
  )

  it.effect("given a window too large for the summariser's input room, then OpenCode's request is sent", () => {
    // Input room 0.9 × 3,500 = 3,150: the head (the first turn, ~2,000 tokens) fits, the whole window does not.
    const small = { ref: { providerId: "small", modelId: "s" }, limits: { context: 4_000, output: 500 } }
    const { s, layer: l } = withStub({ cacheAware: { system: SYSTEM }, compactionModel: small })
    return Effect.gen(function* () {
      const { cm } = yield* services
      yield* users(`first: ${"context ".repeat(1_000)}`)
      yield* step(1_000)
      yield* users(`second: ${"context ".repeat(750)}`)
      yield* step(1_000, "stop")
      yield* cm.compact(SESSION)
      expect(s.requests).toHaveLength(1)
      expect(s.requests[0]!.system).toBe(Prompt.SYSTEM_PROMPT)
    }).pipe(Effect.provide(l))
  })
})

describe("cache-aware trigger", () => {
  // The harness model: usable 68,000; cache-aware compacts at 75 % of it (51,000) unless a threshold is set.
  const overAt = (input: number, options: NonNullable<Setup["options"]>) =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* users("work")
      yield* step(input)
      return (yield* cm.prepare(SESSION)).compaction !== undefined
    }).pipe(Effect.provide(layer({ options })))

  it.effect("given a call at 55,000 tokens, then cache-aware compacts and OpenCode's trigger does not", () =>
    Effect.gen(function* () {
      expect(yield* overAt(55_000, { cacheAware: true })).toBe(true)
      expect(yield* overAt(50_000, { cacheAware: true })).toBe(false)
      expect(yield* overAt(55_000, {})).toBe(false)
      // A threshold the user set wins.
      expect(yield* overAt(55_000, { cacheAware: true, config: { threshold: 0.9 } })).toBe(false)
    }),
  )
  it("the default threshold is 0.75", () => expect(CACHE_AWARE_THRESHOLD).toBe(0.75))
})

describe("cache-aware prune", () => {
  // Four turns, each with a 2,000-token output; the newest two turns are never pruned (OpenCode's guard).
  const history = Effect.gen(function* () {
    const { cm } = yield* services
    for (let i = 0; i < 4; i++) {
      yield* users(`turn ${i}`)
      yield* cm.recordAssistantStep(SESSION, {
        parts: [tool("read", { filePath: `src/f${i}.ts` }, "x".repeat(8_000))],
        usage: used(1_000),
        finish: "stop",
      })
    }
  })
  const thresholds = { prune: { protect: 1_000, minimum: 500 }, config: { prune: true } }

  it.effect(
    "given a warm cache and less than a batch to free, then nothing is pruned; once the cache is cold, it is",
    () =>
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* history
        yield* TestClock.adjust("4 minutes")
        expect(yield* cm.prune(SESSION)).toEqual({ parts: 0, tokens: 0 })
        yield* TestClock.adjust("1 minute")
        expect((yield* cm.prune(SESSION)).parts).toBe(0)
        yield* TestClock.adjust("1 millis")
        const pruned = yield* cm.prune(SESSION)
        expect(pruned.parts).toBeGreaterThan(0)
        expect(pruned.tokens).toBeLessThan(5_000)
      }).pipe(Effect.provide(layer({ options: { ...thresholds, cacheAware: { batch: 5_000, ttl: "5 minutes" } } }))),
  )

  it.effect("given a batch's worth to free, then a warm cache is pruned at once", () =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* history
      expect((yield* cm.prune(SESSION)).parts).toBeGreaterThan(0)
    }).pipe(Effect.provide(layer({ options: { ...thresholds, cacheAware: { batch: 1_000 } } }))),
  )

  // The two prunable outputs free 4,000 tokens; the default batch is twice the minimum.
  const warmPrune = (minimum: number) =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* history
      return (yield* cm.prune(SESSION)).tokens
    }).pipe(
      Effect.provide(
        layer({ options: { config: { prune: true }, prune: { protect: 1_000, minimum }, cacheAware: true } }),
      ),
    )

  it.effect("given no batch, then it is twice the prune minimum: 3,000 lets 4,000 through, 5,000 does not", () =>
    Effect.gen(function* () {
      expect(yield* warmPrune(1_500)).toBe(4_000)
      expect(yield* warmPrune(2_500)).toBe(0)
      expect(CACHE_AWARE_BATCH).toBe(2)
    }),
  )

  const prunedParts = Effect.gen(function* () {
    const { sessions } = yield* services
    return (yield* sessions.events(SESSION)).filter((e) => e._tag === "PartCompacted").length
  })

  it.effect(
    "given a cold cache, then prepare clears old outputs before the call, down to coldProtect; warm, it does not",
    () =>
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* history
        yield* users("next turn")
        yield* cm.prepare(SESSION)
        expect(yield* prunedParts).toBe(0)
        yield* TestClock.adjust("6 minutes")
        yield* cm.prepare(SESSION)
        // The newest two user turns ("turn 3", "next turn") are never pruned; with nothing protected, the three older
        // outputs go.
        expect(yield* prunedParts).toBe(3)
      }).pipe(
        Effect.provide(
          layer({
            options: {
              config: { prune: true },
              prune: { protect: 40_000, minimum: 20_000 },
              cacheAware: { coldProtect: 0, batch: 100_000 },
            },
          }),
        ),
      ),
  )

  it.effect("given no cacheAware, then prepare never prunes, however cold", () =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* history
      yield* users("next turn")
      yield* TestClock.adjust("1 hour")
      yield* cm.prepare(SESSION)
      expect(yield* prunedParts).toBe(0)
    }).pipe(Effect.provide(layer({ options: { config: { prune: true }, prune: { protect: 1_000, minimum: 500 } } }))),
  )

  it.effect("given no cacheAware, then OpenCode's minimum alone decides, warm or not", () =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* history
      expect((yield* cm.prune(SESSION)).parts).toBeGreaterThan(0)
    }).pipe(Effect.provide(layer({ options: thresholds }))),
  )
})
