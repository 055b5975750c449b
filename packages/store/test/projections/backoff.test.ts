// The projector's timing under TestClock: a projection whose fold throws is retried with exponential backoff (200 ms,
// then 400 ms, …), each failure recorded, while the healthy projection beside it catches up on its first poll.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { afterAll, expect } from "vitest"
import { Projections } from "../../src/index.ts"
import { sessionArb } from "../session/support.ts"
import { appendBatches, reference, tally, throwingOn } from "./support.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-projections-clock-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const broken = Projections.async(throwingOn("broken", "UserMessageAdded"))
const healthy = Projections.async(tally("healthy"))

const failuresOf = (name: string) =>
  Effect.gen(function* () {
    const status = yield* (yield* Projections.Projections).status
    return status.find((s) => s.name === name)?.failures ?? -1
  })

// Lets the forked workers run what is due now (SQLite calls are synchronous; only the clock is virtual).
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

const [session] = fc.sample(sessionArb(10), { numRuns: 1, seed: 9 })

it.effect("a throwing projection is retried after 200 ms, then 400 ms; the other one is not held up", () =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      Projections.layerSqlite({
        filename: path.join(dir, "clock.db"),
        projections: [broken, healthy],
        projector: { pollInterval: "50 millis" },
      }),
    )
    yield* Effect.gen(function* () {
      yield* settle // both workers found nothing and sleep for one poll interval
      yield* appendBatches("ses_c", session!.batches)
      expect(yield* failuresOf("broken")).toBe(0)
      yield* TestClock.adjust("50 millis")
      yield* settle
      expect(yield* failuresOf("broken")).toBe(1)
      expect(yield* (yield* Projections.Projections).get(healthy)).toEqual(reference(session!.batches.flat()))
      yield* TestClock.adjust("199 millis")
      yield* settle
      expect(yield* failuresOf("broken")).toBe(1)
      yield* TestClock.adjust("1 millis")
      yield* settle
      expect(yield* failuresOf("broken")).toBe(2)
      yield* TestClock.adjust("399 millis")
      yield* settle
      expect(yield* failuresOf("broken")).toBe(2)
      yield* TestClock.adjust("1 millis")
      yield* settle
      expect(yield* failuresOf("broken")).toBe(3)
    }).pipe(Effect.provide(context))
  }),
)
