/**
 * The context tools' runtime side (issue 10): the usage HUD shown to the model, and compactions the model asks for
 * (`context_compact`), with their bounds.
 */
import { Tokens, Window } from "@pivot/core"
import { Compaction, Hud, RuntimeState, Sessions } from "@pivot/runtime"
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { RUNS } from "../../core/test/support/runs.ts"
import { SAMPLES } from "../../core/test/support/secrets.ts"
import { captured, prepare, run, SESSION, services, step, stub, tool, used, user, users } from "./support/harness.ts"

const ALL_SECRETS = SAMPLES.map((s) => s.text).join("\n")

const events = Effect.gen(function* () {
  const { sessions } = yield* services
  return yield* sessions.events(SESSION)
})

describe("Hud.level", () => {
  // usable 1000 → high from 700 tokens, critical from 900 (default ratios).
  it.each([
    [699, "ok"],
    [700, "high"],
    [701, "high"],
    [899, "high"],
    [900, "critical"],
    [901, "critical"],
  ] as const)("given 1000 usable tokens, when %i are used, then the level is %s", (tokens, expected) => {
    expect(Hud.level(tokens, 1000)).toBe(expected)
  })

  it("given custom ratios, then they move the boundaries", () => {
    expect(Hud.level(499, 1000, { high: 0.5, critical: 0.6 })).toBe("ok")
    expect(Hud.level(500, 1000, { high: 0.5, critical: 0.6 })).toBe("high")
    expect(Hud.level(600, 1000, { high: 0.5, critical: 0.6 })).toBe("critical")
  })

  it("given a model with 0 usable tokens, then the level is critical", () => {
    expect(Hud.level(0, 0)).toBe("critical")
  })

  it("matches a reference on any numbers and ratios (integer arithmetic, not the ratios as written)", () => {
    fc.assert(
      fc.property(
        fc.nat(2_000_000),
        fc.integer({ min: 1, max: 2_000_000 }),
        fc.integer({ min: 1, max: 99 }),
        fc.integer({ min: 1, max: 99 }),
        (tokens, usable, a, b) => {
          const [high, critical] = a <= b ? [a, b] : [b, a]
          // tokens ≥ r% of usable ⟺ 100·tokens ≥ r·usable
          const reference =
            100 * tokens >= critical * usable ? "critical" : 100 * tokens >= high * usable ? "high" : "ok"
          expect(Hud.level(tokens, usable, { high: high / 100, critical: critical / 100 })).toBe(reference)
        },
      ),
      RUNS,
    )
  })
})

describe("Hud.render", () => {
  const numbers = fc.record({
    tokens: fc.nat(5_000_000),
    usable: fc.nat(5_000_000),
    pivots: fc.nat(100_000),
    prunedParts: fc.nat(10_000_000),
    prunedTokens: fc.nat(1_000_000_000),
    pinned: fc.record({ messages: fc.nat(10_000), tokens: fc.nat(10_000_000) }),
  })

  it("is at most 150 tokens and starts with the same header line, for any numbers and options", () => {
    fc.assert(
      fc.property(numbers, fc.boolean(), (input, recall) => {
        const text = Hud.render(input, { recall })
        expect(Tokens.estimate(text)).toBeLessThanOrEqual(150)
        expect(text.split("\n")[0]).toBe(Hud.HEADER)
        expect(Hud.render(input, { recall })).toBe(text)
      }),
      RUNS,
    )
  })

  it("given the level is high or critical, then it advises context_compact; given ok, it does not", () => {
    const base = { usable: 1000, pivots: 1, prunedParts: 0, prunedTokens: 0 }
    expect(Hud.render({ ...base, tokens: 699 })).not.toContain("context_compact")
    expect(Hud.render({ ...base, tokens: 700 })).toContain("advice: the context is filling up; call context_compact")
    expect(Hud.render({ ...base, tokens: 900 })).toContain("advice: the context is nearly full; call context_compact")
  })

  it("shows the pins only when something is pinned: 0 pins no line, 1 and 2 pins a line", () => {
    const input = { tokens: 10, usable: 1000, pivots: 0, prunedParts: 0, prunedTokens: 0 }
    expect(Hud.render({ ...input, pinned: { messages: 0, tokens: 0 } })).toBe(Hud.render(input))
    expect(Hud.render({ ...input, pinned: { messages: 1, tokens: 1_234 } })).toContain(
      "pinned: 1 message (1,234 tokens), kept verbatim after every pivot",
    )
    expect(Hud.render({ ...input, pinned: { messages: 2, tokens: 5 } })).toContain("pinned: 2 messages (5 tokens)")
  })

  it("says pruned outputs are recallable only when recall is on", () => {
    const input = { tokens: 10, usable: 1000, pivots: 0, prunedParts: 3, prunedTokens: 12_345 }
    expect(Hud.render(input)).toContain("pruned: 3 old tool outputs (12,345 tokens)\n".trimEnd())
    expect(Hud.render(input)).not.toContain("context_recall")
    expect(Hud.render(input, { recall: true })).toContain("recallable with context_recall")
  })
})

describe("the HUD in prepare", () => {
  it("given the hud option, when steps run, then every prepared window carries a HUD whose numbers are the usage read model's", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("start")
        const seen = []
        for (const input of [10_000, 50_000, 62_000]) {
          yield* step(input)
          const prepared = yield* prepare
          seen.push({ hud: prepared.hud, usage: yield* cm.usage(SESSION) })
        }
        return seen
      }),
      { options: { hud: true } },
    )
    for (const { hud, usage } of out) {
      expect(hud).toBeDefined()
      expect(hud).toContain(
        `context: ${usage.tokens.toLocaleString("en-US")} / ${usage.usable.toLocaleString("en-US")}`,
      )
      expect(hud).toContain(`level ${Hud.level(usage.tokens, usage.usable)}`)
      expect(hud).toContain(`pivots so far: ${usage.pivots}`)
    }
    expect(out.map((o) => o.hud?.match(/level (\w+)/)?.[1])).toEqual(["ok", "high", "critical"])
  })

  it("records HudShown only when the text changes, and the fold of the log gives back the HUD the model saw", async () => {
    const out = await run(
      Effect.gen(function* () {
        yield* user("start")
        yield* step(10_000)
        const first = (yield* prepare).hud
        const again = (yield* prepare).hud
        yield* step(20_000)
        const second = (yield* prepare).hud
        return { first, again, second, log: yield* events }
      }),
      { options: { hud: true } },
    )
    const shown = out.log.flatMap((e) => (e._tag === "HudShown" ? [e.text] : []))
    expect(out.again).toBe(out.first)
    expect(shown).toEqual([out.first, out.second])
    expect(RuntimeState.fold(out.log).hud).toBe(out.second)
  })

  it("given no hud option, then prepare answers no HUD and records none", async () => {
    const out = await run(
      Effect.gen(function* () {
        yield* user("start")
        yield* step(10_000)
        return { prepared: yield* prepare, log: yield* events }
      }),
    )
    expect(out.prepared.hud).toBeUndefined()
    expect(out.log.some((e) => e._tag === "HudShown")).toBe(false)
  })
})

describe("compactions the model asks for", () => {
  it("given a session with work in it, when the model asks with a focus, then a pivot forms, the focus reaches the summariser's prompt, and the request is recorded", async () => {
    const s = stub()
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* user("refactor the parser")
        yield* step(30_000)
        const compacted = yield* cm.compact(SESSION, { requestedBy: "model", focus: "  keep the failing test names  " })
        const state = yield* sessions.load(SESSION)
        return { compacted, state, log: yield* events, prepared: yield* prepare }
      }),
      { summarizer: s },
    )
    expect(out.compacted.declined).toBeUndefined()
    expect(out.compacted.outcome?.status).toBe("finished")
    expect(s.requests).toHaveLength(1)
    expect(captured(s.requests[0])).toContain(`${Compaction.FOCUS_PREFIX}keep the failing test names`)
    const asked = out.log.filter((e) => e._tag === "CompactionRequestedByModel")
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({ focus: "keep the failing test names" })
    const started = out.log.find((e) => e._tag === "CompactionStarted")
    expect(JSON.stringify(started)).toContain("keep the failing test names")
    // The next step starts from the new pivot: the marker, then the summary.
    const first = out.prepared.messages.map((r) => r.sourceMessageId)
    const marker = asked[0]!._tag === "CompactionRequestedByModel" ? asked[0]!.markerId : undefined
    expect(first[0]).toBe(marker)
    expect(Window.messages(out.state.session.window)[1]).toMatchObject({ role: "assistant", summary: true })
    // The request is manual: no continue message follows.
    expect(out.log.some((e) => e._tag === "ContinueRequested")).toBe(false)
  })

  it("given a focus note and a recall query holding every kind of secret, when they are recorded, then the log stores neither secret, only markers and the kinds found (issue 18 #3)", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("refactor the parser")
        yield* step(30_000)
        yield* cm.compact(SESSION, { requestedBy: "model", focus: `keep these: ${ALL_SECRETS}` })
        yield* cm.recall(SESSION, { query: `parser ${ALL_SECRETS}` })
        return yield* events
      }),
    )
    const stored = JSON.stringify(out)
    expect(SAMPLES.filter((s) => stored.includes(s.secret)).map((s) => s.kind)).toEqual([])
    const asked = out.find((e) => e._tag === "CompactionRequestedByModel")
    expect(asked).toMatchObject({ focus: expect.stringContaining("[REDACTED:") })
    const kinds = out.flatMap((e) =>
      e._tag === "SecretsRedacted" ? e.findings.filter((f) => f.field === "focus").map((f) => f.kind) : [],
    )
    expect(new Set(kinds)).toEqual(new Set(SAMPLES.map((s) => s.kind)))
    const recalled = out.find((e) => e._tag === "ContextRecalled")
    expect(recalled).toMatchObject({ query: expect.stringMatching(/^parser .*\[REDACTED:/s) })
  })

  it("given redactSecrets off, then the focus note and the query are stored as given", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("refactor the parser")
        yield* step(30_000)
        yield* cm.compact(SESSION, { requestedBy: "model", focus: `keep ${SAMPLES[0]!.text}` })
        yield* cm.recall(SESSION, { query: `parser ${SAMPLES[1]!.text}` })
        return JSON.stringify(yield* events)
      }),
      { options: { redactSecrets: false } },
    )
    expect(out).toContain(JSON.stringify(SAMPLES[0]!.secret).slice(1, -1))
    expect(out).toContain(SAMPLES[1]!.secret)
  })

  it("given a focus note longer than the bound, then it is cut on a character boundary: no half emoji reaches the prompt (issue 18)", async () => {
    const s = stub()
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("task")
        yield* step(30_000)
        // 1 + 1,500 × 2 units: the 2,000-unit bound falls between the halves of the 1,000th emoji.
        yield* cm.compact(SESSION, { requestedBy: "model", focus: `a${"😀".repeat(1_500)}` })
        return yield* events
      }),
      { summarizer: s },
    )
    const asked = out.find((e) => e._tag === "CompactionRequestedByModel")
    const focus = asked?._tag === "CompactionRequestedByModel" ? asked.focus : undefined
    expect(focus).toBe(`a${"😀".repeat(999)}`)
    expect(captured(s.requests[0]).includes("\\ud83d")).toBe(false)
  })

  it("given the model already compacted in this user turn, when it asks again, then it is declined and nothing is written; a new user message allows it again", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("task")
        yield* step(30_000)
        const first = yield* cm.compact(SESSION, { requestedBy: "model" })
        yield* step(31_000)
        const before = (yield* events).length
        const second = yield* cm.compact(SESSION, { requestedBy: "model" })
        const after = (yield* events).length
        yield* user("next task")
        yield* step(32_000)
        const third = yield* cm.compact(SESSION, { requestedBy: "model" })
        return { first, second, third, before, after }
      }),
    )
    expect(out.first.declined).toBeUndefined()
    expect(out.second).toEqual({ declined: "once-per-turn" })
    expect(out.after).toBe(out.before)
    expect(out.third.declined).toBeUndefined()
  })

  it("given an empty session or a window of only a pivot, when the model asks, then it is declined as nothing-to-compact", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        const empty = yield* cm.compact(SESSION, { requestedBy: "model" })
        yield* user("task")
        yield* step(30_000)
        yield* cm.compact(SESSION)
        yield* user("x")
        // Only the pivot and a new user message: the user message is work, so it may compact.
        const withUser = yield* cm.compact(SESSION, { requestedBy: "model" })
        return { empty, withUser, log: yield* events }
      }),
    )
    expect(out.empty).toEqual({ declined: "nothing-to-compact" })
    expect(out.withUser.declined).toBeUndefined()
  })

  it("given a user's manual compaction, then it is never declined by the model's bounds", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("task")
        yield* step(30_000, "tool-calls")
        yield* cm.compact(SESSION, { requestedBy: "model" })
        return yield* cm.compact(SESSION)
      }),
    )
    expect(out.declined).toBeUndefined()
  })

  it("replays byte-identically: the fold of the stored log equals the live state after HUD and model compactions", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* user("task")
        yield* step(30_000)
        yield* prepare
        yield* cm.compact(SESSION, { requestedBy: "model", focus: "the API shape" })
        yield* cm.recordAssistantStep(SESSION, {
          parts: [tool("context_compact", { focus: "the API shape" }, "compacted")],
          usage: used(5_000),
        })
        yield* prepare
        const live = yield* sessions.load(SESSION)
        return { live, log: yield* events }
      }),
      { options: { hud: true } },
    )
    const replayed = Sessions.fold(out.log)
    expect(JSON.stringify(Window.render(replayed.session.window))).toBe(
      JSON.stringify(Window.render(out.live.session.window)),
    )
    expect(replayed.runtime).toEqual(out.live.runtime)
  })

  // The AI SDK records a step after its tools ran: the step that called context_compact comes after the summary its
  // call formed, with usage measured before it (issue 18, item 9).
  const compactingStep = (input: number) =>
    Effect.gen(function* () {
      const { cm } = yield* services
      yield* user("refactor the parser")
      yield* step(30_000)
      yield* prepare
      const call = { ...tool("context_compact", { focus: "the plan" }, "Compacted"), callId: "call_compact_1" }
      yield* cm.compact(SESSION, { requestedBy: "model", focus: "the plan", callId: call.callId })
      yield* cm.recordAssistantStep(SESSION, { parts: [call], usage: used(input), finish: "tool-calls" })
      const prepared = yield* prepare
      return { prepared, usage: yield* cm.usage(SESSION), log: yield* events }
    })

  it("given the step that called context_compact reports usage at the trigger, when it is recorded after the pivot, then that one call made exactly one pivot and no overflow", async () => {
    // 68,000 is the harness model's trigger: the step's own usage, measured before the pivot, must not compact again.
    const out = await run(compactingStep(68_000), { options: { hud: true } })
    const count = (tag: string) => out.log.filter((e) => e._tag === tag).length
    expect(count("CompactionRequested")).toBe(1)
    expect(count("SummaryFinished")).toBe(1)
    expect(count("OverflowDetected")).toBe(0)
    expect(out.log.find((e) => e._tag === "CompactionRequestedByModel")).toMatchObject({ callId: "call_compact_1" })
  })

  it("given the step that called context_compact, then the next HUD shows the estimated new window, not the usage measured before the pivot", async () => {
    const out = await run(compactingStep(60_000), { options: { hud: true } })
    expect(out.usage.source).toBe("estimated")
    expect(out.usage.tokens).toBeLessThan(5_000)
    expect(out.prepared.usage).toEqual(out.usage)
    expect(out.prepared.hud).toContain(`context: ${out.usage.tokens.toLocaleString("en-US")} / 68,000 tokens`)
    expect(out.prepared.hud).toContain("level ok")
    // The next call reports again: its count is the window's size.
    const next = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* compactingStep(60_000)
        yield* step(4_000)
        return yield* cm.usage(SESSION)
      }),
      { options: { hud: true } },
    )
    expect(next).toMatchObject({ source: "reported", tokens: 4_000 })
  })

  it("given an end-of-turn prune, then the next HUD shows the window after the prune, not the last call's count from before it", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        const [u1] = yield* users("first")
        yield* cm.recordAssistantStep(SESSION, {
          parentId: u1!,
          parts: [tool("bash", { command: "cat big" }, "x".repeat(200_000))],
          usage: used(55_000),
          finish: "end_turn",
        })
        yield* users("second", "third")
        const before = yield* cm.usage(SESSION)
        const pruned = yield* cm.prune(SESSION)
        const prepared = yield* prepare
        return { before, pruned, prepared, after: yield* cm.usage(SESSION) }
      }),
      { options: { hud: true, config: { prune: true } } },
    )
    expect(out.before).toMatchObject({ source: "reported", tokens: 55_000 })
    expect(out.pruned.parts).toBe(1)
    expect(out.after.source).toBe("estimated")
    expect(out.after.tokens).toBeLessThan(5_000)
    expect(out.prepared.hud).toContain(`context: ${out.after.tokens.toLocaleString("en-US")} / 68,000 tokens`)
    expect(out.prepared.hud).toContain("level ok")
  })
})
