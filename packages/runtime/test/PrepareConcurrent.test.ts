/**
 * `prepare` from another fiber while `compact` holds the session's lock (ADR 0025: the common turn is answered
 * without the lock): once the compaction is outstanding it waits and answers the compacted window; two prepares at
 * once with the HUD on record the HUD once.
 */
import { Tokens } from "@pivot/core"
import type { SummaryResponse } from "@pivot/runtime"
import { Deferred, Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { run, SESSION, services, step, stub, user } from "./support/harness.ts"

describe("prepare beside a compaction in another fiber", () => {
  it("waits for a compaction in progress and answers the compacted window", async () => {
    const entered = Effect.runSync(Deferred.make<void>())
    const gate = Effect.runSync(Deferred.make<void>())
    const summarizer = stub((request) =>
      Effect.gen(function* () {
        yield* Deferred.succeed(entered, undefined)
        yield* Deferred.await(gate)
        return {
          text: "THE SUMMARY",
          usage: { ...Tokens.zero, input: 10, output: 2 },
          finish: "stop",
          model: request.model,
        } satisfies SummaryResponse
      }),
    )
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("first")
        yield* step(1_000, "stop")
        yield* user("second")
        yield* step(2_000, "stop")
        const before = yield* cm.prepare(SESSION)
        const compacting = yield* Effect.forkChild(cm.compact(SESSION))
        yield* Deferred.await(entered)
        const preparing = yield* Effect.forkChild(cm.prepare(SESSION))
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow
        const doneEarly = preparing.pollUnsafe() !== undefined
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(compacting)
        return { before, doneEarly, during: yield* Fiber.join(preparing) }
      }),
      { summarizer },
    )
    expect(JSON.stringify(out.before.modelMessages)).not.toContain("THE SUMMARY")
    expect(out.doneEarly).toBe(false)
    expect(JSON.stringify(out.during.modelMessages)).toContain("THE SUMMARY")
  })

  it("two prepares at once with the HUD on record it once and answer the same", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* user("hello")
        yield* step(3_000, "stop")
        const [a, b] = yield* Effect.all([cm.prepare(SESSION), cm.prepare(SESSION)], { concurrency: 2 })
        const c = yield* cm.prepare(SESSION)
        const events = yield* sessions.events(SESSION)
        return { a, b, c, huds: events.filter((e) => e._tag === "HudShown").length }
      }),
      { options: { hud: true } },
    )
    expect(out.huds).toBe(1)
    expect(out.b).toEqual(out.a)
    expect(out.c).toEqual(out.a)
  })
})
