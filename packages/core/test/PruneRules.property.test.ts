/**
 * Properties of the strategy rules against simple reference models written from their statements, not from the code:
 * `duplicate-calls` clears exactly the older copies of each completed call (same tool, same arguments in any key
 * order), never the newest, never a protected tool, never twice; cache-aware's `keep` always keeps the request of the
 * turn in progress when it fits, and never more than its share of the usable window.
 */
import { CacheAwareStrategy, PruneRules, type Strategy, Tail } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { assistant, completed, errored, marker, tool, user } from "./support/build.ts"
import { RUNS } from "./support/runs.ts"

const LIMITS = { context: 100_000, output: 32_000 }
const inputOf = (messages: Strategy.Input["messages"], limits = LIMITS): Strategy.Input => ({
  messages,
  now: 0,
  cache: { lastCallAt: 0, ttl: 1, cold: false, atPivot: false },
  config: { reserved: 0 },
  limits,
  compactionLimits: limits,
  prune: {},
  rates: undefined,
  mayCompact: true,
})

// A call: tool, arguments (from a small set, so that duplicates are common, keys in either order), and its state.
const callArb = fc.record({
  tool: fc.constantFrom("read", "grep", "skill"),
  path: fc.constantFrom("a.ts", "b.ts"),
  flip: fc.boolean(),
  state: fc.constantFrom("completed", "compacted", "error"),
})
type Call = typeof callArb extends fc.Arbitrary<infer C> ? C : never
const turnsArb = fc.array(fc.array(fc.array(callArb, { maxLength: 3 }), { maxLength: 3 }), { maxLength: 4 })

const sessionOf = (turns: ReadonlyArray<ReadonlyArray<ReadonlyArray<Call>>>) =>
  turns.flatMap((steps, t) => [
    user(`u${t}`, `request ${t}`),
    ...steps.map((calls, s) =>
      assistant(
        `a${t}_${s}`,
        `u${t}`,
        calls.map((c) => {
          const input = c.flip ? { path: c.path, limit: 10 } : { limit: 10, path: c.path }
          return tool(
            c.tool,
            c.state === "error"
              ? { ...errored("boom"), input }
              : completed(`${c.tool} ${c.path}`, { input, ...(c.state === "compacted" ? { compactedAt: 1 } : {}) }),
          )
        }),
        { finish: "tool-calls" },
      ),
    ),
  ])

/** The reference: for each (tool, path) group of completed non-skill calls, every one but the newest not yet cleared. */
const reference = (turns: ReadonlyArray<ReadonlyArray<ReadonlyArray<Call>>>): Array<string> => {
  const flat = turns.flatMap((steps, t) =>
    steps.flatMap((calls, s) => calls.map((c, i) => ({ ...c, id: `prt_a${t}_${s}_${i}` }))),
  )
  const out: Array<string> = []
  flat.forEach((c, i) => {
    if (c.tool === "skill" || c.state === "error" || c.state === "compacted") return
    const newer = flat
      .slice(i + 1)
      .some((d) => d.tool === c.tool && d.path === c.path && d.state !== "error" && d.tool !== "skill")
    if (newer) out.push(c.id)
  })
  return out
}

describe("duplicate-calls, property", () => {
  it("clears exactly the older copies of each completed call, oldest first", () => {
    fc.assert(
      fc.property(turnsArb, (turns) => {
        const chosen = PruneRules.duplicateCalls.select(inputOf(sessionOf(turns)))
        expect(chosen.map((p) => p.partId)).toEqual(reference(turns))
        for (const p of chosen) expect(p.rule).toBe("duplicate-calls")
      }),
      RUNS,
    )
  })

  it("the generator reaches duplicates, cleared copies, errors and protected tools", () => {
    const samples = fc.sample(turnsArb, 300)
    expect(samples.some((t) => reference(t).length >= 2)).toBe(true)
    const calls = samples.flat(3)
    for (const state of ["completed", "compacted", "error"]) expect(calls.some((c) => c.state === state)).toBe(true)
    expect(calls.some((c) => c.tool === "skill")).toBe(true)
  })
})

describe("cache-aware keep, property", () => {
  it("keeps the request of the turn in progress whenever it fits, and never more than the share", () => {
    fc.assert(
      fc.property(turnsArb, fc.integer({ min: 1, max: 4_000 }), (turns, input) => {
        const messages = [...sessionOf(turns), marker("m")]
        const limits = { context: 1_000_000, input, output: 8_000 }
        const keep = CacheAwareStrategy.keepOf(inputOf(messages, limits))
        const turn = CacheAwareStrategy.turnInProgress(messages)
        const cap = Math.floor(input * CacheAwareStrategy.KEEP_SHARE)
        if (turn === undefined) {
          expect(keep).toBeUndefined()
          return
        }
        const request = turn.messages[0]!
        if (Tail.sizeOf([request]) > cap) {
          expect(keep).toBeUndefined()
          return
        }
        expect(keep?.ids[0]).toBe(request.id)
        const kept = messages.filter((m) => keep!.ids.includes(m.id))
        expect(Tail.sizeOf(kept)).toBeLessThanOrEqual(cap)
        // Kept in window order, from the turn only.
        expect(kept.map((m) => m.id)).toEqual(keep!.ids)
        for (const m of kept) expect(turn.messages).toContain(m)
      }),
      RUNS,
    )
  })
})
