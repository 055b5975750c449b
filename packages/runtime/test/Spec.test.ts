/**
 * The reference cases of spec §3.2 (processor and loop), §3.3 (create, prune) and §3.4 (process), run through the
 * ContextManager with a stub summariser replying "summary". Where pivot deliberately differs from OpenCode (spec §5),
 * the case says so and the test pins pivot's behaviour; `fallback: false` is OpenCode's behaviour on summariser failure.
 */

import { it as effect } from "@effect/vitest"
import { type Ids, Message, Prompt, Session } from "@pivot/core"
import { SummarizerError } from "@pivot/runtime"
import { Effect, Fiber, Logger, Schedule } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import {
  captured,
  compactionOf,
  failing,
  lastOf,
  layer,
  run,
  SESSION,
  services,
  step,
  stub,
  textOf,
  tool,
  used,
  users,
  windowOf,
} from "./support/harness.ts"

/** A step the agent takes in the middle of a task (a tool call), using `input` tokens. */
const midTaskStep = (input: number) => step(input, "tool-calls", "npm test")

/** Users, then a manual compaction; answers the message ids and the marker's compaction part. */
const markerTail = (texts: ReadonlyArray<string>, config: object) =>
  Effect.gen(function* () {
    const { cm, sessions } = yield* services
    const ids = yield* users(...texts)
    const compacted = yield* cm.compact(SESSION)
    const state = yield* sessions.load(SESSION)
    const outcome = compacted.outcome!
    const marker = Session.message(state.session, outcome.markerId)
    return { ids, part: marker === undefined ? undefined : Message.compactionPartOf(marker), state }
  }).pipe(Effect.map((r) => ({ ...r, config })))

describe("§3.2 processor and loop", () => {
  it("R1 given limits {context 20, output 10}, when a step reports input 100 with text 'after', then a compaction is requested and the step keeps its text and step-finish", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hi")
        const recorded = yield* cm.recordAssistantStep(SESSION, {
          parts: [
            { type: "text", text: "after" },
            { type: "step-finish", reason: "stop", tokens: used(100) },
          ],
          usage: used(100),
          finish: "stop",
        })
        const state = yield* sessions.load(SESSION)
        return { recorded, step: Session.message(state.session, recorded.messageId!) }
      }),
      { options: { model: { ref: { providerId: "p", modelId: "m" }, limits: { context: 20, output: 10 } } } },
    )
    expect(out.recorded.overflow).toBe(true)
    expect(out.recorded.compaction).toBe("requested")
    expect(out.step?.parts.map((p) => p.type)).toEqual(["text", "step-finish"])
    expect(textOf(out.step)).toBe("after")
  })

  it("R2 given a 400 with code context_length_exceeded, when reported, then the action is compact (never retry) and the assistant carries no error", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hi")
        const outcome = yield* cm.reportProviderError(SESSION, {
          error: {
            message: "Bad Request",
            statusCode: 400,
            responseBody: JSON.stringify({ type: "error", error: { code: "context_length_exceeded" } }),
          },
        })
        const state = yield* sessions.load(SESSION)
        return { outcome, message: Session.message(state.session, outcome.messageId!) }
      }),
    )
    expect(out.outcome.action).toBe("compact")
    expect(out.outcome.error.name).toBe("ContextOverflowError")
    expect(out.message?.role === "assistant" && out.message.error).toBeUndefined()
  })

  it("S1 given auto=false, when the provider answers 413 'request entity too large', then the assistant stores ContextOverflowError with finish error, and no marker exists", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hello")
        const outcome = yield* cm.reportProviderError(SESSION, {
          error: {
            message: "request entity too large",
            statusCode: 413,
            responseBody: JSON.stringify({ error: { message: "request entity too large" } }),
          },
        })
        const prepared = yield* cm.prepare(SESSION)
        const state = yield* sessions.load(SESSION)
        return { outcome, prepared, messages: windowOf(state) }
      }),
      { options: { config: { auto: false } } },
    )
    const last = out.messages.at(-1)
    expect(last?.role).toBe("assistant")
    expect(last?.role === "assistant" && last.error?.name).toBe("ContextOverflowError")
    expect(last?.role === "assistant" && last.finish).toBe("error")
    expect(out.messages.some(Message.isMarker)).toBe(false)
    expect(out.outcome.action).toBe("stop")
    expect(out.prepared.compaction).toBeUndefined()
  })

  it("Y1 given an overflow, when reported, then it is never retried (action compact, not retry)", async () => {
    const outcome = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* users("hi")
        return yield* cm.reportProviderError(SESSION, {
          error: { type: "error", error: { code: "context_length_exceeded" } },
        })
      }),
    )
    expect(outcome.action).not.toBe("retry")
    expect(outcome.error.message).toBe("Input exceeds context window of this model")
  })
})

describe("§3.3 create and prune", () => {
  it("K1 given a provider overflow on the first turn, when compaction is requested, then exactly one marker with one part {compaction, auto: true, overflow: true}", async () => {
    const markers = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hello")
        yield* cm.reportProviderError(SESSION, { error: "prompt is too long: 300000 tokens > 200000 maximum" })
        const events = yield* sessions.events(SESSION)
        return events.flatMap((e) => (e._tag === "CompactionRequested" ? [e.marker] : []))
      }),
    )
    expect(markers).toHaveLength(1)
    expect(markers[0]!.parts).toHaveLength(1)
    expect(markers[0]!.parts[0]).toMatchObject({ type: "compaction", auto: true, overflow: true })
  })

  const pruneSession = (toolName: string) =>
    Effect.gen(function* () {
      const { cm } = yield* services
      const [u1] = yield* users("first")
      const step = yield* cm.recordAssistantStep(SESSION, {
        parentId: u1!,
        parts: [tool(toolName, { command: "cat big" }, "x".repeat(200_000))],
        usage: used(1_000),
        finish: "end_turn",
      })
      yield* users("second", "third")
      const pruned = yield* cm.prune(SESSION)
      return { pruned, stepId: step.messageId! }
    })

  it("P1 given prune on and a 50k-token bash output two turns back, when pruned, then that output is compacted", async () => {
    const out = await run(
      Effect.gen(function* () {
        const result = yield* pruneSession("bash")
        const { sessions } = yield* services
        const state = yield* sessions.load(SESSION)
        return { ...result, step: Session.message(state.session, result.stepId) }
      }),
      { options: { config: { prune: true } } },
    )
    expect(out.pruned).toEqual({ parts: 1, tokens: 50_000 })
    const part = out.step?.parts[0]
    expect(part?.type === "tool" && part.state.status === "completed" && typeof part.state.compactedAt).toBe("number")
  })

  it("P2 given prune on and the same output from the protected skill tool, when pruned, then nothing is compacted", async () => {
    const out = await run(pruneSession("skill"), { options: { config: { prune: true } } })
    expect(out.pruned).toEqual({ parts: 0, tokens: 0 })
  })

  it("P2 given the default config (prune off), when pruned, then nothing happens", async () => {
    const out = await run(pruneSession("bash"))
    expect(out.pruned).toEqual({ parts: 0, tokens: 0 })
  })

  it("given prune thresholds above the output (protect 60k), when pruned, then the 50k output is kept; protectedTools replaces skill", async () => {
    const kept = await run(pruneSession("bash"), { options: { config: { prune: true }, prune: { protect: 60_000 } } })
    expect(kept.pruned).toEqual({ parts: 0, tokens: 0 })
    const skill = await run(pruneSession("skill"), {
      options: { config: { prune: true }, prune: { protect: 0, minimum: 0, protectedTools: [] } },
    })
    expect(skill.pruned).toEqual({ parts: 1, tokens: 50_000 })
  })
})

describe("§3.4 process", () => {
  it("C1 given user hello and an assistant reply, when a compaction is processed with the assistant as parent, then it is refused with a typed error and nothing is recorded", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hello")
        const reply = yield* cm.recordAssistantStep(SESSION, {
          parts: [{ type: "text", text: "hi" }],
          usage: used(10),
          finish: "stop",
        })
        const before = (yield* sessions.load(SESSION)).session.version
        const refused = yield* Effect.flip(
          sessions.execute(SESSION, {
            _tag: "ProcessCompaction",
            at: 1,
            markerId: reply.messageId!,
            summaryId: "msg_x" as Ids.MessageId,
            model: { providerId: "p", modelId: "m" },
            compactionLimits: { context: 100_000, output: 32_000 },
            config: {},
          }),
        )
        const after = (yield* sessions.load(SESSION)).session.version
        return { refused, before, after }
      }),
    )
    expect(out.refused._tag).toBe("UnknownCompaction")
    expect(out.after).toBe(out.before)
  })

  it("C2 given user hello, when compacted on demand, then a summary forms and no continue message follows (manual)", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hello")
        const compacted = yield* cm.compact(SESSION)
        const events = yield* sessions.events(SESSION)
        const state = yield* sessions.load(SESSION)
        return { compacted, tags: events.map((e) => e._tag), last: lastOf(state) }
      }),
    )
    expect(out.compacted.outcome?.status).toBe("finished")
    expect(out.tags).toContain("SummaryFinished")
    expect(out.tags).not.toContain("ContinueRequested")
    expect(out.last?.role === "assistant" && out.last.summary).toBe(true)
  })

  it("C3 (parity mode, fallback off) given a summariser that overflows, then the summary fails with 'Session too large to compact' and no pivot forms", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hello")
        const compacted = yield* cm.compact(SESSION)
        const state = yield* sessions.load(SESSION)
        const failed = (yield* sessions.events(SESSION)).find((e) => e._tag === "SummaryFailed")
        return { compacted, failed, pivot: state.session.window.pivot }
      }),
      { summarizer: failing("overflow", "prompt is too long"), options: { fallback: false } },
    )
    expect(out.compacted.outcome?.status).toBe("failed")
    expect(out.failed?._tag === "SummaryFailed" && out.failed.summary.finish).toBe("error")
    expect(out.failed?._tag === "SummaryFailed" && out.failed.summary.error?.message).toContain(
      "Session too large to compact",
    )
    expect(out.pivot).toBeUndefined()
  })

  it("C3 (pivot, deviation) given a summariser that overflows, then the extractive summary is used and the pivot forms", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hello")
        const compacted = yield* cm.compact(SESSION)
        const events = yield* sessions.events(SESSION)
        return { compacted, fallback: events.find((e) => e._tag === "SummaryFallbackUsed") }
      }),
      { summarizer: failing("overflow", "prompt is too long") },
    )
    expect(out.compacted.outcome?.status).toBe("finished")
    expect(out.fallback).toMatchObject({ reason: "overflow" })
  })

  it("C3 (warning) given a summariser that fails, then the fallback is said once through the logger, with its cause", async () => {
    const warnings: Array<string> = []
    const capture = Logger.make(({ logLevel, message }) => {
      if (logLevel === "Warn") warnings.push((Array.isArray(message) ? message : [message]).join(" "))
    })
    await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* users("hello")
        yield* cm.compact(SESSION).pipe(Effect.provide(Logger.layer([capture])))
      }),
      { summarizer: failing("failed", "503 Service Unavailable") },
    )
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(
      /^pivot: session ses_\w+, compaction msg_\w+: the summariser's summary was replaced by the extractive fallback \(failed: 503 Service Unavailable\)$/,
    )
  })

  it("C4 given user hello and a step mid-task that fills the context, when prepared, then the last message is the synthetic continue text", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hello")
        yield* midTaskStep(80_000)
        const prepared = yield* cm.prepare(SESSION)
        const state = yield* sessions.load(SESSION)
        return { prepared, last: lastOf(state) }
      }),
    )
    expect(out.prepared.compaction?.continuation).toBe("continued")
    expect(out.last?.role).toBe("user")
    const first = out.last?.parts[0]
    expect(first).toMatchObject({ type: "text", synthetic: true, metadata: { compaction_continue: true } })
    expect(first?.type === "text" && first.text).toContain("Continue if you have next steps")
    expect(out.prepared.next).toBe("call")
  })

  it("C5 given users first, second, third, tail_turns 2, preserve 10_000, when compacted, then the tail starts at 'second'", async () => {
    const s = stub()
    const out = await run(markerTail(["first", "second", "third"], {}), {
      summarizer: s,
      options: { config: { tail_turns: 2, preserve_recent_tokens: 10_000 } },
    })
    expect(out.part?.tailStartId).toBe(out.ids[1])
    expect(captured(s.requests[0])).toContain("first")
    expect(captured(s.requests[0])).not.toContain("third")
  })

  it("C7 given users first and 'y'×2000, tail_turns 1, preserve 20, when compacted, then no tail and the summariser sees 'yyyy'", async () => {
    const s = stub()
    const out = await run(markerTail(["first", "y".repeat(2_000)], {}), {
      summarizer: s,
      options: { config: { tail_turns: 1, preserve_recent_tokens: 20 } },
    })
    expect(out.part?.tailStartId).toBeUndefined()
    expect(captured(s.requests[0])).toContain("yyyy")
  })

  it("C8 given a recent turn with a 4000-char inline image, tail_turns 1, preserve 100, then no tail; the summariser sees the text and the placeholder, not the bytes", async () => {
    const s = stub()
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("older")
        yield* cm.recordUserMessage(SESSION, {
          text: "recent image turn",
          parts: [
            { type: "file", mime: "image/png", filename: "big.png", url: `data:image/png;base64,${"a".repeat(4_000)}` },
          ],
        })
        const compacted = yield* cm.compact(SESSION)
        const state = yield* sessions.load(SESSION)
        const marker = Session.message(state.session, compacted.outcome!.markerId)!
        return Message.compactionPartOf(marker)
      }),
      { summarizer: s, options: { config: { tail_turns: 1, preserve_recent_tokens: 100 } } },
    )
    expect(out?.tailStartId).toBeUndefined()
    const seen = captured(s.requests[0])
    expect(seen).toContain("recent image turn")
    expect(seen).toContain("Attached image/png: big.png")
    expect(seen).not.toContain("a".repeat(100))
  })

  it("C10 given a mid-task auto compaction and an autoContinue plugin answering enabled=false, then the last message is the summary and no continue message exists", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hello")
        yield* midTaskStep(80_000)
        const prepared = yield* cm.prepare(SESSION)
        const state = yield* sessions.load(SESSION)
        const events = yield* sessions.events(SESSION)
        return { prepared, last: lastOf(state), events }
      }),
      { options: { plugins: [{ name: "no-continue", autoContinue: () => ({ enabled: false }) }] } },
    )
    expect(out.prepared.compaction?.continuation).toBe("skipped")
    expect(out.last?.role === "assistant" && out.last.summary).toBe(true)
    expect(out.events.some((e) => e._tag === "ContinueRequested")).toBe(false)
    expect(out.events.find((e) => e._tag === "AutoContinueSkipped")).toMatchObject({
      reason: "plugin-veto",
      plugin: "no-continue",
    })
  })

  it("C11 given a turn with an https image rejected by the provider for size, when prepared, then that turn is replayed without file parts, the image as a placeholder", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("root")
        yield* cm.recordAssistantStep(SESSION, {
          parts: [{ type: "text", text: "ok" }],
          usage: used(100),
          finish: "stop",
        })
        yield* cm.recordUserMessage(SESSION, {
          text: "image",
          parts: [{ type: "file", mime: "image/png", filename: "cat.png", url: "https://example.test/cat.png" }],
        })
        const reported = yield* cm.reportProviderError(SESSION, {
          error: { message: "request entity too large", statusCode: 413 },
        })
        const prepared = yield* cm.prepare(SESSION)
        const state = yield* sessions.load(SESSION)
        return { reported, prepared, last: lastOf(state) }
      }),
    )
    expect(out.reported.action).toBe("compact")
    expect(out.prepared.compaction?.continuation).toBe("replayed")
    expect(out.last?.role).toBe("user")
    expect(out.last?.parts.some((p) => p.type === "file")).toBe(false)
    expect(textOf(out.last)).toContain("Attached image/png: cat.png")
  })

  it("C12 given a single turn rejected for size, when prepared, then replay is cancelled and the continue text explains the size limit", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("current")
        yield* cm.reportProviderError(SESSION, { error: { message: "request entity too large", statusCode: 413 } })
        const prepared = yield* cm.prepare(SESSION)
        return { prepared, last: lastOf(yield* sessions.load(SESSION)) }
      }),
    )
    expect(out.prepared.compaction?.continuation).toBe("continued")
    expect(textOf(out.last)).toContain("previous request exceeded the provider's size limit")
  })

  effect.effect(
    "C13 given a summariser that keeps retrying, when the caller interrupts, then prepare stops without the clock moving and no summary is recorded (the compaction stays resumable)",
    () => {
      // A 503 with retry-after, retried every 10 ms: it never answers by itself.
      let attempts = 0
      const s = stub(() =>
        Effect.suspend(() => {
          attempts++
          return Effect.fail(new SummarizerError({ reason: "failed", message: "503" }))
        }).pipe(Effect.retry(Schedule.spaced("10 millis"))),
      )
      return Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hello")
        yield* midTaskStep(80_000)
        const fiber = yield* Effect.forkChild(cm.prepare(SESSION))
        // Let the test clock drive the retries until the summariser has been asked a few times.
        for (let i = 0; i < 1_000 && attempts < 3; i++) yield* TestClock.adjust("10 millis")
        expect(attempts).toBeGreaterThanOrEqual(3)
        // The interruption must complete with the clock standing still: nothing waits for a retry or a time limit.
        const interrupting = yield* Effect.forkChild(Fiber.interrupt(fiber))
        for (let i = 0; i < 1_000 && interrupting.pollUnsafe() === undefined; i++) yield* Effect.yieldNow
        expect(interrupting.pollUnsafe()).toBeDefined()
        const tags = (yield* sessions.events(SESSION)).map((e) => e._tag)
        expect(tags).toContain("CompactionStarted")
        expect(tags).not.toContain("SummaryFinished")
        expect(tags).not.toContain("SummaryFailed")
      }).pipe(Effect.provide(layer({ summarizer: s })))
    },
  )

  it("C14 given a compaction-context hook that never returns, when the caller interrupts, then no summary (nor the compaction's start) is recorded", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hello")
        const fiber = yield* Effect.forkChild(cm.compact(SESSION))
        yield* Effect.sleep("50 millis")
        yield* Fiber.interrupt(fiber)
        const exit = yield* Fiber.await(fiber)
        const events = yield* sessions.events(SESSION)
        return { interrupted: exit._tag === "Failure", tags: events.map((e) => e._tag) }
      }),
      { options: { plugins: [{ name: "stuck", timeout: "1 hour", compactionContext: () => Effect.never }] } },
    )
    expect(out.interrupted).toBe(true)
    expect(out.tags).toContain("CompactionRequested")
    expect(out.tags).not.toContain("CompactionStarted")
    expect(out.tags).not.toContain("SummaryFinished")
  })

  it("C17 given 'older context', 'keep this turn', 'and this one too', when compacted with defaults, then the summariser sees the older turn only, not the marker text", async () => {
    const s = stub()
    await run(markerTail(["older context", "keep this turn", "and this one too"], {}), { summarizer: s })
    const seen = captured(s.requests[0])
    expect(seen).toContain("older context")
    expect(seen).not.toContain("keep this turn")
    expect(seen).not.toContain("and this one too")
    expect(seen).not.toContain("What did we do so far?")
  })

  it("C18 given a first pivot 'summary one', when a second compaction runs, then its prompt updates <previous-summary> holding 'summary one' exactly once", async () => {
    const s = stub((request, n) =>
      Effect.succeed({
        text: n === 1 ? "summary one" : "summary two",
        usage: used(1),
        finish: "stop",
        model: request.model,
      }),
    )
    await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* users("older context", "keep this turn")
        yield* cm.compact(SESSION)
        yield* users("latest turn")
        yield* cm.compact(SESSION)
      }),
      { summarizer: s },
    )
    const seen = captured(s.requests[1])
    expect(seen).toContain("<previous-summary>")
    expect(seen.split("summary one").length - 1).toBe(1)
    expect(seen).toContain("## Important Details")
    expect(seen).toContain("## Work State")
  })
})

describe("the compaction agent's prompt", () => {
  it("given any compaction, then the summariser gets the system prompt, no tools, and the prompt as the last user message", async () => {
    const s = stub()
    await run(markerTail(["hello"], {}), { summarizer: s })
    const request = s.requests[0]!
    expect(request.system).toBe(Prompt.SYSTEM_PROMPT)
    const last = request.messages.at(-1)
    expect(last?.role).toBe("user")
    expect(JSON.stringify(last)).toContain("## Relevant Files")
    expect(request.maxOutputTokens).toBe(32_000)
  })

  it("given a compaction, the model ref recorded is the compaction model's", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* users("hello")
        const compacted = yield* cm.compact(SESSION)
        const state = yield* sessions.load(SESSION)
        return compactionOf(state, compacted.outcome!.markerId)
      }),
      {
        options: {
          compactionModel: {
            ref: { providerId: "openai", modelId: "cheap" },
            limits: { context: 50_000, output: 4_000 },
          },
        },
      },
    )
    expect(out?.model).toEqual({ providerId: "openai", modelId: "cheap" })
  })
})
