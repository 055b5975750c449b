/**
 * The HUD's optional cost line (issue 20): the session's spend so far, the last compaction's net saving and the cache
 * hit ratio, from the ledger — at its boundaries (no call yet, right after a compaction, negative savings, 0 and 100%
 * hits), against a reference computed by hand from the stored usages, and equal to the ledger folded from the log.
 */
import { type Events, Ledger, Tokens } from "@pivot/core"
import { Hud } from "@pivot/runtime"
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { RUNS } from "../../core/test/support/runs.ts"
import { prepare, run, SESSION, services, step, stub, user } from "./support/harness.ts"

const events = Effect.gen(function* () {
  const { sessions } = yield* services
  return yield* sessions.events(SESSION)
})

const costLineOf = (hud: string | undefined): string | undefined =>
  hud?.split("\n").find((line) => line.startsWith("cost: "))

// Anthropic's default multipliers (no price known for the test model): read 0.1×, write 1.25×, output 5×.
const anthropicCost = (u: Tokens.TokenUsage) =>
  u.input + u.cacheRead * 0.1 + u.cacheWrite * 1.25 + (u.output + u.reasoning) * 5

/** Every billed call's usage in a log, by hand: conversation steps and the summariser's calls that spent tokens. */
const usagesOf = (log: ReadonlyArray<Events.Event>): ReadonlyArray<Tokens.TokenUsage> =>
  log.flatMap((e) => {
    if (e._tag === "AssistantStepRecorded" && e.message.summary !== true) return [e.message.tokens]
    if (e._tag === "SummaryFinished" || e._tag === "SummaryFailed") {
      const t = e.summary.tokens
      return t.input + t.output + t.reasoning + t.cacheRead + t.cacheWrite > 0 ? [t] : []
    }
    return []
  })

describe("Hud.render's cost line", () => {
  const base = { tokens: 10, usable: 1000, pivots: 0, prunedParts: 0, prunedTokens: 0 }

  it("given no cost, then the HUD has no cost line: the text is the one without the option", () => {
    expect(Hud.render({ ...base, cost: undefined })).toBe(Hud.render(base))
    expect(Hud.render(base)).not.toContain("cost:")
  })

  it("given no compaction yet and no call, then it says so with zero spend and a 0% hit ratio", () => {
    expect(costLineOf(Hud.render({ ...base, cost: { spent: 0, hitRatio: 0 } }))).toBe(
      "cost: 0 input-token eq so far; no compaction yet; cache hit 0%",
    )
  })

  it("given a negative net saving, dollars and all input served from the cache, then it shows each as it is", () => {
    const line = costLineOf(
      Hud.render({ ...base, cost: { spent: 1_234_567.4, dollars: 3.456, lastNet: -777.4, hitRatio: 1 } }),
    )
    expect(line).toBe(
      "cost: 1,234,567 input-token eq so far ($3.46); last compaction net saving -777 eq; cache hit 100%",
    )
  })

  it("given a saving that rounds to zero from below, then it shows 0, not -0", () => {
    expect(costLineOf(Hud.render({ ...base, cost: { spent: 1, lastNet: -0.4, hitRatio: 0.999 } }))).toBe(
      "cost: 1 input-token eq so far; last compaction net saving 0 eq; cache hit 99%",
    )
  })

  it("stays under 150 tokens, keeps the header first and the cost line last, for any numbers and level", () => {
    const cost = fc.record(
      {
        spent: fc.double({ min: 0, max: 1e13, noNaN: true }),
        dollars: fc.double({ min: 0, max: 1e9, noNaN: true }),
        lastNet: fc.double({ min: -1e13, max: 1e13, noNaN: true }),
        hitRatio: fc.double({ min: 0, max: 1, noNaN: true }),
      },
      { requiredKeys: ["spent", "hitRatio"] },
    )
    fc.assert(
      fc.property(fc.nat(5_000_000), fc.nat(5_000_000), fc.nat(100_000), cost, (tokens, usable, pivots, c) => {
        const text = Hud.render(
          { tokens, usable, pivots, prunedParts: 10_000_000, prunedTokens: 1e9, cost: c },
          {
            recall: true,
          },
        )
        const lines = text.split("\n")
        expect(Tokens.estimate(text)).toBeLessThanOrEqual(150)
        expect(lines[0]).toBe(Hud.HEADER)
        expect(lines.at(-1)).toMatch(/^cost: [\d,]+ input-token eq so far/)
        expect(lines.filter((l) => l.startsWith("cost: "))).toHaveLength(1)
      }),
      RUNS,
    )
  })
})

describe("the cost line in prepare", () => {
  it("given the hud option without cost, then no cost line is shown (the line is opt-in)", async () => {
    const hud = await run(
      Effect.gen(function* () {
        yield* user("start")
        yield* step(10_000)
        return (yield* prepare).hud
      }),
      { options: { hud: true } },
    )
    expect(hud).toBeDefined()
    expect(costLineOf(hud)).toBeUndefined()
  })

  it("given no call yet, then the line shows nothing spent and no compaction", async () => {
    const hud = await run(
      Effect.gen(function* () {
        yield* user("start")
        return (yield* prepare).hud
      }),
      { options: { hud: { cost: true } } },
    )
    expect(costLineOf(hud)).toBe("cost: 0 input-token eq so far; no compaction yet; cache hit 0%")
  })

  it("given calls with cache reads and writes, then the spend and hit ratio are the stored usages' (a hand reference)", async () => {
    const usages: ReadonlyArray<Tokens.TokenUsage> = [
      { ...Tokens.zero, input: 2_000, cacheWrite: 8_000, output: 300 },
      { ...Tokens.zero, input: 500, cacheRead: 10_000, cacheWrite: 1_000, output: 200 },
      { ...Tokens.zero, input: 100, cacheRead: 11_400, output: 100, reasoning: 50 },
    ]
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("start")
        const huds: Array<string | undefined> = []
        for (const usage of usages) {
          yield* cm.recordAssistantStep(SESSION, {
            parts: [{ type: "text", text: "working" }],
            usage,
            finish: "tool-calls",
          })
          huds.push((yield* prepare).hud)
        }
        return huds
      }),
      { options: { hud: { cost: true } } },
    )
    out.forEach((hud, i) => {
      const seen = usages.slice(0, i + 1)
      const spent = seen.reduce((acc, u) => acc + anthropicCost(u), 0)
      const read = seen.reduce((acc, u) => acc + u.cacheRead, 0)
      const all = seen.reduce((acc, u) => acc + u.input + u.cacheRead + u.cacheWrite, 0)
      expect(costLineOf(hud)).toBe(
        `cost: ${Math.round(spent).toLocaleString("en-US")} input-token eq so far; no compaction yet; cache hit ${Math.floor((read / all) * 100)}%`,
      )
    })
  })

  it("given prices, then the spend in dollars is shown (every call priced)", async () => {
    const hud = await run(
      Effect.gen(function* () {
        yield* user("start")
        yield* step(100_000 / 3)
        return (yield* prepare).hud
      }),
      {
        options: {
          hud: {
            cost: { prices: { "anthropic/claude-test": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } } },
          },
        },
      },
    )
    // 33,333.33 input tokens at $3 per million.
    expect(costLineOf(hud)).toContain("input-token eq so far ($0.10);")
  })

  it("right after a compaction, then the line shows its net saving so far (the summary call's cost, no call after it yet)", async () => {
    const s = stub()
    const out = await run(
      Effect.gen(function* () {
        yield* user("refactor the parser")
        yield* step(30_000)
        yield* step(70_000) // over the usable 68,000: an automatic compaction settles in the next prepare
        const prepared = yield* prepare
        return { prepared, log: yield* events }
      }),
      { summarizer: s, options: { hud: { cost: true } } },
    )
    expect(out.prepared.compaction?.outcome?.status).toBe("finished")
    // The stub's summary call: 10 input and 2 output tokens, 10 + 2 × 5 = 20 eq; nothing saved yet.
    const spent = usagesOf(out.log).reduce((acc, u) => acc + anthropicCost(u), 0)
    expect(spent).toBe(30_000 + 70_000 + 20)
    expect(costLineOf(out.prepared.hud)).toBe(
      `cost: ${spent.toLocaleString("en-US")} input-token eq so far; last compaction net saving -20 eq; cache hit 0%`,
    )
    // Recorded as the model saw it.
    const shown = out.log.flatMap((e) => (e._tag === "HudShown" ? [e.text] : []))
    expect(shown.at(-1)).toBe(out.prepared.hud)
  })

  it("over a session with compactions, every cost line equals the ledger folded from the stored log at that point", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* user("start")
        const seen: Array<{ hud: string | undefined; version: number }> = []
        for (const input of [20_000, 45_000, 70_000, 12_000, 40_000, 69_000, 15_000, 16_000]) {
          yield* cm.recordAssistantStep(SESSION, {
            parts: [{ type: "text", text: `step ${input}` }],
            usage: { ...Tokens.zero, input: input / 10, cacheRead: (input * 9) / 10, output: 100 },
            finish: "tool-calls",
          })
          const prepared = yield* prepare
          // The HUD describes the log up to the event before its own HudShown.
          const log = yield* events
          const at = log.findLastIndex((e) => e._tag === "HudShown" && e.text === prepared.hud)
          seen.push({ hud: prepared.hud, version: at })
        }
        return { seen, log: yield* events }
      }),
      { options: { hud: { cost: true } } },
    )
    expect(out.log.filter((e) => e._tag === "SummaryFinished").length).toBeGreaterThanOrEqual(2)
    for (const { hud, version } of out.seen) {
      expect(version).toBeGreaterThan(0)
      const ledger = Ledger.fold(out.log.slice(0, version))
      expect(costLineOf(hud)).toBe(costLineOf(Hud.render({ ...zeroInput, cost: Hud.costOf(ledger) })))
    }
    // The figures move: a compaction's net saving grows with the calls after it.
    const nets = out.seen.map((s) => costLineOf(s.hud)?.match(/net saving (-?[\d,]+)/)?.[1])
    expect(new Set(nets.filter((n) => n !== undefined)).size).toBeGreaterThan(1)
  })
})

const zeroInput = { tokens: 0, usable: 1, pivots: 0, prunedParts: 0, prunedTokens: 0 }
