import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { CompactionConfig } from "../src/Config.ts"
import type { MessageId } from "../src/Ids.ts"
import { isMarker, type Message } from "../src/Message.ts"
import * as Prompt from "../src/Prompt.ts"
import * as SummaryInput from "../src/SummaryInput.ts"
import { assistant, completed, file, id, marker, summary, tool, user } from "./support/build.ts"
import { RUNS } from "./support/runs.ts"

/** The default fixture model of the test catalogue: usable = 68_000, derived tail budget 8_000. */
const FIXTURE = { context: 100_000, output: 32_000 }

const planOf = (
  window: ReadonlyArray<Message>,
  parent: string,
  options: { readonly overflow?: boolean; readonly config?: CompactionConfig } = {},
): SummaryInput.CompactionPlan => {
  const result = SummaryInput.plan(window, {
    parentId: id(parent),
    overflow: options.overflow ?? false,
    config: options.config ?? {},
    compactionLimits: FIXTURE,
  })
  if (Result.isFailure(result)) throw new Error(`expected a plan, got ${result.failure.message}`)
  return result.success
}

const lookup = (window: ReadonlyArray<Message>) => {
  const byId = new Map(window.map((m) => [m.id, m]))
  return (messageId: MessageId) => byId.get(messageId)
}

/** The JSON of the messages sent to the summariser, as OpenCode's tests capture it. */
const captured = (window: ReadonlyArray<Message>, plan: SummaryInput.CompactionPlan): string =>
  JSON.stringify(
    SummaryInput.summarizerMessages(
      plan,
      lookup(window),
      Prompt.buildPrompt({ previousSummary: plan.previousSummary, context: [] }),
    ),
  )

const ids = (...names: ReadonlyArray<string>) => names.map(id)

describe("SummaryInput.plan: the parent (§2.8 step 1)", () => {
  it("C1 given the parent is an assistant, when planned, then it fails with CompactionParentNotUser", () => {
    const window = [user("u1", "hello"), assistant("a1", "u1", "hi there")]
    const result = SummaryInput.plan(window, {
      parentId: id("a1"),
      overflow: false,
      config: {},
      compactionLimits: FIXTURE,
    })
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) {
      expect(result.failure._tag).toBe("CompactionParentNotUser")
      expect(result.failure.message).toContain("Compaction parent must be a user message: msg_a1")
      expect(result.failure.parentId).toBe(id("a1"))
    }
  })

  it("given the parent is not in the window, when planned, then it fails the same way", () => {
    const result = SummaryInput.plan([user("u1", "hello")], {
      parentId: id("gone"),
      overflow: false,
      config: {},
      compactionLimits: FIXTURE,
    })
    expect(Result.isFailure(result) && result.failure.message).toBe(
      "Compaction parent must be a user message: msg_gone",
    )
  })

  it("given the parent is a plain user message, when planned, then it stays in the history", () => {
    const plan = planOf([user("u1", "hello"), assistant("a1", "u1", "hi")], "u1")
    expect(plan.head).toEqual(ids("u1", "a1"))
  })
})

describe("SummaryInput.plan: head and tail (§2.8 steps 4 and 6)", () => {
  it("C5 given three turns and a marker with tail_turns 2 and preserve 10_000, then the tail starts at the second", () => {
    const window = [user("u1", "first"), user("u2", "second"), user("u3", "third"), marker("c1")]
    const plan = planOf(window, "c1", { config: { tail_turns: 2, preserve_recent_tokens: 10_000 } })
    expect(plan.tailStartId).toBe(id("u2"))
    expect(plan.head).toEqual(ids("u1"))
    expect(plan.tail).toEqual(ids("u2", "u3"))
  })

  it("C7 given a turn too large for preserve 20, when planned, then no tail is kept and it is all summarised", () => {
    const window = [user("u1", "first"), user("u2", "y".repeat(2000)), marker("c1")]
    const plan = planOf(window, "c1", { config: { tail_turns: 1, preserve_recent_tokens: 20 } })
    expect(plan.tailStartId).toBeUndefined()
    expect(plan.tail).toEqual([])
    expect(captured(window, plan)).toContain("yyyy")
  })

  it("C8 given a recent image turn over preserve 100, then no tail, and the summariser sees text and a placeholder only", () => {
    const base64 = "a".repeat(4000)
    const window = [
      user("u1", "older"),
      user("u2", "recent image turn", file("image/png", "big.png", `data:image/png;base64,${base64}`)),
      marker("c1"),
    ]
    const plan = planOf(window, "c1", { config: { tail_turns: 1, preserve_recent_tokens: 100 } })
    expect(plan.tailStartId).toBeUndefined()
    const json = captured(window, plan)
    expect(json).toContain("recent image turn")
    expect(json).toContain("Attached image/png: big.png")
    expect(json).not.toContain(base64)
  })

  it("C17 given three turns and a marker with the default config, then only the oldest is summarised, without the marker", () => {
    const window = [
      user("u1", "older context"),
      user("u2", "keep this turn"),
      user("u3", "and this one too"),
      marker("c1"),
    ]
    const plan = planOf(window, "c1")
    expect(plan.tail).toEqual(ids("u2", "u3"))
    const json = captured(window, plan)
    expect(json).toContain("older context")
    expect(json).not.toContain("keep this turn")
    expect(json).not.toContain("and this one too")
    expect(json).not.toContain("What did we do so far?")
  })

  it("C18 given a second compaction after a first, then the prompt updates the previous summary, which appears once", () => {
    // First compaction: everything fits from index 0, so no tail is kept.
    const first = [user("u1", "older context"), user("u2", "keep this turn"), marker("c1")]
    expect(planOf(first, "c1").tailStartId).toBeUndefined()
    // The window the loop sees afterwards (what OpenCode's filterCompacted returns): the pivot and what came later.
    const window = [marker("c1"), summary("s1", "c1", "summary one"), user("u3", "latest turn"), marker("c2")]
    const plan = planOf(window, "c2")
    expect(plan.previousSummary).toBe("summary one")
    const json = captured(window, plan)
    expect(json).toContain("<previous-summary>")
    expect(json.split("summary one")).toHaveLength(2)
    expect(json).toContain("## Important Details")
    expect(json).toContain("## Work State")
    expect(json).toContain("latest turn")
  })
})

describe("SummaryInput.plan: replay (§2.8 step 2)", () => {
  it("C11 given an overflow, when planned, then the last real user turn is replayed and left out of the history", () => {
    const window = [
      user("u1", "root"),
      user("u2", "image", file("image/png", "cat.png", "https://example.com/cat.png")),
      user("u3", "current"),
    ]
    const plan = planOf(window, "u3", { overflow: true })
    expect(plan.replayOf).toBe(id("u2"))
    expect(plan.head).toEqual(ids("u1"))
    expect(plan.tail).toEqual([])
  })

  it("given an overflow marker, when planned, then the tail holds nothing at or after the replayed message (pivot fix)", () => {
    const window = [
      user("u1", "one"),
      assistant("a1", "u1", "r1"),
      user("u2", "two"),
      assistant("a2", "u2", "r2"),
      user("u3", "huge request"),
      assistant("a3", "u3", [], { finish: undefined }),
      marker("c1", { auto: true, overflow: true }),
    ]
    const plan = planOf(window, "c1", { overflow: true, config: { tail_turns: 1 } })
    expect(plan.replayOf).toBe(id("u3"))
    expect(plan.head).toEqual(ids("u1", "a1"))
    expect(plan.tail).toEqual(ids("u2", "a2"))
    expect(plan.tailStartId).toBe(id("u2"))
  })

  it("C12 given an overflow with nothing real before the last turn, when planned, then the replay is cancelled", () => {
    const window = [user("u1", "earlier"), user("u2", "current")]
    const plan = planOf(window, "u2", { overflow: true })
    expect(plan.replayOf).toBeUndefined()
    expect(plan.head).toEqual(ids("u1", "u2"))
  })

  it("given markers only before the candidate, when planned with overflow, then the replay is cancelled too", () => {
    const window = [marker("c0"), user("u1", "only turn"), marker("c1", { overflow: true })]
    expect(planOf(window, "c1", { overflow: true }).replayOf).toBeUndefined()
  })

  it("given no overflow, when planned, then nothing is replayed", () => {
    const window = [user("u1", "root"), user("u2", "image"), marker("c1")]
    expect(planOf(window, "c1").replayOf).toBeUndefined()
  })
})

describe("SummaryInput.plan: prior compactions (§2.8 step 5)", () => {
  it("given completed pairs, when planned, then they are hidden and the last summary is the previous summary", () => {
    const window = [
      marker("c1"),
      summary("s1", "c1", "  summary one  "),
      marker("c2"),
      summary("s2", "c2", ["  ", "summary", " two "]),
      user("u1", "work"),
      marker("c3"),
    ]
    const plan = planOf(window, "c3")
    expect(plan.previousSummary).toBe("summary\n\ntwo")
    expect(plan.head).toEqual(ids("u1"))
  })

  it("given a summary with no text, when planned, then there is no previous summary", () => {
    const window = [marker("c1"), summary("s1", "c1", ""), user("u1", "work"), marker("c2")]
    expect(planOf(window, "c2").previousSummary).toBeUndefined()
  })

  it("given a failed or unfinished summary, when planned, then its pair is not completed and not hidden", () => {
    const failed = summary("s1", "c1", "half", { finish: "error", error: { name: "APIError", message: "x" } })
    const window = [user("u1", "work"), marker("c1"), failed, marker("c2")]
    const plan = planOf(window, "c2")
    expect(plan.previousSummary).toBeUndefined()
    expect(plan.head).toEqual(ids("u1", "c1", "s1"))
  })

  it("given leftover markers and summaries inside the kept range, then the tail leaves them out (pivot fix)", () => {
    const unfinished = summary("s1", "c1", "partial", { finish: undefined })
    const window = [
      user("u0", "old"),
      user("u1", "one"),
      assistant("a1", "u1", "r1"),
      marker("c1"),
      unfinished,
      user("u2", "two"),
      assistant("a2", "u2", "r2"),
      marker("c2"),
    ]
    const plan = planOf(window, "c2")
    expect(plan.head).toEqual(ids("u0"))
    expect(plan.tail).toEqual(ids("u1", "a1", "u2", "a2"))
    expect(plan.tailStartId).toBe(id("u1"))
  })

  it("given a finished summary answering a plain user message, then it is no completed pair: nothing is hidden", () => {
    const stray = summary("s1", "u1", "not a pivot")
    const window = [user("u1", "work"), stray, user("u2", "more"), marker("c2")]
    const plan = planOf(window, "c2", { config: { tail_turns: 0 } })
    expect(plan.previousSummary).toBeUndefined()
    expect(plan.head).toEqual(ids("u1", "s1", "u2"))
  })

  it("given no previous summary and no tail, then the plan has neither key (not even as undefined)", () => {
    const plan = planOf([user("u1", "work"), marker("c1")], "c1", { config: { tail_turns: 0 } })
    expect(plan).toStrictEqual({ parentId: id("c1"), head: ids("u1"), tail: [] })
  })

  it("given a split that starts at a leftover marker, then the tail starts at the first message after it", () => {
    const unfinished = summary("s1", "c1", "partial", { finish: undefined })
    const window = [
      user("u0", "old"),
      user("u1", "x".repeat(8000)),
      marker("c1"),
      unfinished,
      assistant("a1", "u1", "ok"),
      marker("c2"),
    ]
    const plan = planOf(window, "c2", { config: { tail_turns: 1, preserve_recent_tokens: 200 } })
    expect(plan.head).toEqual(ids("u0", "u1"))
    expect(plan.tail).toEqual(ids("a1"))
    expect(plan.tailStartId).toBe(id("a1"))
  })
})

describe("SummaryInput.summarizerMessages (§2.8 steps 8 and 10)", () => {
  it("given a head with media and a long tool output, then it is rendered stripped and cut, followed by the prompt", () => {
    const window = [
      user("u1", "look", file("image/png", "cat.png", "data:image/png;base64,AAAA")),
      assistant("a1", "u1", [tool("bash", completed("z".repeat(3000)))]),
      user("u2", "kept"),
      marker("c1"),
    ]
    const plan = planOf(window, "c1", { config: { tail_turns: 1 } })
    expect(plan.head).toEqual(ids("u1", "a1"))
    const messages = SummaryInput.summarizerMessages(plan, lookup(window), "PROMPT")
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"])
    expect(messages[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "text", text: "[Attached image/png: cat.png]" },
      ],
    })
    const result = messages[2]?.role === "tool" ? messages[2].content[0]?.output : undefined
    expect(result).toEqual({
      type: "text",
      value: `${"z".repeat(2000)}\n[Tool output truncated for compaction: omitted 1000 chars]`,
    })
    expect(messages[3]).toEqual({ role: "user", content: [{ type: "text", text: "PROMPT" }] })
  })

  it("given ids the lookup does not know, then they are skipped", () => {
    const plan: SummaryInput.CompactionPlan = { parentId: id("c1"), head: ids("u1", "gone"), tail: [] }
    const messages = SummaryInput.summarizerMessages(plan, lookup([user("u1", "hello")]), "P")
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "hello" }] },
      { role: "user", content: [{ type: "text", text: "P" }] },
    ])
  })
})

// ---------------------------------------------------------------------------------------------------------------------
// Property
// ---------------------------------------------------------------------------------------------------------------------

type Kind = "user" | "assistant" | "marker" | "summary" | "failed-summary"

const windowArb = fc
  .array(fc.constantFrom<Kind>("user", "user", "assistant", "assistant", "marker", "summary", "failed-summary"), {
    minLength: 1,
    maxLength: 16,
  })
  .map((kinds) => {
    let lastMarker = "none"
    return kinds.map((kind, n): Message => {
      switch (kind) {
        case "user":
          return user(`u${n}`, "x".repeat(n * 50))
        case "assistant":
          return assistant(`a${n}`, "u0", "y".repeat(n * 40))
        case "marker":
          lastMarker = `c${n}`
          return marker(lastMarker)
        case "summary":
          return summary(`s${n}`, lastMarker, `summary ${n}`)
        default:
          return summary(`s${n}`, lastMarker, "bad", { finish: "error", error: { name: "APIError", message: "x" } })
      }
    })
  })

describe("SummaryInput properties", () => {
  it("head and tail are disjoint, in window order, never hold the parent, and the tail has no markers or summaries", () => {
    fc.assert(
      fc.property(
        windowArb,
        fc.nat(),
        fc.boolean(),
        fc.nat(3),
        fc.nat(400),
        (window, pick, overflow, tailTurns, budget) => {
          const users = window.filter((m) => m.role === "user")
          fc.pre(users.length > 0)
          const parent = users[pick % users.length]!
          const result = SummaryInput.plan(window, {
            parentId: parent.id,
            overflow,
            config: { tail_turns: tailTurns, preserve_recent_tokens: budget },
            compactionLimits: FIXTURE,
          })
          expect(Result.isSuccess(result)).toBe(true)
          if (!Result.isSuccess(result)) return
          const plan = result.success
          const index = new Map(window.map((m, i) => [m.id, i]))
          const all = [...plan.head, ...plan.tail]
          expect(new Set(all).size).toBe(all.length)
          const positions = all.map((messageId) => index.get(messageId)!)
          expect(positions).toEqual([...positions].sort((a, b) => a - b))
          if (isMarker(parent)) expect(all).not.toContain(parent.id)
          for (const messageId of plan.tail) {
            const message = window[index.get(messageId)!]!
            expect(isMarker(message) || (message.role === "assistant" && message.summary === true)).toBe(false)
          }
          expect(plan.tailStartId).toBe(plan.tail[0])
          if (plan.replayOf !== undefined) {
            const replayAt = index.get(plan.replayOf)!
            expect(positions.every((p) => p < replayAt)).toBe(true)
          }
        },
      ),
      RUNS,
    )
  })
})
