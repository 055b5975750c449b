/**
 * The fixed prompt (system prompt and tools) measured from the session's first call (ADR 0034): its reported prompt
 * tokens minus pivot's estimate of the messages recorded before it, once; summaries and later calls change nothing.
 */
import { type Events, FixedPrompt, type Message, Tail, Tokens } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { assistant, assistantMessage, started, user } from "./support/events.ts"

const fold = (events: ReadonlyArray<Events.Event>) => events.reduce(FixedPrompt.evolve, FixedPrompt.initial)
const usage = (input: number, cacheRead = 0, cacheWrite = 0, output = 0): Tokens.TokenUsage => ({
  ...Tokens.zero,
  input,
  cacheRead,
  cacheWrite,
  output,
})
const sizeOfEvent = (event: Events.Event) =>
  event._tag === "UserMessageAdded" ? Tail.sizeOf([event.message as Message.Message]) : 0

describe("FixedPrompt", () => {
  it("given the first call's prompt, then the fixed prompt is it minus the request's estimate; its output is left out", () => {
    const request = user("u1", "fix the parser in src/parser.ts")
    const state = fold([started(), request, assistant("a1", "u1", "ok", { tokens: usage(15_000, 4_000, 1_000, 900) })])
    expect(state.before).toBe(sizeOfEvent(request))
    expect(state.tokens).toBe(20_000 - sizeOfEvent(request))
  })

  it("given later calls, a summary first or a prompt below the request's estimate, then only the first call counts, at 0 least", () => {
    const request = user("u1", "hello")
    const first = assistant("a1", "u1", "ok", { tokens: usage(500) })
    const later = assistant("a2", "u1", "ok", { tokens: usage(90_000) })
    expect(fold([started(), request, first, later]).tokens).toBe(500 - sizeOfEvent(request))
    const summary = assistant("s1", "u1", "summary", { summary: true, tokens: usage(70_000) })
    expect(fold([started(), request, summary, first]).tokens).toBe(500 - sizeOfEvent(request))
    expect(fold([started(), request, assistant("a1", "u1", "ok", { tokens: usage(1) })]).tokens).toBe(0)
  })

  it("given a first step without usage, then it waits for one with usage and counts the step as sent", () => {
    const request = user("u1", "hello")
    const silent = assistantMessage("a0", "u1", "thinking", { tokens: Tokens.zero })
    const state = fold([
      started(),
      request,
      { _tag: "AssistantStepRecorded", at: 5, message: silent },
      assistant("a1", "u1", "ok", { tokens: usage(8_000) }),
    ])
    expect(state.before).toBe(sizeOfEvent(request) + Tail.sizeOf([silent]))
    expect(state.tokens).toBe(8_000 - state.before)
  })

  it("given no call yet, then nothing is measured; withStep measures the call being recorded", () => {
    const state = fold([started(), user("u1", "hello")])
    expect(state.tokens).toBeUndefined()
    const step = assistantMessage("a1", "u1", "ok", { tokens: usage(3_000) })
    expect(FixedPrompt.withStep(state, step).tokens).toBe(3_000 - state.before)
    expect(FixedPrompt.withStep(FixedPrompt.withStep(state, step), { ...step, tokens: usage(9_000) })).toEqual(
      FixedPrompt.withStep(state, step),
    )
  })
})
