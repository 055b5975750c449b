/**
 * Issue 18 item 5 on PostgreSQL (the slow lane): a command retried with the same ids is acknowledged each time and
 * stored once, after lost acknowledgements, restarts and other commands; other content under the id conflicts. The
 * server is the run's test server (the store's globalSetup); the test drops its schema afterwards.
 */
import { EventStore } from "@pivot/store"
import { Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { testSchema } from "../../store/test/support/postgres.ts"
import { actions, check } from "./support/idempotence.ts"

const { url, setupError, schema } = testSchema("pivot_idem")

// The driver times its connects and idle connections on Effect's clock, here the test clock, which `settled` moves a
// second per 5 ms of real I/O: a connect slower than ~25 ms under load "timed out" and the call failed with a real
// `StoreUnavailable` (CI on ecc7d9c). Neither timer means anything on a clock that is not the wall's.
const untimed = { connectTimeout: Duration.infinity, idleTimeout: Duration.infinity }

describe("retried commands (PostgreSQL)", () => {
  it("are acknowledged each time and stored once; other content under the id conflicts", async () => {
    if (setupError !== "") throw new Error(setupError)
    let run = 0
    await fc.assert(
      fc.asyncProperty(actions, async (sequence) => {
        const session = `ses_idem_${++run}`
        const { stored, expected } = await Effect.runPromise(
          check(sequence, EventStore.layerPostgres({ url, schema, ...untimed }), session).pipe(
            Effect.provide(TestClock.layer()),
          ),
        )
        expect(stored).toEqual(expected)
      }),
      { numRuns: 25 },
    )
  }, 300_000)
})
