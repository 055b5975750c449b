/** Version conflicts: `execute` waits a jittered, growing delay between attempts and re-decides on the fresh state. */
import { describe, expect, it } from "@effect/vitest"
import { type Commands, Events, Ids, type Message } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore, type NewEvent } from "@pivot/store"
import { Clock, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"

const SESSION = "ses_r"
const stream = Events.streamName(SESSION)
const start: Commands.Command = { _tag: "StartSession", sessionId: Ids.unsafe.session(SESSION), at: 0 }
const userMessage = (n: number): Message.UserMessage => ({
  role: "user",
  id: Ids.unsafe.message(`msg_u${String(n).padStart(4, "0")}`),
  createdAt: n,
  parts: [{ type: "text", id: Ids.unsafe.part(`prt_u${String(n).padStart(4, "0")}`), text: `u${n}` }],
})
const addUser = (n: number): Commands.Command => ({ _tag: "AddUserMessage", message: userMessage(n) })

const otherWritersMessage = (n: number): NewEvent =>
  Sessions.encodeEvent(`evt_other_${n}`, { _tag: "UserMessageAdded", at: n, message: userMessage(100 + n) })

/**
 * A store whose first `conflicts` appends lose a race: just before each, "another process" appends a user message,
 * so the append's expected version is stale. Records the clock at every append attempt.
 */
const racingStore = (conflicts: number, attempts: Array<number>) =>
  Layer.effect(
    EventStore,
    Effect.gen(function* () {
      const inner = yield* EventStore
      let lost = 0
      return {
        ...inner,
        append: (s, expected, events) =>
          Effect.gen(function* () {
            attempts.push(yield* Clock.currentTimeMillis)
            if (s === stream && expected !== "no-stream" && expected !== 0 && lost < conflicts) {
              lost++
              const version = yield* inner.streamVersion(s)
              yield* Effect.orDie(inner.append(s, version, [otherWritersMessage(lost)]))
            }
            return yield* inner.append(s, expected, events)
          }),
      }
    }),
  ).pipe(Layer.provide(EventStore.layerMemory()))

const handler = (options: Sessions.Options, store: Layer.Layer<EventStore>) =>
  Sessions.Sessions.layer(options).pipe(Layer.provide(Ids.Ids.layerSequential), Layer.provideMerge(store))

describe("conflict retries", () => {
  it.effect(
    "given four lost races, when executing, then the waits between attempts double from the base (±20%) and the command lands on the fresh state",
    () => {
      const attempts: Array<number> = []
      const seen: Array<number> = []
      return Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        yield* sessions.execute(SESSION, start)
        attempts.length = 0
        const fiber = yield* Effect.forkChild(
          sessions.execute(SESSION, (state) => {
            seen.push(state.session.version) // re-decided on the state each attempt found
            return addUser(1)
          }),
        )
        yield* TestClock.adjust("10 seconds")
        const executed = yield* Fiber.join(fiber)
        const events = yield* (yield* EventStore).read(stream)
        expect(executed.state.session.version).toBe(6)
        expect(events.map((e) => e.id).slice(1, 5)).toEqual([
          "evt_other_1",
          "evt_other_2",
          "evt_other_3",
          "evt_other_4",
        ])
        expect(seen).toEqual([1, 2, 3, 4, 5])
        const waits = attempts.slice(1).map((at, i) => at - attempts[i]!)
        expect(waits).toHaveLength(4)
        waits.forEach((wait, k) => {
          expect(wait).toBeGreaterThanOrEqual(0.8 * 100 * 2 ** k)
          expect(wait).toBeLessThanOrEqual(1.2 * 100 * 2 ** k)
        })
      }).pipe(
        Effect.provide(
          handler({ conflictBackoff: "100 millis", maxConflictBackoff: "10 seconds" }, racingStore(4, attempts)),
        ),
      )
    },
  )

  it.effect("given a cap, then no wait exceeds it (+20% jitter), however many attempts", () => {
    const attempts: Array<number> = []
    return Effect.gen(function* () {
      const sessions = yield* Sessions.Sessions
      yield* sessions.execute(SESSION, start)
      attempts.length = 0
      const fiber = yield* Effect.forkChild(sessions.execute(SESSION, addUser(1)))
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(fiber)
      const waits = attempts.slice(1).map((at, i) => at - attempts[i]!)
      expect(waits).toHaveLength(8)
      expect(Math.max(...waits)).toBeLessThanOrEqual(1.2 * 300)
      expect(waits.slice(-3).every((wait) => wait >= 0.8 * 300)).toBe(true)
    }).pipe(
      Effect.provide(
        handler(
          { conflictBackoff: "50 millis", maxConflictBackoff: "300 millis", maxAttempts: 9 },
          racingStore(8, attempts),
        ),
      ),
    )
  })

  it.effect(
    "given more lost races than attempts, then ConcurrencyConflict after exactly maxAttempts appends, and no wait after the last",
    () => {
      const attempts: Array<number> = []
      return Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        yield* sessions.execute(SESSION, start)
        attempts.length = 0
        const fiber = yield* Effect.forkChild(Effect.flip(sessions.execute(SESSION, addUser(1))))
        yield* TestClock.adjust("1 minute")
        const error = yield* Fiber.join(fiber)
        expect(error).toMatchObject({ _tag: "ConcurrencyConflict", attempts: 3 })
        expect(attempts).toHaveLength(3)
        const now = yield* Clock.currentTimeMillis
        expect(attempts[2]!).toBeLessThanOrEqual(1.2 * (100 + 200))
        expect(now).toBeGreaterThan(attempts[2]!) // the clock moved on; the failure did not wait for it
      }).pipe(Effect.provide(handler({ conflictBackoff: "100 millis", maxAttempts: 3 }, racingStore(10, attempts))))
    },
  )

  it.effect(
    "given the default policy and races lost for ever, then attempts go on for 2 minutes of the clock (not a count), none starts later, and ConcurrencyConflict counts them",
    () => {
      const attempts: Array<number> = []
      return Effect.gen(function* () {
        const sessions = yield* Sessions.Sessions
        yield* sessions.execute(SESSION, start)
        attempts.length = 0
        const fiber = yield* Effect.forkChild(Effect.flip(sessions.execute(SESSION, addUser(1))))
        // Past the 30 attempts (~23 s of waits) that were the bound before issue 32, and still trying.
        yield* TestClock.adjust("118 seconds")
        expect(fiber.pollUnsafe()).toBeUndefined()
        expect(attempts.length).toBeGreaterThan(100)
        yield* TestClock.adjust("1 minute")
        const error = yield* Fiber.join(fiber)
        const last = attempts.at(-1)! - attempts[0]!
        expect(last).toBeLessThanOrEqual(120_000) // no attempt after the budget
        expect(last).toBeGreaterThan(120_000 - 1_200) // and the last one within a wait of it
        expect(error).toMatchObject({ _tag: "ConcurrencyConflict", attempts: attempts.length })
      }).pipe(Effect.provide(handler({}, racingStore(Number.POSITIVE_INFINITY, attempts))))
    },
  )

  it.effect("given a conflictTimeout, then no attempt starts later than it after the first", () => {
    const attempts: Array<number> = []
    return Effect.gen(function* () {
      const sessions = yield* Sessions.Sessions
      yield* sessions.execute(SESSION, start)
      attempts.length = 0
      const fiber = yield* Effect.forkChild(Effect.flip(sessions.execute(SESSION, addUser(1))))
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("ConcurrencyConflict")
      // Waits of 100 ms ±20% in a 1 s budget: 9 to 13 attempts, every one within the budget.
      expect(attempts.at(-1)! - attempts[0]!).toBeLessThanOrEqual(1_000)
      expect(attempts.at(-1)! - attempts[0]!).toBeGreaterThan(1_000 - 120)
      expect(attempts.length).toBeGreaterThanOrEqual(9)
      expect(attempts.length).toBeLessThanOrEqual(13)
    }).pipe(
      Effect.provide(
        handler(
          { conflictBackoff: "100 millis", maxConflictBackoff: "100 millis", conflictTimeout: "1 second" },
          racingStore(Number.POSITIVE_INFINITY, attempts),
        ),
      ),
    )
  })

  it.effect("given the default policy, then a conflicting command is retried with waits growing to a 1 s cap", () => {
    const attempts: Array<number> = []
    return Effect.gen(function* () {
      const sessions = yield* Sessions.Sessions
      yield* sessions.execute(SESSION, start)
      attempts.length = 0
      const fiber = yield* Effect.forkChild(sessions.execute(SESSION, addUser(1)))
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(fiber)
      // Default: 30 attempts; 29 lost races cost 5, 10, ... ms doubling, capped at 1 s (±20%).
      expect(attempts).toHaveLength(30)
      expect(attempts[1]! - attempts[0]!).toBeGreaterThanOrEqual(4)
      expect(attempts[1]! - attempts[0]!).toBeLessThanOrEqual(6)
      const waits = attempts.slice(1).map((at, i) => at - attempts[i]!)
      expect(Math.max(...waits)).toBeLessThanOrEqual(1200)
      expect(waits.slice(-5).every((wait) => wait >= 800)).toBe(true)
    }).pipe(Effect.provide(handler({}, racingStore(29, attempts))))
  })
})
