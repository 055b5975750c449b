/**
 * Issue 18 item 5 on PostgreSQL (the slow lane): a command retried with the same ids is acknowledged each time and
 * stored once, after lost acknowledgements, restarts and other commands; other content under the id conflicts. The
 * server is the run's test server (the store's globalSetup); the test drops its schema afterwards.
 */
import { execFileSync } from "node:child_process"
import { EventStore } from "@pivot/store"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { afterAll, describe, expect, inject, it } from "vitest"
import { actions, check } from "./support/idempotence.ts"

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string
    pgError: string
  }
}

// The run's PostgreSQL test server (the store's globalSetup, listed in this project's config), stopped when it ends.
const url = inject("pgUrl")
const setupError = inject("pgError")
const schema = `pivot_idem_${process.pid}`

afterAll(() => {
  if (setupError !== "") return
  const bin = execFileSync("bash", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1"], {
    encoding: "utf8",
  })
  execFileSync(`${bin.trim()}/psql`, [url, "-c", `DROP SCHEMA IF EXISTS ${schema} CASCADE`], { stdio: "ignore" })
})

describe("retried commands (PostgreSQL)", () => {
  it("are acknowledged each time and stored once; other content under the id conflicts", async () => {
    if (setupError !== "") throw new Error(setupError)
    let run = 0
    await fc.assert(
      fc.asyncProperty(actions, async (sequence) => {
        const session = `ses_idem_${++run}`
        const { stored, expected } = await Effect.runPromise(
          check(sequence, EventStore.layerPostgres({ url, schema }), session).pipe(Effect.provide(TestClock.layer())),
        )
        expect(stored).toEqual(expected)
      }),
      { numRuns: 25 },
    )
  }, 300_000)
})
