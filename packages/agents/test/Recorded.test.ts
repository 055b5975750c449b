/**
 * The transcripts real agents wrote (test/fixtures/recorded, made by `npm run record:agents`: Claude Code 2.1.332 and
 * Codex CLI 0.171.0 run offline against a scripted model). Each difference between what they really write and the
 * formats the readers were first written to has a test named after it. The expected figures are read from the raw
 * lines here, independently of the readers.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { Events, Message } from "@pivot/core"
import { Session, Window } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { importTranscript } from "../src/Import.ts"

type Json = Record<string, any>

const root = join(import.meta.dirname, "fixtures/recorded")
const read = (file: string) => readFileSync(join(root, file), "utf8")
const rows = (text: string): Array<Json> =>
  text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l))

const steps = (events: ReadonlyArray<Events.Event>) =>
  events.flatMap((e) => (e._tag === "AssistantStepRecorded" ? [e.message] : []))
const summaries = (events: ReadonlyArray<Events.Event>) =>
  events.flatMap((e) => (e._tag === "SummaryFinished" ? [e.summary] : []))
const textOf = (m: Message.Message) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")
const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)

describe("Claude Code 2.1.332, recorded", () => {
  const text = read("claude-code-2.1.332.jsonl")
  const lines = rows(text)
  const result = importTranscript(text, { final: true })!

  it("imports whole: no line unknown or malformed, and the 2.1.x line kinds are named as left out, by kind", () => {
    expect(result.report.agent).toBe("claude-code")
    expect(result.report.malformed).toBe(0)
    expect(result.report.unknown).toEqual({})
    const kinds = new Set(lines.map((l) => l.type as string))
    // Every kind of line in the file is either imported (user, assistant, system) or counted as left out.
    expect(new Set([...Object.keys(result.report.dropped), "user", "assistant", "system"])).toEqual(kinds)
    expect(Object.keys(result.report.dropped).sort()).toEqual([
      "api-request",
      "api-request-blob",
      "api-request-shape",
      "atis-latch",
      "attachment",
      "cost-state",
      "last-prompt",
      "mode",
      "queue-operation",
      "tools-used",
    ])
  })

  it("each API response is one step whose usage is its message.usage: cache writes and reads as billed", () => {
    const byId = new Map<string, Json>()
    for (const l of lines) if (l.type === "assistant" && l.isSidechain !== true) byId.set(l.message.id, l.message.usage)
    const usages = [...byId.values()]
    const got = steps(result.events)
    expect(got).toHaveLength(byId.size)
    expect(sum(got.map((s) => s.tokens.cacheWrite))).toBe(sum(usages.map((u) => u.cache_creation_input_tokens)))
    expect(sum(got.map((s) => s.tokens.cacheRead))).toBe(sum(usages.map((u) => u.cache_read_input_tokens)))
    expect(sum(got.map((s) => s.tokens.input))).toBe(sum(usages.map((u) => u.input_tokens)))
    expect(sum(got.map((s) => s.tokens.output))).toBe(sum(usages.map((u) => u.output_tokens)))
    expect(sum(got.map((s) => s.tokens.cacheRead))).toBeGreaterThan(0)
    expect(got[0]!.model).toEqual({ providerId: "anthropic", modelId: "claude-sonnet-4-6" })
  })

  it("the tool calls and their results carry over, the failing test run and Read as errors", () => {
    const results = result.events.flatMap((e) => (e._tag === "ToolResultRecorded" ? [e.state] : []))
    const calls = lines.flatMap((l) =>
      l.type === "assistant" ? l.message.content.filter((b: Json) => b.type === "tool_use") : [],
    )
    expect(results).toHaveLength(calls.length)
    // The first test run (sub is broken: exit 1) and the Read of a file that does not exist.
    const errors = results.flatMap((r) => (r.status === "error" ? [r.input] : []))
    expect(errors).toEqual([
      { command: "node test.js", description: "Run the tests" },
      { file_path: expect.stringMatching(/src\/missing\.js$/) },
    ])
  })

  it("the manual /compact and the auto-compact are pivots (reasons user and threshold) whose summary is the agent's", () => {
    const requested = result.events.flatMap((e) => (e._tag === "CompactionRequested" ? [e.reason] : []))
    expect(requested).toEqual(["user", "threshold"])
    const written = lines.filter((l) => l.isCompactSummary === true).map((l) => l.message.content)
    expect(summaries(result.events).map(textOf)).toEqual(written)
    expect(written[1]).toContain("sub was fixed to return a - b")
  })

  it("compact_boundary preservedMessages (2.1.x): the messages it kept stay verbatim after the summary", () => {
    const boundaries = lines.filter((l) => l.subtype === "compact_boundary")
    const kept = boundaries.map((b) => b.compactMetadata.preservedMessages.uuids as Array<string>)
    // The kept uuids that are conversation lines (not attachments): what the summary is followed by.
    const texts = (uuids: Array<string>) =>
      uuids.flatMap((u) => {
        const line = lines.find((l) => l.uuid === u && (l.type === "user" || l.type === "assistant"))
        if (line === undefined) return []
        const c = line.message.content
        return [typeof c === "string" ? c : c.map((b: Json) => b.text ?? "").join("")]
      })
    const plans = result.events.flatMap((e) => (e._tag === "CompactionStarted" ? [e.plan] : []))
    expect(plans.map((p) => p.tail.length)).toEqual(kept.map((k) => texts(k).length))
    const window = Window.messages(Session.fold(result.events).window)
    const summary = window.findIndex((m) => m.role === "assistant" && m.summary === true)
    expect(window.slice(summary + 1, summary + 1 + texts(kept[1]!).length).map(textOf)).toEqual(texts(kept[1]!))
    expect(texts(kept[1]!)).toEqual(["Added the test of sub(0, 5); the tests pass.", "What did we change?"])
    expect(textOf(window.at(-1)!)).toBe("sub in src/math.js now subtracts, and test.js checks sub(0, 5) too.")
  })
})

describe("Claude Code 2.1.332, recorded: the window after each compaction is what Claude Code sent", () => {
  const text = read("claude-code-2.1.332.jsonl")
  const lines = rows(text)
  const { events } = importTranscript(text, { final: true })!
  // Claude Code 2.1.x records each request it sent: `api-request` lines keep `keep` messages of their `base` request
  // and add the `api-request-blob` messages named in `tail`. The messages of a request, rebuilt from them:
  const blobs = new Map(lines.filter((l) => l.type === "api-request-blob").map((l) => [l.hash as string, l.message]))
  const requests = new Map<string, Array<Json>>()
  const sent = (l: Json): Array<Json> => {
    const base = l.base === undefined ? [] : requests.get(l.base)!.slice(0, l.keep)
    const messages = [...base, ...(l.tail as Array<string>).map((h) => blobs.get(h)!)]
    requests.set(l.id, messages)
    return messages
  }
  const byLine = lines.map((l) => (l.type === "api-request" ? sent(l) : undefined))
  /** A conversation as role and text, without the agent's own `<…>` texts (reminders, local commands). */
  const conversation = (messages: ReadonlyArray<{ role: string; texts: ReadonlyArray<string> }>) =>
    messages
      .map((m) => ({ role: m.role, text: m.texts.filter((t) => !t.trimStart().startsWith("<")).join("\n") }))
      .filter((m) => m.text !== "")
  const blockTexts = (content: unknown): Array<string> =>
    typeof content === "string"
      ? [content]
      : (content as Array<Json>).flatMap((b) => (b.type === "text" ? [b.text as string] : []))

  it("the first request after each compact_boundary sent the summary, the preserved messages and the next prompt, as pivot's window holds them (the summary a user message there, pivot's summary here: a named deviation)", () => {
    const boundaries = lines.flatMap((l, i) => (l.subtype === "compact_boundary" ? [i] : []))
    expect(boundaries).toHaveLength(2)
    const stepsAfterSummaries = events.flatMap((e, i) =>
      e._tag === "SummaryFinished" ? [events.findIndex((f, j) => j > i && f._tag === "AssistantStepRecorded")] : [],
    )
    for (const [k, boundary] of boundaries.entries()) {
      const request = byLine.findIndex((r, i) => i > boundary && r !== undefined)
      const claude = conversation(byLine[request]!.map((m) => ({ role: m.role, texts: blockTexts(m.content) })))
      const window = Window.messages(Session.fold(events.slice(0, stepsAfterSummaries[k])).window)
      const pivot = conversation(
        window.map((m) => ({
          role: m.role === "assistant" && m.summary === true ? "user" : m.role,
          texts: m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])),
        })),
      )
      expect(pivot).toEqual(claude)
      expect(claude[0]!.text).toMatch(/^This session is being continued/)
      expect(claude.length).toBeGreaterThan(2)
    }
  })
})

describe("Codex CLI 0.171.0, recorded", () => {
  const text = read("codex-0.171.0.jsonl")
  const lines = rows(text)
  const result = importTranscript(text, { final: true })!
  // The calls' usage as the rollout counts them: each token_count whose totals changed is one call.
  const counted: Array<Json> = []
  let totals = ""
  for (const l of lines)
    if (l.type === "event_msg" && l.payload.type === "token_count" && l.payload.info !== null) {
      const t = JSON.stringify(l.payload.info.total_token_usage)
      if (t !== totals) counted.push(l.payload.info.last_token_usage)
      totals = t
    }

  it("imports whole: no line unknown or malformed; world_state and token_usage_record (0.17x) are left out by kind", () => {
    expect(result.report.agent).toBe("codex")
    expect(result.report.malformed).toBe(0)
    expect(result.report.unknown).toEqual({})
    expect(result.report.dropped).toMatchObject({ world_state: 3, token_usage_record: 14 })
  })

  it("cache_write_input_tokens (0.17x) is a cache write, taken out of input like cached_input_tokens", () => {
    const all = [...steps(result.events), ...summaries(result.events)]
    expect(sum(all.map((s) => s.tokens.cacheWrite))).toBe(sum(counted.map((u) => u.cache_write_input_tokens)))
    expect(sum(all.map((s) => s.tokens.cacheRead))).toBe(sum(counted.map((u) => u.cached_input_tokens)))
    expect(sum(all.map((s) => s.tokens.input + s.tokens.cacheRead + s.tokens.cacheWrite))).toBe(
      sum(counted.map((u) => u.input_tokens)),
    )
    expect(sum(all.map((s) => s.tokens.cacheWrite))).toBeGreaterThan(0)
  })

  it("the compaction's summary call (its assistant message and token_count before compacted) is the summary's usage, not a step", () => {
    const compacted = lines.filter((l) => l.type === "compacted").map((l) => l.payload.message as string)
    expect(compacted).toHaveLength(2)
    const sums = summaries(result.events)
    expect(sums.map(textOf)).toEqual(compacted)
    for (const s of sums) expect(s.tokens.cacheWrite + s.tokens.cacheRead + s.tokens.input).toBeGreaterThan(0)
    // No step answers the summary text: the window holds it once, as the summary.
    for (const step of steps(result.events))
      for (const c of compacted) expect(c.includes(textOf(step)) && textOf(step) !== "").toBe(false)
    expect(steps(result.events).length + sums.length).toBe(counted.length)
    expect(result.report.dropped["compaction summary call"]).toBe(2)
  })

  it("a turn's last answer is recorded when its task_complete comes, while following (not held for the next turn)", () => {
    const end = lines.findIndex((l) => l.type === "event_msg" && l.payload.type === "task_complete")
    const cut = `${text
      .split("\n")
      .slice(0, end + 1)
      .join("\n")}\n`
    const live = steps(importTranscript(cut, { final: false })!.events)
    expect(live.map(textOf).at(-1)).toBe(
      "src/math.js exports add and sub. The tests fail: sub(5, 3) returns 8 because sub adds.",
    )
    // One line earlier (its token_count, before task_complete), the answer still waits: a summary call looks the same.
    const before = `${text.split("\n").slice(0, end).join("\n")}\n`
    expect(steps(importTranscript(before, { final: false })!.events)).toHaveLength(live.length - 1)
  })

  it("the failing calls (a command exiting 1, an unsupported tool) carry over with their output", () => {
    const states = result.events.flatMap((e) =>
      e._tag === "AssistantStepRecorded"
        ? e.message.parts.flatMap((p) => (p.type === "tool" ? [p.state] : []))
        : e._tag === "ToolResultRecorded"
          ? [e.state]
          : [],
    )
    const tools = states.flatMap((s) => (s.status === "completed" ? [s.output] : []))
    expect(tools.some((o) => o.includes("Process exited with code 1") && o.includes("No such file or directory"))).toBe(
      true,
    )
    expect(tools).toContain("unsupported call: shell")
    const calls = lines.filter((l) => l.type === "response_item" && l.payload.type === "function_call")
    expect(tools).toHaveLength(calls.length)
  })
})
