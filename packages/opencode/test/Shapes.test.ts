import { Render, Session, Window } from "@pivot/core"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseExportText } from "../src/Export.ts"
import { fixture, fixtureText, folded, imported, importedText, roundTrip, tags, windowIds } from "./support/fixtures.ts"

const reverseKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(reverseKeys)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(
    Object.keys(value)
      .reverse()
      .map((k) => [k, reverseKeys((value as Record<string, unknown>)[k])]),
  )
}

describe("what real exports do", () => {
  it("given a saved export that begins with `Exporting session: …`, then the line is skipped and the session imports", () => {
    const text = fixtureText("exporting-prefix.txt")
    expect(text.startsWith("Exporting session: ses_prefix\n")).toBe(true)
    const result = importedText(text)
    expect(result.sessionId).toBe("ses_prefix")
    expect(windowIds(result)).toEqual(["msg_01", "msg_02"])
    const parsed = parseExportText(text)
    expect(Result.isSuccess(parsed) && parsed.success).toEqual(JSON.parse(text.slice(text.indexOf("\n") + 1)))
  })

  it("given ids last in every object (v1.16 key order), then the import equals the one with ids first: key order is irrelevant", () => {
    const idsLast = fixture("ids-last.json")
    expect(Object.keys(idsLast.messages[0]!.info).at(-1)).toBe("id")
    expect(Object.keys(idsLast)).toEqual(["messages", "info"])
    const a = imported(idsLast)
    const b = imported(reverseKeys(idsLast))
    expect(Object.keys((reverseKeys(idsLast) as typeof idsLast).messages[0]!.info)[0]).toBe("id")
    expect(JSON.stringify(b.events)).toBe(JSON.stringify(a.events))
    expect(a.report).toEqual({ messages: 3, parts: 7, window: 3, dropped: {}, warnings: [], repaired: [] })
  })

  it("given messages out of order in the array, then they are imported in id order (ids sort chronologically)", () => {
    const raw = fixture("ids-last.json")
    const shuffled = { ...raw, messages: [raw.messages[2]!, raw.messages[0]!, raw.messages[1]!] }
    expect(JSON.stringify(imported(shuffled).events)).toBe(JSON.stringify(imported(raw).events))
  })

  it("given a user `!` shell command (synthetic text + one bash tool part, no steps, no finish), then both import as they are and render a closed call", () => {
    const result = imported(fixture("shell-command.json"))
    expect(tags(result)).toEqual([
      "SessionStarted",
      "UserMessageAdded",
      "AssistantStepRecorded",
      "UserMessageAdded",
      "AssistantStepRecorded",
    ])
    const state = folded(result)
    const [user, shell] = Window.messages(state.window)
    expect(user?.parts).toEqual([
      { type: "text", id: "prt_01_01", text: "The following tool was executed by the user", synthetic: true },
    ])
    expect(shell?.role === "assistant" && shell.finish).toBeUndefined()
    expect(shell?.parts.map((p) => p.type)).toEqual(["tool"])
    expect(state.lastFinished).toBe("msg_04")
    const rendered = Window.render(state.window).filter((r) => r.sourceMessageId === "msg_02")
    expect(rendered.map((r) => r.message)).toEqual([
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "call_shell", toolName: "bash", input: { command: "ls" } }],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_shell",
            toolName: "bash",
            output: { type: "text", value: "README.md\nsrc\n" },
          },
        ],
      },
    ])
  })

  it("given a tool left running (and one pending) by a dead process, then they stay so and render as interrupted", () => {
    const result = imported(fixture("running-tool.json"))
    const message = Window.messages(folded(result).window)[1]
    const states =
      message?.role === "assistant" ? message.parts.flatMap((p) => (p.type === "tool" ? [p.state] : [])) : []
    expect(states).toEqual([
      {
        status: "running",
        input: { filePath: "/repo/a.ts", content: "export {}" },
        title: "a.ts",
        startedAt: 1760000001300,
      },
      { status: "pending", input: {} },
    ])
    expect(message?.role === "assistant" && message.completedAt).toBeUndefined()
    const results = Window.render(folded(result).window).flatMap((r) =>
      r.message.role === "tool" ? r.message.content.map((c) => [c.toolCallId, c.output]) : [],
    )
    expect(results).toEqual([
      ["call_write", { type: "error-text", value: Render.INTERRUPTED_TEXT }],
      ["call_fmt", { type: "error-text", value: Render.INTERRUPTED_TEXT }],
    ])
    expect(roundTrip(result.events)).toEqual(result.events)
  })

  it("given a model change mid-session, then each message keeps its model and SessionStarted has the first one", () => {
    const result = imported(fixture("model-change.json"))
    expect(result.events[0]).toMatchObject({ model: { providerId: "anthropic", modelId: "claude-sonnet-4" } })
    const messages = Window.messages(folded(result).window)
    expect(messages.map((m) => (m.role === "assistant" ? m.model : m.model))).toEqual([
      { providerId: "anthropic", modelId: "claude-sonnet-4" },
      { providerId: "anthropic", modelId: "claude-sonnet-4" },
      { providerId: "openai", modelId: "gpt-5", variant: "high" },
      { providerId: "openai", modelId: "gpt-5", variant: "high" },
    ])
    // Rendered for the new model, the old model's reasoning reaches it as plain text.
    const forNew = Window.render(folded(result).window, { model: { providerId: "openai", modelId: "gpt-5" } })
    expect(forNew[1]?.message.content).toEqual([
      { type: "text", text: "Start with the parser." },
      { type: "text", text: "Parser first." },
    ])
    const forOld = Window.render(folded(result).window)
    expect(forOld[1]?.message.content).toEqual([
      { type: "reasoning", text: "Start with the parser." },
      { type: "text", text: "Parser first." },
    ])
  })

  it("given part types pivot does not model (agent, snapshot, patch, retry), then they are dropped and counted", () => {
    const raw = fixture("dropped-parts.json")
    const result = imported(raw)
    expect(result.report.dropped).toEqual({ agent: 1, retry: 1, snapshot: 1, patch: 1 })
    expect(result.report.parts).toBe(raw.messages.flatMap((m) => m.parts).length - 4)
    expect(result.report.warnings).toEqual([])
    const [user, assistant] = Window.messages(folded(result).window)
    expect(user?.parts.map((p) => p.type)).toEqual(["text"])
    expect(assistant?.parts.map((p) => p.type)).toEqual(["step-start", "text", "step-finish"])
  })

  it("given a modelled part on a role that cannot hold it, then it is dropped, counted and warned about", () => {
    const raw = fixture("dropped-parts.json")
    raw.messages[0]!.parts.push({ type: "reasoning", id: "prt_01_99", text: "misplaced" })
    const result = imported(raw)
    expect(result.report.dropped).toMatchObject({ reasoning: 1 })
    expect(result.report.warnings).toEqual([
      "messages[0] (msg_01): a user message cannot hold a reasoning part; it was dropped",
    ])
  })

  it("given extra keys OpenCode versions add, then they are ignored", () => {
    const raw = fixture("shell-command.json")
    raw.messages[0]!.info.summary = { title: "t", diffs: [] }
    raw.messages[0]!.info.fallbackModels = []
    raw.messages[1]!.parts[0]!.state.future = { anything: 1 }
    raw.info.share = { url: "https://opncd.ai/s/x" }
    expect(JSON.stringify(imported(raw).events)).toBe(JSON.stringify(imported(fixture("shell-command.json")).events))
  })

  it("given sessionID and messageID fields that disagree, then the import warns and goes on", () => {
    const raw = fixture("shell-command.json")
    raw.messages[0]!.info.sessionID = "ses_other"
    raw.messages[0]!.parts[0]!.messageID = "msg_99"
    const result = imported(raw)
    expect(result.report.warnings).toEqual([
      "messages[0] (msg_01): sessionID ses_other is not the exported session ses_shell",
      "messages[0] (msg_01).parts[0]: messageID msg_99 is not its message's id",
    ])
  })

  it("given an assistant error (NamedError), then pivot's MessageError takes data.message and keeps data", () => {
    const raw = fixture("shell-command.json")
    raw.messages[3]!.info.error = { name: "MessageAbortedError", data: { message: "The operation was aborted." } }
    const state = Session.fold(imported(raw).events)
    const last = Window.messages(state.window)[3]
    expect(last?.role === "assistant" && last.error).toEqual({
      name: "MessageAbortedError",
      message: "The operation was aborted.",
      data: { message: "The operation was aborted." },
    })
  })
})
