import { type Message, Prune } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { pruneBoundarySessionArb, pruneOptionsArb, sessionArb, TOOL_NAMES } from "./support/arbitraries.ts"
import { RUNS } from "./support/runs.ts"

/** Generated sessions: realistic ones (empty ones included) and ones built to land exactly on prune's thresholds. */
const sessions = fc.oneof({ weight: 3, arbitrary: sessionArb() }, { weight: 1, arbitrary: pruneBoundarySessionArb })

interface Options {
  readonly protect?: number
  readonly minimum?: number
  readonly protectedTools?: ReadonlyArray<string>
}

/**
 * Spec §2.14 restated as simply as possible, apart from `Prune.select`: list every candidate output, decide each one
 * from the running total, then apply the minimum. pivot's one documented deviation is kept: nothing at or before the
 * latest summary is ever pruned, wherever that summary lies.
 */
const reference = (messages: ReadonlyArray<Msg>, options: Options = {}): Prune.Selection => {
  const protect = options.protect ?? 40_000
  const minimum = options.minimum ?? 20_000
  const protectedTools = options.protectedTools ?? ["skill"]
  // The last two turns: everything from the second-newest user message on.
  const userAt = messages.flatMap((m, i) => (m.role === "user" ? [i] : []))
  const guardFrom = userAt.length >= 2 ? userAt[userAt.length - 2]! : -1
  const summaryAt = messages.findLastIndex((m) => m.role === "assistant" && m.summary === true)
  // Candidates, newest first: completed outputs of unprotected tools strictly between the summary and the guard.
  const candidates: Array<Prune.Target & { readonly compacted: boolean }> = []
  for (let i = guardFrom - 1; i > summaryAt; i--) {
    const m = messages[i]!
    if (m.role !== "assistant") continue
    for (const p of [...m.parts].reverse()) {
      if (p.type !== "tool" || p.state.status !== "completed" || protectedTools.includes(p.tool)) continue
      candidates.push({
        messageId: m.id,
        partId: p.id,
        tool: p.tool,
        tokens: Math.round(p.state.output.length / 4),
        compacted: p.state.compactedAt !== undefined,
      })
    }
  }
  // The walk ends at the first output already compacted (OpenCode assumes all older ones were pruned).
  const firstCompacted = candidates.findIndex((c) => c.compacted)
  const walked = firstCompacted === -1 ? candidates : candidates.slice(0, firstCompacted)
  // An output is pruned when the running total including it passes `protect`.
  const chosen = walked.filter((_, k) => walked.slice(0, k + 1).reduce((sum, c) => sum + c.tokens, 0) > protect)
  const freed = chosen.reduce((sum, c) => sum + c.tokens, 0)
  if (freed <= minimum) return { parts: [], tokensFreed: 0 }
  return {
    parts: chosen.reverse().map(({ messageId, partId, tool, tokens }) => ({ messageId, partId, tool, tokens })),
    tokensFreed: freed,
  }
}

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

describe("Prune.select against the reference model of spec §2.14", () => {
  it("select chooses exactly what the reference chooses, with OpenCode's constants", () => {
    fc.assert(
      fc.property(sessions, (messages) => {
        expect(Prune.select(messages)).toEqual(reference(messages))
      }),
      RUNS,
    )
  })

  it("select chooses exactly what the reference chooses, whatever the thresholds and protected tools", () => {
    fc.assert(
      fc.property(sessions, pruneOptionsArb, (messages, options) => {
        expect(Prune.select(messages, options)).toEqual(reference(messages, options))
      }),
      RUNS,
    )
  })

  it("the generators reach the boundaries: empty sessions, and prunes freeing exactly minimum ± 1", () => {
    const sample = fc.sample(sessions, { numRuns: 2_000, seed: 12 })
    expect(sample.some((messages) => messages.length === 0)).toBe(true)
    const freed = new Set(sample.map((messages) => reference(messages).tokensFreed))
    expect(freed.has(20_001)).toBe(true)
    // Sessions landing at the minimum or one below it prune nothing; a part crossing PRUNE_PROTECT is pruned in full.
    expect(freed.has(0)).toBe(true)
    expect([...freed].some((tokens) => tokens > 40_000)).toBe(true)
  })
})

describe("Prune.select properties (generated sessions)", () => {
  it("prune never selects a part in the last two turns", () => {
    fc.assert(
      fc.property(sessions, (messages) => {
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
      fc.property(sessions, (messages) => {
        for (const target of Prune.select(messages).parts)
          expect(Prune.PRUNE_PROTECTED_TOOLS).not.toContain(target.tool)
      }),
      RUNS,
    )
  })

  it("prune never selects a protected tool, whatever tools are protected", () => {
    fc.assert(
      fc.property(sessions, fc.subarray([...TOOL_NAMES]), (messages, protectedTools) => {
        for (const target of Prune.select(messages, { protectedTools }).parts)
          expect(protectedTools).not.toContain(target.tool)
      }),
      RUNS,
    )
  })

  it("prune never selects anything before the latest summary", () => {
    fc.assert(
      fc.property(sessions, (messages) => {
        const boundary = latestSummary(messages)
        for (const at of positions(messages, Prune.select(messages))) expect(at).toBeGreaterThan(boundary)
      }),
      RUNS,
    )
  })

  it("prune selection after applying it is empty (second prune emits nothing)", () => {
    fc.assert(
      fc.property(sessions, (messages) => {
        const first = Prune.select(messages)
        expect(Prune.select(Prune.apply(messages, first, 1))).toEqual(Prune.empty)
      }),
      RUNS,
    )
  })

  it("prune selects only completed, not yet compacted outputs, each at most once, sized by the estimate", () => {
    fc.assert(
      fc.property(sessions, (messages) => {
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
      fc.property(sessions, (messages) => {
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
      fc.property(sessions, (messages) => {
        const selection = Prune.select(messages)
        const ids = selection.parts.map((t) => t.partId)
        expect(ids).toEqual([...ids].sort())
      }),
      RUNS,
    )
  })
})
