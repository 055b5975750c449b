/**
 * The retention check as the runtime records it: after every summary, `ArtifactsChecked` lists the exact artifacts of
 * the span the summary replaced (the plan's head) — artifacts planted in its first and last messages are in, those in
 * the kept tail or in an earlier pivot's span are not — and which of them the stored summary names.
 */
import { ArtifactCheck, type Events, Message } from "@pivot/core"
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { run, SESSION, services, stub, users } from "./support/harness.ts"

let calls = 0
const toolStep = (name: string, input: Record<string, unknown>) =>
  Effect.gen(function* () {
    const { cm } = yield* services
    yield* cm.recordAssistantStep(SESSION, {
      parts: [
        { type: "text", text: "working" },
        {
          type: "tool",
          callId: `call_${name}_${++calls}`,
          tool: name,
          state: { status: "completed", input, output: "ok", title: name },
        },
      ],
      usage: { input: 1_000, output: 10, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      finish: "stop",
    })
  })

type Checked = Extract<Events.Event, { _tag: "ArtifactsChecked" }>
type Started = Extract<Events.Event, { _tag: "CompactionStarted" }>

describe("ArtifactsChecked", () => {
  it("given artifacts planted at the span's edges and in the tail, when compacted, then exactly the span's are checked against the stored summary", async () => {
    const summary = "Refactoring the lexer module: planted/first.ts was read. Nothing else."
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("Refactor the lexer module into smaller functions")
        yield* toolStep("read", { filePath: "planted/first.ts" })
        yield* users("Then speed up the caching layer")
        yield* toolStep("edit", { filePath: "planted/last-head.ts" })
        yield* users("tail request stays verbatim")
        yield* toolStep("bash", { command: "planted-tail-command" })
        yield* cm.compact(SESSION)
        yield* users("after the pivot")
        yield* toolStep("write", { filePath: "planted/second-span.ts" })
        yield* users("one more turn")
        yield* toolStep("bash", { command: "second-tail" })
        yield* cm.compact(SESSION)
        const events = yield* sessions.events(SESSION)
        return { events }
      }),
      {
        summarizer: stub(summary),
        options: { factsBlock: false, config: { tail_turns: 1, preserve_recent_tokens: 10_000 } },
      },
    )
    const checks = out.events.filter((e): e is Checked => e._tag === "ArtifactsChecked")
    const starts = out.events.filter((e): e is Started => e._tag === "CompactionStarted")
    expect(checks).toHaveLength(2)
    const first = checks[0]!.artifacts
    expect(first).toEqual([
      { kind: "file-read", text: "planted/first.ts", named: true },
      { kind: "file-edited", text: "planted/last-head.ts", named: false },
      { kind: "request", text: "Refactor the lexer module into smaller functions", named: true },
      { kind: "request", text: "Then speed up the caching layer", named: false },
    ])
    expect(first.map((a) => a.text)).not.toContain("planted-tail-command")
    // The second span starts after the first pivot: the tail turn kept then, and the new work, but nothing older.
    const second = checks[1]!.artifacts.map((a) => a.text)
    expect(second).toContain("planted/second-span.ts")
    expect(second).toContain("planted-tail-command")
    expect(second).not.toContain("planted/first.ts")
    expect(second).not.toContain("second-tail")
    // Each check is the pure check of its plan's head, as recorded, and the summary as stored.
    const recorded = new Map<string, Message.Message>()
    for (const e of out.events)
      if (e._tag === "UserMessageAdded" || e._tag === "AssistantStepRecorded") recorded.set(e.message.id, e.message)
    for (const [i, check] of checks.entries()) {
      expect(check.markerId).toBe(starts[i]!.markerId)
      const finished = out.events.find(
        (e): e is Extract<Events.Event, { _tag: "SummaryFinished" }> =>
          e._tag === "SummaryFinished" && e.markerId === check.markerId,
      )!
      const text = Message.summaryText(finished.summary)!
      expect(text).toBe(summary)
      expect(check.artifacts).toEqual(
        ArtifactCheck.check(
          starts[i]!.plan.head.map((id) => recorded.get(id)!),
          text,
        ),
      )
    }
    expect(ArtifactCheck.tally(first)).toMatchObject({ total: 4, named: 2 })
  })
})

describe("ArtifactsChecked, property", () => {
  it("checks exactly the files of the turns the plan summarised, whatever the tail kept", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 7 }), fc.nat(3), async (turns, tailTurns) => {
        const out = await run(
          Effect.gen(function* () {
            const { cm, sessions } = yield* services
            // Each turn reads its own file: which files a check lists says exactly which turns it covered.
            const stepOf = new Map<string, number>()
            for (let t = 0; t < turns; t++) {
              yield* users(`turn ${t}`)
              const recorded = yield* cm.recordAssistantStep(SESSION, {
                parts: [
                  {
                    type: "tool",
                    callId: `call_${t}`,
                    tool: "read",
                    state: {
                      status: "completed",
                      input: { filePath: `planted/t${t}.ts` },
                      output: "ok",
                      title: "read",
                    },
                  },
                ],
                usage: { input: 1_000, output: 10, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
                finish: "stop",
              })
              stepOf.set(recorded.messageId!, t)
            }
            yield* cm.compact(SESSION)
            return { events: yield* sessions.events(SESSION), stepOf }
          }),
          {
            summarizer: stub("a summary naming nothing"),
            options: { factsBlock: false, config: { tail_turns: tailTurns, preserve_recent_tokens: 50_000 } },
          },
        )
        const started = out.events.find((e): e is Started => e._tag === "CompactionStarted")
        const checked = out.events.find((e): e is Checked => e._tag === "ArtifactsChecked")
        if (started === undefined || started.plan.head.length === 0) {
          expect(checked).toBeUndefined()
          return
        }
        const covered = started.plan.head.flatMap((id) => {
          const t = out.stepOf.get(id)
          return t === undefined ? [] : [`planted/t${t}.ts`]
        })
        const files = checked!.artifacts.filter((a) => a.kind === "file-read")
        expect(files.map((a) => a.text)).toEqual(covered)
        expect(files.every((a) => !a.named)).toBe(true)
        // Every turn is either summarised or kept: none is lost between the two.
        const kept = started.plan.tail.flatMap((id) => (out.stepOf.has(id) ? [out.stepOf.get(id)!] : []))
        expect(covered.length + kept.length).toBe(turns)
      }),
      { numRuns: 60 },
    )
  })
})
