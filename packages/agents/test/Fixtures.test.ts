import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Events, type Message, Session, ValidWindow, Window } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { importTranscript } from "../src/Import.ts"
import { detect } from "../src/Transcript.ts"

const root = join(import.meta.dirname, "fixtures")
const files = ["claude-code", "codex", "hand-written", "recorded"].flatMap((dir) =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => join(dir, f)),
)
const read = (file: string) => readFileSync(join(root, file), "utf8")
const load = (file: string) => importTranscript(read(file), { final: true })!

describe("published and hand-written transcripts", () => {
  it.each(files)("%s imports whole: every line read, none malformed, every event a valid stored event", (file) => {
    const result = load(file)
    const text = read(file)
    expect(result.report.malformed).toBe(0)
    expect(result.report.waiting).toBe(0)
    expect(result.report.consumed).toBe(Buffer.byteLength(text))
    expect(result.events[0]?._tag).toBe("SessionStarted")
    // Each event survives the storage codec unchanged (what `pivot import` writes).
    for (const event of result.events) expect(Events.decode(Events.encode(event))).toEqual(event)
    expect(result.report.repaired).toEqual([])
    const window = Session.fold(result.events).window
    expect(ValidWindow.violations(window).filter((v) => v.rule !== "empty-input")).toEqual([])
  })

  it("tells the agents apart by content", () => {
    expect(files.map((f) => [f, detect(read(f))])).toEqual(
      files.map((f) => [f, f.startsWith("codex") || f.includes("codex-") ? "codex" : "claude-code"]),
    )
    expect(detect('{"info":{"id":"ses_1"},"messages":[]}\n')).toBeUndefined()
    expect(detect("not json\n")).toBeUndefined()
  })
})

const steps = (events: ReadonlyArray<Events.Event>): Array<Message.AssistantMessage> =>
  events.flatMap((e) => (e._tag === "AssistantStepRecorded" ? [e.message] : []))

describe("Claude Code: claude-code-compaction.jsonl (hand-written)", () => {
  const result = load("hand-written/claude-code-compaction.jsonl")
  it("one API response written as three lines is one step with its last line's usage, cache writes and reads as billed", () => {
    const [first, second, third] = steps(result.events)
    expect(first!.parts.map((p) => p.type)).toEqual(["reasoning", "text", "tool"])
    expect(first!.tokens).toEqual({ input: 4, output: 96, reasoning: 0, cacheRead: 0, cacheWrite: 14210 })
    expect(first!.finish).toBe("tool-calls")
    expect(second!.tokens).toEqual({ input: 6, output: 188, reasoning: 0, cacheRead: 14210, cacheWrite: 812 })
    expect(third!.tokens.cacheWrite).toBe(30120)
    expect(first!.model).toEqual({ providerId: "anthropic", modelId: "claude-sonnet-4-5-20250929" })
  })
  it("the tool_result in the next user entry answers the call; no user message is made of it", () => {
    const result_ = result.events.find((e) => e._tag === "ToolResultRecorded")!
    expect(result_._tag === "ToolResultRecorded" && result_.state.status).toBe("completed")
    expect(result.events.filter((e) => e._tag === "UserMessageAdded")).toHaveLength(2)
  })
  it("the compact_boundary is an automatic pivot whose summary is the isCompactSummary text; everything before it was dropped", () => {
    const tags = result.events.map((e) => e._tag)
    expect(tags.slice(tags.indexOf("CompactionRequested"), tags.indexOf("CompactionRequested") + 3)).toEqual([
      "CompactionRequested",
      "CompactionStarted",
      "SummaryFinished",
    ])
    const requested = result.events.find((e) => e._tag === "CompactionRequested")!
    expect(requested._tag === "CompactionRequested" && requested.reason).toBe("threshold")
    const started = result.events.find((e) => e._tag === "CompactionStarted")!
    expect(started._tag === "CompactionStarted" && started.plan.head).toHaveLength(3) // the question and both steps
    expect(started._tag === "CompactionStarted" && started.plan.tail).toEqual([])
    const window = Window.messages(Session.fold(result.events).window)
    expect(window.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"])
    expect(window[1]!.role === "assistant" && window[1]!.summary).toBe(true)
    const summary = window[1]!.parts[0]!
    expect(summary.type === "text" && summary.text).toMatch(/^This session is being continued/)
  })
  it("bookkeeping lines are left out by kind, a sidechain line too, and an unknown line type is counted, not fatal", () => {
    expect(result.report.dropped).toEqual({
      summary: 1,
      "file-history-snapshot": 1,
      sidechain: 1,
      "system api_error": 1,
    })
    expect(result.report.unknown).toEqual({ "telemetry-sample": 1 })
  })
})

describe("Codex CLI: codex-compaction.jsonl (hand-written)", () => {
  const result = load("hand-written/codex-compaction.jsonl")
  it("a step's usage is its token_count's last_token_usage: cached input split out of input, reasoning out of output", () => {
    const [first, second, third, fourth] = steps(result.events)
    expect(first!.tokens).toEqual({ input: 6048, output: 82, reasoning: 128, cacheRead: 3072, cacheWrite: 0 })
    expect(first!.parts.map((p) => p.type)).toEqual(["reasoning", "tool"])
    // The repeated count (same totals) after turn_context is the same call, not a second one.
    expect(second!.tokens).toEqual({ input: 736, output: 64, reasoning: 16, cacheRead: 8704, cacheWrite: 0 })
    expect(third!.tokens).toEqual({ input: 1550, output: 40, reasoning: 0, cacheRead: 0, cacheWrite: 0 })
    expect(fourth!.tokens.cacheRead).toBe(1280)
    expect(steps(result.events)).toHaveLength(4)
    expect(first!.model).toEqual({ providerId: "openai", modelId: "gpt-5-codex" })
  })
  it("compacted is a pivot keeping the user messages of its replacement_history", () => {
    const window = Window.messages(Session.fold(result.events).window)
    const texts = window.map((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(""))
    expect(texts.slice(1, 4)).toEqual([
      "The user asked why npm test fails: src/date.test.ts expects UTC but parse() uses local time.",
      "Why does npm test fail?",
      "Fix it.",
    ])
    expect(result.report.unknown).toEqual({ "response_item ghost_snapshot": 1 })
  })
})

describe("Codex CLI: the published rollout of claude-code-log", () => {
  const result = load("codex/rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl")
  it("a rollout without token counts records its call at the end with no usage; outputs join their calls", () => {
    const [step] = steps(result.events)
    expect(step!.tokens).toEqual({ input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 })
    expect(step!.parts.flatMap((p) => (p.type === "tool" ? [`${p.tool}:${p.state.status}`] : []))).toEqual([
      "exec_command:completed",
      "apply_patch:completed",
      "mcp__synthetic__lookup:completed",
    ])
    expect(result.report.unknown).toEqual({ future_synthetic_record: 1 })
  })
})
