/** The session Decider, given / when / then (spec §3.2, §3.3 K1, §3.4 process cases at the domain level). */

import { type Commands, type Events, Prompt, Session, Tokens, Window } from "@pivot/core"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import {
  assistant,
  assistantMessage,
  id,
  MODEL,
  part,
  SESSION,
  started,
  toolPart,
  user,
  userMessage,
} from "./support/events.ts"
import { given } from "./support/given.ts"

type Event = Events.Event
const LIMITS = { context: 100_000, output: 32_000 }

/** Runs commands in order, failing the test on any refusal; returns all events. */
const run = (events: ReadonlyArray<Event>, ...commands: ReadonlyArray<Commands.Command>): Array<Event> => {
  const all = [...events]
  let state = Session.fold(all)
  for (const command of commands) {
    const decision = Session.decide(command, state)
    if (Result.isFailure(decision)) throw new Error(`${command._tag} refused: ${decision.failure._tag}`)
    all.push(...decision.success)
    state = Session.fold(decision.success, state)
  }
  return all
}

const create = (marker: string, auto: boolean, overflow?: boolean): Commands.Command => ({
  _tag: "CreateCompaction",
  at: 100,
  markerId: id(`msg_${marker}`),
  partId: part(`prt_${marker}`),
  auto,
  ...(overflow === undefined ? {} : { overflow }),
})
const process = (marker: string, summary: string, config = {}): Commands.Command => ({
  _tag: "ProcessCompaction",
  at: 101,
  markerId: id(`msg_${marker}`),
  summaryId: id(`msg_${summary}`),
  model: MODEL,
  compactionLimits: LIMITS,
  config,
})
const finish = (marker: string, text = "summary"): Commands.Command => ({
  _tag: "FinishSummary",
  at: 102,
  markerId: id(`msg_${marker}`),
  partId: part(`prt_${marker}_summary`),
  text,
  tokens: Tokens.zero,
})
const cont = (marker: string, message: string, autoContinue?: boolean): Commands.Command => ({
  _tag: "Continue",
  at: 103,
  markerId: id(`msg_${marker}`),
  messageId: id(`msg_${message}`),
  ...(autoContinue === undefined ? {} : { autoContinue }),
})
const lastMessage = (events: ReadonlyArray<Event>) => {
  const window = Window.messages(Window.fold(events))
  return window[window.length - 1]
}

describe("StartSession", () => {
  it("given no events, when started, then SessionStarted; starting again is a no-op", () => {
    given().when({ _tag: "StartSession", sessionId: SESSION, at: 0, model: MODEL }).then(started())
  })
  it("given a started session, when another session id starts it, then SessionAlreadyStarted", () => {
    given(started())
      .when({ _tag: "StartSession", sessionId: "ses_other" as never, at: 1 })
      .thenFails("SessionAlreadyStarted")
  })
  it("given no events, when a user message is added, then SessionNotStarted", () => {
    given()
      .when({ _tag: "AddUserMessage", message: userMessage("u1", "hi") })
      .thenFails("SessionNotStarted")
  })
})

describe("recording the conversation", () => {
  it("given a session, when a user message is added, then UserMessageAdded (and again: nothing)", () => {
    const message = userMessage("u1", "hello")
    given(started())
      .when({ _tag: "AddUserMessage", message })
      .then({ _tag: "UserMessageAdded", at: message.createdAt, message })
  })
  it("given a message, when another message reuses its id, then MessageConflict", () => {
    const first = user("u1", "hello")
    given(started(), first)
      .when({ _tag: "AddUserMessage", message: userMessage("u1", "other") })
      .thenFails("MessageConflict")
  })
  it("given recorded messages, when retried with the same ids and content but other times and key order, then nothing (issue 18 item 5)", () => {
    const asked = userMessage("u1", "hello")
    const answered = assistantMessage("a1", "u1", "hi back", { completedAt: asked.createdAt + 5 })
    const after = Session.fold([
      started(),
      { _tag: "UserMessageAdded", at: asked.createdAt, message: asked },
      { _tag: "AssistantStepRecorded", at: asked.createdAt + 5, message: answered },
    ])
    // As a retry after a lost acknowledgement builds it: stamped again, its keys in its own order.
    const { parts, ...rest } = answered
    const reordered = parts.map((p) => Object.fromEntries(Object.entries(p).reverse()) as typeof p)
    const retried = { parts: reordered, ...rest, createdAt: 999, completedAt: 1_000 }
    const again = (command: Commands.Command) => Session.decide(command, after)
    expect(again({ _tag: "AddUserMessage", message: { ...asked, createdAt: 999 } })).toEqual(Result.succeed([]))
    expect(again({ _tag: "RecordAssistantStep", message: retried })).toEqual(Result.succeed([]))
    const changed = { ...retried, parts: [{ type: "text" as const, id: parts[0]!.id, text: "other" }] }
    const conflict = again({ _tag: "RecordAssistantStep", message: changed })
    expect(Result.isFailure(conflict) && conflict.failure._tag).toBe("MessageConflict")
  })
  it("an assistant step whose parent is unknown is refused", () => {
    given(started())
      .when({ _tag: "RecordAssistantStep", message: assistantMessage("a1", "nope") })
      .thenFails("UnknownMessage", "no parent message msg_nope in this session")
  })
  it("R1 given limits {context 20, output 10}, when a step used 100 input tokens, then OverflowDetected (usable 10)", () => {
    const message = assistantMessage("a1", "u1", "after", { tokens: { ...Tokens.zero, input: 100 } })
    given(started(), user("u1", "hi"))
      .when({ _tag: "RecordAssistantStep", message, config: {}, limits: { context: 20, output: 10 } })
      .then(
        { _tag: "AssistantStepRecorded", at: message.createdAt, message },
        {
          _tag: "OverflowDetected",
          at: message.createdAt,
          messageId: message.id,
          source: "usage",
          tokens: 100,
          trigger: 10,
        },
      )
  })
  it("a summary step is never checked for overflow", () => {
    const message = assistantMessage("a1", "u1", "s", { summary: true, tokens: { ...Tokens.zero, input: 100 } })
    given(started(), user("u1", "hi"))
      .when({ _tag: "RecordAssistantStep", message, limits: { context: 20, output: 10 } })
      .then({ _tag: "AssistantStepRecorded", at: message.createdAt, message })
  })
  it("a late tool result completes a pending call; a settled call keeps its first result", () => {
    const pending = assistant("a1", "u1", [
      { type: "tool", id: part("prt_t1"), callId: "c1", tool: "bash", state: { status: "pending", input: {} } },
    ])
    const result = { status: "completed" as const, input: {}, output: "done", title: "bash" }
    const command: Commands.Command = {
      _tag: "RecordToolResult",
      at: 5,
      messageId: id("msg_a1"),
      partId: part("prt_t1"),
      state: result,
    }
    const after = given(started(), user("u1", "hi"), pending)
      .when(command)
      .then({ ...command, _tag: "ToolResultRecorded" })
    const changed = { ...command, state: { ...result, output: "different" } }
    const decision = Session.decide(changed, after)
    expect(Result.isFailure(decision) && decision.failure._tag).toBe("MessageConflict")
    // It says what conflicts: the part's result, not a reused message id.
    expect(Result.isFailure(decision) && decision.failure.message).toBe(
      "tool part prt_t1 of message msg_a1 already has its result (completed); a result is final",
    )
  })
})

describe("provider errors (spec §2.5)", () => {
  const failing = assistantMessage("a1", "u1", [], { tokens: Tokens.zero })
  delete (failing as { finish?: string }).finish
  const overflow = { name: "ContextOverflowError", message: "prompt is too long" }

  it("given auto on, when the provider overflows, then the error is not stored and an overflow is detected", () => {
    given(started(), user("u1", "hi"))
      .when({ _tag: "ReportProviderError", at: 9, message: failing, error: overflow, config: {} })
      .then(
        { _tag: "ProviderErrorReported", at: 9, message: failing, error: overflow, overflow: true },
        { _tag: "OverflowDetected", at: 9, messageId: failing.id, source: "provider-error", tokens: 0 },
      )
  })
  it("S1 given auto off, when the provider overflows, then the assistant keeps ContextOverflowError and finish error", () => {
    given(started(), user("u1", "hello"))
      .when({ _tag: "ReportProviderError", at: 9, message: failing, error: overflow, config: { auto: false } })
      .thenMatch((events) => {
        expect(events).toHaveLength(1)
        const [reported] = events
        expect(reported?._tag === "ProviderErrorReported" && reported.message).toMatchObject({
          error: { name: "ContextOverflowError" },
          finish: "error",
        })
      })
  })
})

describe("overflow pre-check (spec §2.4 rule B)", () => {
  const heavy = { ...Tokens.zero, input: 75_000, output: 5_000 }
  it("given a finished step over the usable window, when checked, then OverflowDetected once", () => {
    given(started(), user("u1", "hi"), assistant("a1", "u1", "ok", { tokens: heavy }))
      .when({ _tag: "CheckOverflow", at: 50, config: {}, limits: LIMITS })
      .then({
        _tag: "OverflowDetected",
        at: 50,
        messageId: id("msg_a1"),
        source: "pre-check",
        tokens: 80_000,
        trigger: 68_000,
      })
  })
  it("given the newest finished message is a summary, when checked, then nothing (no re-compaction)", () => {
    given(started(), user("u1", "hi"), assistant("a1", "u1", "s", { tokens: heavy, summary: true }))
      .when({ _tag: "CheckOverflow", at: 50, config: {}, limits: LIMITS })
      .thenNothing()
  })
  it("given usable = 0 (context 16_384, no output limit), when checked, then nothing: pivot never compacts on every step", () => {
    given(started(), user("u1", "hi"), assistant("a1", "u1", "ok", { tokens: { ...Tokens.zero, input: 10 } }))
      .when({ _tag: "CheckOverflow", at: 50, config: {}, limits: { context: 16_384, output: 0 } })
      .thenNothing()
  })
})

describe("CreateCompaction (spec §2.7)", () => {
  it("K1 on an empty session: exactly one user message with exactly one compaction part {auto, overflow}", () => {
    given(started())
      .when(create("c1", true, true))
      .thenMatch((events) => {
        expect(events).toHaveLength(1)
        const [requested] = events
        if (requested?._tag !== "CompactionRequested") throw new Error("expected CompactionRequested")
        expect(requested.marker.role).toBe("user")
        expect(requested.marker.parts).toEqual([{ type: "compaction", id: part("prt_c1"), auto: true, overflow: true }])
      })
  })
  it("given a pending compaction, when another is requested, then nothing: one marker at a time", () => {
    const events = run([started(), user("u1", "hi")], create("c1", true))
    given(...events)
      .when(create("c2", true))
      .thenNothing()
  })
})

describe("ProcessCompaction, FinishSummary, FailSummary, Continue (spec §2.8)", () => {
  it("C2 manual: the summary finishes the pivot and no continue message follows", () => {
    const events = run([started(), user("u1", "hello")], create("c1", false), process("c1", "s1"), finish("c1"))
    given(...events)
      .when(cont("c1", "k1"))
      .thenNothing()
    expect(lastMessage(events)?.id).toBe(id("msg_s1"))
  })

  it("C3 given a summariser overflow, when the summary fails, then it is an error summary and no pivot", () => {
    const events = run([started(), user("u1", "hello")], create("c1", false), process("c1", "s1"))
    const error = { name: "ContextOverflowError", message: Prompt.tooLargeMessage(false) }
    const after = given(...events)
      .when({ _tag: "FailSummary", at: 200, markerId: id("msg_c1"), error })
      .thenMatch((emitted) => {
        const [failed] = emitted
        if (failed?._tag !== "SummaryFailed") throw new Error("expected SummaryFailed")
        expect(failed.summary).toMatchObject({ finish: "error", summary: true })
        expect(failed.summary.error?.message).toContain("Session too large to compact")
      })
    expect(after.window.pivot).toBeUndefined()
  })

  it("C4 auto: the continue message is synthetic, flagged compaction_continue, and asks to continue", () => {
    const events = run([started(), user("u1", "hello")], create("c1", true), process("c1", "s1"), finish("c1"))
    given(...events)
      .when(cont("c1", "k1"))
      .thenMatch((emitted) => {
        const [continued] = emitted
        if (continued?._tag !== "ContinueRequested") throw new Error("expected ContinueRequested")
        expect(continued.message.parts[0]).toMatchObject({
          type: "text",
          synthetic: true,
          metadata: { compaction_continue: true },
        })
        expect(JSON.stringify(continued.message.parts[0])).toContain("Continue if you have next steps")
      })
  })

  it("C10 a vetoed auto-continue leaves the summary as the last message", () => {
    const events = run([started(), user("u1", "hello")], create("c1", true), process("c1", "s1"), finish("c1"))
    given(...events)
      .when(cont("c1", "k1", false))
      .thenNothing()
    expect(lastMessage(events)?.id).toBe(id("msg_s1"))
  })

  it("C11 overflow: the overflowing turn is replayed with its image as a placeholder, not a continue message", () => {
    const image = user("u2", "image", {
      parts: [
        { type: "text", id: part("prt_u2"), text: "image" },
        {
          type: "file",
          id: part("prt_u2f"),
          mime: "image/png",
          filename: "cat.png",
          url: "https://example.test/cat.png",
        },
      ],
    })
    const events = run(
      [started(), user("u1", "root"), image],
      create("c1", true, true),
      process("c1", "s1"),
      finish("c1"),
      cont("c1", "k1"),
    )
    const replayed = events[events.length - 1]
    if (replayed?._tag !== "TurnReplayed") throw new Error("expected TurnReplayed")
    expect(replayed.replayOf).toBe(id("msg_u2"))
    expect(replayed.message.parts.some((p) => p.type === "file")).toBe(false)
    expect(JSON.stringify(replayed.message.parts)).toContain("Attached image/png: cat.png")
    expect(lastMessage(events)?.id).toBe(id("msg_k1"))
  })

  it("C12 overflow with nothing before the turn: the replay is cancelled and the continue text explains the overflow", () => {
    const events = run(
      [started(), user("u1", "current")],
      create("c1", true, true),
      process("c1", "s1"),
      finish("c1"),
      cont("c1", "k1"),
    )
    const last = events[events.length - 1]
    if (last?._tag !== "ContinueRequested") throw new Error("expected ContinueRequested")
    expect(JSON.stringify(last.message.parts)).toContain("previous request exceeded the provider's size limit")
  })

  it("finishing a compaction that never started is refused; finishing twice is a no-op", () => {
    const requested = run([started(), user("u1", "x")], create("c1", false))
    given(...requested)
      .when(finish("c1"))
      .thenFails("CompactionOutOfOrder")
    given(...requested)
      .when(finish("nope"))
      .thenFails("UnknownCompaction")
    const done = run(requested, process("c1", "s1"), finish("c1"))
    given(...done)
      .when(finish("c1"))
      .thenNothing()
  })

  it("the started compaction records the exact prompt, the model and the plan", () => {
    const events = run(
      [started(), user("u1", "older context"), assistant("a1", "u1"), user("u2", "keep this turn")],
      create("c1", false),
    )
    given(...events)
      .when({ ...process("c1", "s1", { tail_turns: 1 }), pluginContext: ["from a plugin"] } as Commands.Command)
      .thenMatch(([startedEvent]) => {
        if (startedEvent?._tag !== "CompactionStarted") throw new Error("expected CompactionStarted")
        expect(startedEvent.model).toEqual(MODEL)
        expect(startedEvent.prompt).toContain("## Objective")
        expect(startedEvent.prompt.endsWith("from a plugin")).toBe(true)
        expect(startedEvent.plan.head).toEqual([id("msg_u1"), id("msg_a1")])
        expect(startedEvent.plan.tail).toEqual([id("msg_u2")])
        expect(startedEvent.plan.tailStartId).toBe(id("msg_u2"))
      })
  })
})

describe("two pivots in a row (spec C18 and the §2.11 defects, at the domain level)", () => {
  const twoPivots = () =>
    run(
      [
        started(),
        user("u1", "older context"),
        assistant("a1", "u1"),
        user("u2", "keep this turn"),
        assistant("a2", "u2"),
      ],
      create("c1", false),
      process("c1", "s1", { tail_turns: 1 }),
      finish("c1", "summary one"),
      { _tag: "AddUserMessage", message: userMessage("u3", "latest turn") },
      create("c2", false),
      process("c2", "s2", { tail_turns: 1 }),
    )

  it("C18 the second compaction updates the previous summary, which its prompt holds exactly once", () => {
    const events = twoPivots()
    const second = events[events.length - 1]
    if (second?._tag !== "CompactionStarted") throw new Error("expected CompactionStarted")
    expect(second.prompt).toContain("<previous-summary>")
    expect(second.prompt.split("summary one").length - 1).toBe(1)
    expect(second.prompt).toContain("## Important Details")
    expect(second.prompt).toContain("## Work State")
  })

  it("after the second pivot, exactly one summary is visible (OpenCode can show both)", () => {
    const events = run(twoPivots(), finish("c2", "summary two"))
    const window = Window.messages(Window.fold(events))
    expect(window.filter((m) => m.role === "assistant" && m.summary).map((m) => m.id)).toEqual([id("msg_s2")])
    expect(window.filter((m) => m.role === "user" && m.parts.some((p) => p.type === "compaction"))).toHaveLength(1)
  })

  it("an overflow compaction never keeps the overflowing turn in the tail (it is replayed instead)", () => {
    const failing = assistantMessage("a3", "u3", [])
    delete (failing as { finish?: string }).finish
    const events = run(
      [
        started(),
        user("u1", "one"),
        assistant("a1", "u1"),
        user("u2", "two"),
        assistant("a2", "u2"),
        user("u3", "huge"),
      ],
      {
        _tag: "ReportProviderError",
        at: 9,
        message: failing,
        error: { name: "ContextOverflowError", message: "prompt is too long" },
      },
      create("c1", true, true),
      process("c1", "s1", { tail_turns: 2 }),
      finish("c1"),
      cont("c1", "k1"),
    )
    const ids = Window.messages(Window.fold(events)).map((m) => m.id)
    expect(ids).not.toContain(id("msg_u3"))
    expect(ids).not.toContain(id("msg_a3"))
    expect(ids[ids.length - 1]).toBe(id("msg_k1"))
  })
})

describe("Prune through the Decider (spec §3.3 P1)", () => {
  it("P1 given a 50k-token bash output before the last two turns, when pruned, then PartCompacted; pruning again: nothing", () => {
    const events = [
      started(),
      user("u1", "first"),
      assistant("a1", "u1", [toolPart("t1", "bash", "x".repeat(200_000))], { finish: "end_turn" }),
      user("u2", "second"),
      user("u3", "third"),
    ]
    given(...events)
      .when({ _tag: "Prune", at: 77 })
      .then({ _tag: "PartCompacted", at: 77, messageId: id("msg_a1"), partId: part("prt_t1"), tokens: 50_000 })
  })
})
