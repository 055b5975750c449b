import { type Message, Prune } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { assistant, marker, messageId, partId, summary, tool, user } from "./support/arbitraries.ts"

// n tokens of tool output (estimate = chars / 4).
const out = (tokens: number): string => "x".repeat(tokens * 4)

const compactedAt = (messages: ReadonlyArray<Message.Message>, part: number): number | undefined => {
  for (const message of messages) {
    if (message.role !== "assistant") continue
    for (const p of message.parts) {
      if (p.id === partId(part) && p.type === "tool" && p.state.status === "completed") return p.state.compactedAt
    }
  }
  return undefined
}

// P1's session with the given tool: u1, a1 (one completed tool of 50k tokens), u2, u3.
const p1Session = (name: string): ReadonlyArray<Message.Message> => [
  user(1, "first"),
  assistant(2, 1, [tool(1, name, "x".repeat(200_000))], { finish: "end_turn" }),
  user(3, "second"),
  user(4, "third"),
]

describe("Prune.isEnabled (spec §2.14 step 1: opt-in)", () => {
  it("given no prune key or prune false, then pruning is off", () => {
    expect(Prune.isEnabled({})).toBe(false)
    expect(Prune.isEnabled({ prune: false })).toBe(false)
    expect(Prune.isEnabled({ auto: true, prune: false })).toBe(false)
  })

  it("given prune true, then pruning is on", () => expect(Prune.isEnabled({ prune: true })).toBe(true))
})

describe("Prune.select — spec §3.3", () => {
  it("P1 given prune:true and a 50k-token bash output before the last two turns, then it is pruned", () => {
    const messages = p1Session("bash")
    expect(Prune.isEnabled({ prune: true })).toBe(true)
    const selection = Prune.select(messages)
    expect(selection).toEqual({
      parts: [{ messageId: messageId(2), partId: partId(1), tool: "bash", tokens: 50_000 }],
      tokensFreed: 50_000,
    })
    const after = Prune.apply(messages, selection, 1_234)
    expect(compactedAt(after, 1)).toBe(1_234)
  })

  it("P2 given the default config, then pruning is off and the skill output keeps no compacted time", () => {
    expect(Prune.isEnabled({})).toBe(false)
    expect(compactedAt(p1Session("skill"), 1)).toBeUndefined()
  })

  it("P2 (prune:true variant) given a 50k-token skill output, then it is not pruned", () => {
    expect(Prune.select(p1Session("skill"))).toEqual(Prune.empty)
  })

  it("P2 (prune:true variant) given a skill output, then it is not counted toward the 40k kept", () => {
    // Counted, the 50k skill output would fill the protected 40k and the older 30k bash output would be pruned.
    const messages = [
      user(1, "first"),
      assistant(2, 1, [tool(1, "bash", out(30_000)), tool(2, "skill", out(50_000))]),
      user(3, "second"),
      user(4, "third"),
    ]
    expect(Prune.select(messages)).toEqual(Prune.empty)
  })
})

describe("Prune.select — the walk (spec §2.14 step 3)", () => {
  it("given big outputs in each of the last two turns, then only older ones are pruned (two-turn guard)", () => {
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "bash", out(50_000))]),
      user(3, "two"),
      assistant(4, 3, [tool(2, "bash", out(50_000))]),
      user(5, "three"),
      assistant(6, 5, [tool(3, "bash", out(50_000))]),
    ]
    const selection = Prune.select(messages)
    expect(selection.parts.map((p) => p.partId)).toEqual([partId(1)])
    // Outputs in the last two turns are not even counted: the 50k of part 1 alone crosses 40k.
    expect(selection.tokensFreed).toBe(50_000)
  })

  it("given fewer than two older turns, then nothing is pruned", () => {
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "bash", out(90_000))]),
      user(3, "two"),
      assistant(4, 3, [tool(2, "bash", out(90_000))]),
    ]
    expect(Prune.select(messages)).toEqual(Prune.empty)
  })

  it("given a finished summary, then nothing before it is pruned", () => {
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "bash", out(90_000))]),
      marker(3),
      summary(4, 3, "the summary"),
      user(5, "two"),
      assistant(6, 5, [tool(2, "bash", out(50_000))]),
      user(7, "three"),
      user(8, "four"),
    ]
    expect(Prune.select(messages).parts.map((p) => p.partId)).toEqual([partId(2)])
  })

  it("given an unfinished or failed summary, then the walk stops there too (any summary flag, as in OpenCode)", () => {
    for (const extra of [{ finish: undefined }, { finish: "error", error: { name: "APIError", message: "x" } }]) {
      const { finish: _, ...rest } = summary(4, 3, "partial")
      const messages = [
        user(1, "one"),
        assistant(2, 1, [tool(1, "bash", out(90_000))]),
        marker(3),
        extra.finish === undefined ? rest : { ...rest, ...extra },
        user(5, "two"),
        user(6, "three"),
      ] as ReadonlyArray<Message.Message>
      expect(Prune.select(messages)).toEqual(Prune.empty)
    }
  })

  it("given the latest summary inside the last two turns, then the walk still stops there (pivot's deviation)", () => {
    // OpenCode's guard skips the summary and walks on into history the model no longer sees, pruning part 1.
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "bash", out(90_000))]),
      user(3, "two"),
      assistant(4, 3, [tool(2, "bash", out(10))]),
      marker(5),
      summary(6, 5, "the summary"),
    ]
    expect(Prune.select(messages)).toEqual(Prune.empty)
  })

  it("given an already compacted output, then the whole walk stops there (parity with OpenCode #30807)", () => {
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "bash", out(50_000))]),
      user(3, "two"),
      assistant(4, 3, [tool(2, "bash", out(50_000), { compactedAt: 99 })]),
      user(5, "three"),
      assistant(6, 5, [tool(3, "bash", out(50_000))]),
      user(7, "four"),
      user(8, "five"),
    ]
    const selection = Prune.select(messages)
    expect(selection.parts.map((p) => p.partId)).toEqual([partId(3)])
    expect(selection.tokensFreed).toBe(50_000)
  })

  it("given a compacted output of a protected tool, then it is skipped and the walk goes on", () => {
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "bash", out(50_000)), tool(2, "skill", out(10), { compactedAt: 99 })]),
      user(3, "two"),
      user(4, "three"),
    ]
    expect(Prune.select(messages).parts.map((p) => p.partId)).toEqual([partId(1)])
  })

  it("given tool parts that are not completed, then they are neither pruned nor counted", () => {
    const pending: Message.ToolPart = {
      type: "tool",
      id: partId(2),
      callId: "c2",
      tool: "bash",
      state: { status: "pending", input: {} },
    }
    const failed: Message.ToolPart = {
      type: "tool",
      id: partId(3),
      callId: "c3",
      tool: "bash",
      state: { status: "error", input: {}, error: "x".repeat(400_000) },
    }
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "bash", out(30_000)), pending, failed]),
      user(3, "two"),
      user(4, "three"),
    ]
    expect(Prune.select(messages)).toEqual(Prune.empty)
  })

  it("given one message with several outputs, then its parts are walked last to first", () => {
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "read", out(30_000)), tool(2, "bash", out(30_000))]),
      user(3, "two"),
      user(4, "three"),
    ]
    // Part 2 (newest) fills 30k of the protected 40k; part 1 crosses it and is pruned.
    expect(Prune.select(messages).parts).toEqual([
      { messageId: messageId(2), partId: partId(1), tool: "read", tokens: 30_000 },
    ])
  })

  it("given the part that crosses 40k, then it is pruned in full, not just the excess", () => {
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "bash", out(25_000))]),
      assistant(3, 1, [tool(2, "bash", out(30_000))]),
      user(4, "two"),
      user(5, "three"),
    ]
    // total 55k: the excess is 15k (which would not reach the 20k minimum); pruned in full it frees 25k.
    expect(Prune.select(messages)).toEqual({
      parts: [{ messageId: messageId(2), partId: partId(1), tool: "bash", tokens: 25_000 }],
      tokensFreed: 25_000,
    })
  })

  it("given several pruned parts, then they come oldest first and their tokens add up", () => {
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "bash", out(15_000))]),
      user(3, "two"),
      assistant(4, 3, [tool(2, "grep", out(12_000))]),
      assistant(5, 3, [tool(3, "read", out(45_000))]),
      user(6, "three"),
      user(7, "four"),
    ]
    expect(Prune.select(messages)).toEqual({
      parts: [
        { messageId: messageId(2), partId: partId(1), tool: "bash", tokens: 15_000 },
        { messageId: messageId(4), partId: partId(2), tool: "grep", tokens: 12_000 },
        { messageId: messageId(5), partId: partId(3), tool: "read", tokens: 45_000 },
      ],
      tokensFreed: 72_000,
    })
  })
})

describe("Prune.select — the minimum (spec §2.14 step 4: strictly more than 20k)", () => {
  // The newest output fills the protected 40k exactly; the older one is all that is pruned.
  const session = (older: number) => [
    user(1, "one"),
    assistant(2, 1, [tool(1, "bash", out(older))]),
    assistant(3, 1, [tool(2, "bash", out(40_000))]),
    user(4, "two"),
    user(5, "three"),
  ]

  it("given exactly 40k counted, then nothing is pruned (total must exceed 40k)", () =>
    expect(
      Prune.select([user(1, "a"), assistant(2, 1, [tool(1, "bash", out(40_000))]), user(3, "b"), user(4, "c")]),
    ).toEqual(Prune.empty))

  it("given exactly 20_000 tokens to prune, then nothing is pruned", () =>
    expect(Prune.select(session(20_000))).toEqual(Prune.empty))

  it("given 20_001 tokens to prune, then they are pruned", () => {
    expect(Prune.select(session(20_001))).toEqual({
      parts: [{ messageId: messageId(2), partId: partId(1), tool: "bash", tokens: 20_001 }],
      tokensFreed: 20_001,
    })
  })
})

describe("Prune.select — options", () => {
  const messages = [
    user(1, "one"),
    assistant(2, 1, [tool(1, "bash", out(3_000)), tool(2, "read", out(3_000))]),
    user(3, "two"),
    user(4, "three"),
  ]

  it("given smaller protect and minimum, then they replace the constants", () =>
    expect(Prune.select(messages, { protect: 2_000, minimum: 2_999 }).parts.map((p) => p.partId)).toEqual([
      partId(1),
      partId(2),
    ]))

  it("given protected tools, then those are skipped instead of skill", () =>
    expect(
      Prune.select(messages, { protect: 2_000, minimum: 2_999, protectedTools: ["read"] }).parts.map((p) => p.partId),
    ).toEqual([partId(1)]))
})

describe("Prune.apply", () => {
  it("given a selection, then only its parts get compactedAt and other messages are the same objects", () => {
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "bash", out(50_000)), tool(2, "bash", out(1))]),
      user(3, "two"),
      user(4, "three"),
    ]
    const after = Prune.apply(messages, Prune.select(messages), 7)
    expect(compactedAt(after, 1)).toBe(7)
    expect(compactedAt(after, 2)).toBeUndefined()
    expect(after[0]).toBe(messages[0])
    expect(after[2]).toBe(messages[2])
    expect(compactedAt(messages, 1)).toBeUndefined()
  })

  it("given an empty selection, then the same list comes back", () => {
    const messages = p1Session("skill")
    expect(Prune.apply(messages, Prune.empty, 7)).toBe(messages)
  })
})

describe("Prune.sized", () => {
  it("given a 32k context, then it protects 20% and acts above 10%", () =>
    expect(Prune.sized(32_000)).toEqual({ protect: 6_400, minimum: 3_200 }))

  it("given the context where 20% reaches OpenCode's protect, then both thresholds equal OpenCode's constants", () => {
    expect(Prune.sized(199_999)).toEqual({ protect: 39_999, minimum: 19_999 })
    expect(Prune.sized(200_000)).toEqual({ protect: 40_000, minimum: 20_000 })
    expect(Prune.sized(200_001)).toEqual({ protect: 40_000, minimum: 20_000 })
  })

  it("given a 0-token or negative context, then nothing is protected and any positive saving acts", () => {
    expect(Prune.sized(0)).toEqual({ protect: 0, minimum: 0 })
    expect(Prune.sized(-5)).toEqual({ protect: 0, minimum: 0 })
  })

  it("given a 32k session whose outputs OpenCode's constants never prune, then sized thresholds prune the oldest", () => {
    const messages = [
      user(1, "one"),
      assistant(2, 1, [tool(1, "bash", out(4_000)), tool(2, "read", out(4_000))]),
      user(3, "two"),
      assistant(4, 3, [tool(3, "bash", out(4_000))]),
      user(5, "three"),
      user(6, "four"),
    ]
    expect(Prune.select(messages).parts).toEqual([])
    expect(Prune.select(messages, Prune.sized(32_000)).parts.map((p) => p.partId)).toEqual([partId(1), partId(2)])
  })
})
