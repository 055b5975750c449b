/**
 * Issue 31 on the memory store (a scan) and a real SQLite file (FTS5): for every message before every pivot of a
 * generated session, recall gives each part back byte for byte, and a word only it holds finds it (see
 * `support/recallEverything.ts`; PostgreSQL runs the same in `RecallEverything.pg.slow.test.ts`).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type EventStore, ReadModels, SessionLog } from "@pivot/store"
import { Effect, type Layer } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"
import { generatedArb } from "../../core/test/support/sessions.ts"
import { layer } from "./support/harness.ts"
import { check, expected, marked } from "./support/recallEverything.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-recall-all-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

let n = 0
const stores: ReadonlyArray<
  readonly [string, () => Layer.Layer<EventStore | ReadModels.ReadModels, unknown> | undefined]
> = [
  ["memory (scan)", () => undefined],
  ["a real SQLite file (FTS5)", () => ReadModels.layerSqlite({ filename: path.join(dir, `${++n}.db`) })],
]

// Sessions with at least one pivot that summarised something.
const sessions = generatedArb(40)
  .map((g) => marked(g.events, "ses_recall_all"))
  .filter((events) => expected(events).length > 0)

// 15 sessions in the full run, 2 in the fast lane: each case replays a whole session through a store, recalls it all.
const cases = runs(15)

describe.each(stores)("recall of everything before a pivot on %s", (_, makeStore) => {
  it("property: every part of every message before every pivot comes back byte for byte, and its own word finds it", async () => {
    let checked = 0
    await fc.assert(
      fc.asyncProperty(sessions, async (events) => {
        const store = makeStore()
        checked += await Effect.runPromise(
          Effect.gen(function* () {
            yield* SessionLog.append(
              "ses_recall_all",
              0,
              events.map((event, i) => ({ id: SessionLog.eventId("ses_recall_all", i + 1), event })),
            )
            return yield* check("ses_recall_all", events)
          }).pipe(
            Effect.provide(
              layer({ options: { recall: { maxChars: 10_000_000 } }, ...(store === undefined ? {} : { store }) }),
            ),
          ) as Effect.Effect<number, never>,
        )
      }),
      cases,
    )
    // Every case recalls at least one part (the generator keeps only sessions with something summarised); a session
    // may have exactly one, so more than one a case is not guaranteed (a fast-lane run of 2 cases saw exactly 2).
    expect(checked).toBeGreaterThanOrEqual(cases.numRuns)
  }, 300_000)
})
