/**
 * The input rules in the runtime (ADR 0030): composed onto cache-aware, they wait while the cache is warm and apply at
 * its first cold moment (TestClock: TTL, TTL + 1 ms), recorded as `PartCompacted` with `target: "input"`, their rule
 * and reason; the next model input shows each cleared input's placeholder naming its recall id, the outputs
 * untouched, and `context_recall` with that id gives the original input back byte for byte.
 */
import { describe, expect, it } from "@effect/vitest"
import { CacheAwareStrategy, type Events, PruneRules, Render, Strategy } from "@pivot/core"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { layer, SESSION, services, tool, used, users, windowOf } from "./support/harness.ts"

type Compacted = Extract<Events.Event, { _tag: "PartCompacted" }>

const CONTENT = "export const answer = 42 // written by the agent\n".repeat(40)
const WRITE = { filePath: "src/answer.ts", content: CONTENT }
const FAILED = { filePath: "src/answer.ts", oldString: `${"no such text\n".repeat(30)}`, newString: "x" }

const session = Effect.gen(function* () {
  const { cm } = yield* services
  yield* users("write the answer")
  yield* cm.recordAssistantStep(SESSION, {
    parts: [tool("write", WRITE, "Wrote file successfully."), tool("read", { filePath: "src/answer.ts" }, CONTENT)],
    usage: used(2_000),
    finish: "tool-calls",
  })
  yield* cm.recordAssistantStep(SESSION, {
    parts: [
      {
        type: "tool",
        callId: "call_edit",
        tool: "edit",
        state: { status: "error", input: FAILED, error: "oldString not found" },
      },
    ],
    usage: used(2_500),
    finish: "stop",
  })
  yield* users("now test it")
})

const compacted = Effect.gen(function* () {
  const { sessions } = yield* services
  return (yield* sessions.events(SESSION)).filter((e): e is Compacted => e._tag === "PartCompacted")
})

const strategy = Strategy.withRules(
  CacheAwareStrategy.make({ batch: 100_000, ttl: 5 * 60 * 1000 }),
  PruneRules.supersededWrites,
  PruneRules.erroredInputs(1),
)

describe("the input rules under cache-aware", () => {
  it.effect("given a warm cache up to the TTL, then they wait; 1 ms past it, both inputs are cleared", () =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* session
      yield* TestClock.adjust("5 minutes")
      expect(yield* cm.prune(SESSION)).toEqual({ parts: 0, tokens: 0 })
      expect(yield* compacted).toEqual([])
      yield* TestClock.adjust("1 millis")
      const pruned = yield* cm.prune(SESSION)
      expect(pruned.parts).toBe(2)
      const events = yield* compacted
      expect(events.map((e) => [e.rule, e.target])).toEqual([
        ["superseded-writes", "input"],
        ["errored-inputs", "input"],
      ])
      expect(events[0]!.reason).toMatch(/^write of src\/answer\.ts superseded by the later read prt_\w+$/)
      expect(pruned.tokens).toBe(Render.inputShed(WRITE) + Render.inputShed(FAILED))

      // The window: placeholders naming the recall ids, the outputs and the edit's error still in view.
      const { sessions } = yield* services
      const window = windowOf(yield* sessions.load(SESSION))
      const text = JSON.stringify(Render.toModelMessages(window, { recallIds: true }))
      for (const e of events) expect(text).toContain(Render.clearedInputText(Render.inputRecallId(e.partId)))
      expect(text).not.toContain("no such text")
      expect(text).toContain("oldString not found")
      expect(text).toContain("Wrote file successfully.")
      expect(text.split("export const answer = 42").length - 1).toBe(40)
      // The model input of the next call carries the placeholders too (the cold cache also clears old outputs then).
      const next = JSON.stringify((yield* cm.prepare(SESSION)).modelMessages)
      for (const e of events) expect(next).toContain(Render.clearedInputText(Render.inputRecallId(e.partId)))

      // Recall gives the original inputs back byte for byte.
      const write = yield* cm.recall(SESSION, { id: Render.inputRecallId(events[0]!.partId) })
      expect(write.text).toBe(JSON.stringify(WRITE))
      const failed = yield* cm.recall(SESSION, { id: Render.inputRecallId(events[1]!.partId) })
      expect(failed.text).toBe(JSON.stringify(FAILED))
      // Nothing left to clear.
      expect((yield* cm.prune(SESSION)).parts).toBe(0)
    }).pipe(Effect.provide(layer({ options: { strategy, recall: true, config: { prune: true } } }))),
  )
})
