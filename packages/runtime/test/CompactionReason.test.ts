/**
 * Why a compaction was asked for is recorded on its `CompactionRequested` (`reason`) and folded into the compaction
 * history: the threshold reached by a call's usage or by the check before the next call, a provider's overflow, the
 * cache-aware rent-or-buy, the application's `compact`, the model's `context_compact`.
 */
import { describe, expect, it } from "@effect/vitest"
import { CompactionHistory, type Events } from "@pivot/core"
import { Effect } from "effect"
import { layer, SESSION, type Setup, services, step, users } from "./support/harness.ts"

type Requested = Extract<Events.Event, { _tag: "CompactionRequested" }>

/** The reasons of the session's compaction requests, from the log and from the compaction history's fold. */
const reasons = Effect.gen(function* () {
  const { sessions } = yield* services
  const events = yield* sessions.events(SESSION)
  const logged = events.filter((e): e is Requested => e._tag === "CompactionRequested").map((e) => e.reason)
  const history = events.reduce(
    (state, event, i) => CompactionHistory.evolve(state, event, i + 1),
    CompactionHistory.initial,
  )
  return { logged, folded: history.entries.map((entry) => entry.reason) }
})

const within = (options: NonNullable<Setup["options"]>) => Effect.provide(layer({ options }))

describe("CompactionRequested.reason", () => {
  // The harness model's usable window is 68,000 tokens.
  it.effect("given a step whose usage reaches the usable window, then the request says threshold", () =>
    Effect.gen(function* () {
      yield* users("work")
      yield* step(70_000)
      expect(yield* reasons).toEqual({ logged: ["threshold"], folded: ["threshold"] })
    }).pipe(within({})),
  )

  it.effect("given cache-aware mode's 75 % reached, then the request says threshold", () =>
    Effect.gen(function* () {
      yield* users("work")
      // The first call measures the fixed prompt (~10,000: ADR 0034); 75 % of the room above it is ~53,500.
      yield* step(10_000)
      yield* step(55_000)
      expect((yield* reasons).logged).toEqual(["threshold"])
    }).pipe(within({ cacheAware: true })),
  )

  it.effect("given a provider's context overflow, then the request says provider-overflow", () =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* users("hi")
      yield* cm.reportProviderError(SESSION, {
        error: {
          message: "Bad Request",
          statusCode: 400,
          responseBody: JSON.stringify({ type: "error", error: { code: "context_length_exceeded" } }),
        },
      })
      expect(yield* reasons).toEqual({ logged: ["provider-overflow"], folded: ["provider-overflow"] })
    }).pipe(within({})),
  )

  it.effect("given rent-or-buy due, then the request prepare makes says rent-or-buy", () =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* users("work")
      yield* step(1_000)
      yield* step(20_000)
      yield* step(20_000, "stop")
      yield* users("next")
      expect((yield* cm.prepare(SESSION)).compaction).toBeDefined()
      expect(yield* reasons).toEqual({ logged: ["rent-or-buy"], folded: ["rent-or-buy"] })
    }).pipe(
      within({ cacheAware: { rates: { read: 0.5, write: 1, output: 2 } }, config: { preserve_recent_tokens: 0 } }),
    ),
  )

  it.effect("given compact by the application, then by the model on a later turn, then user, then model", () =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* users("first")
      yield* step(1_000, "stop")
      yield* cm.compact(SESSION)
      yield* users("second")
      yield* step(2_000, "stop")
      yield* cm.compact(SESSION, { requestedBy: "model" })
      expect(yield* reasons).toEqual({ logged: ["user", "model"], folded: ["user", "model"] })
    }).pipe(within({})),
  )
})
