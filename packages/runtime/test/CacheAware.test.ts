/**
 * Cache-aware compaction (opt-in, ADR 0017): the summariser request is the conversation's own prompt with the
 * compaction prompt appended; the trigger leaves room for it; prune clears in batches unless the cache is cold.
 * Without the option everything stays OpenCode's (the parity suites cover that; here only the contrast).
 */
import { describe, expect, it } from "@effect/vitest"
import { type Events, Prompt } from "@pivot/core"
import { CACHE_AWARE_BATCH, CACHE_AWARE_TAIL, CACHE_AWARE_THRESHOLD, COLD_TURNS } from "@pivot/runtime"
import { type Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import {
  LIMITS,
  layer,
  SESSION,
  type Setup,
  services,
  step,
  stub,
  textOf,
  tool,
  used,
  users,
  windowOf,
} from "./support/harness.ts"

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

  // ADR 0047: the cache-safe request is sent only when it costs no more than OpenCode's at the strategy's rates. The
  // last call (2,000 tokens, warm) cached more than the whole cache-safe request holds: it costs its size × `read`,
  // OpenCode's its size × `write`.
  it.effect(
    "given rates at which the cached window costs more than OpenCode's request, then OpenCode's is sent",
    () => {
      const { s, layer: l } = withStub({ cacheAware: { system: SYSTEM, rates: { read: 1_000, write: 1, output: 1 } } })
      return Effect.gen(function* () {
        yield* compactAfterTwoTurns
        expect(s.requests[0]!.system).toBe(Prompt.SYSTEM_PROMPT)
      }).pipe(Effect.provide(l))
    },
  )

  it.effect("given rates at which the cached window costs less, then the cache-safe request is sent", () => {
    const { s, layer: l } = withStub({ cacheAware: { system: SYSTEM, rates: { read: 0, write: 1, output: 1 } } })
    return Effect.gen(function* () {
      const { prepared } = yield* compactAfterTwoTurns
      expect(s.requests[0]!.system).toBe(SYSTEM)
      expect(s.requests[0]!.messages.slice(0, -1)).toEqual(prepared.modelMessages)
    }).pipe(Effect.provide(l))
  })

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
  // The harness model: usable 68,000. The first call (10,000 tokens for a one-word request) measures the fixed prompt
  // f (system prompt and tools, ADR 0034); cache-aware compacts at f + ⌊0.75 × (68,000 − f)⌋ unless a threshold is set.
  const overAt = (input: number | ((fixed: number) => number), options: NonNullable<Setup["options"]>) =>
    Effect.gen(function* () {
      const { cm, sessions } = yield* services
      yield* users("work")
      yield* step(10_000)
      const fixed = (yield* sessions.load(SESSION)).runtime.fixed.tokens!
      expect(fixed).toBeGreaterThan(9_900)
      expect(fixed).toBeLessThan(10_000)
      yield* step(typeof input === "number" ? input : input(fixed))
      return (yield* cm.prepare(SESSION)).compaction !== undefined
    }).pipe(Effect.provide(layer({ options })))
  const trigger = (fixed: number) => fixed + Math.floor(0.75 * (68_000 - fixed))

  it.effect("given a call at the trigger above the fixed prompt − 1, at it and + 1, then no, yes, yes", () =>
    Effect.gen(function* () {
      expect(yield* overAt((f) => trigger(f) - 1, { cacheAware: true })).toBe(false)
      expect(yield* overAt(trigger, { cacheAware: true })).toBe(true)
      expect(yield* overAt((f) => trigger(f) + 1, { cacheAware: true })).toBe(true)
    }),
  )

  it.effect("given a call at 55,000 tokens, then cache-aware compacts and OpenCode's trigger does not", () =>
    Effect.gen(function* () {
      expect(yield* overAt(55_000, { cacheAware: true })).toBe(true)
      // 51,000 is 0.75 of the whole usable window: counting the fixed prompt, cache-aware compacted there.
      expect(yield* overAt(51_000, { cacheAware: true })).toBe(false)
      expect(yield* overAt(55_000, {})).toBe(false)
      // A threshold the user set wins (a share of the room above the fixed prompt too: ~62,200 here).
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
        // The cold prune keeps the current turn's outputs only ("next turn" has none): all four older outputs go.
        expect(yield* prunedParts).toBe(4)
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

  // coldTurns at its boundary: the newest 1, 2 or 3 user turns keep their outputs ("next turn" has none).
  const coldPruned = (coldTurns: number | undefined) =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* history
      yield* users("next turn")
      yield* TestClock.adjust("6 minutes")
      yield* cm.prepare(SESSION)
      return yield* prunedParts
    }).pipe(
      Effect.provide(
        layer({
          options: {
            config: { prune: true },
            cacheAware: { coldProtect: 0, ...(coldTurns === undefined ? {} : { coldTurns }) },
          },
        }),
      ),
    )

  it.effect("given coldTurns 1, 2, 3 (default 1), then 4, 3, 2 old outputs are cleared on a cold cache", () =>
    Effect.gen(function* () {
      expect(yield* coldPruned(1)).toBe(4)
      expect(yield* coldPruned(2)).toBe(3)
      expect(yield* coldPruned(3)).toBe(2)
      expect(yield* coldPruned(undefined)).toBe(4)
      expect(COLD_TURNS).toBe(1)
    }),
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

describe("cache-aware rent-or-buy", () => {
  // Rates chosen for exact arithmetic; no tail. Windows [1,000, x, x], no pivot yet: base = 1,000 + 2,000 (the default
  // summary) = 3,000, of which the fixed prompt f, measured by the first call (1,000 minus the request's estimate), is
  // read after a compaction, not written (ADR 0034); rent = 2 × 0.5 × (x − 3,000); buy = 0.5 x + 2 × 2,000 +
  // (3,000 − f) + 0.5 f. Due from x = 20,000 − f on, far below the threshold. The turn ends and the next request
  // arrives before the call: rent-or-buy compacts at the turn's start, keeping the new request (in the middle of a turn
  // it waits: see "the working set" below).
  const RATES = { read: 0.5, write: 1, output: 2 }
  const compactsAt = (
    x: number | ((fixed: number) => number),
    options: NonNullable<Setup["options"]>,
    wait?: Duration.Input,
  ) =>
    Effect.gen(function* () {
      const { cm, sessions } = yield* services
      yield* users("work")
      yield* step(1_000)
      const fixed = (yield* sessions.load(SESSION)).runtime.fixed.tokens!
      expect(fixed).toBeGreaterThan(900)
      const at = typeof x === "number" ? x : x(fixed)
      yield* step(at)
      yield* step(at, "stop")
      if (wait !== undefined) yield* TestClock.adjust(wait)
      yield* users("next")
      return (yield* cm.prepare(SESSION)).compaction !== undefined
    }).pipe(Effect.provide(layer({ options: { config: { preserve_recent_tokens: 0 }, ...options } })))

  it.effect("given the rent reaching the buy, then prepare compacts: 20,000 − f − 1 no, 20,000 − f and + 1 yes", () =>
    Effect.gen(function* () {
      const options = { cacheAware: { rates: RATES } }
      expect(yield* compactsAt((f) => 20_000 - f - 1, options)).toBe(false)
      expect(yield* compactsAt((f) => 20_000 - f, options)).toBe(true)
      expect(yield* compactsAt((f) => 20_000 - f + 1, options)).toBe(true)
    }),
  )

  // A model pivot has no price for (an unknown provider, as OpenCode's custom providers are): rent-or-buy needs the
  // price its host names (`ModelSpec.price`, e.g. OpenCode's model `cost`). The price below is `RATES` at 2 USD input.
  it.effect("given a model of an unknown provider, then its own price (ModelSpec.price) runs rent-or-buy", () =>
    Effect.gen(function* () {
      const ref = { providerId: "scripted", modelId: "scripted-model" }
      const priced = { ref, limits: LIMITS, price: { input: 2, output: 4, cacheRead: 1, cacheWrite: 2 } }
      const options = (model: typeof priced | { ref: typeof ref; limits: typeof LIMITS }) => ({ model, cacheAware: {} })
      expect(yield* compactsAt((f) => 20_000 - f - 1, options(priced))).toBe(false)
      expect(yield* compactsAt((f) => 20_000 - f, options(priced))).toBe(true)
      expect(yield* compactsAt((f) => 20_000 - f + 1, options(priced))).toBe(true)
      // Without its price the same model gets no rent-or-buy (only the threshold, far above).
      expect(yield* compactsAt((f) => 20_000 - f + 1, options({ ref, limits: LIMITS }))).toBe(false)
    }),
  )

  it.effect("given it due in the middle of the session's first turn, then prepare waits for the turn's end", () =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* users("work")
      yield* step(1_000)
      yield* step(30_000)
      yield* step(30_000)
      // The turn cannot be kept whole (nothing older to summarise): the working set stays, nothing is compacted.
      expect((yield* cm.prepare(SESSION)).compaction).toBeUndefined()
      yield* step(30_000, "stop")
      yield* users("next")
      expect((yield* cm.prepare(SESSION)).compaction).toBeDefined()
    }).pipe(
      Effect.provide(
        layer({
          options: { config: { preserve_recent_tokens: 0 }, cacheAware: { rates: { read: 0.5, write: 1, output: 2 } } },
        }),
      ),
    ),
  )

  it.effect("given a cold cache (one millisecond past the TTL), then it does not compact; at the TTL it does", () =>
    Effect.gen(function* () {
      const options = { cacheAware: { rates: RATES, ttl: "5 minutes" as const } }
      expect(yield* compactsAt(20_000, options, "5 minutes")).toBe(true)
      expect(yield* compactsAt(20_000, options, "300001 millis")).toBe(false)
    }),
  )

  it.effect("given rentOrBuy false, auto false or no cacheAware, then it does not compact", () =>
    Effect.gen(function* () {
      expect(yield* compactsAt(30_000, { cacheAware: { rates: RATES, rentOrBuy: false } })).toBe(false)
      expect(
        yield* compactsAt(30_000, { cacheAware: { rates: RATES }, config: { auto: false, preserve_recent_tokens: 0 } }),
      ).toBe(false)
      expect(yield* compactsAt(30_000, {})).toBe(false)
    }),
  )

  it.effect("given a compaction it just made, then the calls before the pivot no longer count", () =>
    Effect.gen(function* () {
      const { cm, sessions } = yield* services
      const requested = Effect.map(
        sessions.events(SESSION),
        (events) => events.filter((e) => e._tag === "CompactionRequested").length,
      )
      yield* users("work")
      yield* step(1_000)
      yield* step(20_000)
      yield* step(20_000, "stop")
      yield* users("next")
      yield* cm.prepare(SESSION)
      expect(yield* requested).toBe(1)
      yield* cm.prepare(SESSION)
      // The rent paid before the pivot is sunk (counted against the post-pivot base of 1,000 it would be due); the
      // core test checks the segment's restart itself.
      yield* step(1_000)
      yield* cm.prepare(SESSION)
      expect(yield* requested).toBe(1)
    }).pipe(
      Effect.provide(
        layer({ options: { config: { preserve_recent_tokens: 0, threshold: 1 }, cacheAware: { rates: RATES } } }),
      ),
    ),
  )

  it.effect("given a model with no price nor known provider, then no rent-or-buy unless rates are given", () =>
    Effect.gen(function* () {
      const local = { ref: { providerId: "local", modelId: "m" }, limits: { context: 100_000, output: 32_000 } }
      expect(yield* compactsAt(40_000, { model: local, cacheAware: true })).toBe(false)
      expect(yield* compactsAt(20_000, { model: local, cacheAware: { rates: RATES } })).toBe(true)
    }),
  )

  it.effect("given the model's own rates (Anthropic's: read 0.1), then the same windows are not yet worth it", () =>
    Effect.gen(function* () {
      // rent = 0.1 × 2 × 17,000 = 3,400; buy = 0.1 × 20,000 + 5 × 2,000 + 1.25 × 3,000 = 15,750.
      expect(yield* compactsAt(20_000, { cacheAware: true })).toBe(false)
    }),
  )
})

describe("cache-aware tail", () => {
  // The last turn's user message: ~1,000 tokens fits a 2,000 budget, ~3,000 does not; OpenCode's derived budget here
  // is 8,000 (both kept). An older turn of ~10,000 tokens is summarised. Cache-aware keeps none unless told.
  const keptAfterCompaction = (chars: number, options: NonNullable<Setup["options"]>) =>
    Effect.gen(function* () {
      const { cm, sessions } = yield* services
      yield* users(`old turn ${"z".repeat(40_000)}`)
      yield* step(1_000, "stop")
      yield* users("first turn")
      yield* step(1_000, "stop")
      const last = "y".repeat(chars)
      yield* users(last)
      yield* step(1_000, "stop")
      yield* cm.compact(SESSION)
      const state = yield* sessions.load(SESSION)
      return windowOf(state).some((m) => m.role === "user" && textOf(m) === last)
    }).pipe(Effect.provide(layer({ options })))

  it.effect("given cacheAware, then no tail is kept unless preserve_recent_tokens is set", () =>
    Effect.gen(function* () {
      expect(CACHE_AWARE_TAIL).toBe(0)
      expect(yield* keptAfterCompaction(4_000, { cacheAware: true })).toBe(false)
      expect(yield* keptAfterCompaction(4_000, {})).toBe(true)
      const twoThousand = { cacheAware: true, config: { preserve_recent_tokens: 2_000 } }
      expect(yield* keptAfterCompaction(4_000, twoThousand)).toBe(true)
      expect(yield* keptAfterCompaction(12_000, twoThousand)).toBe(false)
      expect(yield* keptAfterCompaction(12_000, {})).toBe(true)
    }),
  )
})
