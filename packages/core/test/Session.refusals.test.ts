/**
 * The Decider's refusals, no-ops and carried fields, one case each: what a command on the wrong state answers, and
 * which fields of the command or the marker reach the events. Written against the mutants an earlier suite let live
 * (docs/testing.md).
 */

import { type Commands, type Events, Prompt, Prune, Session, Tokens, Usage } from "@pivot/core"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { assistant, assistantMessage, id, MODEL, part, started, toolPart, user } from "./support/events.ts"
import { given } from "./support/given.ts"

type Event = Events.Event
const LIMITS = { context: 100_000, output: 32_000 }

const run = (events: ReadonlyArray<Event>, ...commands: ReadonlyArray<Commands.Command>): Array<Event> => {
  const all = [...events]
  for (const command of commands) {
    const decision = Session.decide(command, Session.fold(all))
    if (Result.isFailure(decision)) throw new Error(`${command._tag} refused: ${decision.failure._tag}`)
    all.push(...decision.success)
  }
  return all
}
const create = (marker: string, extra: Partial<typeof Commands.CreateCompaction.Type> = {}): Commands.Command => ({
  _tag: "CreateCompaction",
  at: 100,
  markerId: id(`msg_${marker}`),
  partId: part(`prt_${marker}`),
  auto: true,
  ...extra,
})
const processing = (marker: string, extra: Partial<typeof Commands.ProcessCompaction.Type> = {}): Commands.Command => ({
  _tag: "ProcessCompaction",
  at: 101,
  markerId: id(`msg_${marker}`),
  summaryId: id(`msg_s_${marker}`),
  model: MODEL,
  compactionLimits: LIMITS,
  config: {},
  ...extra,
})
const finish = (marker: string, extra: Partial<typeof Commands.FinishSummary.Type> = {}): Commands.Command => ({
  _tag: "FinishSummary",
  at: 102,
  markerId: id(`msg_${marker}`),
  partId: part(`prt_s_${marker}`),
  text: "summary",
  tokens: Tokens.zero,
  ...extra,
})
const fail = (marker: string): Commands.Command => ({
  _tag: "FailSummary",
  at: 102,
  markerId: id(`msg_${marker}`),
  error: { name: "APIError", message: "down" },
})
const cont = (marker: string): Commands.Command => ({
  _tag: "Continue",
  at: 103,
  markerId: id(`msg_${marker}`),
  messageId: id("msg_k1"),
})
/** An assistant step without a finish reason. */
const unfinished = (name: string, parent: string, parts: Parameters<typeof assistantMessage>[2] = []) => {
  const { finish: _, ...rest } = assistantMessage(name, parent, parts)
  return rest
}
const base = (): Array<Event> => [started(), user("u1", "hello"), assistant("a1", "u1", "ok")]

describe("evolve: the state it keeps", () => {
  it("the version counts the events folded", () => {
    expect(Session.fold(base()).version).toBe(3)
  })
  it("lastFinished moves only to a newer finished message: an unfinished or an older step leaves it", () => {
    const events = [...base(), user("u2", "more"), assistant("a3", "u2", "done")]
    expect(Session.fold(events).lastFinished).toBe(id("msg_a3"))
    const pending = unfinished("a4", "u2", "…")
    const older = assistantMessage("a2", "u1", "late", { finish: "stop" })
    const later = Session.fold(
      [
        { _tag: "AssistantStepRecorded", at: 1, message: pending },
        { _tag: "AssistantStepRecorded", at: 2, message: older },
      ],
      Session.fold(events),
    )
    expect(later.lastFinished).toBe(id("msg_a3"))
  })
  it("a stored provider error finishes its message (lastFinished)", () => {
    const failing = unfinished("a2", "u1")
    const events = run(base(), {
      _tag: "ReportProviderError",
      at: 9,
      message: failing,
      error: { name: "APIError", message: "down" },
    })
    expect(Session.fold(events).lastFinished).toBe(id("msg_a2"))
  })
  it("a requested compaction keeps the marker's auto and overflow flags", () => {
    const state = Session.fold(run(base(), create("c1", { auto: true, overflow: true })))
    expect(Session.compaction(state, id("msg_c1"))).toMatchObject({ auto: true, overflow: true, status: "requested" })
    const manual = Session.fold(run(base(), create("c2", { auto: false })))
    expect(Session.compaction(manual, id("msg_c2"))).toMatchObject({ auto: false, overflow: false })
  })
})

describe("ReportProviderError", () => {
  const failing = unfinished("a2", "u1")
  it("given a non-overflow error, then the error is stored and no overflow is detected", () => {
    given(...base())
      .when({ _tag: "ReportProviderError", at: 9, message: failing, error: { name: "APIError", message: "down" } })
      .thenMatch((events) => {
        expect(events.map((e) => e._tag)).toEqual(["ProviderErrorReported"])
        expect(events[0]).toMatchObject({ overflow: false, message: { finish: "error", completedAt: 9 } })
      })
  })
  it("given auto off but a summary overflowing, then it is still compactable (no error stored)", () => {
    const summary = { ...failing, summary: true }
    given(...base())
      .when({
        _tag: "ReportProviderError",
        at: 9,
        message: summary,
        error: { name: "ContextOverflowError", message: "too long" },
        config: { auto: false },
      })
      .thenMatch((events) => expect(events.map((e) => e._tag)).toEqual(["ProviderErrorReported", "OverflowDetected"]))
  })
  it("given an unknown parent, then UnknownMessage", () => {
    given(...base())
      .when({
        _tag: "ReportProviderError",
        at: 9,
        message: assistantMessage("a2", "nope", []),
        error: { name: "APIError", message: "down" },
      })
      .thenFails("UnknownMessage", "no parent message msg_nope in this session")
  })
})

describe("CheckOverflow", () => {
  it("given a pending compaction, then nothing even over the trigger", () => {
    const events = run(
      [started(), user("u1", "hi"), assistant("a1", "u1", "ok", { tokens: { ...Tokens.zero, input: 90_000 } })],
      create("c1"),
    )
    given(...events)
      .when({ _tag: "CheckOverflow", at: 5, config: {}, limits: LIMITS })
      .thenNothing()
  })
})

describe("CreateCompaction", () => {
  it("carries the agent and the model onto the marker", () => {
    given(...base())
      .when(create("c1", { agent: "build", model: MODEL }))
      .thenMatch(([e]) => expect(e).toMatchObject({ marker: { agent: "build", model: MODEL } }))
  })
  it("given a settled compaction with this marker, then nothing; given a message with its id, then MessageConflict", () => {
    const done = run(base(), create("c1", { auto: false }), processing("c1"), finish("c1"))
    given(...done)
      .when(create("c1"))
      .thenNothing()
    given(...base())
      .when(create("a1"))
      .thenFails("MessageConflict")
  })
})

describe("ProcessCompaction", () => {
  it("given no such compaction, then UnknownCompaction; given a failed one, then CompactionOutOfOrder", () => {
    given(...base())
      .when(processing("c9"))
      .thenFails("UnknownCompaction")
    const failed = run(base(), create("c1"), processing("c1"), fail("c1"))
    given(...failed)
      .when(processing("c1"))
      .thenFails("CompactionOutOfOrder")
  })
  it("given a started compaction, then nothing", () => {
    given(...run(base(), create("c1"), processing("c1")))
      .when(processing("c1"))
      .thenNothing()
  })
  it("records the plugin context and puts its lines in the built prompt; none: no pluginContext key", () => {
    given(...run(base(), create("c1")))
      .when(processing("c1", { pluginContext: ["remember the flag"] }))
      .thenMatch(([e]) => {
        expect(e).toMatchObject({ pluginContext: ["remember the flag"] })
        expect(e?._tag === "CompactionStarted" && e.prompt).toContain("remember the flag")
      })
    given(...run(base(), create("c1")))
      .when(processing("c1"))
      .thenMatch(([e]) => {
        expect(e).not.toHaveProperty("pluginContext")
        expect(e?._tag === "CompactionStarted" && e.plan).not.toHaveProperty("previousSummary")
        // without plugin lines the prompt is the anchor and the template, nothing after them
        expect(e?._tag === "CompactionStarted" && e.prompt).toBe(`${Prompt.anchor()}\n\n${Prompt.TEMPLATE}`)
      })
  })
  it("a second compaction's plan and prompt carry the previous summary", () => {
    const first = run(base(), create("c1", { auto: false }), processing("c1"), finish("c1", { text: "summary one" }))
    given(...[...first, user("u2", "next")])
      .when(create("c2", { auto: false }))
      .thenMatch(() => {})
    const second = run([...first, user("u2", "next")], create("c2", { auto: false }))
    given(...second)
      .when(processing("c2"))
      .thenMatch(([e]) => {
        expect(e?._tag === "CompactionStarted" && e.plan.previousSummary).toBe("summary one")
        expect(e?._tag === "CompactionStarted" && e.prompt).toContain("summary one")
      })
  })
})

describe("FinishSummary and FailSummary", () => {
  it("the summary message is the compaction agent's, created when the compaction started, finish stop by default", () => {
    const startedAt = run(base(), create("c1"), processing("c1", { at: 150 }))
    given(...startedAt)
      .when(finish("c1", { at: 160 }))
      .thenMatch(([e]) =>
        expect(e).toMatchObject({
          summary: { agent: "compaction", mode: "compaction", createdAt: 150, completedAt: 160, finish: "stop" },
        }),
      )
    given(...startedAt)
      .when(finish("c1", { finish: "length" }))
      .thenMatch(([e]) => expect(e).toMatchObject({ summary: { finish: "length" } }))
  })
  it("finishing a failed compaction is refused; finishing a continued one is a no-op", () => {
    given(...run(base(), create("c1"), processing("c1"), fail("c1")))
      .when(finish("c1"))
      .thenFails("CompactionOutOfOrder")
    given(...run(base(), create("c1"), processing("c1"), finish("c1"), cont("c1")))
      .when(finish("c1"))
      .thenNothing()
  })
  it("failing: unknown → UnknownCompaction; requested or finished → CompactionOutOfOrder; failed again → nothing", () => {
    given(...base())
      .when(fail("c9"))
      .thenFails("UnknownCompaction")
    given(...run(base(), create("c1")))
      .when(fail("c1"))
      .thenFails("CompactionOutOfOrder")
    given(...run(base(), create("c1"), processing("c1"), finish("c1")))
      .when(fail("c1"))
      .thenFails("CompactionOutOfOrder")
    given(...run(base(), create("c1"), processing("c1"), fail("c1")))
      .when(fail("c1"))
      .thenNothing()
  })
})

describe("Continue", () => {
  it("given no such compaction, then UnknownCompaction", () => {
    given(...base())
      .when(cont("c9"))
      .thenFails("UnknownCompaction")
  })
  it("the continue message takes the marker's agent and model", () => {
    given(...run(base(), create("c1", { agent: "plan", model: MODEL }), processing("c1"), finish("c1")))
      .when(cont("c1"))
      .thenMatch(([e]) => expect(e).toMatchObject({ message: { agent: "plan", model: MODEL } }))
    given(...run(base(), create("c1"), processing("c1"), finish("c1")))
      .when(cont("c1"))
      .thenMatch(([e]) => {
        expect(e?._tag === "ContinueRequested" && e.message).not.toHaveProperty("agent")
        expect(e?._tag === "ContinueRequested" && e.message).not.toHaveProperty("model")
      })
  })
  it("a replayed turn keeps non-media files as they are", () => {
    const turn = user("u2", "look", {
      parts: [
        { type: "text", id: part("prt_u2"), text: "look" },
        { type: "file", id: part("prt_u2_f"), mime: "text/plain", filename: "a.txt", url: "file:///a.txt" },
      ],
    })
    const events = run(
      [...base(), turn, { _tag: "AssistantStepRecorded", at: 8, message: unfinished("a2", "u2") }],
      create("c1", { overflow: true }),
      processing("c1"),
      finish("c1"),
    )
    given(...events)
      .when(cont("c1"))
      .thenMatch(([e]) => {
        expect(e?._tag).toBe("TurnReplayed")
        const parts = e?._tag === "TurnReplayed" ? e.message.parts : []
        expect(parts.map((p) => p.type)).toEqual(["text", "file"])
        expect(parts[1]).toMatchObject({ mime: "text/plain", url: "file:///a.txt" })
      })
  })
})

describe("RecordToolResult", () => {
  const result = { status: "completed" as const, input: {}, output: "done", title: "bash" }
  const record = (messageId: string, partId: string): Commands.Command => ({
    _tag: "RecordToolResult",
    at: 5,
    messageId: id(messageId),
    partId: part(partId),
    state: result,
  })
  const events = [
    ...base(),
    assistant("a2", "u1", [
      toolPart("t1", "bash", "first"),
      {
        type: "tool",
        id: part("prt_t2"),
        callId: "c2",
        tool: "bash",
        state: { status: "error", input: {}, error: "failed" },
      },
    ]),
  ]
  it("unknown or user message → UnknownMessage; unknown or non-tool part → UnknownPart", () => {
    given(...events)
      .when(record("msg_nope", "prt_t1"))
      .thenFails("UnknownMessage", "no assistant message msg_nope in this session")
    given(...events)
      .when(record("msg_u1", "prt_u1"))
      .thenFails("UnknownMessage", "no assistant message msg_u1 in this session")
    given(...events)
      .when(record("msg_a2", "prt_nope"))
      .thenFails("UnknownPart")
    given(...events)
      .when(record("msg_a1", "prt_a1"))
      .thenFails("UnknownPart")
  })
  it("an errored call keeps its error: another result is a MessageConflict", () => {
    given(...events)
      .when(record("msg_a2", "prt_t2"))
      .thenFails("MessageConflict")
  })
})

describe("Prune.apply", () => {
  it("marks only completed, not yet compacted tool parts named by the selection", () => {
    const messages = [
      assistantMessage("a1", "u1", [
        toolPart("done", "bash", "out"),
        toolPart("old", "bash", "out", 7),
        { type: "tool", id: part("prt_run"), callId: "r", tool: "bash", state: { status: "running", input: {} } },
      ]),
    ]
    const target = (p: string) => ({ messageId: id("msg_a1"), partId: part(p), tool: "bash", tokens: 1 })
    const [applied] = Prune.apply(
      messages,
      { parts: [target("prt_done"), target("prt_old"), target("prt_run")], tokensFreed: 3 },
      99,
    )
    const states =
      applied?.role === "assistant" ? applied.parts.map((p) => (p.type === "tool" ? p.state : undefined)) : []
    expect(states[0]).toMatchObject({ compactedAt: 99 })
    expect(states[1]).toMatchObject({ compactedAt: 7 })
    expect(states[2]).not.toHaveProperty("compactedAt")
  })
})

describe("Tokens.fromProvider metadata and Usage", () => {
  it("reads cache writes from a later source when earlier ones are missing or null", () => {
    expect(
      Tokens.fromProvider({ inputTokens: 100 }, { bedrock: { usage: { cacheWriteInputTokens: 5 } } }),
    ).toMatchObject({ cacheWrite: 5, input: 95 })
    expect(
      Tokens.fromProvider({ inputTokens: 100 }, { anthropic: null, vertex: { cacheCreationInputTokens: 4 } }),
    ).toMatchObject({ cacheWrite: 4 })
    expect(
      Tokens.fromProvider(
        { inputTokens: 100 },
        { anthropic: { cacheCreationInputTokens: null }, vertex: { cacheCreationInputTokens: 6 } },
      ),
    ).toMatchObject({ cacheWrite: 6 })
  })
  it("usage ignores summary steps and steps that reported nothing", () => {
    const summary = assistantMessage("s1", "u1", "s", { summary: true, tokens: { ...Tokens.zero, input: 500 } })
    const empty = assistantMessage("a2", "u1", "x", { tokens: Tokens.zero })
    const state = Usage.evolve(
      Usage.evolve(Usage.initial, { _tag: "AssistantStepRecorded", at: 1, message: summary }),
      {
        _tag: "AssistantStepRecorded",
        at: 2,
        message: empty,
      },
    )
    expect(state).toEqual(Usage.initial)
  })
  it("a usable window of 0 reports 0 percent", () => {
    expect(Usage.report(Usage.initial, {}, { context: 16_384, output: 0 }, 500).percent).toBe(0)
  })
})
