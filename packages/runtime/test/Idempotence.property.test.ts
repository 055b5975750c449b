/**
 * Issue 18 item 5: a command retried with the same ids is acknowledged each time and stored once, whatever time the
 * runtime stamps on the retry, after a lost acknowledgement, a restart (the stored message decoded in its schema's key
 * order) or other commands in between; other content under a stored id is a `MessageConflict`. Memory and SQLite here;
 * PostgreSQL in Idempotence.pg.slow.test.ts.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { EventStore } from "@pivot/store"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { type Action, actions, check } from "./support/idempotence.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-idempotence-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let n = 0

const stores = {
  memory: () => EventStore.layerMemory(),
  sqlite: () => EventStore.layerSqlite({ filename: path.join(dir, `idem-${++n}.db`), synchronous: "normal" }),
}

describe("retried commands", () => {
  for (const [name, store] of Object.entries(stores)) {
    it(`(${name}) are acknowledged each time and stored once; other content under the id conflicts`, async () => {
      await fc.assert(
        fc.asyncProperty(actions, async (sequence) => {
          const { stored, expected } = await Effect.runPromise(
            check(sequence, store()).pipe(Effect.provide(TestClock.layer())),
          )
          expect(stored).toEqual(expected)
        }),
        { numRuns: name === "memory" ? 100 : 25 },
      )
    })
  }

  it.effect("the example of the issue: a step stored, its acknowledgement lost, retried later (memory)", () =>
    Effect.gen(function* () {
      const base = { variant: 0, advance: 10, lostAck: false, restart: false } as const
      const sequence: ReadonlyArray<Action> = [
        { ...base, kind: "user", k: 0 },
        { ...base, kind: "step", k: 0, lostAck: true },
        { ...base, kind: "user", k: 1 },
        { ...base, kind: "step", k: 0, advance: 60_000 },
        { ...base, kind: "step", k: 0, variant: 1 },
      ]
      const { stored, expected } = yield* check(sequence, EventStore.layerMemory())
      expect(expected).toEqual(["msg_u0", "msg_a0", "msg_u1"])
      expect(stored).toEqual(expected)
    }),
  )
})
