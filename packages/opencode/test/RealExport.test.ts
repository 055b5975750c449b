import { readFileSync } from "node:fs"
import { type ModelMessage, Render, Window } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { folded, importedText, type RawExport, realExportPath, roundTrip } from "./support/fixtures.ts"

const text = readFileSync(realExportPath, "utf8")
const raw = JSON.parse(text) as RawExport
const result = importedText(text)
const state = folded(result)

/** Tool call ids and tool result ids of rendered model messages. */
const toolIds = (messages: ReadonlyArray<ModelMessage.ModelMessage>) => {
  const calls: Array<string> = []
  const results: Array<string> = []
  for (const message of messages) {
    if (typeof message.content === "string") continue
    for (const part of message.content) {
      if (part.type === "tool-call") calls.push(part.toolCallId)
      if (part.type === "tool-result") results.push(part.toolCallId)
    }
  }
  return { calls, results }
}

describe("the real OpenCode v1.16.0 export (stunning-memory)", () => {
  it("given the export, when imported, then all 35 messages (8 user, 27 assistant) and 118 parts are imported, none dropped", () => {
    expect(raw.messages).toHaveLength(35)
    expect(result.sessionId).toBe(raw.info.id)
    expect(result.report.messages).toBe(35)
    expect(result.report.parts).toBe(118)
    expect(result.report.dropped).toEqual({})
    expect(result.report.warnings).toEqual([])
    const tags = result.events.map((e) => e._tag)
    expect(tags[0]).toBe("SessionStarted")
    expect(tags.filter((t) => t === "UserMessageAdded")).toHaveLength(8)
    expect(tags.filter((t) => t === "AssistantStepRecorded")).toHaveLength(27)
    expect(result.events).toHaveLength(36)
  })

  it("SessionStarted carries the session's id, creation time, title and first model", () => {
    expect(result.events[0]).toEqual({
      _tag: "SessionStarted",
      sessionId: "ses_04ca851f7ffevKrKMHW3RsPK1U",
      at: 1785420295689,
      title: raw.info.title,
      model: { providerId: "monkeycode-ai", modelId: "monkeycode-basic/deepseek-v4-flash" },
    })
  })

  it("every part keeps its id and order, and the assistant parts' types and tool states match the export", () => {
    const conversation = Window.messages(state.window)
    for (const [i, m] of raw.messages.entries()) {
      const imported = conversation[i]!
      expect(imported.id).toBe(m.info.id)
      expect(imported.parts.map((p) => [p.id, p.type])).toEqual(m.parts.map((p) => [p.id, p.type]))
      for (const [j, part] of m.parts.entries()) {
        const mine = imported.parts[j]!
        if (part.type === "tool" && mine.type === "tool") {
          expect(mine.callId).toBe(part.callID)
          expect(mine.state).toMatchObject({
            status: part.state.status,
            input: part.state.input,
            output: part.state.output,
          })
        }
        if ((part.type === "text" || part.type === "reasoning") && "text" in mine) expect(mine.text).toBe(part.text)
      }
    }
  })

  it("usage maps to pivot's TokenUsage (cache read/write split out, total kept)", () => {
    const first = Window.messages(state.window)[1]!
    expect(first.role === "assistant" && first.tokens).toEqual({
      input: 27,
      output: 70,
      reasoning: 0,
      cacheRead: 20480,
      cacheWrite: 0,
      total: 20577,
    })
  })

  it("the assistant without finish is recorded as it is (no finish, no step-finish), not as a failure", () => {
    const unfinished = raw.messages.filter((m) => m.info.role === "assistant" && m.info.finish === undefined)
    expect(unfinished).toHaveLength(1)
    const id = unfinished[0]!.info.id
    const message = Window.messages(state.window).find((m) => m.id === id)!
    expect(message.role).toBe("assistant")
    expect(message.role === "assistant" && message.finish).toBeUndefined()
    expect(message.role === "assistant" && message.error).toBeUndefined()
    // It is the newest message, so the last finished one stays the step before it.
    expect(state.lastFinished).toBe(raw.messages[33]!.info.id)
  })

  it("user messages without OpenCode's `summary` field import with their agent and model", () => {
    const users = raw.messages.filter((m) => m.info.role === "user")
    expect(users.every((m) => m.info.summary === undefined)).toBe(true)
    const imported = Window.messages(state.window).filter((m) => m.role === "user")
    expect(imported).toHaveLength(8)
    for (const m of imported)
      expect(m).toMatchObject({
        agent: "build",
        model: { providerId: "monkeycode-ai", modelId: "monkeycode-basic/deepseek-v4-flash" },
      })
  })

  it("the fold is clean: the window lists every imported message in export order", () => {
    expect(state.version).toBe(result.events.length)
    expect(state.sessionId).toBe(raw.info.id)
    expect(Window.messages(state.window).map((m) => m.id)).toEqual(raw.messages.map((m) => m.info.id))
  })

  it("every event decodes with Events.decode after a JSON round trip, unchanged", () => {
    expect(roundTrip(result.events)).toEqual(result.events)
  })

  it("the window renders with every tool call answered by exactly one result", () => {
    const rendered = Window.render(state.window)
    const { calls, results } = toolIds(rendered.map((r) => r.message))
    expect(rendered).toHaveLength(55)
    expect(calls).toHaveLength(21)
    expect([...results].sort()).toEqual([...calls].sort())
    expect(new Set(calls).size).toBe(calls.length)
    // The last assistant (no finish, no step-finish) still renders its write call and its output.
    const last = Render.render([Window.messages(state.window).at(-1)!])
    expect(toolIds(last.map((r) => r.message)).results).toHaveLength(1)
  })
})
