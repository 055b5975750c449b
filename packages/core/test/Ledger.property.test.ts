/**
 * The ledger against an independent reference: every figure recomputed from scratch for each event (the window folded
 * again from the first event, prefixes compared character by character), on generated sessions with cache usage and
 * HUD changes planted at random. Plus one worked session whose figures are checked by hand.
 */
import {
  ArtifactCheck,
  Conversation,
  type Events,
  Ledger,
  Message,
  Pricing,
  type Probe,
  Tokens,
  Window,
} from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as E from "./support/events.ts"
import { RUNS } from "./support/runs.ts"
import { actionArb, MODEL, run } from "./support/sessions.ts"

type Event = Events.Event

// ── The reference: quadratic and literal ────────────────────────────────────────────────────────────────────────

const windowBefore = (events: ReadonlyArray<Event>, i: number) => Window.fold(events.slice(0, i))
const hudBefore = (events: ReadonlyArray<Event>, i: number): string => {
  let hud = ""
  for (let k = 0; k < i; k++) {
    const e = events[k]!
    if (e._tag === "HudShown") hud = e.text
  }
  return hud
}
const inputBefore = (events: ReadonlyArray<Event>, i: number): string =>
  hudBefore(events, i) + JSON.stringify(Window.render(windowBefore(events, i)).map((r) => r.message))
const shared = (a: string, b: string): string => {
  let out = ""
  for (let k = 0; k < a.length && k < b.length; k++) {
    if (a[k] !== b[k]) break
    out += a[k]
  }
  return out
}
const isStep = (e: Event) => e._tag === "AssistantStepRecorded" && e.message.summary !== true

interface RefEntry {
  kind: "compaction" | "prune"
  retention?: ReadonlyArray<ArtifactCheck.Checked>
  markerId?: string
  probes?: ReadonlyArray<Probe.Probe>
  start: number
  end: number
  shed: number
  rewritten: number
  invalidated: number
  summaryCost: number
  calls: number
  saved: number
  rewriteCost: number
  net: number
}

const reference = (events: ReadonlyArray<Event>, priceOf: Ledger.PriceOf) => {
  const rates = (m: Events.Event & { _tag: "AssistantStepRecorded" }) =>
    Pricing.ratesFor(m.message.model, m.message.model && priceOf(m.message.model))
  const lastStepInput = (i: number): string | undefined => {
    for (let k = i - 1; k >= 0; k--) if (isStep(events[k]!)) return inputBefore(events, k)
    return undefined
  }
  const calls: Array<{ billed: number; cost: number; input: number; stablePrefix: number; kind: string }> = []
  let previous: string | undefined
  events.forEach((e, i) => {
    if (isStep(e) && e._tag === "AssistantStepRecorded") {
      const input = inputBefore(events, i)
      const r = rates(e)
      calls.push({
        kind: "step",
        billed: e.message.tokens.input + e.message.tokens.cacheRead * r.read + e.message.tokens.cacheWrite * r.write,
        cost:
          e.message.tokens.input +
          e.message.tokens.cacheRead * r.read +
          e.message.tokens.cacheWrite * r.write +
          (e.message.tokens.output + e.message.tokens.reasoning) * r.output,
        input: Tokens.estimate(input),
        stablePrefix: previous === undefined ? 0 : Tokens.estimate(shared(input, previous)),
      })
      previous = input
    }
    if (e._tag === "ProbesAnswered" && e.usage !== undefined) {
      const t = e.usage
      if (t.input + t.output + t.reasoning + t.cacheRead + t.cacheWrite > 0) {
        const r = Pricing.ratesFor(e.model, e.model && priceOf(e.model))
        const billed = t.input + t.cacheRead * r.read + t.cacheWrite * r.write
        calls.push({
          kind: "probe",
          billed,
          cost: billed + (t.output + t.reasoning) * r.output,
          input: 0,
          stablePrefix: 0,
        })
      }
    }
    if (e._tag === "SummaryFinished" || e._tag === "SummaryFailed") {
      const t = e.summary.tokens
      if (t.input + t.output + t.reasoning + t.cacheRead + t.cacheWrite > 0) {
        const r = Pricing.ratesFor(e.summary.model, e.summary.model && priceOf(e.summary.model))
        const billed = t.input + t.cacheRead * r.read + t.cacheWrite * r.write
        calls.push({
          kind: "summary",
          billed,
          cost: billed + (t.output + t.reasoning) * r.output,
          input: 0,
          stablePrefix: 0,
        })
      }
    }
  })
  const entries: Array<RefEntry> = []
  const effect = (start: number, end: number, summaryCost: number, kind: RefEntry["kind"]) => {
    const before = inputBefore(events, start)
    const after = inputBefore(events, end + 1)
    const last = lastStepInput(start)
    const common = last === undefined ? "" : shared(after, last)
    entries.push({
      kind,
      start,
      end,
      shed: Tokens.estimate(before) - Tokens.estimate(after),
      rewritten: last === undefined ? 0 : Tokens.estimate(after) - Tokens.estimate(common),
      invalidated: last === undefined ? 0 : Tokens.estimate(last) - Tokens.estimate(common),
      summaryCost,
      calls: 0,
      saved: 0,
      rewriteCost: 0,
      net: 0,
    })
  }
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    if (e._tag === "PartCompacted") {
      let j = i
      while (events[j + 1]?._tag === "PartCompacted") j++
      effect(i, j, 0, "prune")
      i = j
    } else if (e._tag === "SummaryFinished") {
      const before = windowBefore(events, i).pivot?.summaryId
      const after = windowBefore(events, i + 1).pivot?.summaryId
      if (after === e.summary.id && before !== e.summary.id) {
        const t = e.summary.tokens
        const r = Pricing.ratesFor(e.summary.model, e.summary.model && priceOf(e.summary.model))
        const used = t.input + t.output + t.reasoning + t.cacheRead + t.cacheWrite > 0
        const cost = used
          ? t.input + t.cacheRead * r.read + t.cacheWrite * r.write + (t.output + t.reasoning) * r.output
          : 0
        effect(i, i, cost, "compaction")
        // The check of the plan's head (as started) against the summary as stored.
        const started = events
          .slice(0, i)
          .findLast(
            (x): x is Extract<Event, { _tag: "CompactionStarted" }> =>
              x._tag === "CompactionStarted" && x.markerId === e.markerId,
          )
        let conversation = Conversation.initial
        for (const x of events.slice(0, i)) conversation = Conversation.evolve(conversation, x)
        const head = (started?.plan.head ?? []).flatMap((id) => {
          const m = Conversation.get(conversation, id)
          return m === undefined ? [] : [m]
        })
        // Recallable: some part of the head (text, reasoning, a tool input's JSON or a string in it, an output or an
        // error) names the artifact by the check's own rule.
        const texts = head.flatMap((m) =>
          m.parts.flatMap((p): Array<string> => {
            if (p.type === "text" || p.type === "reasoning") return p.text === "" ? [] : [p.text]
            if (p.type !== "tool") return []
            const json = JSON.stringify(p.state.input)
            const strings = (json.match(/"(?:[^"\\]|\\.)*"/g)! ?? []).map((q) => JSON.parse(q) as string)
            const result =
              p.state.status === "completed" ? [p.state.output] : p.state.status === "error" ? [p.state.error] : []
            return [json, ...strings, ...result]
          }),
        )
        entries[entries.length - 1]!.retention = ArtifactCheck.check(head, Message.summaryText(e.summary) ?? "").map(
          (a) => ({ ...a, recallable: texts.some((t) => ArtifactCheck.names(a.kind, a.text, t)) }),
        )
        entries[entries.length - 1]!.markerId = e.markerId
      }
    }
  }
  for (const entry of entries) {
    const nextPivot = entries.find((o) => o.kind === "compaction" && o.start > entry.end)?.start ?? events.length
    // The newest probes of its marker recorded before the next pivot.
    if (entry.kind === "compaction")
      for (let k = entry.end + 1; k < nextPivot; k++) {
        const e = events[k]!
        if (e._tag === "ProbesAnswered" && e.markerId === entry.markerId) entry.probes = e.probes
      }
    let first = true
    for (let k = entry.end + 1; k < nextPivot; k++) {
      const e = events[k]!
      if (!isStep(e) || e._tag !== "AssistantStepRecorded") continue
      const r = rates(e)
      entry.calls++
      entry.saved += entry.shed * r.read
      if (first) entry.rewriteCost = entry.rewritten * (r.write - r.read)
      first = false
    }
    entry.net = entry.saved - entry.summaryCost - entry.rewriteCost
  }
  return { calls, entries }
}

// ── Generated sessions with cache usage and HUD texts planted ───────────────────────────────────────────────────

const usageArb = fc.record({
  input: fc.nat(50_000),
  output: fc.nat(2_000),
  reasoning: fc.nat(500),
  cacheRead: fc.nat(100_000),
  cacheWrite: fc.nat(20_000),
})
const HUDS = ["", "[pivot context status]\nok 10%", "[pivot context status]\nhigh 75%"]

const sessionArb = fc
  .record({
    // More prunes than the shared generator makes, so that batches of cleared outputs are common.
    generated: fc
      .array(
        fc.oneof(
          { weight: 5, arbitrary: actionArb },
          { weight: 1, arbitrary: fc.constant({ kind: "prune" as const }) },
        ),
        {
          minLength: 1,
          maxLength: 30,
          size: "max",
        },
      )
      .map(run),
    usages: fc.array(usageArb, { minLength: 40, maxLength: 40 }),
    prunes: fc.array(fc.record({ which: fc.nat(), delay: fc.nat(6) }), { maxLength: 6 }),
    huds: fc.array(fc.record({ at: fc.nat(200), text: fc.constantFrom(...HUDS) }), { maxLength: 4 }),
    probed: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
    price: fc.option(
      fc.record({
        input: fc.double({ min: 0.1, max: 20, noNaN: true }),
        output: fc.double({ min: 0, max: 80, noNaN: true }),
        cacheRead: fc.double({ min: 0, max: 5, noNaN: true }),
        cacheWrite: fc.double({ min: 0, max: 30, noNaN: true }),
      }),
      { nil: undefined },
    ),
  })
  .map(({ generated, usages, prunes, huds, probed, price }) => {
    let n = 0
    const events: Array<Event> = generated.events.map((e) => {
      if (e._tag === "AssistantStepRecorded")
        return { ...e, message: { ...e.message, tokens: usages[n++ % usages.length]! } }
      if (e._tag === "SummaryFinished") return { ...e, summary: { ...e.summary, tokens: usages[n++ % usages.length]! } }
      return e
    })
    // Prunes planted after completed outputs (the fold reads any log; the Decider's prune rule is tested elsewhere).
    const outputs = events.flatMap((e, i) =>
      e._tag === "AssistantStepRecorded"
        ? e.message.parts.flatMap((p) =>
            p.type === "tool" && p.state.status === "completed" ? [{ i, messageId: e.message.id, partId: p.id }] : [],
          )
        : [],
    )
    const planted =
      outputs.length === 0 ? [] : prunes.map((p) => ({ ...outputs[p.which % outputs.length]!, delay: p.delay }))
    planted
      .map((p) => ({ ...p, at: Math.min(events.length, p.i + 1 + p.delay) }))
      .sort((a, b) => b.at - a.at)
      .forEach((p) => {
        events.splice(p.at, 0, { _tag: "PartCompacted", at: 0, messageId: p.messageId, partId: p.partId, tokens: 1 })
      })
    // A judge's probes right after some summaries, with usage (a billed call) or without (one that failed).
    let k = 0
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i]!
      if (e._tag !== "SummaryFinished" || !probed[k++ % probed.length]) continue
      const probes: ReadonlyArray<Probe.Probe> = [
        { kind: "request", question: "q", answer: `a${k}`, expected: [{ text: "t", found: k % 2 === 0 }] },
      ]
      events.splice(i + 1, 0, {
        _tag: "ProbesAnswered",
        at: 0,
        markerId: e.markerId,
        ...(k % 3 === 0 ? { error: "timeout" } : { model: MODEL, usage: usages[(k * 7) % usages.length]! }),
        probes: k % 3 === 0 ? [] : probes,
      })
    }
    for (const hud of huds)
      events.splice(Math.min(events.length, 1 + hud.at), 0, { _tag: "HudShown", at: 0, text: hud.text })
    const priceOf: Ledger.PriceOf = (ref) =>
      ref.providerId === MODEL.providerId && ref.modelId === MODEL.modelId ? price : undefined
    return { events, priceOf }
  })

const close = (actual: number, expected: number) =>
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(expected)))

describe("Ledger.sharedLength", () => {
  // Pieces from a small alphabet (with the separators) so that prefixes, equal pieces and prefix pieces are common.
  const piece = fc.string({ unit: fc.constantFrom("{", "}", "a", "b", ",", "]"), maxLength: 6 })
  const input = fc.record({
    hud: fc.string({ unit: fc.constantFrom("a", "b", "["), maxLength: 4 }),
    pieces: fc.array(piece, { maxLength: 5 }),
  })
  const text = (i: { hud: string; pieces: ReadonlyArray<string> }) => `${i.hud}[${i.pieces.join(",")}]`
  const of = (i: { hud: string; pieces: ReadonlyArray<string> }): Ledger.Input => ({ ...i, length: text(i).length })

  it("equals the common prefix of the two serialisations, character by character, for any pieces and HUDs", () => {
    fc.assert(
      fc.property(input, input, fc.boolean(), (a, b, sameStart) => {
        // Half the time b starts like a: shared pieces and HUD, then its own.
        const bb = sameStart
          ? { hud: a.hud, pieces: [...a.pieces.slice(0, b.pieces.length), ...b.pieces.slice(a.pieces.length)] }
          : b
        expect(Ledger.sharedLength(of(a), of(bb))).toBe(shared(text(a), text(bb)).length)
      }),
      RUNS,
    )
  })
})

describe("Ledger", () => {
  it("equals the reference computation on generated sessions", () => {
    fc.assert(
      fc.property(sessionArb, ({ events, priceOf }) => {
        const ledger = Ledger.fold(events, priceOf)
        const want = reference(events, priceOf)
        expect(Ledger.calls(ledger).map((c) => [c.kind, c.input, c.stablePrefix])).toEqual(
          want.calls.map((c) => [c.kind, c.input, c.stablePrefix]),
        )
        Ledger.calls(ledger).forEach((c, i) => {
          close(c.billed, want.calls[i]!.billed)
          close(c.cost, want.calls[i]!.cost)
        })
        expect(Ledger.entries(ledger).map((e) => [e.kind, e.shed, e.rewritten, e.invalidated, e.calls])).toEqual(
          want.entries.map((e) => [e.kind, e.shed, e.rewritten, e.invalidated, e.calls]),
        )
        expect(Ledger.entries(ledger).map((e) => e.retention?.artifacts)).toEqual(want.entries.map((e) => e.retention))
        expect(Ledger.entries(ledger).map((e) => e.probes?.probes)).toEqual(want.entries.map((e) => e.probes))
        Ledger.entries(ledger).forEach((e, i) => {
          close(e.summaryCost, want.entries[i]!.summaryCost)
          close(e.saved, want.entries[i]!.saved)
          close(e.rewriteCost, want.entries[i]!.rewriteCost)
          close(e.net, want.entries[i]!.net)
        })
        const totals = Ledger.totals(ledger)
        close(
          totals.net,
          want.entries.reduce((a, e) => a + e.net, 0),
        )
        close(
          totals.billed,
          want.calls.reduce((a, c) => a + c.billed, 0),
        )
      }),
      { numRuns: Math.min(RUNS.numRuns, 150) },
    )
  })
})

describe("Ledger, a worked session", () => {
  const price: Pricing.Price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
  const priceOf: Ledger.PriceOf = () => price
  const usage = (input: number, cacheRead: number, cacheWrite: number): Tokens.TokenUsage => ({
    input,
    output: 100,
    reasoning: 0,
    cacheRead,
    cacheWrite,
  })
  const big = "x".repeat(40_000) // 10k tokens of tool output
  const events: Array<Event> = [
    E.started(),
    E.user("u1", "fix the parser"),
    E.assistant("a1", "u1", [E.toolPart("t1", "bash", big)], { tokens: usage(10, 0, 10_050) }),
    E.assistant("a2", "u1", "done", { tokens: usage(10, 10_050, 30) }),
    E.marker("m1"),
    E.compactionStarted("m1", "s1", { head: [E.id("msg_u1"), E.id("msg_a1"), E.id("msg_a2")] }),
    {
      ...(E.summaryFinished("m1", "s1", "the parser is fixed") as Extract<Event, { _tag: "SummaryFinished" }>),
    },
    E.user("u2", "next"),
    E.assistant("a3", "u2", "ok", { tokens: usage(10, 0, 40) }),
    E.assistant("a4", "u2", "ok", { tokens: usage(10, 40, 10) }),
  ]
  const summaryAt = 6
  const withSummaryUsage = events.map((e, i) =>
    i === summaryAt && e._tag === "SummaryFinished"
      ? { ...e, summary: { ...e.summary, tokens: usage(500, 9_000, 0) } }
      : e,
  )
  const ledger = Ledger.fold(withSummaryUsage, priceOf)

  it("bills each call at Anthropic's multipliers, the summariser's call included", () => {
    expect(Ledger.calls(ledger).map((c) => c.kind)).toEqual(["step", "step", "summary", "step", "step"])
    // a1: 10 + 10_050 × 1.25 = 12_572.5 input equivalents; plus 100 output × 5
    expect(Ledger.calls(ledger)[0]!.billed).toBeCloseTo(12_572.5, 6)
    expect(Ledger.calls(ledger)[0]!.cost).toBeCloseTo(13_072.5, 6)
    // the summary: 500 + 9_000 × 0.1 = 1_400, plus 500 output equivalents
    expect(Ledger.calls(ledger)[2]!.cost).toBeCloseTo(1_900, 6)
    expect(Ledger.calls(ledger)[2]!.dollars).toBeCloseTo((500 * 3 + 9_000 * 0.3 + 100 * 15) / 1e6, 12)
  })

  it("measures each call's stable prefix against the previous call's input", () => {
    const [a1, a2, , a3, a4] = Ledger.calls(ledger)
    expect(a1!.stablePrefix).toBe(0)
    // a2's input is a1's input plus a1 itself: all of a1's input but its closing bracket is shared.
    expect(a2!.stablePrefix).toBeGreaterThan(a1!.input - 2)
    expect(a2!.input).toBeGreaterThan(10_000)
    // After the pivot the window starts with the marker: only the opening characters are shared.
    expect(a3!.stablePrefix).toBeLessThan(20)
    expect(a4!.stablePrefix).toBeGreaterThan(a3!.input - 2)
  })

  it("accounts the compaction: shed, rewritten, invalidated, summary cost and net saving", () => {
    expect(Ledger.entries(ledger)).toHaveLength(1)
    const entry = Ledger.entries(ledger)[0]!
    expect(entry.kind).toBe("compaction")
    expect(entry.shed).toBeGreaterThan(9_900) // the 10k-token output went
    expect(entry.invalidated).toBeGreaterThan(10_000) // a2's whole input was cached and is lost
    expect(entry.rewritten).toBeLessThan(100) // the marker and summary are written again
    expect(entry.calls).toBe(2)
    expect(entry.saved).toBeCloseTo(entry.shed * 0.1 * 2, 6)
    expect(entry.rewriteCost).toBeCloseTo(entry.rewritten * 1.15, 6)
    expect(entry.net).toBeCloseTo(entry.saved - 1_900 - entry.rewriteCost, 6)
    const totals = Ledger.totals(ledger)
    expect(totals.compactions).toBe(1)
    expect(totals.summaryCalls).toBe(1)
    expect(totals.hitRatio).toBeCloseTo(
      (10_050 + 9_000 + 40) / (40 + 500 + 10_050 + 30 + 10_050 + 9_000 + 40 + 40 + 10),
      9,
    )
  })

  it("given ArtifactsChecked after the summary, then the recorded check replaces the one computed from the log", () => {
    // Computed: the span's command (the tool part runs `ls`) and request, against "the parser is fixed".
    expect(Ledger.entries(ledger)[0]!.retention).toEqual({
      recorded: false,
      artifacts: [
        { kind: "command", text: "ls", named: false, recallable: true },
        { kind: "request", text: "fix the parser", named: true, recallable: true },
      ],
    })
    const recorded = { kind: "request" as const, text: "fix the parser", named: false }
    const withCheck: Array<Event> = [
      ...withSummaryUsage.slice(0, summaryAt + 1),
      { _tag: "ArtifactsChecked", at: 1, markerId: E.id("msg_m1"), artifacts: [recorded] },
      ...withSummaryUsage.slice(summaryAt + 1),
    ]
    // Recallability is computed on read from the head: the recorded artifact takes the computed one's.
    expect(Ledger.entries(Ledger.fold(withCheck, priceOf))[0]!.retention).toEqual({
      recorded: true,
      artifacts: [{ ...recorded, recallable: true }],
    })
    // One the computed check does not list (the runtime was told other tool names) is not known to be recallable.
    const other = { kind: "command" as const, text: "rg parser", named: false }
    const withOther = withCheck.map((e) => (e._tag === "ArtifactsChecked" ? { ...e, artifacts: [other] } : e))
    const [only] = Ledger.entries(Ledger.fold(withOther, priceOf))[0]!.retention!.artifacts
    expect(only).toEqual(other)
    expect(ArtifactCheck.reachable(only!)).toBe(false)
  })

  it("given the session was forgotten, then a check computed from its (now erased) text is dropped, a recorded one stands", () => {
    // After `forget` every text reads "[ERASED]": a check computed then would find "[ERASED]" named by "[ERASED]".
    const forgotten: Event = { _tag: "SessionForgotten", at: 2 }
    expect(Ledger.entries(Ledger.fold([...withSummaryUsage, forgotten], priceOf))[0]!.retention).toBeUndefined()
    const recorded = { kind: "request" as const, text: "fix the parser", named: false }
    const withCheck: Array<Event> = [
      ...withSummaryUsage.slice(0, summaryAt + 1),
      { _tag: "ArtifactsChecked", at: 1, markerId: E.id("msg_m1"), artifacts: [recorded] },
      ...withSummaryUsage.slice(summaryAt + 1),
      forgotten,
    ]
    // Its verdicts stand; nothing of the span can be recalled any more.
    expect(Ledger.entries(Ledger.fold(withCheck, priceOf))[0]!.retention).toEqual({
      recorded: true,
      artifacts: [{ ...recorded, recallable: false }],
    })
  })

  it("given a prune, then it is an entry with the outputs cleared and the cache rewritten from the first one", () => {
    const pruned: Array<Event> = [
      ...events.slice(0, 4),
      { _tag: "PartCompacted", at: 1, messageId: E.id("msg_a1"), partId: E.part("prt_t1"), tokens: 10_000 },
      E.assistant("a5", "u1", "ok", { tokens: usage(10, 0, 40) }),
    ]
    const l = Ledger.fold(pruned, priceOf)
    expect(Ledger.entries(l)).toHaveLength(1)
    const prune = Ledger.entries(l)[0]!
    expect(prune).toMatchObject({ kind: "prune", parts: 1, calls: 1 })
    expect(prune.shed).toBeGreaterThan(9_900)
    // Everything from the pruned output on is written again; what precedes it is still shared.
    expect(prune.invalidated).toBeGreaterThan(9_900)
    expect(prune.rewritten).toBeGreaterThan(0)
    expect(prune.rewritten).toBeLessThan(100)
  })
})

describe("Ledger.price and the codec (the ledger projection's state)", () => {
  it("a ledger folded without prices, then priced, equals the ledger folded at those prices", () => {
    fc.assert(
      fc.property(sessionArb, ({ events, priceOf }) => {
        const want = Ledger.fold(events, priceOf)
        // Folded without prices, and folded at other prices: pricing replaces whatever was priced before.
        const other: Ledger.PriceOf = () => ({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })
        for (const folded of [Ledger.fold(events), Ledger.fold(events, other)]) {
          const priced = Ledger.price(folded, priceOf)
          expect(Ledger.calls(priced)).toStrictEqual(Ledger.calls(want))
          expect(Ledger.entries(priced)).toStrictEqual(Ledger.entries(want))
          expect(priced.open).toStrictEqual(want.open)
          expect(Ledger.totals(priced)).toStrictEqual(Ledger.totals(want))
        }
      }),
      { numRuns: Math.min(RUNS.numRuns, 150) },
    )
  })

  it("a fold stopped anywhere, stored as JSON, decoded and resumed, equals the fold from the first event", () => {
    fc.assert(
      fc.property(sessionArb, fc.nat(), ({ events, priceOf }, cut) => {
        const at = cut % (events.length + 1)
        let state = Ledger.initial
        events.slice(0, at).forEach((e, i) => {
          state = Ledger.evolve(state, e, i + 1)
        })
        let resumed = Ledger.decode(JSON.parse(JSON.stringify(Ledger.encode(state))))
        events.slice(at).forEach((e, i) => {
          resumed = Ledger.evolve(resumed, e, at + i + 1)
        })
        const priced = Ledger.price(Ledger.settle(resumed), priceOf)
        const want = Ledger.fold(events, priceOf)
        expect(Ledger.calls(priced)).toEqual(Ledger.calls(want))
        expect(Ledger.entries(priced)).toEqual(Ledger.entries(want))
        expect(Ledger.totals(priced)).toStrictEqual(Ledger.totals(want))
      }),
      { numRuns: Math.min(RUNS.numRuns, 150) },
    )
  })

  it("refuses a state of another format", () => {
    expect(() => Ledger.decode({ ...Ledger.encode(Ledger.initial), format: 99 })).toThrow(/format 99/)
  })
})

describe("Ledger, the HUD's place", () => {
  // Each call shows a new HUD text; the conversation before it is unchanged (a long first message).
  const usage: Tokens.TokenUsage = { input: 100, output: 10, reasoning: 0, cacheRead: 0, cacheWrite: 0 }
  const events = (last: boolean): Array<Event> => {
    const hud = (text: string): Event => ({ _tag: "HudShown", at: 0, text, ...(last ? { last: true } : {}) })
    return [
      E.started(),
      E.user("u1", "y".repeat(8_000)),
      hud("[pivot context status] context: 2,000"),
      E.assistant("a1", "u1", "one", { tokens: usage }),
      hud("[pivot context status] context: 2,010"),
      E.assistant("a2", "u1", "two", { tokens: usage }),
    ]
  }
  const second = (last: boolean) => Ledger.calls(Ledger.fold(events(last)))[1]!

  it("in the system prompt (before the messages), a new HUD text breaks the prefix at its start", () => {
    expect(second(false).stablePrefix).toBeLessThan(20)
  })

  it("as the request's last message (HudShown.last: OpenCode's drive mode), the conversation before it stays stable", () => {
    const call = second(true)
    expect(call.stablePrefix).toBeGreaterThan(2_000)
    expect(call.input).toBe(second(false).input)
    // The encoded state keeps the place.
    const state = Ledger.fold(events(true).slice(0, 3))
    expect(Ledger.decode(Ledger.encode(state)).hudLast).toBe(true)
  })
})
