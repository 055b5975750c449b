/** The window projection against OpenCode's filterCompacted cases (spec §3.5) and pivot's fixes of §2.11. */

import { type Events, Window } from "@pivot/core"
import { describe, expect, it } from "vitest"
import {
  assistant,
  assistantMessage,
  compactionStarted,
  id,
  marker,
  part,
  started,
  summaryFinished,
  user,
} from "./support/events.ts"

const visibleIds = (events: ReadonlyArray<Events.Event>) => Window.messages(Window.fold(events)).map((m) => m.id)
const ids = (...names: ReadonlyArray<string>) => names.map((n) => id(`msg_${n}`))

describe("Window (filterCompacted, spec §3.5)", () => {
  it("F1 five plain users: all five, in order", () => {
    const events = [started(), ...["1", "2", "3", "4", "5"].map((n) => user(`u${n}`, n))]
    expect(visibleIds(events)).toEqual(ids("u1", "u2", "u3", "u4", "u5"))
  })

  it("F2 marker with text and no tail, finished summary, then a turn: 4 messages, the marker first", () => {
    const m = marker("u1")
    if (m._tag !== "CompactionRequested") throw new Error("marker")
    const withText: Events.Event = {
      ...m,
      marker: { ...m.marker, parts: [{ type: "text", id: part("prt_u1t"), text: "hi" }, ...m.marker.parts] },
    }
    const events = [
      started(),
      withText,
      compactionStarted("u1", "s1"),
      summaryFinished("u1", "s1"),
      user("u2", "x"),
      assistant("a2", "u2"),
    ]
    expect(visibleIds(events)).toEqual(ids("u1", "s1", "u2", "a2"))
  })

  it("F3 an empty session has an empty window", () => {
    expect(visibleIds([])).toEqual([])
  })

  it("F4 a marker without a summary forms no boundary", () => {
    expect(visibleIds([started(), user("u0", "a"), marker("u1"), user("u2", "b")])).toEqual(ids("u0", "u1", "u2"))
  })

  it("F5 a failed summary forms no boundary: everything stays visible", () => {
    const failed: Events.Event = {
      _tag: "SummaryFailed",
      at: 9,
      markerId: id("msg_u1"),
      summary: assistantMessage("s1", "u1", "", {
        summary: true,
        finish: "error",
        error: { name: "APIError", message: "boom" },
      }),
    }
    const events = [
      started(),
      user("u0", "old"),
      marker("u1"),
      compactionStarted("u1", "s1"),
      failed,
      user("u2", "retry"),
    ]
    expect(visibleIds(events)).toEqual(ids("u0", "u1", "s1", "u2"))
  })

  it("F6 a summary without finish forms no boundary", () => {
    const unfinished = assistant("s1", "u1", "partial", { summary: true })
    const event =
      unfinished._tag === "AssistantStepRecorded" ? { ...unfinished, message: { ...unfinished.message } } : unfinished
    if (event._tag === "AssistantStepRecorded") delete (event.message as { finish?: string }).finish
    expect(visibleIds([started(), user("u0", "old"), marker("u1"), event, user("u2", "next")])).toEqual(
      ids("u0", "u1", "s1", "u2"),
    )
  })

  it("F7 a pivot with a tail: [marker, summary, tail…, later…]", () => {
    const events = [
      started(),
      user("u1", "1"),
      assistant("a1", "u1"),
      user("u2", "2"),
      assistant("a2", "u2"),
      marker("c1"),
      compactionStarted("c1", "s1", { head: ids("u1", "a1"), tail: ids("u2", "a2"), tailStartId: id("msg_u2") }),
      summaryFinished("c1", "s1"),
      user("u3", "3"),
      assistant("a3", "u3"),
    ]
    expect(visibleIds(events)).toEqual(ids("c1", "s1", "u2", "a2", "u3", "a3"))
  })

  it("F11 a single user message", () => {
    expect(visibleIds([started(), user("u1", "x")])).toEqual(ids("u1"))
  })

  it("F12 four users without compaction keep their order", () => {
    const events = [started(), user("u1", "1"), user("u2", "2"), user("u3", "3"), user("u4", "4")]
    expect(visibleIds(events)).toEqual(ids("u1", "u2", "u3", "u4"))
  })
})

describe("Window: pivot's fixes of OpenCode defects (spec §2.11 notes)", () => {
  const firstPivot = [
    started(),
    user("u1", "1"),
    assistant("a1", "u1"),
    user("u2", "2"),
    assistant("a2", "u2"),
    marker("c1"),
    compactionStarted("c1", "s1", { head: ids("u1", "a1"), tail: ids("u2", "a2"), tailStartId: id("msg_u2") }),
    summaryFinished("c1", "s1", "summary one"),
    user("u3", "3"),
    assistant("a3", "u3"),
  ]

  it("given a good pivot, when a later summary fails, then the good pivot's window stays (plus the failed pair)", () => {
    const failed: Events.Event = {
      _tag: "SummaryFailed",
      at: 99,
      markerId: id("msg_c2"),
      summary: assistantMessage("s2", "c2", "", {
        summary: true,
        finish: "error",
        error: { name: "APIError", message: "x" },
      }),
    }
    const events = [
      ...firstPivot,
      marker("c2"),
      compactionStarted("c2", "s2", { head: ids("u2", "a2"), tail: ids("u3", "a3"), tailStartId: id("msg_u3") }),
      failed,
    ]
    expect(visibleIds(events)).toEqual(ids("c1", "s1", "u2", "a2", "u3", "a3", "c2", "s2"))
  })

  it("given two pivots, then only the newest summary is visible", () => {
    const events = [
      ...firstPivot,
      marker("c2"),
      compactionStarted("c2", "s2", { head: ids("u2", "a2"), tail: ids("u3", "a3"), tailStartId: id("msg_u3") }),
      summaryFinished("c2", "s2", "summary two"),
      user("u4", "4"),
    ]
    const window = Window.fold(events)
    expect(Window.messages(window).map((m) => m.id)).toEqual(ids("c2", "s2", "u3", "a3", "u4"))
    expect(window.pivot).toEqual({ markerId: id("msg_c2"), summaryId: id("msg_s2") })
  })

  it("the rendered marker is 'What did we do so far?' followed by the summary text", () => {
    const rendered = Window.render(Window.fold(firstPivot)).map((r) => r.message)
    expect(rendered[0]).toMatchObject({ role: "user" })
    expect(JSON.stringify(rendered[0])).toContain("What did we do so far?")
    expect(JSON.stringify(rendered[1])).toContain("summary one")
  })

  it("messages recorded between the marker and its summary stay after the tail", () => {
    const events = [
      started(),
      user("u1", "1"),
      user("u2", "2"),
      marker("c1"),
      compactionStarted("c1", "s1", { head: ids("u1"), tail: ids("u2"), tailStartId: id("msg_u2") }),
      user("u3", "typed while summarising"),
      summaryFinished("c1", "s1"),
    ]
    expect(visibleIds(events)).toEqual(ids("c1", "s1", "u2", "u3"))
  })
})

describe("Window: pivots at their edges", () => {
  it("given a finished summary answering an id never recorded, then no pivot forms and the summary keeps its place", () => {
    const window = Window.fold([started(), user("u1", "one"), summaryFinished("zz", "s")])
    expect(window.pivot).toBeUndefined()
    expect(Window.messages(window).map((m) => m.id)).toEqual(ids("u1", "s"))
  })

  it("given a summary finished without a started compaction (no plan), then the pivot keeps no tail", () => {
    expect(visibleIds([started(), user("u1", "one"), marker("m"), summaryFinished("m", "s")])).toEqual(ids("m", "s"))
  })

  it("given a tail naming a message an earlier pivot hid, then it stays hidden (the tail only keeps visible messages)", () => {
    const events = [
      started(),
      user("u1", "one"),
      marker("m1"),
      compactionStarted("m1", "s1", { tail: [] }),
      summaryFinished("m1", "s1"),
      user("u2", "two"),
      marker("m2"),
      compactionStarted("m2", "s2", { tail: ids("u1", "u2") }),
      summaryFinished("m2", "s2"),
    ]
    expect(visibleIds(events.slice(0, 6))).toEqual(ids("m1", "s1", "u2"))
    expect(visibleIds(events)).toEqual(ids("m2", "s2", "u2"))
  })

  it("given an event that changes no message, then the window state is the same object", () => {
    const state = Window.fold([started(), user("u1", "one")])
    const overflow: Events.Event = {
      _tag: "OverflowDetected",
      at: 5,
      messageId: id("msg_u1"),
      source: "usage",
      tokens: 10,
      trigger: 5,
    }
    expect(Window.evolve(state, overflow)).toBe(state)
  })
})
