/**
 * The tail an OpenCode release keeps when it compacts `window` (closed by a marker `msg_m`), through the rules' homes:
 * the strategy's `configure`, then `SummaryInput.plan` (which asks `Tail.tailBudget` and `Tail.selectTail`). And a
 * user turn sized to an exact token count, for tests at a budget's boundary.
 */
import { Ids, type Strategy, SummaryInput, Tail } from "@pivot/core"
import { Result } from "effect"
import { expect, it } from "vitest"
import type { Message } from "../../src/Message.ts"
import { assistant, marker, user } from "./build.ts"

/** Limits whose usable window is `input` (reserved 0): a quarter of 60,000 is exactly 15,000. */
export const limits = (input: number) => ({ context: 1_000_000, input, output: 8_000 })

/** The tail budget `strategy` derives from `config` (reserved 0) on a usable window of `input` tokens. */
export const budgetOf = (strategy: Strategy.Strategy, config: object, input: number): number =>
  Tail.tailBudget(strategy.configure!({ reserved: 0, ...config }), limits(input))

/** The ids `strategy` keeps verbatim when `window` is compacted under `config` on a usable window of `input`. */
export const tailOf = (
  strategy: Strategy.Strategy,
  window: ReadonlyArray<Message>,
  config: object = {},
  input = 60_000,
): ReadonlyArray<string> => {
  const plan = SummaryInput.plan([...window, marker("m")], {
    parentId: Ids.unsafe.message("msg_m"),
    overflow: false,
    config: strategy.configure!({ reserved: 0, ...config }),
    compactionLimits: limits(input),
  })
  if (Result.isFailure(plan)) throw new Error("the plan failed")
  return plan.success.tail
}

/** A one-message user turn `name` whose size (`Tail.sizeOf`, OpenCode's measure) is exactly `tokens`. */
export const userOfSize = (name: string, tokens: number): Message => {
  // Each character of text adds one to the JSON and the estimate rounds length / 4: aim, then step to the exact one.
  const sized = (length: number) => user(name, "y".repeat(Math.max(0, length)))
  const aim = tokens * 4 - JSON.stringify(sized(0)).length
  const start = aim + (tokens - Tail.sizeOf([sized(aim)])) * 4
  for (let length = start - 8; length <= start + 8; length++) {
    const message = sized(length)
    if (Tail.sizeOf([message]) === tokens) return message
  }
  throw new Error(`no user turn of exactly ${tokens} tokens`)
}

/** A history whose last turn is ~10,000 tokens: 1.18's 15k cap keeps it whole, 1.17's 8k only its reply. */
export const longLastTurn: ReadonlyArray<Message> = [
  user("u1", "old"),
  assistant("a1", "u1", "x".repeat(8_000)),
  user("u2", "y".repeat(40_000)),
  assistant("a2", "u2", "done"),
]

/**
 * The boundary tests every OpenCode release answers with its own tail cap: the cap and the 2,000 floor of the
 * derived budget, the cap on a real last turn, `preserve_recent_tokens` and `tail_turns`, each at value − 1, value
 * and value + 1.
 */
export const releaseBoundaries = (strategy: Strategy.Strategy, cap: number): void => {
  const small = [user("u1", "old"), assistant("a1", "u1", "ok")]

  it(`given a quarter of the usable window at ${cap} − 1, ${cap} and ${cap} + 1, then the budget is capped at ${cap}`, () => {
    expect(budgetOf(strategy, {}, cap * 4 - 4)).toBe(cap - 1)
    expect(budgetOf(strategy, {}, cap * 4)).toBe(cap)
    expect(budgetOf(strategy, {}, cap * 4 + 4)).toBe(cap)
  })

  it("given a quarter of the usable window at 2,000 − 1, 2,000 and 2,000 + 1, then the budget is at least 2,000", () => {
    expect(budgetOf(strategy, {}, 7_996)).toBe(2_000)
    expect(budgetOf(strategy, {}, 8_000)).toBe(2_000)
    expect(budgetOf(strategy, {}, 8_004)).toBe(2_001)
  })

  it(`given a last turn of ${cap} − 1, ${cap} and ${cap} + 1 tokens on a large window, then it is kept, kept, dropped`, () => {
    const withLast = (tokens: number) => [...small, userOfSize("u2", tokens)]
    expect(tailOf(strategy, withLast(cap - 1), {}, 1_000_000)).toEqual(["msg_u2"])
    expect(tailOf(strategy, withLast(cap), {}, 1_000_000)).toEqual(["msg_u2"])
    expect(tailOf(strategy, withLast(cap + 1), {}, 1_000_000)).toEqual([])
  })

  it("given preserve_recent_tokens at a 20,000-token last turn − 1, exactly and + 1, then it wins over the cap", () => {
    const window = [...small, userOfSize("u2", 20_000)]
    expect(tailOf(strategy, window, { preserve_recent_tokens: 19_999 })).toEqual([])
    expect(tailOf(strategy, window, { preserve_recent_tokens: 20_000 })).toEqual(["msg_u2"])
    expect(tailOf(strategy, window, { preserve_recent_tokens: 20_001 })).toEqual(["msg_u2"])
    expect(budgetOf(strategy, { preserve_recent_tokens: 0 }, 60_000)).toBe(0)
  })

  it("given tail_turns 1, 2 (the default) and 3 over four small turns, then the last 1, 2 and 3 turns stay verbatim", () => {
    const window = ["1", "2", "3", "4"].flatMap((n) => [user(`u${n}`, `ask ${n}`), assistant(`a${n}`, `u${n}`, "ok")])
    const turnsOf = (from: number) => window.slice(from).map((m) => m.id)
    expect(tailOf(strategy, window, { tail_turns: 1 })).toEqual(turnsOf(6))
    expect(tailOf(strategy, window, { tail_turns: 2 })).toEqual(turnsOf(4))
    expect(tailOf(strategy, window)).toEqual(turnsOf(4))
    expect(tailOf(strategy, window, { tail_turns: 3 })).toEqual(turnsOf(2))
    expect(tailOf(strategy, window, { tail_turns: 0 })).toEqual([])
  })
}
