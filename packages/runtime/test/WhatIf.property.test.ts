/**
 * `WhatIf.replay` reproduces what it replays: a generated agent session recorded under a built-in strategy (requests,
 * steps with tool outputs of any size, some results recorded after their step, gaps past the cache's TTL or not, a
 * prune after each turn, a scripted model summariser), replayed from its events alone under the same strategy, sends
 * the recorded windows byte for byte, call by call, and reuses every recorded summary. The session's clock is a plain
 * value the script advances (no wall clock).
 */
import { type Events, Ids, Tokens } from "@pivot/core"
import { EventStore } from "@pivot/store"
import { Clock, Effect, Layer } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ContextManager, Sessions, Strategies, Summarizer, type SummarizerShape, WhatIf } from "../src/index.ts"

const SESSION = "ses_whatif"
const MODEL = { ref: { providerId: "anthropic", modelId: "claude-test" }, limits: { context: 12_000, output: 2_000 } }
const OVERHEAD = 700

const scriptArb = fc.array(
  fc.record({
    request: fc.integer({ min: 1, max: 1_500 }),
    gapMinutes: fc.constantFrom(1, 3, 5, 6, 12),
    steps: fc.array(
      fc.record({
        output: fc.integer({ min: 0, max: 16_000 }),
        tool: fc.constantFrom("read", "bash", "edit"),
        error: fc.boolean(),
        later: fc.boolean(),
        text: fc.integer({ min: 0, max: 400 }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  }),
  { minLength: 3, maxLength: 10 },
)
type Script = typeof scriptArb extends fc.Arbitrary<infer A> ? A : never

/** A model summariser stand-in: a text naming the head's size, billed as a model's call. */
const scripted: SummarizerShape = {
  summarize: (request) =>
    Effect.succeed({
      text: `Summary of ${request.head.length} messages: the work so far.`,
      usage: { ...Tokens.zero, input: 900, output: 120 },
      finish: "stop",
      model: request.model,
    }),
}

/** Records the script under `name` as an agent loop on pivot would; answers the events and each call's window. */
const record = (script: Script, name: Strategies.Name) => {
  const now = { ms: 1_767_000_000_000 }
  const windows: Array<string> = []
  const program = Effect.gen(function* () {
    const cm = yield* ContextManager
    const sessions = yield* Sessions.Sessions
    let call = 0
    for (const turn of script) {
      now.ms += turn.gapMinutes * 60_000
      yield* cm.recordUserMessage(SESSION, { text: `request ${"r".repeat(turn.request)}` })
      for (const step of turn.steps) {
        now.ms += 20_000
        const prepared = yield* cm.prepare(SESSION)
        const window = JSON.stringify(prepared.messages.map((r) => r.message))
        windows.push(window)
        call++
        const input = { filePath: `src/f${call}.ts`, command: `npm test ${call}` }
        const done = step.error
          ? ({ status: "error", input, error: `failed ${call}` } as const)
          : ({ status: "completed", input, output: "o".repeat(step.output), title: step.tool } as const)
        const partId = Ids.unsafe.part(`prt_step${String(call).padStart(6, "0")}`)
        const recorded = yield* cm.recordAssistantStep(SESSION, {
          parts: [
            { type: "text", text: `step ${call} ${"t".repeat(step.text)}` },
            {
              type: "tool",
              id: partId,
              callId: `call_${call}`,
              tool: step.tool,
              state: step.later ? { status: "running", input } : done,
            },
          ],
          usage: { ...Tokens.zero, input: OVERHEAD + Tokens.estimate(window), output: 50 + step.text },
          finish: "tool-calls",
        })
        if (step.later) {
          now.ms += 5_000
          yield* cm.recordToolResult(SESSION, { messageId: recorded.messageId!, partId, state: done })
        }
      }
      yield* cm.prune(SESSION)
    }
    return yield* sessions.events(SESSION)
  })
  const system = WhatIf.standInSystem(OVERHEAD)
  const layer = ContextManager.layer({
    model: MODEL,
    overheadTokens: OVERHEAD,
    ...Strategies.strategyOptions(name, { context: MODEL.limits.context, system }),
  }).pipe(
    Layer.provide(Layer.succeed(Summarizer, scripted)),
    Layer.provide(Ids.Ids.layer),
    Layer.provideMerge(EventStore.layerMemory()),
  )
  const events = Effect.runSync(
    program.pipe(
      Effect.provide(layer),
      Effect.provideService(
        Clock.Clock,
        WhatIf.clockOf(() => now.ms),
      ),
    ) as Effect.Effect<ReadonlyArray<Events.Event>>,
  )
  return { events, windows }
}

describe("WhatIf.replay, property", () => {
  it("replaying a session under the strategy it was recorded with sends the recorded windows byte for byte", async () => {
    // What the runs exercised, so that the property cannot pass by never compacting, pruning or reusing a summary.
    const seen = { compactions: 0, prunes: 0, reused: 0, laterResults: 0 }
    await fc.assert(
      fc.asyncProperty(scriptArb, fc.constantFrom(...Strategies.NAMES), async (script, name) => {
        const recorded = record(script, name)
        const inputs = WhatIf.inputsOf(SESSION, recorded.events)
        expect(inputs.overhead).toBe(OVERHEAD)
        const run = await Effect.runPromise(
          WhatIf.replay(inputs, name, { model: MODEL, billing: WhatIf.billingFor(MODEL.ref, undefined) }),
        )
        expect(run.windows).toEqual(recorded.windows)
        const summaries = recorded.events.filter((e) => e._tag === "SummaryFinished").length
        expect(run.summaries).toEqual({ recorded: summaries, extractive: 0 })
        expect(run.compactions).toBe(summaries)
        expect(run.prunedParts).toBe(recorded.events.filter((e) => e._tag === "PartCompacted").length)
        seen.compactions += summaries
        seen.reused += run.summaries.recorded
        seen.prunes += run.prunedParts
        seen.laterResults += recorded.events.filter((e) => e._tag === "ToolResultRecorded").length
      }),
      { numRuns: 24 },
    )
    expect(seen.compactions).toBeGreaterThan(10)
    expect(seen.reused).toBeGreaterThan(10)
    expect(seen.prunes).toBeGreaterThan(3)
    expect(seen.laterResults).toBeGreaterThan(10)
  })
})
