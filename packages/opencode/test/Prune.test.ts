import { Conversation, Render, Tokens, Window } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { fixture, folded, imported, roundTrip, tags } from "./support/fixtures.ts"

describe("pruned tool outputs (pruned.json)", () => {
  const raw = fixture("pruned.json")
  const result = imported(raw)
  const readPart = raw.messages[1]!.parts[1]!
  const grepPart = raw.messages[1]!.parts[2]!

  it("given outputs with state.time.compacted, then PartCompacted events follow at that time, before the next message", () => {
    expect(tags(result)).toEqual([
      "SessionStarted",
      "UserMessageAdded",
      "AssistantStepRecorded",
      "AssistantStepRecorded",
      "PartCompacted",
      "PartCompacted",
      "UserMessageAdded",
      "AssistantStepRecorded",
      "AssistantStepRecorded",
    ])
    const prunes = result.events.filter((e) => e._tag === "PartCompacted")
    expect(prunes).toEqual([
      { _tag: "PartCompacted", at: 1760000009000, messageId: "msg_02", partId: readPart.id, tokens: 100 },
      { _tag: "PartCompacted", at: 1760000009000, messageId: "msg_02", partId: grepPart.id, tokens: 10 },
    ])
    expect(prunes[0]?._tag === "PartCompacted" && prunes[0].tokens).toBe(Tokens.estimate(readPart.state.output))
  })

  it("the step records the outputs uncompacted, so the log keeps them and the prune's history", () => {
    const step = result.events[2]
    expect(step?._tag).toBe("AssistantStepRecorded")
    const tools = step?._tag === "AssistantStepRecorded" ? step.message.parts.filter((p) => p.type === "tool") : []
    expect(tools.map((p) => p.type === "tool" && p.state)).toEqual([
      expect.objectContaining({ status: "completed", output: "x".repeat(400) }),
      expect.objectContaining({ status: "completed", output: "y".repeat(40) }),
    ])
    for (const p of tools)
      expect(p.type === "tool" && p.state.status === "completed" && p.state.compactedAt).toBeUndefined()
  })

  it("after the fold the parts are compacted at the prune's time and render as the cleared placeholder", () => {
    const state = folded(result)
    const message = Conversation.get(state.window.conversation, "msg_02" as never)
    const states =
      message?.role === "assistant" ? message.parts.flatMap((p) => (p.type === "tool" ? [p.state] : [])) : []
    expect(states.map((s) => s.status === "completed" && s.compactedAt)).toEqual([1760000009000, 1760000009000])
    const results = Window.render(state.window).flatMap((r) =>
      r.message.role === "tool" ? r.message.content.map((c) => [c.toolCallId, c.output]) : [],
    )
    expect(results).toEqual([
      ["call_read", { type: "text", value: Render.CLEARED_TEXT }],
      ["call_grep", { type: "text", value: Render.CLEARED_TEXT }],
      ["call_bash", { type: "text", value: "ok 12 tests" }],
    ])
    expect(Render.CLEARED_TEXT).toBe("[Old tool result content cleared]")
  })

  it("given a prune later than every message, then it comes last; the events still round-trip", () => {
    const late = structuredClone(raw)
    late.messages[1]!.parts[1]!.state.time.compacted = 1760000099000
    const r = imported(late)
    expect(tags(r).at(-1)).toBe("PartCompacted")
    expect(r.events.at(-1)).toMatchObject({ partId: readPart.id, at: 1760000099000 })
    expect(roundTrip(r.events)).toEqual(r.events)
  })
})
