/**
 * A compaction's probes in the runtime (issue 20 item 5, optional): after a pivot forms, the questions derived from its
 * recorded retention check go to the `Judge` with the summary as stored, the answers are graded and recorded
 * (`ProbesAnswered`); off by default, never required, and a judge that fails or hangs never fails the compaction.
 * The judge here reads the prompt it gets, as a model would: it answers each question from the summary's lines.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Events, Ledger, Probe } from "@pivot/core"
import { Judge, JudgeError, type JudgeRequest, type JudgeShape } from "@pivot/runtime"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { layer, SESSION, services, stub, tool, used } from "./support/harness.ts"
import { answerFromPrompt } from "./support/judge.ts"

const SUMMARY = ["Asked: fix the parser", "Edited src/parser.ts", "Read src/lexer.ts", "Ran npm test"].join("\n")

const JUDGE_MODEL = { providerId: "anthropic", modelId: "judge-small" }

/** A judge answering from its prompt; records the requests. */
const reader = () => {
  const requests: Array<JudgeRequest> = []
  const judge: JudgeShape = {
    answer: (request) =>
      Effect.sync(() => {
        requests.push(request)
        return {
          text: answerFromPrompt(request.prompt),
          usage: { input: 200, output: 30, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
          model: JUDGE_MODEL,
        }
      }),
  }
  return { judge, requests }
}

const withJudge = (judge: JudgeShape | undefined, options: Record<string, unknown> = { probes: true }) => {
  const base = layer({ summarizer: stub(SUMMARY), options: { factsBlock: false, ...options } })
  return judge === undefined ? base : base.pipe(Layer.provide(Layer.succeed(Judge, judge)))
}

/** A session with a request, an edit, a read and a command, then a manual compaction. */
const compacted = Effect.gen(function* () {
  const { cm, sessions } = yield* services
  yield* cm.recordUserMessage(SESSION, { text: "fix the parser" })
  yield* cm.recordAssistantStep(SESSION, {
    parts: [
      tool("edit", { filePath: "src/parser.ts" }, "edited"),
      tool("read", { filePath: "src/config.json" }, "{}"),
      tool("bash", { command: "npm test" }, "ok"),
    ],
    usage: used(20_000),
    finish: "tool-calls",
  })
  const result = yield* cm.compact(SESSION)
  return { result, events: yield* sessions.events(SESSION) }
})

const probesOf = (events: ReadonlyArray<Events.Event>) =>
  events.filter((e): e is Extract<Events.Event, { _tag: "ProbesAnswered" }> => e._tag === "ProbesAnswered")

describe("probes after a compaction", () => {
  const r = reader()
  it.effect(
    "given probes on and a judge, then the questions of the recorded check are answered from the stored summary, graded and recorded",
    () =>
      Effect.gen(function* () {
        const { result, events } = yield* compacted
        expect(result.outcome?.status).toBe("finished")
        const recorded = probesOf(events)
        expect(recorded).toHaveLength(1)
        const probes = recorded[0]!
        const checked = events.find((e) => e._tag === "ArtifactsChecked")
        expect(checked?._tag === "ArtifactsChecked" && checked.markerId).toBe(probes.markerId)
        // Recorded after the check it derives from.
        expect(events.indexOf(probes)).toBeGreaterThan(events.indexOf(checked!))
        // The judge got the summary as stored and the questions of the check's artifacts.
        expect(r.requests).toHaveLength(1)
        const asked = Probe.questions(checked?._tag === "ArtifactsChecked" ? checked.artifacts : [])
        expect(r.requests[0]!.prompt).toBe(Probe.prompt(SUMMARY, asked))
        expect(r.requests[0]!.system).toBe(Probe.SYSTEM)
        // The summary says the parser was edited and the command run; it names the lexer, not config.json, as read.
        const found = Object.fromEntries(probes.probes.map((p) => [p.kind, p.expected.map((e) => [e.text, e.found])]))
        expect(found).toEqual({
          request: [["fix the parser", true]],
          "file-edited": [["src/parser.ts", true]],
          "file-read": [["src/config.json", false]],
          command: [["npm test", true]],
        })
        expect(probes.probes.find((p) => p.kind === "file-read")?.answer).toBe("src/lexer.ts")
        expect(probes).toMatchObject({ model: JUDGE_MODEL, usage: { input: 200, output: 30 } })
        // The ledger shows them beside the pivot and bills the judge's call.
        const ledger = Ledger.fold(events)
        expect(Ledger.entries(ledger)[0]!.probes?.probes).toEqual(probes.probes)
        expect(Ledger.totals(ledger).probeCalls).toBe(1)
      }).pipe(Effect.provide(withJudge(r.judge))),
  )

  const off = reader()
  it.effect("given a judge but probes off (the default), then the judge is never called and nothing is recorded", () =>
    Effect.gen(function* () {
      const { result, events } = yield* compacted
      expect(result.outcome?.status).toBe("finished")
      expect(off.requests).toHaveLength(0)
      expect(probesOf(events)).toHaveLength(0)
    }).pipe(Effect.provide(withJudge(off.judge, {}))),
  )

  it.effect("given probes on but no judge, then the compaction is as without them (a judge is never required)", () =>
    Effect.gen(function* () {
      const { result, events } = yield* compacted
      expect(result.outcome?.status).toBe("finished")
      expect(probesOf(events)).toHaveLength(0)
    }).pipe(Effect.provide(withJudge(undefined))),
  )

  it.effect("given a judge that fails, then the failure is recorded and the compaction stands", () =>
    Effect.gen(function* () {
      const { result, events } = yield* compacted
      expect(result.outcome?.status).toBe("finished")
      expect(probesOf(events)).toEqual([expect.objectContaining({ probes: [], error: "rate limited" })])
      expect(Ledger.totals(Ledger.fold(events)).probeCalls).toBe(0)
    }).pipe(Effect.provide(withJudge({ answer: () => Effect.fail(new JudgeError({ message: "rate limited" })) }))),
  )

  it.effect("given a judge answering with a usage that is not one, then that is recorded as its failure", () =>
    Effect.gen(function* () {
      const { result, events } = yield* compacted
      expect(result.outcome?.status).toBe("finished")
      expect(probesOf(events)).toEqual([
        expect.objectContaining({ probes: [], error: "the judge answered with a usage or model that is not valid" }),
      ])
    }).pipe(
      Effect.provide(
        withJudge({
          answer: () =>
            Effect.succeed({
              text: "[1] x",
              usage: { input: -1, output: Number.NaN, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
              model: JUDGE_MODEL,
            }),
        }),
      ),
    ),
  )

  it.effect("given a judge that hangs, then at the time limit (not before) it is recorded as timed out", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(compacted)
      yield* TestClock.adjust("9999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      const { result, events } = yield* Fiber.join(fiber)
      expect(result.outcome?.status).toBe("finished")
      expect(probesOf(events)).toEqual([
        expect.objectContaining({ probes: [], error: "the judge took longer than 10s" }),
      ])
    }).pipe(
      Effect.provide(
        withJudge({ answer: () => Effect.uninterruptible(Effect.never) }, { probes: { timeout: "10 seconds" } }),
      ),
    ),
  )

  const auto = reader()
  it.effect("given an automatic compaction settled in prepare, then its pivot is probed too, once", () =>
    Effect.gen(function* () {
      const { cm, sessions } = yield* services
      yield* cm.recordUserMessage(SESSION, { text: "fix the parser" })
      yield* cm.recordAssistantStep(SESSION, {
        parts: [tool("edit", { filePath: "src/parser.ts" }, "edited")],
        usage: used(80_000),
        finish: "tool-calls",
      })
      const prepared = yield* cm.prepare(SESSION)
      yield* cm.prepare(SESSION)
      expect(prepared.compaction?.outcome?.status).toBe("finished")
      const events = yield* sessions.events(SESSION)
      expect(probesOf(events)).toHaveLength(1)
      expect(auto.requests).toHaveLength(1)
    }).pipe(Effect.provide(withJudge(auto.judge))),
  )
})
