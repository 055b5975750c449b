import { Events, type Message, Session, Window } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ClaudeCode from "../src/ClaudeCode.ts"
import * as Codex from "../src/Codex.ts"
import { type Entry, generate, opsArb } from "./support/claudeCode.ts"
import * as CodexGen from "./support/codex.ts"

/** pivot's window as entries. Named deviation: Claude Code sends its summary as a user message; pivot keeps the
 * compaction as its marker and the summary answering it, so that pair is one `summary:` entry here. */
const entries = (window: ReadonlyArray<Message.Message>): Array<Entry> => {
  const out: Array<Entry> = []
  for (const m of window) {
    if (m.role === "user") {
      if (m.parts.some((p) => p.type === "compaction")) continue
      out.push(`user:${m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")}`)
    } else if (m.summary === true)
      out.push(`summary:${m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")}`)
    else
      out.push(
        `assistant:${m.parts
          .map((p) => {
            if (p.type === "text") return `text:${p.text}`
            if (p.type === "reasoning") return `reasoning:${p.text}`
            if (p.type === "tool") {
              const s = p.state
              const result =
                s.status === "completed"
                  ? `completed:${s.output}`
                  : s.status === "error"
                    ? `error:${s.error}`
                    : s.status
              return `tool:${p.tool}:${p.callId}:${result}`
            }
            return p.type
          })
          .join("|")}`,
      )
  }
  return out
}

describe("generated Claude Code transcripts", () => {
  it("property: after import, the window at the end of each segment (before the first compaction, then after each) is what Claude Code sent, but for the summary pair", () => {
    fc.assert(
      fc.property(opsArb, (ops) => {
        const { text, segments } = generate(ops)
        const { events, report } = ClaudeCode.importText(text, { final: true })
        expect(report.malformed).toBe(0)
        expect(report.compactions).toBe(segments.length - 1)
        const cuts = events.flatMap((e, i) => (e._tag === "CompactionRequested" ? [i] : []))
        const ends = [...cuts, events.length]
        segments.forEach((expected, k) => {
          const window = Window.messages(Session.fold(events.slice(0, ends[k])).window)
          expect(entries(window)).toEqual(expected)
        })
        // Usage as billed: a call written as one line per block carries its last line's usage (output = its blocks).
        for (const e of events)
          if (e._tag === "AssistantStepRecorded") {
            expect(e.message.tokens.output).toBe(e.message.parts.length)
            expect(e.message.tokens.cacheRead).toBe(e.message.tokens.cacheWrite * 10)
          }
        for (const e of events) expect(Events.decode(Events.encode(e))).toEqual(e)
      }),
      { numRuns: 200 },
    )
  })
})

describe("generated Codex CLI rollouts", () => {
  it("property: after import, the window at the end of each stretch is what Codex sent, but for the summary's place; one step per call, its usage counted once", () => {
    fc.assert(
      fc.property(CodexGen.opsArb, (ops) => {
        const { text, segments, calls } = CodexGen.generate(ops)
        const { events, report } = Codex.importText(text, { final: true })
        expect(report.malformed).toBe(0)
        expect(report.unknown).toEqual({})
        expect(report.compactions).toBe(segments.length - 1)
        const steps = events.flatMap((e) => (e._tag === "AssistantStepRecorded" ? [e.message] : []))
        expect(steps).toHaveLength(calls)
        // Each call's usage once: cached input split out of input, reasoning out of output.
        for (const [i, step] of steps.entries())
          expect(step.tokens).toEqual({
            input: 50 * (i + 1),
            cacheRead: 50 * (i + 1),
            output: step.parts.length,
            reasoning: 5,
            cacheWrite: 0,
          })
        const cuts = events.flatMap((e, i) => (e._tag === "CompactionRequested" ? [i] : []))
        const ends = [...cuts, events.length]
        segments.forEach((expected, k) => {
          const window = Window.messages(Session.fold(events.slice(0, ends[k])).window)
          expect(entries(window)).toEqual(expected)
        })
      }),
      {
        numRuns: 200,
        // Found under seed -234772304: a call answering "k", then a compaction whose summary is "ak": not its summary call.
        examples: [
          [
            [
              { kind: "turn", calls: [{ items: [{ type: "text", text: "k" }], repeatCount: false }] },
              { kind: "compact", summary: "ak", keep: [] },
            ],
          ],
        ],
      },
    )
  })
})
