import { type Message, Prune } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { sessionArb, TOOL_NAMES } from "./support/arbitraries.ts"

const RUNS = { numRuns: 1000 }

type Msg = Message.Message

/** Where each selected part's message sits in the list. */
const positions = (messages: ReadonlyArray<Msg>, selection: Prune.Selection): ReadonlyArray<number> =>
  selection.parts.map((target) => messages.findIndex((m) => m.id === target.messageId))

const secondNewestUser = (messages: ReadonlyArray<Msg>): number => {
  let seen = 0
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user" && ++seen === 2) return i
  }
  return -1
}

const latestSummary = (messages: ReadonlyArray<Msg>): number =>
  messages.findLastIndex((m) => m.role === "assistant" && m.summary === true)

const toolOf = (messages: ReadonlyArray<Msg>, target: Prune.Target): Message.ToolPart | undefined => {
  const message = messages.find((m) => m.id === target.messageId)
  if (message?.role !== "assistant") return undefined
  const part = message.parts.find((p) => p.id === target.partId)
  return part?.type === "tool" ? part : undefined
}

describe("Prune.select properties (generated sessions)", () => {
  it("prune never selects a part in the last two turns", () => {
    fc.assert(
      fc.property(sessionArb(), (messages) => {
        const selection = Prune.select(messages)
        const guard = secondNewestUser(messages)
        if (guard === -1) expect(selection).toEqual(Prune.empty)
        for (const at of positions(messages, selection)) expect(at).toBeLessThan(guard)
      }),
      RUNS,
    )
  })

  it("prune never selects a protected tool", () => {
    fc.assert(
      fc.property(sessionArb(), (messages) => {
        for (const target of Prune.select(messages).parts)
          expect(Prune.PRUNE_PROTECTED_TOOLS).not.toContain(target.tool)
      }),
      RUNS,
    )
  })

  it("prune never selects a protected tool, whatever tools are protected", () => {
    fc.assert(
      fc.property(sessionArb(), fc.subarray([...TOOL_NAMES]), (messages, protectedTools) => {
        for (const target of Prune.select(messages, { protectedTools }).parts)
          expect(protectedTools).not.toContain(target.tool)
      }),
      RUNS,
    )
  })

  it("prune never selects anything before the latest summary", () => {
    fc.assert(
      fc.property(sessionArb(), (messages) => {
        const boundary = latestSummary(messages)
        for (const at of positions(messages, Prune.select(messages))) expect(at).toBeGreaterThan(boundary)
      }),
      RUNS,
    )
  })

  it("prune selection after applying it is empty (second prune emits nothing)", () => {
    fc.assert(
      fc.property(sessionArb(), (messages) => {
        const first = Prune.select(messages)
        expect(Prune.select(Prune.apply(messages, first, 1))).toEqual(Prune.empty)
      }),
      RUNS,
    )
  })

  it("prune selects only completed, not yet compacted outputs, each at most once, sized by the estimate", () => {
    fc.assert(
      fc.property(sessionArb(), (messages) => {
        const selection = Prune.select(messages)
        expect(new Set(selection.parts.map((t) => t.partId)).size).toBe(selection.parts.length)
        for (const target of selection.parts) {
          const part = toolOf(messages, target)
          expect(part?.state.status).toBe("completed")
          if (part?.state.status !== "completed") continue
          expect(part.state.compactedAt).toBeUndefined()
          expect(target.tool).toBe(part.tool)
          expect(target.tokens).toBe(Math.round(part.state.output.length / 4))
        }
      }),
      RUNS,
    )
  })

  it("prune frees the sum of its parts, strictly more than the minimum, or selects nothing", () => {
    fc.assert(
      fc.property(sessionArb(), (messages) => {
        const selection = Prune.select(messages)
        const sum = selection.parts.reduce((total, target) => total + target.tokens, 0)
        expect(selection.tokensFreed).toBe(sum)
        if (selection.parts.length > 0) expect(sum).toBeGreaterThan(Prune.PRUNE_MINIMUM)
        else expect(sum).toBe(0)
      }),
      RUNS,
    )
  })

  it("prune selections come oldest first", () => {
    fc.assert(
      fc.property(sessionArb(), (messages) => {
        const selection = Prune.select(messages)
        const ids = selection.parts.map((t) => t.partId)
        expect(ids).toEqual([...ids].sort())
      }),
      RUNS,
    )
  })
})
