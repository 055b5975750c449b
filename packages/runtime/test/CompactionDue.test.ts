/**
 * `ContextManager.compactionDue`: whether the session's strategy would compact before the next call, read without
 * executing it (what drive mode asks before each OpenCode call). The steps over the trigger are recorded as an importer
 * records them (no limits on the command, so no overflow is decided with them), as the OpenCode plugin's store holds
 * them.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ids, Tokens } from "@pivot/core"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { layer, SESSION, services, step, users } from "./support/harness.ts"

/** A finished step whose usage is `input` tokens, recorded as an import records it: no overflow is decided. */
const imported = (input: number, finish = "stop") =>
  Effect.gen(function* () {
    const { sessions } = yield* services
    const state = yield* sessions.load(SESSION)
    const parent = state.runtime.lastUserId!
    const n = state.session.version
    yield* sessions.execute(SESSION, {
      _tag: "RecordAssistantStep",
      message: {
        role: "assistant",
        id: Ids.unsafe.message(`msg_imported${String(n).padStart(4, "0")}`),
        parentId: parent,
        createdAt: 0,
        completedAt: 0,
        model: { providerId: "anthropic", modelId: "claude-test" },
        tokens: { ...Tokens.zero, input },
        finish,
        parts: [{ type: "text", id: Ids.unsafe.part(`prt_imported${String(n).padStart(4, "0")}`), text: "done" }],
      },
    })
  })

const due = Effect.gen(function* () {
  const { cm } = yield* services
  return yield* cm.compactionDue(SESSION)
})

describe("ContextManager.compactionDue", () => {
  // The harness model: usable 68,000; cache-aware's trigger is 75% of it, 51,000.
  for (const [tokens, reason] of [
    [50_999, undefined],
    [51_000, "threshold"],
    [51_001, "threshold"],
  ] as const)
    it.effect(`given cache-aware and a call of ${tokens} tokens (trigger 51,000), then it says ${reason}`, () =>
      Effect.gen(function* () {
        yield* users("work")
        yield* imported(tokens)
        const answer = yield* due
        expect(answer.reason).toBe(reason)
        expect(answer.usage).toMatchObject({ tokens, source: "reported", usable: 68_000, trigger: 51_000 })
        expect(answer.estimated).toBeGreaterThan(0)
      }).pipe(Effect.provide(layer({ options: { cacheAware: true } }))),
    )

  it.effect("given OpenCode's strategy, then only the usable window is its trigger", () =>
    Effect.gen(function* () {
      yield* users("work")
      yield* imported(67_999)
      expect((yield* due).reason).toBeUndefined()
      yield* users("more")
      yield* imported(68_000)
      expect((yield* due).reason).toBe("threshold")
    }).pipe(Effect.provide(layer({}))),
  )

  it.effect("given the answer asked twice, then nothing was recorded: it is read, not executed", () =>
    Effect.gen(function* () {
      const { sessions } = yield* services
      yield* users("work")
      yield* imported(60_000)
      const before = (yield* sessions.load(SESSION)).session.version
      expect((yield* due).reason).toBe("threshold")
      expect((yield* due).reason).toBe("threshold")
      expect((yield* sessions.events(SESSION)).length).toBe(before)
      expect((yield* sessions.load(SESSION)).session.pending).toBeUndefined()
    }).pipe(Effect.provide(layer({ options: { cacheAware: true } }))),
  )

  // Rent-or-buy prices a warm cache: due until the TTL (5 minutes) has passed since the last call, not a millisecond later.
  for (const [elapsed, reason] of [
    [299_999, "rent-or-buy"],
    [300_000, "rent-or-buy"],
    [300_001, undefined],
  ] as const)
    it.effect(`given rent-or-buy due and ${elapsed} ms since the last call (TTL 300,000), then it says ${reason}`, () =>
      Effect.gen(function* () {
        yield* users("work")
        yield* step(1_000)
        yield* step(20_000)
        yield* step(20_000, "stop")
        yield* users("next")
        yield* TestClock.adjust(elapsed)
        expect((yield* due).reason).toBe(reason)
      }).pipe(
        Effect.provide(
          layer({
            options: {
              cacheAware: { rates: { read: 0.5, write: 1, output: 2 } },
              config: { preserve_recent_tokens: 0 },
            },
          }),
        ),
      ),
    )
})
