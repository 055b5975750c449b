/**
 * The Decider at the exact thresholds, given / when / then: the overflow trigger (spec §2.4, boundary `>=`) on both
 * decider paths (a recorded step, the pre-check), and prune's PRUNE_PROTECT / PRUNE_MINIMUM (§2.14, `total <= 40k`
 * protects, `pruned > 20k` prunes), each at value − 1, value and value + 1.
 *
 * The expected triggers are worked out by hand from spec §2.3, not asked of `Overflow`.
 */

import { type Commands, type Config, type Events, type Model, Tokens } from "@pivot/core"
import { describe, it } from "vitest"
import { assistant, assistantMessage, id, part, started, toolPart, user } from "./support/events.ts"
import { given } from "./support/given.ts"

type Event = Events.Event

/** Usage whose context count is `count`: input only (no `total`, so the sum counts). */
const using = (count: number): Tokens.TokenUsage => ({ ...Tokens.zero, input: count })

interface Case {
  readonly name: string
  readonly config: Config.CompactionConfig
  readonly limits: Model.ModelLimits
  /** The trigger, worked out by hand. */
  readonly trigger: number
}

// Spec §2.3: without limit.input, usable = context − min(output, 32_000); with it, usable = input − reserved, where
// reserved defaults to min(20_000, maxOutputTokens). A threshold t lowers the trigger to floor(usable × t).
const STEP_CASES: ReadonlyArray<Case> = [
  { name: "context 100k, output 32k", config: {}, limits: { context: 100_000, output: 32_000 }, trigger: 68_000 },
  { name: "output above the 32k cap", config: {}, limits: { context: 200_000, output: 64_000 }, trigger: 168_000 },
  { name: "output 0 (cap used)", config: {}, limits: { context: 50_000, output: 0 }, trigger: 18_000 },
  {
    name: "limit.input with default reserved",
    config: {},
    limits: { context: 200_000, input: 150_000, output: 8_000 },
    trigger: 142_000,
  },
  {
    name: "limit.input with reserved 1_000",
    config: { reserved: 1_000 },
    limits: { context: 200_000, input: 150_000, output: 64_000 },
    trigger: 149_000,
  },
  { name: "threshold 0.5", config: { threshold: 0.5 }, limits: { context: 100_000, output: 32_000 }, trigger: 34_000 },
  { name: "tiny window", config: {}, limits: { context: 20, output: 10 }, trigger: 10 },
]

describe("RecordAssistantStep at the overflow trigger (rule A, spec §2.4)", () => {
  for (const c of STEP_CASES) {
    const record = (count: number) => {
      const message = assistantMessage(`a_${count}`, "u1", "ok", { tokens: using(count) })
      const recorded: Event = { _tag: "AssistantStepRecorded", at: message.createdAt, message }
      const command: Commands.Command = { _tag: "RecordAssistantStep", message, config: c.config, limits: c.limits }
      return { message, recorded, when: given(started(), user("u1", "hi")).when(command) }
    }
    it(`${c.name}: given a step at trigger − 1 (${c.trigger - 1}), then only the step is recorded`, () => {
      const { recorded, when } = record(c.trigger - 1)
      when.then(recorded)
    })
    it(`${c.name}: given a step at the trigger (${c.trigger}), then OverflowDetected`, () => {
      const { message, recorded, when } = record(c.trigger)
      when.then(recorded, {
        _tag: "OverflowDetected",
        at: message.createdAt,
        messageId: message.id,
        source: "usage",
        tokens: c.trigger,
        trigger: c.trigger,
      })
    })
    it(`${c.name}: given a step at trigger + 1 (${c.trigger + 1}), then OverflowDetected`, () => {
      const { message, recorded, when } = record(c.trigger + 1)
      when.then(recorded, {
        _tag: "OverflowDetected",
        at: message.createdAt,
        messageId: message.id,
        source: "usage",
        tokens: c.trigger + 1,
        trigger: c.trigger,
      })
    })
  }

  it("given a provider `total`, then the total is the count (not the sum), at the trigger", () => {
    const tokens = { ...Tokens.zero, input: 1, total: 68_000 }
    const message = assistantMessage("a1", "u1", "ok", { tokens })
    given(started(), user("u1", "hi"))
      .when({ _tag: "RecordAssistantStep", message, config: {}, limits: { context: 100_000, output: 32_000 } })
      .then(
        { _tag: "AssistantStepRecorded", at: message.createdAt, message },
        {
          _tag: "OverflowDetected",
          at: message.createdAt,
          messageId: message.id,
          source: "usage",
          tokens: 68_000,
          trigger: 68_000,
        },
      )
  })

  it("given cache reads and writes, then they count and reasoning does not: 67_999 + reasoning stays under", () => {
    const tokens = { input: 60_000, output: 3_999, reasoning: 50_000, cacheRead: 3_000, cacheWrite: 1_000 }
    const message = assistantMessage("a1", "u1", "ok", { tokens })
    given(started(), user("u1", "hi"))
      .when({ _tag: "RecordAssistantStep", message, config: {}, limits: { context: 100_000, output: 32_000 } })
      .then({ _tag: "AssistantStepRecorded", at: message.createdAt, message })
  })

  it("given no limits, then a huge step is only recorded", () => {
    const message = assistantMessage("a1", "u1", "ok", { tokens: using(10_000_000) })
    given(started(), user("u1", "hi"))
      .when({ _tag: "RecordAssistantStep", message, config: {} })
      .then({ _tag: "AssistantStepRecorded", at: message.createdAt, message })
  })

  it("given a step with output_token_max 8_000, then rule A still uses the default cap (trigger 68_000)", () => {
    const message = assistantMessage("a1", "u1", "ok", { tokens: using(70_000) })
    const limits = { context: 100_000, output: 32_000 }
    given(started(), user("u1", "hi"))
      .when({ _tag: "RecordAssistantStep", message, config: { output_token_max: 8_000 }, limits })
      .then(
        { _tag: "AssistantStepRecorded", at: message.createdAt, message },
        {
          _tag: "OverflowDetected",
          at: message.createdAt,
          messageId: message.id,
          source: "usage",
          tokens: 70_000,
          trigger: 68_000,
        },
      )
  })

  for (const [name, config, limits] of [
    ["auto off", { auto: false }, { context: 100_000, output: 32_000 }],
    ["context 0 (unknown limits)", {}, { context: 0, output: 0 }],
    ["context 0 with an input limit", {}, { context: 0, input: 50_000, output: 0 }],
    ["a usable window of 0", {}, { context: 16_384, output: 0 }],
  ] as const) {
    it(`given ${name}, then even a huge step is only recorded`, () => {
      const message = assistantMessage("a1", "u1", "ok", { tokens: using(10_000_000) })
      given(started(), user("u1", "hi"))
        .when({ _tag: "RecordAssistantStep", message, config, limits })
        .then({ _tag: "AssistantStepRecorded", at: message.createdAt, message })
    })
  }
})

describe("CheckOverflow at the overflow trigger (rule B, spec §2.4)", () => {
  const CHECK_CASES: ReadonlyArray<Case> = [
    ...STEP_CASES,
    // The pre-check honours output_token_max: usable = 100k − min(32k, 8k).
    {
      name: "output_token_max 8_000",
      config: { output_token_max: 8_000 },
      limits: { context: 100_000, output: 32_000 },
      trigger: 92_000,
    },
    {
      name: "limit.input, output_token_max 4_000 (reserved = 4_000)",
      config: { output_token_max: 4_000 },
      limits: { context: 200_000, input: 150_000, output: 64_000 },
      trigger: 146_000,
    },
  ]
  for (const c of CHECK_CASES) {
    const check = (count: number) =>
      given(started(), user("u1", "hi"), assistant("a1", "u1", "ok", { tokens: using(count) })).when({
        _tag: "CheckOverflow",
        at: 50,
        config: c.config,
        limits: c.limits,
      })
    it(`${c.name}: given the last finished step at trigger − 1, then nothing`, () => {
      check(c.trigger - 1).thenNothing()
    })
    it(`${c.name}: given the last finished step at the trigger, then OverflowDetected`, () => {
      check(c.trigger).then({
        _tag: "OverflowDetected",
        at: 50,
        messageId: id("msg_a1"),
        source: "pre-check",
        tokens: c.trigger,
        trigger: c.trigger,
      })
    })
    it(`${c.name}: given the last finished step at trigger + 1, then OverflowDetected`, () => {
      check(c.trigger + 1).then({
        _tag: "OverflowDetected",
        at: 50,
        messageId: id("msg_a1"),
        source: "pre-check",
        tokens: c.trigger + 1,
        trigger: c.trigger,
      })
    })
  }

  it("given an overflow already reported for the last step, then nothing", () => {
    const limits = { context: 100_000, output: 32_000 }
    given(started(), user("u1", "hi"), assistant("a1", "u1", "ok", { tokens: using(68_000) }), {
      _tag: "OverflowDetected",
      at: 9,
      messageId: id("msg_a1"),
      source: "usage",
      tokens: 68_000,
      trigger: 68_000,
    })
      .when({ _tag: "CheckOverflow", at: 50, config: {}, limits })
      .thenNothing()
  })

  it("given no finished step yet, then nothing", () => {
    given(started(), user("u1", "hi"))
      .when({ _tag: "CheckOverflow", at: 50, config: {}, limits: { context: 20, output: 10 } })
      .thenNothing()
  })
})

// ---------------------------------------------------------------------------------------------------------------------
// Prune at PRUNE_PROTECT (40_000) and PRUNE_MINIMUM (20_000)
// ---------------------------------------------------------------------------------------------------------------------

/** A tool output the estimate (chars / 4) sizes at exactly `tokens`. */
const output = (tokens: number): string => "x".repeat(tokens * 4)

/**
 * A session whose first turn holds two bash outputs, `older` then `newer` tokens, followed by two more turns (the
 * two-turn guard protects those). The walk meets `newer` first.
 */
const session = (older: number, newer: number, tool = "bash"): ReadonlyArray<Event> => [
  started(),
  user("u1", "first"),
  assistant("a1", "u1", [toolPart("old", tool, output(older)), toolPart("new", tool, output(newer))]),
  user("u2", "second"),
  assistant("a2", "u2", "ok"),
  user("u3", "third"),
  assistant("a3", "u3", "ok"),
]

const compacted = (name: "old" | "new", tokens: number, at = 77): Event => ({
  _tag: "PartCompacted",
  at,
  messageId: id("msg_a1"),
  partId: part(`prt_${name}`),
  tokens,
})

const prune = (extra: Partial<Omit<typeof Commands.Prune.Type, "_tag">> = {}): Commands.Command => ({
  _tag: "Prune",
  at: 77,
  ...extra,
})

describe("Prune at PRUNE_PROTECT (spec §2.14: a running total ≤ 40_000 is protected)", () => {
  it("given the newest output at 39_999 and an older 25_000, then only the older is pruned", () => {
    given(...session(25_000, 39_999))
      .when(prune())
      .then(compacted("old", 25_000))
  })
  it("given the newest output at exactly 40_000 and an older 25_000, then only the older is pruned", () => {
    given(...session(25_000, 40_000))
      .when(prune())
      .then(compacted("old", 25_000))
  })
  it("given the newest output at 40_001 and an older 25_000, then both are pruned (the crossing part in full)", () => {
    given(...session(25_000, 40_001))
      .when(prune())
      .then(compacted("old", 25_000), compacted("new", 40_001))
  })
})

describe("Prune at PRUNE_MINIMUM (spec §2.14: prunes only when it frees strictly more than 20_000)", () => {
  it("given 40_000 protected and an older 19_999, then nothing", () => {
    given(...session(19_999, 40_000))
      .when(prune())
      .thenNothing()
  })
  it("given 40_000 protected and an older exactly 20_000, then nothing", () => {
    given(...session(20_000, 40_000))
      .when(prune())
      .thenNothing()
  })
  it("given 40_000 protected and an older 20_001, then the older is pruned", () => {
    given(...session(20_001, 40_000))
      .when(prune())
      .then(compacted("old", 20_001))
  })
})

describe("Prune with overridden thresholds (varied config)", () => {
  it("given protect 10 and minimum 0, then at protect + 1 both outputs are pruned", () => {
    given(...session(5, 11))
      .when(prune({ protect: 10, minimum: 0 }))
      .then(compacted("old", 5), compacted("new", 11))
  })
  it("given protect 10 and minimum 0, then at exactly protect the newest is kept", () => {
    given(...session(5, 10))
      .when(prune({ protect: 10, minimum: 0 }))
      .then(compacted("old", 5))
  })
  it("given protect 0 and minimum 9, then outputs freeing exactly 9 are kept and 10 are pruned", () => {
    given(...session(4, 5))
      .when(prune({ protect: 0, minimum: 9 }))
      .thenNothing()
    given(...session(5, 5))
      .when(prune({ protect: 0, minimum: 9 }))
      .then(compacted("old", 5), compacted("new", 5))
  })
  it("given the outputs come from the protected skill tool, then nothing is pruned nor counted", () => {
    given(...session(60_000, 60_000, "skill"))
      .when(prune())
      .thenNothing()
  })
  it("given protectedTools [] , then skill outputs are pruned like any other", () => {
    given(...session(25_000, 40_001, "skill"))
      .when(prune({ protectedTools: [] }))
      .then(compacted("old", 25_000), compacted("new", 40_001))
  })
  it("given an empty session, then nothing", () => {
    given(started()).when(prune()).thenNothing()
  })
})
