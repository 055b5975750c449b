/**
 * Cache-aware mode never breaks the window invariant: random agent loops (requests, tool outputs of any size, gaps
 * past the cache's TTL or not, prunes after turns) on a small model so that compactions and prunes happen often; after
 * every prepare, what is sent breaks no model-input rule and the window keeps its order invariant. The session's clock
 * is a plain value the script advances (no wall clock).
 */
import { type Events, Tokens, ValidWindow } from "@pivot/core"
import { Clock, Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { WhatIf } from "../src/index.ts"
import { layer, SESSION, services, stub, tool } from "./support/harness.ts"

const SYSTEM = "You are the coding agent."
const SMALL = { ref: { providerId: "anthropic", modelId: "claude-test" }, limits: { context: 20_000, output: 4_000 } }

const scriptArb = fc.array(
  fc.record({
    request: fc.integer({ min: 1, max: 2_000 }),
    gapMinutes: fc.constantFrom(1, 2, 4, 6, 10),
    steps: fc.array(fc.record({ output: fc.integer({ min: 0, max: 24_000 }), error: fc.boolean() }), {
      minLength: 1,
      maxLength: 4,
    }),
    prune: fc.boolean(),
  }),
  { minLength: 1, maxLength: 12 },
)

describe("cache-aware mode, property", () => {
  it("never sends an invalid input nor breaks the window's order, whatever the loop", async () => {
    // What the runs exercised, so that the property cannot pass by never compacting or pruning.
    const seen = { pivots: 0, prunes: 0, conversationRequests: 0, paid: 0 }
    // The model's own rates, or rates under which the rent-or-buy rule compacts eagerly (a read as dear as a write).
    const ratesArb = fc.constantFrom(undefined, { read: 1, write: 0.5, output: 0.5 })
    await fc.assert(
      fc.asyncProperty(scriptArb, ratesArb, async (script, rates) => {
        const now = { ms: 1_767_000_000_000 }
        const clock = WhatIf.clockOf(() => now.ms)
        const program = Effect.gen(function* () {
          const { cm, sessions } = yield* services
          let calls = 0
          for (const turn of script) {
            now.ms += turn.gapMinutes * 60_000
            yield* cm.recordUserMessage(SESSION, { text: `do ${"x".repeat(turn.request)}` })
            for (const step of turn.steps) {
              now.ms += 20_000
              const prepared = yield* cm.prepare(SESSION)
              expect(ValidWindow.inputViolations(prepared.messages).filter((v) => v.rule !== "empty-input")).toEqual([])
              const state = yield* sessions.load(SESSION)
              expect(ValidWindow.orderViolations(state.session.window)).toEqual([])
              const input = Tokens.estimate(JSON.stringify(prepared.modelMessages))
              const part = tool("read", { filePath: `src/f${++calls}.ts` }, "o".repeat(step.output))
              yield* cm.recordAssistantStep(SESSION, {
                parts: [
                  step.error ? { ...part, state: { status: "error", input: part.state.input, error: "failed" } } : part,
                ],
                usage: { ...Tokens.zero, input },
                finish: "tool-calls",
              })
            }
            if (turn.prune) yield* cm.prune(SESSION)
          }
          return yield* sessions.events(SESSION)
        })
        const summarizer = stub("the summary so far")
        const events: ReadonlyArray<Events.Event> = await Effect.runPromise(
          program.pipe(
            Effect.provide(
              layer({
                summarizer,
                options: {
                  model: SMALL,
                  cacheAware: {
                    system: SYSTEM,
                    batch: 3_000,
                    ttl: "5 minutes",
                    ...(rates === undefined ? {} : { rates }),
                  },
                  config: { prune: true },
                  prune: { protect: 2_000, minimum: 1_000 },
                },
              }),
            ),
            Effect.provideService(Clock.Clock, clock),
          ) as Effect.Effect<ReadonlyArray<Events.Event>>,
        )
        expect(events[0]?._tag).toBe("SessionStarted")
        seen.pivots += events.filter((e) => e._tag === "SummaryFinished").length
        seen.prunes += events.filter((e) => e._tag === "PartCompacted").length
        // Compactions the rent-or-buy rule started: requested without an overflow found just before.
        seen.paid += events.filter(
          (e, i) => e._tag === "CompactionRequested" && events[i - 1]?._tag !== "OverflowDetected",
        ).length
        seen.conversationRequests += summarizer.requests.filter((r) => r.system === SYSTEM).length
      }),
      { numRuns: 60 },
    )
    expect(seen.pivots).toBeGreaterThan(20)
    expect(seen.prunes).toBeGreaterThan(5)
    expect(seen.conversationRequests).toBeGreaterThan(5)
    expect(seen.paid).toBeGreaterThan(5)
  })
})
