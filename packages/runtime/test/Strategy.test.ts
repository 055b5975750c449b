/**
 * The runtime executes a strategy's decisions as commands: a user's strategy passed to `ContextManager.layer` prunes
 * through its rules (recorded with rule and reason, shown as pivot's placeholder, recalled by id), and cache-aware
 * keeps the turn in progress verbatim when the hard limit compacts in its middle — tested just under, at and over it.
 */
import { describe, expect, it } from "@effect/vitest"
import { CacheAwareStrategy, type Events, OpenCodeStrategy, PruneRules, Render, Strategy } from "@pivot/core"
import { Effect, Exit, Layer } from "effect"
import { layer, SESSION, services, step, textOf, tool, users, windowOf } from "./support/harness.ts"

type Compacted = Extract<Events.Event, { _tag: "PartCompacted" }>

describe("a user's strategy", () => {
  const strategy = Strategy.withRules(OpenCodeStrategy.v1_17, PruneRules.duplicateCalls)
  const readTwice = Effect.gen(function* () {
    const { cm } = yield* services
    yield* users("read it")
    const first = yield* cm.recordAssistantStep(SESSION, {
      parts: [{ ...tool("read", { path: "src/a.ts" }, "export const a = 1 // old"), callId: "call_1" }],
      usage: { input: 1_000, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      finish: "tool-calls",
    })
    yield* cm.recordAssistantStep(SESSION, {
      parts: [{ ...tool("read", { path: "src/a.ts" }, "export const a = 2 // new"), callId: "call_2" }],
      usage: { input: 1_100, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      finish: "tool-calls",
    })
    return first
  })

  it.effect("given the duplicate-calls rule, then prune clears the older read with its rule and reason", () =>
    Effect.gen(function* () {
      const { cm, sessions } = yield* services
      const first = yield* readTwice
      const pruned = yield* cm.prune(SESSION)
      expect(pruned.parts).toBe(1)
      const compacted = (yield* sessions.events(SESSION)).filter((e): e is Compacted => e._tag === "PartCompacted")
      const oldPart = first.events.flatMap((e) =>
        e._tag === "AssistantStepRecorded" ? e.message.parts.filter((p) => p.type === "tool").map((p) => p.id) : [],
      )[0]!
      expect(compacted.map((e) => [e.partId, e.rule])).toEqual([[oldPart, "duplicate-calls"]])
      expect(compacted[0]!.reason).toMatch(/^same read call as prt_\w+, whose output is newer$/)
      // The window shows pivot's placeholder naming the recall id; recall gives the original back.
      const text = JSON.stringify((yield* cm.prepare(SESSION)).modelMessages)
      expect(text).toContain(Render.clearedText(oldPart))
      expect(text).toContain("a = 2 // new")
      expect(text).not.toContain("a = 1 // old")
      const recalled = yield* cm.recall(SESSION, { id: oldPart })
      expect(recalled.text).toContain("export const a = 1 // old")
      // Asked again, nothing more to clear.
      expect((yield* cm.prune(SESSION)).parts).toBe(0)
    }).pipe(Effect.provide(layer({ options: { strategy, recall: true } }))),
  )

  it.effect("given OpenCode's strategy without rules, then the same session prunes nothing (pruning is off)", () =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* readTwice
      expect((yield* cm.prune(SESSION)).parts).toBe(0)
    }).pipe(Effect.provide(layer({ options: { strategy: OpenCodeStrategy.v1_17 } }))),
  )

  it.effect("given both strategy and cacheAware, then the layer fails with one line naming the option", () =>
    Effect.gen(function* () {
      const built = yield* Effect.exit(
        Layer.build(layer({ options: { strategy, cacheAware: true } })).pipe(Effect.scoped),
      )
      expect(Exit.isFailure(built)).toBe(true)
      expect(String(Exit.isFailure(built) ? built.cause : "")).toContain(
        "invalid option strategy: opencode-1.17+duplicate-calls with cacheAware",
      )
    }),
  )
})

describe("cache-aware keeps the turn in progress at the hard limit", () => {
  // The harness model's usable window is 68,000 tokens; cache-aware's trigger is floor(68,000 × 0.75) = 51,000.
  const TRIGGER = 51_000
  const REQUEST = "fix the parser: keep the public API"
  const midTurn = (tokens: number) =>
    Effect.gen(function* () {
      const { cm, sessions } = yield* services
      yield* users(`an older turn ${"z".repeat(4_000)}`)
      yield* step(1_000, "stop")
      yield* users(REQUEST)
      yield* cm.recordAssistantStep(SESSION, {
        parts: [tool("read", { path: "src/parser.ts" }, "export const parse = () => 42")],
        usage: { input: tokens, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
        finish: "tool-calls",
      })
      const prepared = yield* cm.prepare(SESSION)
      const window = windowOf(yield* sessions.load(SESSION))
      return {
        compacted: prepared.compaction !== undefined,
        request: window.some((m) => m.role === "user" && textOf(m) === REQUEST),
        read: JSON.stringify(prepared.modelMessages).includes("export const parse = () => 42"),
      }
    })

  const cacheAware = { cacheAware: { rentOrBuy: false } }

  it.effect("given the trigger − 1, then no compaction; at it and + 1, the request and the read stay verbatim", () =>
    Effect.gen(function* () {
      const at = (tokens: number) => midTurn(tokens).pipe(Effect.provide(layer({ options: cacheAware })))
      expect(yield* at(TRIGGER - 1)).toEqual({ compacted: false, request: true, read: true })
      expect(yield* at(TRIGGER)).toEqual({ compacted: true, request: true, read: true })
      expect(yield* at(TRIGGER + 1)).toEqual({ compacted: true, request: true, read: true })
    }),
  )

  it.effect("given cache-aware without its keep (ADR 0017 as it was), then the same compaction drops both", () =>
    Effect.gen(function* () {
      const { keep: _keep, ...withoutKeep } = CacheAwareStrategy.make({ rentOrBuy: false })
      const result = yield* midTurn(TRIGGER).pipe(Effect.provide(layer({ options: { strategy: withoutKeep } })))
      expect(result).toEqual({ compacted: true, request: false, read: false })
    }),
  )
})
