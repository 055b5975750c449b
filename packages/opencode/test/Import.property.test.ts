import { type ModelMessage, ValidWindow, Window } from "@pivot/core"
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"
import { importSession } from "../src/Import.ts"
import { exportArb, reorder } from "./support/arbitraries.ts"
import { folded, imported, roundTrip } from "./support/fixtures.ts"

const RUNS = runs(1000)

const answered = (messages: ReadonlyArray<ModelMessage.ModelMessage>): boolean => {
  const calls: Array<string> = []
  const results: Array<string> = []
  for (const message of messages) {
    if (typeof message.content === "string") continue
    for (const part of message.content) {
      if (part.type === "tool-call") calls.push(part.toolCallId)
      if (part.type === "tool-result") results.push(part.toolCallId)
    }
  }
  return JSON.stringify(calls.sort()) === JSON.stringify(results.sort())
}

describe("imports of generated exports without compaction", () => {
  it("property: the window lists every imported message in id order, and parts imported + dropped = parts exported", () => {
    fc.assert(
      fc.property(exportArb, (raw) => {
        const result = imported(raw)
        const ids = raw.messages.map((m) => m.info.id)
        expect(Window.messages(folded(result).window).map((m) => m.id)).toEqual(ids)
        const dropped = Object.values(result.report.dropped).reduce((a, b) => a + b, 0)
        expect(result.report.parts + dropped).toBe(raw.messages.flatMap((m) => m.parts).length)
        expect(result.report.messages).toBe(raw.messages.length)
        expect(result.report.window).toBe(raw.messages.length)
        // Only a history the window must repair is reported (an empty first user message, an assistant first).
        expect(result.report.warnings).toEqual(
          result.report.repaired.map((v) => `window: ${ValidWindow.format(v)}; repaired before it is sent`),
        )
      }),
      RUNS,
    )
  })

  it("property: every event round-trips through Events.decode, and every rendered tool call is answered", () => {
    fc.assert(
      fc.property(exportArb, (raw) => {
        const result = imported(raw)
        expect(roundTrip(result.events)).toEqual(result.events)
        expect(answered(Window.render(folded(result).window).map((r) => r.message))).toBe(true)
      }),
      RUNS,
    )
  })

  it("property: key order and message order are irrelevant — the events are the same", () => {
    fc.assert(
      fc.property(exportArb, fc.nat(1000), (raw, seed) => {
        const shuffled = reorder(raw, seed) as typeof raw
        const messages = [...shuffled.messages]
        for (let i = messages.length - 1; i > 0; i--) {
          const j = (seed + i * 7) % (i + 1)
          ;[messages[i], messages[j]] = [messages[j]!, messages[i]!]
        }
        expect(JSON.stringify(imported({ ...shuffled, messages }).events)).toBe(JSON.stringify(imported(raw).events))
      }),
      RUNS,
    )
  })

  it("property: all or nothing — one broken required field gives an ImportError naming that message, never events", () => {
    const breakers: ReadonlyArray<(m: Record<string, any>) => void> = [
      (m) => delete m.info.id,
      (m) => delete m.info.role,
      (m) => (m.info.time = "now"),
      (m) => (m.parts = null),
      (m) => (m.info.role === "assistant" ? delete m.info.tokens : delete m.info.time.created),
    ]
    fc.assert(
      fc.property(exportArb, fc.nat(), fc.nat(breakers.length - 1), (raw, pick, b) => {
        const index = pick % raw.messages.length
        breakers[b]!(raw.messages[index]!)
        const result = importSession(raw)
        expect(Result.isFailure(result)).toBe(true)
        if (Result.isFailure(result)) expect(result.failure.path.startsWith(`messages[${index}]`)).toBe(true)
      }),
      RUNS,
    )
  })
})
