/** Opening steps that meet a lock held by another process are retried with backoff, within the busy timeout. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { SqlError } from "effect/sql"
import { TestClock } from "effect/testing"
import * as Busy from "../src/internal/busy.ts"
import { StoreCorrupt, StoreUnavailable } from "../src/StoreError.ts"

const sqliteFailure = (code: number) => {
  const cause = { message: "database is locked", errno: code, errcode: code }
  const reason = SqlError.classifySqliteError(cause, { message: "database is locked", operation: "execute" })
  return new StoreUnavailable({ reason: "database is locked", cause: new SqlError.SqlError({ reason }) })
}

/** An effect that fails with `failure` the first `times` runs, then succeeds; counts its runs. */
const failing = (times: number, failure: StoreUnavailable | StoreCorrupt) => {
  const runs = { count: 0 }
  const effect = Effect.suspend(() => (++runs.count <= times ? Effect.fail(failure) : Effect.succeed("open")))
  return { runs, effect }
}

describe("retryWhileBusy", () => {
  it("recognises SQLITE_BUSY and SQLITE_LOCKED (also extended codes), and nothing else", () => {
    expect(Busy.isBusy(sqliteFailure(5))).toBe(true)
    expect(Busy.isBusy(sqliteFailure(6))).toBe(true)
    expect(Busy.isBusy(sqliteFailure(5 | (2 << 8)))).toBe(true) // SQLITE_BUSY_SNAPSHOT
    expect(Busy.isBusy(sqliteFailure(4))).toBe(false)
    expect(Busy.isBusy(sqliteFailure(7))).toBe(false)
    expect(Busy.isBusy(new StoreUnavailable({ reason: "server down" }))).toBe(false)
    expect(Busy.isBusy(new StoreCorrupt({ reason: "bad header" }))).toBe(false)
  })

  it.effect("given a step busy three times, then it is run a fourth time and succeeds", () =>
    Effect.gen(function* () {
      const { runs, effect } = failing(3, sqliteFailure(5))
      const fiber = yield* Effect.forkChild(Busy.retryWhileBusy("5 seconds")(effect))
      yield* TestClock.adjust("1 second") // 10 + 20 + 40 ms of backoff, jittered, fit well within
      expect(yield* Fiber.join(fiber)).toBe("open")
      expect(runs.count).toBe(4)
    }),
  )

  it.effect("given a step that stays busy, then it fails with the busy error once the budget is spent", () =>
    Effect.gen(function* () {
      const { runs, effect } = failing(Number.POSITIVE_INFINITY, sqliteFailure(5))
      const fiber = yield* Effect.forkChild(Effect.flip(Busy.retryWhileBusy("1 second")(effect)))
      yield* TestClock.adjust("500 millis")
      expect(fiber.pollUnsafe()).toBeUndefined() // still retrying inside the budget
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      expect(Busy.isBusy(error)).toBe(true)
      // Backoff, not a busy loop: 10, 20, 40, 80, 160, then 250 ms waits fill one second in under a dozen runs.
      expect(runs.count).toBeGreaterThan(4)
      expect(runs.count).toBeLessThan(12)
    }),
  )

  it.effect("given a failure that is not a lock, then it is not retried", () =>
    Effect.gen(function* () {
      const { runs, effect } = failing(1, new StoreCorrupt({ reason: "not a database" }))
      const error = yield* Effect.flip(Busy.retryWhileBusy("5 seconds")(effect))
      expect(error._tag).toBe("StoreCorrupt")
      expect(runs.count).toBe(1)
    }),
  )
})
