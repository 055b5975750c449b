/** `pivot demo`: the bundled example played through the core, the events it yields and the report a person reads. */

import { Conversation, Events, Overflow, Render, Session, Tokens, Window } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { run } from "../src/Cli.ts"
import type { Io } from "../src/commands/Command.ts"
import { MAX_COMPACTIONS_PER_TURN, NO_SUMMARY_LEFT, play } from "../src/demo/Driver.ts"
import * as Example from "../src/demo/Example.ts"
import * as Story from "../src/demo/Story.ts"
import { inputTokens } from "../src/demo/Usage.ts"

type Event = Events.Event

const example = Example.load(Example.bundledPath)
const played = play(example)
const { events } = played
const trigger = Overflow.trigger(example.config, example.model.limits)!
const settings = {
  limits: example.model.limits,
  config: example.config,
  systemPromptTokens: example.systemPromptTokens,
}

/** An `Io` that records what a command writes. */
const capture = (isTTY = false) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), isTTY, columns: undefined, env: {} }
  return { io, out, err }
}

const tags = (list: ReadonlyArray<Event>) => list.map((event) => event._tag)
const countOf = (tag: Event["_tag"], list: ReadonlyArray<Event> = events) => list.filter((e) => e._tag === tag).length

describe("given the bundled example, when the demo plays it", () => {
  it("then the session pivots at least twice and prunes at least once", () => {
    expect(countOf("SummaryFinished")).toBeGreaterThanOrEqual(2)
    expect(countOf("PartCompacted")).toBeGreaterThanOrEqual(1)
    expect(countOf("SummaryFailed")).toBe(0)
    expect(countOf("ProviderErrorReported")).toBe(0)
  })

  it("then every OverflowDetected is followed by a compaction that forms a pivot", () => {
    const overflows = events.flatMap((event, i) => (event._tag === "OverflowDetected" ? [i] : []))
    expect(overflows.length).toBeGreaterThanOrEqual(2)
    for (const i of overflows) {
      const [requested, started, finished] = events.slice(i + 1, i + 4)
      expect(tags([requested!, started!, finished!])).toEqual([
        "CompactionRequested",
        "CompactionStarted",
        "SummaryFinished",
      ])
      if (requested?._tag !== "CompactionRequested" || finished?._tag !== "SummaryFinished")
        throw new Error("unreachable")
      expect(finished.markerId).toBe(requested.marker.id)
    }
  })

  it("then every overflow was real: the reported usage reached the trigger computed by the core", () => {
    for (const event of events)
      if (event._tag === "OverflowDetected") {
        expect(event.trigger).toBe(trigger)
        expect(event.tokens).toBeGreaterThanOrEqual(trigger)
      }
  })

  it("then each call's reported input is the estimate of the rendered window before it plus the system prompt", () => {
    let state = Session.initialState
    let checked = 0
    for (const event of events) {
      if (event._tag === "AssistantStepRecorded") {
        const rendered = JSON.stringify(Window.render(state.window).map((r) => r.message))
        expect(event.message.tokens.input).toBe(Tokens.estimate(rendered) + example.systemPromptTokens)
        checked++
      }
      state = Session.evolve(state, event)
    }
    expect(checked).toBeGreaterThan(40)
  })

  it("then the usage after each pivot is below the trigger, and so is the next call's", () => {
    let state = Session.initialState
    let afterPivot = false
    let pivots = 0
    for (const [i, event] of events.entries()) {
      state = Session.evolve(state, event)
      const next = events[i + 1]
      // The window right after the pivot and its continue message: the input of the next call.
      if (
        (event._tag === "SummaryFinished" && next?._tag !== "ContinueRequested") ||
        event._tag === "ContinueRequested"
      ) {
        expect(inputTokens(state.window, example.systemPromptTokens)).toBeLessThan(trigger)
        afterPivot = true
        pivots++
      }
      if (event._tag === "AssistantStepRecorded" && afterPivot) {
        expect(Tokens.contextCount(event.message.tokens)).toBeLessThan(trigger)
        afterPivot = false
      }
    }
    expect(pivots).toBe(countOf("SummaryFinished"))
  })

  it("then the final window starts with the marker and the last summary", () => {
    const [marker, summary] = Window.render(played.state.window)
    expect(marker?.message).toEqual({ role: "user", content: [{ type: "text", text: Render.MARKER_TEXT }] })
    const used = countOf("SummaryFinished")
    expect(summary?.message).toEqual({
      role: "assistant",
      content: [{ type: "text", text: Example.summaryText(example.summaries[used - 1]!) }],
    })
  })

  it("then the final window shows pruned outputs as cleared, and storage still holds them", () => {
    const rendered = JSON.stringify(Window.render(played.state.window))
    expect(rendered).toContain(Render.CLEARED_TEXT)
    for (const event of events)
      if (event._tag === "PartCompacted") {
        const stored = Session.message(played.state, event.messageId)
        const part = stored?.role === "assistant" ? stored.parts.find((p) => p.id === event.partId) : undefined
        expect(part?.type === "tool" && part.state.status === "completed" && part.state.output.length).toBeGreaterThan(
          0,
        )
      }
  })

  it("then a second play yields the same events: ids and time are deterministic", () => {
    expect(play(example).events).toEqual(events)
  })

  it("then message and part ids sort in creation order", () => {
    const messageIds = events.flatMap((event) => {
      switch (event._tag) {
        case "UserMessageAdded":
        case "AssistantStepRecorded":
        case "ContinueRequested":
          return [event.message.id]
        case "CompactionRequested":
          return [event.marker.id]
        default:
          return []
      }
    })
    expect(messageIds).toEqual([...messageIds].sort())
    expect(new Set(messageIds).size).toBe(messageIds.length)
    expect(messageIds[0]).toMatch(/^msg_\d{8}$/)
  })

  it("then the events alone rebuild the window and the stored conversation the driver ended with", () => {
    const rebuilt = Session.fold(events)
    expect(Window.render(rebuilt.window)).toEqual(Window.render(played.state.window))
    expect(Conversation.messages(rebuilt.window.conversation)).toEqual(
      Conversation.messages(played.state.window.conversation),
    )
  })
})

describe("the story read back from the events", () => {
  const story = Story.read(events, settings)

  it("counts what the events hold", () => {
    expect(story.totals.events).toBe(events.length)
    expect(story.totals.pivots).toBe(countOf("SummaryFinished"))
    expect(story.totals.overflows).toBe(countOf("OverflowDetected"))
    expect(story.totals.partsPruned).toBe(countOf("PartCompacted"))
    expect(story.totals.tokensPruned).toBe(
      events.reduce((sum, e) => sum + (e._tag === "PartCompacted" ? e.tokens : 0), 0),
    )
    expect(story.totals.calls).toBe(countOf("AssistantStepRecorded"))
    expect(story.turns.map((t) => t.request)).toEqual(example.turns.map((t) => t.user))
  })

  it("gives each pivot sizes that shrink below the trigger", () => {
    const pivots = story.turns.flatMap((t) => t.moments).filter((m) => m.kind === "pivot")
    expect(pivots.length).toBe(countOf("SummaryFinished"))
    for (const pivot of pivots) {
      expect(pivot.before).toBeGreaterThanOrEqual(trigger)
      expect(pivot.after).toBeLessThan(trigger)
      expect(pivot.head).toBeGreaterThan(0)
    }
  })

  it("gives each prune the tokens its PartCompacted events carry and a smaller next input", () => {
    const prunes = story.turns.flatMap((t) => t.moments).filter((m) => m.kind === "prune")
    expect(prunes.length).toBe(story.totals.prunes)
    expect(prunes.reduce((sum, p) => sum + p.tokens, 0)).toBe(story.totals.tokensPruned)
    for (const prune of prunes) expect(prune.after).toBeLessThan(prune.before)
  })
})

describe("pivot demo output", () => {
  it("given --json, then every line decodes with Events.decode, in order, to the played events", () => {
    const { io, out, err } = capture()
    expect(run(["demo", "--json"], io)).toBe(0)
    expect(err).toEqual([])
    expect(out.length).toBe(events.length)
    expect(out.map((line) => Events.decode(JSON.parse(line)))).toEqual(events)
  })

  it("given no option, then the report shows usage bars, pivots, prunes and the final window, without colour", () => {
    const { io, out } = capture()
    expect(run(["demo"], io)).toBe(0)
    const text = out.join("\n")
    expect(text).toMatch(/\[[#-]{20}\]\s+\d+% of usable 56,000/)
    expect(text).toContain("◆ pivot 1:")
    expect(text).toContain("◆ pivot 2:")
    expect(text).toContain("✂ prune: cleared")
    expect(text).toContain("↻ continue:")
    expect(text).toContain(Render.MARKER_TEXT)
    expect(text).toContain(Render.CLEARED_TEXT)
    expect(text).toContain(`${countOf("SummaryFinished")} pivots`)
    expect(text).toContain(`${events.length.toLocaleString("en-US")} events`)
    expect(text).not.toContain("\u001b[")
  })

  it("given a terminal, then the report is coloured; NO_COLOR turns colour off", () => {
    const tty = capture(true)
    run(["demo"], tty.io)
    expect(tty.out.join("\n")).toContain("\u001b[")
    const noColor = capture(true)
    run(["demo"], { ...noColor.io, env: { NO_COLOR: "1" } })
    expect(noColor.out.join("\n")).not.toContain("\u001b[")
  })

  it("given a missing example file, then it explains and exits with 1", () => {
    const { io, err } = capture()
    expect(run(["demo", "--example", "/nonexistent/session.json"], io)).toBe(1)
    expect(err.join("\n")).toContain("cannot read example /nonexistent/session.json")
  })
})

/** A small example built in code, to drive the rarer paths. */
const small = (overrides: Partial<Example.Example> = {}): Example.Example =>
  Example.decode({
    title: "small",
    model: { providerId: "demo", modelId: "tiny", limits: { context: 10_000, output: 2_000 } },
    systemPromptTokens: 500,
    config: { prune: true },
    summaries: [["## Objective", "- the small task"]],
    turns: [
      {
        user: "read the big file",
        steps: [
          { tools: [{ tool: "read", input: { filePath: "src/a.ts" }, output: { lines: 400 } }] },
          { tools: [{ tool: "read", input: { filePath: "src/b.ts" }, output: { lines: 400 } }] },
          { text: "done" },
        ],
      },
    ],
    ...overrides,
  })

describe("the driver's rarer paths", () => {
  const readStep = (filePath: string, lines: number) => ({
    tools: [{ tool: "read", input: { filePath }, output: { lines } }],
  })

  it("given an overflow on the step that ends the turn, then the pivot has no continue: the agent waits", () => {
    const ex = small({ turns: [{ user: "read everything", steps: [readStep("src/a.ts", 700), { text: "done" }] }] })
    const { events: list } = play(ex)
    expect(tags(list).slice(-4)).toEqual([
      "OverflowDetected",
      "CompactionRequested",
      "CompactionStarted",
      "SummaryFinished",
    ])
    expect(countOf("ContinueRequested", list)).toBe(0)
    const story = Story.read(list, { limits: ex.model.limits, config: ex.config, systemPromptTokens: 500 })
    const pivot = story.turns[0]?.moments.find((m) => m.kind === "pivot")
    expect(pivot?.kind === "pivot" && pivot.resumed).toBe("wait")
  })

  it("given more overflows than canned summaries, then the extra compaction fails and forms no pivot", () => {
    const ex = small({ summaries: [], turns: [{ user: "read", steps: [readStep("src/a.ts", 700), { text: "done" }] }] })
    const { events: list } = play(ex)
    expect(countOf("SummaryFailed", list)).toBe(1)
    expect(countOf("SummaryFinished", list)).toBe(0)
    const failed = list.find((e) => e._tag === "SummaryFailed")
    expect(failed?._tag === "SummaryFailed" && failed.summary.error?.message).toBe(NO_SUMMARY_LEFT)
  })

  it("given a request larger than the context, then the provider rejects it and the turn is replayed after a pivot", () => {
    const ex = small({
      model: { providerId: "demo", modelId: "tiny", limits: { context: 20_000, output: 4_000 } },
      turns: [
        { user: "first", steps: [readStep("src/a.ts", 700), { text: "ok" }] },
        { user: "second", steps: [readStep("src/b.ts", 1_100), { text: "read it" }] },
      ],
    })
    const { events: list } = play(ex)
    expect(countOf("ProviderErrorReported", list)).toBe(1)
    const at = list.findIndex((e) => e._tag === "ProviderErrorReported")
    expect(tags(list.slice(at, at + 6))).toEqual([
      "ProviderErrorReported",
      "OverflowDetected",
      "CompactionRequested",
      "CompactionStarted",
      "SummaryFinished",
      "TurnReplayed",
    ])
    // The replayed turn starts over: both steps run again, parented to the replayed message.
    const replayed = list[at + 5]
    if (replayed?._tag !== "TurnReplayed") throw new Error("expected TurnReplayed")
    const again = list.slice(at + 6).filter((e) => e._tag === "AssistantStepRecorded")
    expect(again.map((e) => e._tag === "AssistantStepRecorded" && e.message.parentId)).toEqual([
      replayed.message.id,
      replayed.message.id,
    ])
  })

  it("given a system prompt larger than the context, then every request is rejected and compactions stay bounded", () => {
    const ex = small({
      systemPromptTokens: 12_000,
      summaries: [["- a"], ["- b"], ["- c"], ["- d"], ["- e"]],
      turns: [
        { user: "hi", steps: [{ text: "hello" }] },
        { user: "again", steps: [{ text: "hello" }] },
      ],
    })
    const { events: list } = play(ex)
    expect(countOf("AssistantStepRecorded", list)).toBe(0)
    expect(countOf("CompactionRequested", list)).toBe(2 * MAX_COMPACTIONS_PER_TURN)
    expect(countOf("ProviderErrorReported", list)).toBe(2 * (MAX_COMPACTIONS_PER_TURN + 1))
  })
})

describe("the example file", () => {
  it("given a tool call with both output and error, then decoding names the call", () => {
    expect(() =>
      small({
        turns: [
          { user: "u", steps: [{ tools: [{ tool: "bash", input: {}, output: "x", error: "y" }] }, { text: "t" }] },
        ],
      }),
    ).toThrow(/turn 1, step 1, tool call 1 \(bash\)/)
  })

  it("given a turn whose last step calls tools, then decoding refuses it", () => {
    expect(() =>
      small({ turns: [{ user: "u", steps: [{ tools: [{ tool: "bash", input: {}, output: "x" }] }] }] }),
    ).toThrow(/the last step of a turn/)
  })

  it("given input values written as lists of lines, then the tool receives them joined", () => {
    expect(Example.toolInput({ filePath: "a", content: ["x", "y"], n: [1, 2] })).toEqual({
      filePath: "a",
      content: "x\ny",
      n: [1, 2],
    })
  })
})
