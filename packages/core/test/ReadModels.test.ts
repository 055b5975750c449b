/** The read models: usage, compaction history, prune index and audit view, on scripted and generated sessions. */

import {
  Audit,
  type Commands,
  CompactionHistory,
  type Events,
  Projection,
  PruneIndex,
  Session,
  Tokens,
  Usage,
  Window,
} from "@pivot/core"
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  assistant,
  assistantMessage,
  compactionStarted,
  id,
  MODEL,
  marker,
  part,
  started,
  summaryFinished,
  toolPart,
  user,
  userMessage,
} from "./support/events.ts"
import * as Reference from "./support/readModels.ts"
import { RUNS } from "./support/runs.ts"
import { generatedArb } from "./support/sessions.ts"

type Event = Events.Event
const LIMITS = { context: 100_000, output: 32_000 }

const run = (events: ReadonlyArray<Event>, ...commands: ReadonlyArray<Commands.Command>) => {
  const all = [...events]
  let state = Session.fold(all)
  for (const command of commands) {
    const decision = Session.decide(command, state)
    if (Result.isFailure(decision)) throw new Error(`${command._tag}: ${decision.failure._tag}`)
    all.push(...decision.success)
    state = Session.fold(decision.success, state)
  }
  return all
}

const heavy = (input: number) => ({ ...Tokens.zero, input })

/** A session with a call at 80k, a pivot, then a call at 12k. */
const pivoted = () =>
  run(
    [
      started(),
      user("u1", "fix the parser"),
      assistant("a1", "u1", "reading", { tokens: heavy(80_000) }),
      user("u2", "and the lexer"),
    ],
    { _tag: "CreateCompaction", at: 10, markerId: id("msg_c1"), partId: part("prt_c1"), auto: true },
    {
      _tag: "ProcessCompaction",
      at: 11,
      markerId: id("msg_c1"),
      summaryId: id("msg_s1"),
      model: MODEL,
      compactionLimits: LIMITS,
      config: { tail_turns: 1 },
    },
    {
      _tag: "FinishSummary",
      at: 12,
      markerId: id("msg_c1"),
      partId: part("prt_s1"),
      text: "## Objective\n- fix",
      tokens: { ...Tokens.zero, output: 300 },
    },
    { _tag: "Continue", at: 13, markerId: id("msg_c1"), messageId: id("msg_k1") },
    {
      _tag: "RecordAssistantStep",
      message: {
        role: "assistant",
        id: id("msg_a2"),
        parentId: id("msg_k1"),
        createdAt: 14,
        model: MODEL,
        tokens: heavy(12_000),
        finish: "stop",
        parts: [],
      },
    },
  )

describe("Usage", () => {
  it("given calls at 80k then a pivot, the usage is estimated until the next call reports 12k", () => {
    const events = pivoted()
    const atPivot = events.findIndex((e) => e._tag === "SummaryFinished")
    const before = Projection.fold(Usage.projection, Projection.withMeta(events.slice(0, atPivot + 1)))
    expect(Usage.report(before, {}, LIMITS, 9_000)).toMatchObject({ tokens: 9_000, estimated: true, level: "ok" })
    const after = Projection.fold(Usage.projection, Projection.withMeta(events))
    expect(Usage.report(after, {}, LIMITS, 1)).toMatchObject({
      tokens: 12_000,
      estimated: false,
      usable: 68_000,
      percent: 17.6,
      level: "ok",
    })
  })

  // The step that called context_compact is recorded after the pivot its call formed (issue 18, item 9).
  const askedMidStep = (callId: string) => {
    const events = pivoted()
    const atPivot = events.findIndex((e) => e._tag === "SummaryFinished")
    const asked: Event = { _tag: "CompactionRequestedByModel", at: 11, markerId: id("msg_c1"), callId: "call_c" }
    const withAsk = [...events.slice(0, atPivot), asked, ...events.slice(atPivot)]
    return withAsk.map((e) =>
      e._tag === "AssistantStepRecorded" && e.message.id === id("msg_a2")
        ? {
            ...e,
            message: {
              ...e.message,
              parts: [
                {
                  type: "tool" as const,
                  id: part("prt_t1"),
                  callId,
                  tool: "context_compact",
                  state: { status: "completed" as const, input: {}, output: "ok" },
                },
              ],
            },
          }
        : e,
    ) as ReadonlyArray<Event>
  }

  it("given the step that asked for the pivot is recorded after it, then its count is stale: usage stays estimated", () => {
    const events = askedMidStep("call_c")
    const state = Projection.fold(Usage.projection, Projection.withMeta(events))
    expect(state).toMatchObject({ stale: "pivot", calls: 2, pivotAskedBy: undefined })
    expect(Usage.measured(state)).toBeUndefined()
    expect(Usage.report(state, {}, LIMITS, 900)).toMatchObject({ tokens: 900, estimated: true })
    expect(state).toEqual(Reference.usage(events))
    // A step carrying another call measured the new window.
    const other = askedMidStep("call_other")
    expect(Usage.measured(Projection.fold(Usage.projection, Projection.withMeta(other)))).toBe(12_000)
  })

  it("given outputs pruned after the last call, then its count is stale until the next call; a pivot wins over a prune", () => {
    const events = pivoted()
    const prune: Event = { _tag: "PartCompacted", at: 20, messageId: id("msg_a1"), partId: part("prt_x"), tokens: 5 }
    const pruned = Projection.fold(Usage.projection, Projection.withMeta([...events, prune]))
    expect(pruned.stale).toBe("prune")
    expect(Usage.report(pruned, {}, LIMITS, 700)).toMatchObject({ tokens: 700, estimated: true })
    const atPivot = events.findIndex((e) => e._tag === "SummaryFinished")
    const both = [...events.slice(0, atPivot + 1), prune]
    expect(Projection.fold(Usage.projection, Projection.withMeta(both)).stale).toBe("pivot")
    expect(Reference.usage([...events, prune])).toEqual(pruned)
  })

  it("levels: ok below 80% of the trigger, warn from 80%, over at the trigger, compacting while one is pending", () => {
    const at = (tokens: number) =>
      Usage.report({ ...Usage.initial, lastCall: { messageId: id("msg_a"), tokens, at: 0 } }, {}, LIMITS, 0).level
    expect([at(54_399), at(54_400), at(67_999), at(68_000)]).toEqual(["ok", "warn", "warn", "over"])
    expect(Usage.report({ ...Usage.initial, compacting: true }, {}, LIMITS, 0).level).toBe("compacting")
  })
})

describe("CompactionHistory", () => {
  it("records what each pivot summarised and kept, the prompt, the model and the tokens before and after", () => {
    const history = Projection.fold(CompactionHistory.projection, Projection.withMeta(pivoted()))
    expect(CompactionHistory.pivots(history)).toHaveLength(1)
    const [entry] = history.entries
    expect(entry).toMatchObject({
      markerId: id("msg_c1"),
      auto: true,
      status: "continued",
      continuation: "continue",
      model: MODEL,
      summary: "## Objective\n- fix",
      tokensBefore: 80_000,
      tokensAfter: 12_000,
      plan: { head: [id("msg_u1"), id("msg_a1")], tail: [id("msg_u2")] },
    })
    expect(entry?.prompt).toContain("## Objective")
  })

  it("the settled version replays the window right after the pivot: marker, summary, tail", () => {
    const events = pivoted()
    const [entry] = Projection.fold(CompactionHistory.projection, Projection.withMeta(events)).entries
    const window = Window.fold(events.slice(0, entry!.settledVersion))
    expect(Window.messages(window).map((m) => m.id)).toEqual([id("msg_c1"), id("msg_s1"), id("msg_u2")])
    const before = Window.fold(events.slice(0, entry!.requestedVersion - 1))
    expect(Window.messages(before).map((m) => m.id)).toEqual([id("msg_u1"), id("msg_a1"), id("msg_u2")])
  })

  it("every finished summary of a generated session is one pivot in the history", () => {
    fc.assert(
      fc.property(generatedArb(), ({ events }) => {
        const history = Projection.fold(CompactionHistory.projection, Projection.withMeta(events))
        expect(CompactionHistory.pivots(history)).toHaveLength(
          events.filter((e) => e._tag === "SummaryFinished").length,
        )
        expect(history.entries).toHaveLength(events.filter((e) => e._tag === "CompactionRequested").length)
      }),
      RUNS,
    )
  })
})

describe("CompactionHistory.evolve, event by event", () => {
  const fold = (...events: ReadonlyArray<Event>) =>
    events.reduce((state, event, i) => CompactionHistory.evolve(state, event, i + 1), CompactionHistory.initial)
  const step = (name: string, input: number, extra: Partial<Parameters<typeof assistantMessage>[3]> = {}) =>
    assistant(name, "u1", "ok", { tokens: heavy(input), ...extra })

  it("given markers with and without auto / overflow, then each entry says which (overflow only when true)", () => {
    const [manual, auto, overflow, notOverflow] = fold(
      marker("m1"),
      marker("m2", true),
      marker("m3", true, true),
      marker("m4", true, false),
    ).entries
    expect([manual?.auto, manual?.overflow]).toEqual([false, false])
    expect([auto?.auto, auto?.overflow]).toEqual([true, false])
    expect([overflow?.auto, overflow?.overflow]).toEqual([true, true])
    expect([notOverflow?.auto, notOverflow?.overflow]).toEqual([true, false])
  })

  it("given the last call's tokens, then the next marker records them as tokens before; summaries and 0-token steps do not count", () => {
    expect(fold(marker("m1")).entries[0]).not.toHaveProperty("tokensBefore")
    expect(fold(step("a1", 500), marker("m1")).entries[0]?.tokensBefore).toBe(500)
    expect(fold(step("a1", 500), step("a2", 0), marker("m1")).entries[0]?.tokensBefore).toBe(500)
    expect(fold(step("a1", 500), step("a2", 900, { summary: true }), marker("m1")).entries[0]?.tokensBefore).toBe(500)
    expect(fold(step("a1", 500), step("a2", 1), marker("m1")).entries[0]?.tokensBefore).toBe(1)
  })

  it("given an event for another or an unknown marker, then only that marker's entry changes, and no earlier state is touched", () => {
    const requested = fold(marker("m1"), marker("m2"))
    const startedOne = CompactionHistory.evolve(requested, compactionStarted("m1", "s1"), 3)
    expect(startedOne.entries.map((e) => e.status)).toEqual(["started", "requested"])
    expect(requested.entries.map((e) => e.status)).toEqual(["requested", "requested"])
    expect(CompactionHistory.evolve(requested, compactionStarted("zz", "s9"), 3)).toBe(requested)
  })

  it("given a finished summary, then its text and size are recorded: usage output, else the text's estimate, else 0", () => {
    const finished = (summary: Event) => fold(marker("m1"), compactionStarted("m1", "s1"), summary).entries[0]
    const withText = (text: string, output: number) =>
      finished({
        _tag: "SummaryFinished",
        at: 9,
        markerId: id("msg_m1"),
        summary: assistantMessage("s1", "m1", text, { summary: true, tokens: { ...Tokens.zero, output } }),
      })
    expect(withText("abcdefgh", 7)).toMatchObject({ status: "finished", summary: "abcdefgh", summaryTokens: 7 })
    expect(withText("abcdefgh", 0)).toMatchObject({ summary: "abcdefgh", summaryTokens: 2 })
    const empty = withText("   ", 0)
    expect(empty).not.toHaveProperty("summary")
    expect(empty?.summaryTokens).toBe(0)
    expect(finished(summaryFinished("m1", "s1"))?.settledVersion).toBe(3)
  })

  it("given a failed summary, then its error message is recorded, or 'failed' when it has none", () => {
    const failed = (error?: { name: string; message: string }) =>
      fold(marker("m1"), compactionStarted("m1", "s1"), {
        _tag: "SummaryFailed",
        at: 9,
        markerId: id("msg_m1"),
        summary: assistantMessage("s1", "m1", "", { summary: true, ...(error === undefined ? {} : { error }) }),
      }).entries[0]
    expect(failed({ name: "APIError", message: "down" })).toMatchObject({ status: "failed", error: "down" })
    expect(failed()).toMatchObject({ status: "failed", error: "failed" })
  })

  it("given a replayed turn or a continue message, then the entry is continued by replay or by continue", () => {
    const settled = [marker("m1"), compactionStarted("m1", "s1"), summaryFinished("m1", "s1")]
    const message = userMessage("k1", "continue")
    const replayed = fold(...settled, {
      _tag: "TurnReplayed",
      at: 9,
      markerId: id("msg_m1"),
      replayOf: id("msg_u1"),
      message,
    })
    const continued = fold(...settled, { _tag: "ContinueRequested", at: 9, markerId: id("msg_m1"), message })
    expect(replayed.entries[0]).toMatchObject({ status: "continued", continuation: "replay" })
    expect(continued.entries[0]).toMatchObject({ status: "continued", continuation: "continue" })
  })

  it("given the fallback summary, then the reason is recorded, and the summariser's error only when there was one", () => {
    const used = (error?: { name: string; message: string }) =>
      fold(marker("m1"), compactionStarted("m1", "s1"), {
        _tag: "SummaryFallbackUsed",
        at: 9,
        markerId: id("msg_m1"),
        reason: error === undefined ? "empty" : "failed",
        ...(error === undefined ? {} : { error }),
      }).entries[0]
    expect(used({ name: "APIError", message: "down" })).toMatchObject({ fallback: "failed", fallbackError: "down" })
    const empty = used()
    expect(empty?.fallback).toBe("empty")
    expect(empty).not.toHaveProperty("fallbackError")
  })
})

describe("Projection.withMeta", () => {
  it("given bare events, then their metadata is numbered from 1: ids event-1, event-2 …, or from the given naming", () => {
    const events = [started(), user("u1", "hi")]
    expect(Projection.withMeta(events).map((e) => e.meta)).toEqual([
      { id: "event-1", version: 1 },
      { id: "event-2", version: 2 },
    ])
    expect(Projection.withMeta(events, (i) => `e${i}`).map((e) => e.meta.id)).toEqual(["e1", "e2"])
  })
})

describe("PruneIndex", () => {
  it("indexes each pruned output with the id of the event that pruned it and the tokens freed", () => {
    const events = run(
      [
        started(),
        user("u1", "a"),
        assistant("a1", "u1", [toolPart("t1", "bash", "x".repeat(200_000))]),
        user("u2", "b"),
        user("u3", "c"),
      ],
      { _tag: "Prune", at: 5 },
    )
    const index = Projection.fold(
      PruneIndex.projection,
      Projection.withMeta(events, (i) => `evt_${i}`),
    )
    expect(index.entries).toEqual([
      { messageId: id("msg_a1"), partId: part("prt_t1"), tokens: 50_000, at: 5, eventId: "evt_6", version: 6 },
    ])
    expect(index.tokensFreed).toBe(50_000)
  })
})

describe("Audit", () => {
  it("every message the model sees names the event that added it, first", () => {
    fc.assert(
      fc.property(generatedArb(), ({ events }) => {
        const audit = Projection.fold(
          Audit.projection,
          Projection.withMeta(events, (i) => `evt_${i}`),
        )
        const addedBy = new Map<string, string>()
        events.forEach((event, i) => {
          const added =
            "message" in event && typeof event.message === "object"
              ? event.message.id
              : event._tag === "CompactionRequested"
                ? event.marker.id
                : event._tag === "SummaryFinished" || event._tag === "SummaryFailed"
                  ? event.summary.id
                  : undefined
          if (added && !addedBy.has(added)) addedBy.set(added, `evt_${i + 1}`)
        })
        for (const { message, eventIds } of Audit.entries(audit)) expect(eventIds[0]).toBe(addedBy.get(message.id))
        expect(Audit.entries(audit).map((e) => e.message.id)).toEqual(
          Window.messages(Window.fold(events)).map((m) => m.id),
        )
      }),
      RUNS,
    )
  })
})

describe("CompactionHistory beyond OpenCode", () => {
  it("records the fallback reason, head messages budgeted out, redactions and a skipped continue on the compaction", () => {
    const markerId = id("msg_c1")
    const events: ReadonlyArray<Event> = [
      ...pivoted().slice(0, 6),
      {
        _tag: "SummaryInputBudgeted",
        at: 1,
        markerId,
        budget: 10,
        estimated: 20,
        dropped: [id("msg_u1")],
        kept: 1,
        digest: true,
      },
      {
        _tag: "SecretsRedacted",
        at: 1,
        markerId,
        stage: "summarizer-input",
        findings: [
          { field: "text", kind: "jwt" },
          { field: "text", kind: "aws-key" },
        ],
      },
      { _tag: "SummaryFallbackUsed", at: 2, markerId, reason: "timeout" },
      { _tag: "AutoContinueSkipped", at: 3, markerId, reason: "waiting-for-user" },
    ]
    const [entry] = Projection.fold(CompactionHistory.projection, Projection.withMeta(events)).entries
    expect(entry).toMatchObject({
      fallback: "timeout",
      budgetedOut: [id("msg_u1")],
      redactions: 2,
      continueSkipped: "waiting-for-user",
    })
  })
})

describe("CompactionHistory: compactions the model asked for", () => {
  it("marks the compaction the request names, with its focus note; a request naming another marker marks nothing", () => {
    const markerId = id("msg_c1")
    const base = pivoted().slice(0, 6)
    const fold = (events: ReadonlyArray<Event>) =>
      Projection.fold(CompactionHistory.projection, Projection.withMeta(events)).entries
    const [withFocus] = fold([...base, { _tag: "CompactionRequestedByModel", at: 1, markerId, focus: "the API" }])
    const [without] = fold([...base, { _tag: "CompactionRequestedByModel", at: 1, markerId }])
    const [other] = fold([...base, { _tag: "CompactionRequestedByModel", at: 1, markerId: id("msg_zz") }])
    expect(withFocus?.requestedByModel).toEqual({ focus: "the API" })
    expect(without?.requestedByModel).toStrictEqual({})
    expect(other?.requestedByModel).toBeUndefined()
  })
})

describe("read models against their reference models (written apart from their evolve code)", () => {
  const facts = (entry: CompactionHistory.Entry): Reference.CompactionFacts => ({
    markerId: entry.markerId,
    status: entry.status,
    summaryId: entry.summaryId,
    tokensBefore: entry.tokensBefore,
    tokensAfter: entry.tokensAfter,
  })

  it("usage, the prune index and the compaction history equal the reference on generated sessions", () => {
    fc.assert(
      fc.property(generatedArb(), ({ events }) => {
        const meta = Projection.withMeta(events, (i) => `evt_${i}`)
        expect(Projection.fold(Usage.projection, meta)).toEqual(Reference.usage(events))
        expect(Projection.fold(PruneIndex.projection, meta)).toEqual(Reference.pruned(events, (v) => `evt_${v}`))
        expect(Projection.fold(CompactionHistory.projection, meta).entries.map(facts)).toEqual(
          Reference.compactions(events),
        )
      }),
      RUNS,
    )
  })

  it("the hand-computed session: calls 80k then 12k, one pivot continued, nothing pruned", () => {
    const events = pivoted()
    expect(Reference.usage(events)).toEqual({
      lastCall: { messageId: id("msg_a2"), tokens: 12_000, at: 14 },
      stale: undefined,
      compacting: false,
      calls: 2,
      askedBy: undefined,
      pivotAskedBy: undefined,
    })
    expect(Reference.compactions(events)).toEqual([
      {
        markerId: id("msg_c1"),
        status: "continued",
        summaryId: id("msg_s1"),
        tokensBefore: 80_000,
        tokensAfter: 12_000,
      },
    ])
    expect(Reference.pruned(events, String)).toEqual({ entries: [], tokensFreed: 0 })
  })
})
