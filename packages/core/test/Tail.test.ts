import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Message } from "../src/Message.ts"
import * as Render from "../src/Render.ts"
import * as Tail from "../src/Tail.ts"
import * as Tokens from "../src/Tokens.ts"
import { assistant, completed, file, id, marker, tool, user } from "./support/build.ts"
import { RUNS } from "./support/runs.ts"

/** The default fixture model of the test catalogue: usable = 68_000, derived budget 8_000. */
const FIXTURE = { context: 100_000, output: 32_000 }

const ids = (messages: ReadonlyArray<Message>) => messages.map((m) => m.id)

/** OpenCode's size of a message list, computed the slow, obvious way. */
const directSize = (messages: ReadonlyArray<Message>) =>
  Tokens.estimate(JSON.stringify(Render.toModelMessages(messages)))

describe("Tail.tailBudget (§2.9 step 2)", () => {
  it("given the fixture model, when no budget is configured, then it is min(8_000, max(2_000, 68_000 / 4))", () => {
    expect(Tail.tailBudget({}, FIXTURE)).toBe(8_000)
  })

  it("given a mid-size model, when no budget is configured, then it is a quarter of the usable window", () => {
    // usable = 30_000 - 4_000 = 26_000
    expect(Tail.tailBudget({}, { context: 30_000, output: 4_000 })).toBe(6_500)
  })

  it("given a small model, when no budget is configured, then it is raised to 2_000", () => {
    expect(Tail.tailBudget({}, { context: 10_000, output: 2_000 })).toBe(2_000)
    expect(Tail.tailBudget({}, { context: 0, output: 0 })).toBe(2_000)
  })

  it("given preserve_recent_tokens, when the budget is read, then it wins (0 included)", () => {
    expect(Tail.tailBudget({ preserve_recent_tokens: 10_000 }, FIXTURE)).toBe(10_000)
    expect(Tail.tailBudget({ preserve_recent_tokens: 0 }, FIXTURE)).toBe(0)
  })

  it("given opencode 1.18, when no budget is configured, then the quarter is capped at 15_000 instead of 8_000", () => {
    // usable = 68_000 → 17_000: capped at 15_000 (1.18.33), 8_000 (1.17.20)
    expect(Tail.tailBudget({ opencode: "1.18" }, FIXTURE)).toBe(15_000)
    expect(Tail.tailBudget({ opencode: "1.17" }, FIXTURE)).toBe(8_000)
    // below both caps the releases agree
    expect(Tail.tailBudget({ opencode: "1.18" }, { context: 30_000, output: 4_000 })).toBe(6_500)
    expect(Tail.tailBudget({ opencode: "1.18", preserve_recent_tokens: 10_000 }, FIXTURE)).toBe(10_000)
  })

  it("given limit.input and reserved, when the budget is derived, then it uses the compaction model's usable window", () => {
    // usable = 40_000 - 30_000 = 10_000 → 2_500
    expect(Tail.tailBudget({ reserved: 30_000 }, { context: 50_000, input: 40_000, output: 8_000 })).toBe(2_500)
  })
})

describe("Tail.turns (§2.9 step 3)", () => {
  it("given leading assistants and markers, when split into turns, then only real user messages start turns", () => {
    const history = [
      assistant("a0", "u0", "orphan"),
      user("u1", "one"),
      assistant("a1", "u1", "r1"),
      marker("c1"),
      user("u2", "two"),
      assistant("a2", "u2", "r2"),
    ]
    expect(Tail.turns(history)).toEqual([
      { start: 1, end: 4 },
      { start: 4, end: 6 },
    ])
  })

  it("given no user messages, when split into turns, then there are none", () => {
    expect(Tail.turns([assistant("a1", "u0", "x")])).toEqual([])
    expect(Tail.turns([])).toEqual([])
  })
})

describe("Tail.selectTail (§2.9)", () => {
  const threeTurns = [user("u1", "first"), user("u2", "second"), user("u3", "third")]

  it("C5 given three short turns, tail_turns 2 and budget 10_000, when selected, then the tail starts at the second", () => {
    const selection = Tail.selectTail(threeTurns, { tailTurns: 2, budget: 10_000 })
    expect(selection.tailStartId).toBe(id("u2"))
    expect(ids(selection.head)).toEqual([id("u1")])
    expect(ids(selection.tail)).toEqual([id("u2"), id("u3")])
  })

  it("given tail_turns 0, when selected, then nothing is kept", () => {
    expect(Tail.selectTail(threeTurns, { tailTurns: 0, budget: 10_000 })).toEqual({ head: threeTurns, tail: [] })
  })

  it("given no turns, when selected, then nothing is kept", () => {
    const history = [assistant("a1", "u0", "x")]
    expect(Tail.selectTail(history, { tailTurns: 2, budget: 10_000 })).toEqual({ head: history, tail: [] })
  })

  it("given every turn fits from index 0, when selected, then nothing is kept and all is summarised", () => {
    const selection = Tail.selectTail(threeTurns, { tailTurns: 3, budget: 10_000 })
    expect(selection.tailStartId).toBeUndefined()
    expect(selection.head).toBe(threeTurns)
  })

  it("C7 given a turn larger than the budget with one message, when selected, then it cannot split and nothing is kept", () => {
    const history = [user("u1", "first"), user("u2", "y".repeat(2000))]
    const selection = Tail.selectTail(history, { tailTurns: 1, budget: 20 })
    expect(selection.tailStartId).toBeUndefined()
    expect(selection.tail).toEqual([])
  })

  it("C8 given a recent turn with inline media, when selected, then the media counts in full and the turn is not kept", () => {
    const image = file("image/png", "big.png", `data:image/png;base64,${"a".repeat(4000)}`)
    const withImage = [user("u1", "older"), user("u2", "recent image turn", image)]
    const withoutImage = [user("u1", "older"), user("u2", "recent image turn")]
    expect(Tail.selectTail(withoutImage, { tailTurns: 1, budget: 100 }).tailStartId).toBe(id("u2"))
    expect(Tail.selectTail(withImage, { tailTurns: 1, budget: 100 }).tailStartId).toBeUndefined()
  })

  it("given a turn too big for the budget, when selected, then it is split and the tail may start at an assistant", () => {
    const history = [
      user("u1", "older"),
      user("u2", "x".repeat(4000)),
      assistant("a2", "u2", [tool("read", completed("y".repeat(4000)))]),
      assistant("a3", "u2", "short reply"),
    ]
    const selection = Tail.selectTail(history, { tailTurns: 2, budget: 200 })
    expect(selection.tailStartId).toBe(id("a3"))
    expect(ids(selection.tail)).toEqual([id("a3")])
    expect(ids(selection.head)).toEqual([id("u1"), id("u2"), id("a2")])
  })

  it("given a turn that does not fit, when selected, then older turns are not considered even if they would fit", () => {
    const history = [user("u1", "tiny"), user("u2", "x".repeat(4000)), user("u3", "tiny too")]
    const selection = Tail.selectTail(history, { tailTurns: 3, budget: 100 })
    expect(ids(selection.tail)).toEqual([id("u3")])
  })

  it("given turns whose sum is exactly the budget, when selected, then they are kept (the boundary is <=)", () => {
    const history = [user("u1", "older"), user("u2", "a".repeat(400)), user("u3", "b".repeat(400))]
    const exact = directSize(history.slice(1, 2)) + directSize(history.slice(2, 3))
    expect(Tail.selectTail(history, { tailTurns: 2, budget: exact }).tailStartId).toBe(id("u2"))
    expect(Tail.selectTail(history, { tailTurns: 2, budget: exact - 1 }).tailStartId).toBe(id("u3"))
  })

  it("given a split slice exactly the size of the budget left, when selected, then it is kept (the split boundary is <=)", () => {
    const history = [
      user("u1", "older"),
      user("u2", "x".repeat(4000)),
      assistant("a2", "u2", [tool("read", completed("y".repeat(4000)))]),
      assistant("a3", "u2", "short reply"),
    ]
    const slice = directSize(history.slice(3))
    const at = (budget: number) => Tail.selectTail(history, { tailTurns: 1, budget }).tailStartId
    expect(at(slice - 1)).toBeUndefined()
    expect(at(slice)).toBe(id("a3"))
    expect(at(slice + 1)).toBe(id("a3"))
  })
})

// ---------------------------------------------------------------------------------------------------------------------
// Property: the linear-time selection equals a direct transcription of the spec
// ---------------------------------------------------------------------------------------------------------------------

/** §2.9 written the slow, obvious way: every size by `estimate(JSON.stringify(toModelMessages(slice)))`. */
const referenceSelect = (history: ReadonlyArray<Message>, tailTurns: number, budget: number) => {
  if (tailTurns <= 0) return undefined
  const all = Tail.turns(history)
  if (all.length === 0) return undefined
  let total = 0
  let keep: number | undefined
  for (const turn of all.slice(-tailTurns).reverse()) {
    const size = directSize(history.slice(turn.start, turn.end))
    if (total + size <= budget) {
      total += size
      keep = turn.start
      continue
    }
    const remaining = budget - total
    if (remaining > 0 && turn.end - turn.start >= 2)
      for (let s = turn.start + 1; s < turn.end; s++)
        if (directSize(history.slice(s, turn.end)) <= remaining) {
          keep = s
          break
        }
    break
  }
  return keep === undefined || keep === 0 ? undefined : keep
}

const messageArb: fc.Arbitrary<(n: number) => Message> = fc.oneof(
  fc.string({ maxLength: 300 }).map((text) => (n: number) => user(`u${n}`, text)),
  fc.constant((n: number) => marker(`c${n}`)),
  fc.string({ maxLength: 300 }).map((text) => (n: number) => assistant(`a${n}`, "u0", text)),
  fc.tuple(fc.string({ maxLength: 600 }), fc.boolean()).map(
    ([output, pruned]) =>
      (n: number) =>
        assistant(`a${n}`, "u0", [tool("bash", completed(output, pruned ? { compactedAt: 1 } : {})), "ok"]),
  ),
  fc.constant((n: number) =>
    user(`u${n}`, "see", file("image/png", "p.png", `data:image/png;base64,${"b".repeat(n * 37)}`)),
  ),
)

const historyArb = fc.array(messageArb, { maxLength: 14 }).map((makers) => makers.map((make, n) => make(n)))

describe("Tail properties", () => {
  it("selectTail equals the spec computed directly, for any history, tail_turns and budget", () => {
    // At least 300 cases even in the mutation run (50 per property there): with fewer, a sample without any split
    // turn is likely enough that the reach check below fails at random.
    const runs = { numRuns: Math.max(RUNS.numRuns, 300) }
    let kept = 0
    let split = 0
    fc.assert(
      fc.property(historyArb, fc.nat(4), fc.nat(600), (history, tailTurns, budget) => {
        const selection = Tail.selectTail(history, { tailTurns, budget })
        const keep = referenceSelect(history, tailTurns, budget)
        expect(selection.tailStartId).toBe(keep === undefined ? undefined : history[keep]?.id)
        expect([...selection.head, ...selection.tail]).toEqual(history)
        if (keep !== undefined) kept++
        if (keep !== undefined && !Tail.turns(history).some((t) => t.start === keep)) split++
      }),
      runs,
    )
    // The generator must reach the interesting branches, or the property proves little.
    expect(kept).toBeGreaterThan(runs.numRuns / 10)
    expect(split).toBeGreaterThan(runs.numRuns / 100)
  })

  it("sizeOf is estimate(JSON.stringify(toModelMessages(messages))) for any messages", () => {
    fc.assert(
      fc.property(historyArb, (history) => {
        expect(Tail.sizeOf(history)).toBe(directSize(history))
      }),
      RUNS,
    )
  })
})
