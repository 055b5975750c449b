/**
 * Issue 31 on PostgreSQL (the slow lane; the run's test server, a schema of its own): for every message before every
 * pivot of a generated session, recall gives each part back byte for byte, and a word only it holds (a Latin word, a
 * CJK run) finds it through the full-text read model (see `support/recallEverything.ts`).
 */
import { Ids } from "@pivot/core"
import { ReadModels, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { generatedArb } from "../../core/test/support/sessions.ts"
import { testSchema } from "../../store/test/support/postgres.ts"
import { layer } from "./support/harness.ts"
import { check, expected, marked } from "./support/recallEverything.ts"

const { url, setupError, schema } = testSchema("pivot_recall_all")

describe("recall of everything before a pivot on PostgreSQL (ts_rank)", () => {
  it("property: every part of every message before every pivot comes back byte for byte, and its own word finds it", async () => {
    if (setupError !== "") throw new Error(setupError)
    let run = 0
    let checked = 0
    await fc.assert(
      fc.asyncProperty(
        generatedArb(40).filter((g) => expected(marked(g.events, "ses_x")).length > 0),
        async (generated) => {
          const sessionId = `ses_recall_all_${++run}`
          const events = marked(generated.events, sessionId)
          checked += await Effect.runPromise(
            Effect.gen(function* () {
              yield* SessionLog.append(
                sessionId,
                0,
                events.map((event, i) => ({ id: SessionLog.eventId(sessionId, i + 1), event })),
              )
              return yield* check(sessionId, events)
            }).pipe(
              Effect.provide(
                layer({
                  options: { recall: { maxChars: 10_000_000 } },
                  store: ReadModels.layerPostgres({ url, schema }),
                  // The schema is shared by every run: the recorded recalls need ids no other run used.
                  ids: Ids.Ids.layer,
                }),
              ),
            ) as Effect.Effect<number, never>,
          )
        },
      ),
      { numRuns: 10 },
    )
    expect(checked).toBeGreaterThan(10)
  }, 600_000)
})
