/** Pins (issue 31): the budget rule at its boundaries, the Pin / Unpin decisions, and the window keeping pins. */

import { type Commands, type Events, Ids, Pins, Retention, Session, ValidWindow, Window } from "@pivot/core"
import { Result } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  assistant,
  assistantMessage,
  id,
  marker,
  part,
  started,
  summaryFinished,
  user,
  userMessage,
} from "./support/events.ts"
import { given } from "./support/given.ts"
import { pivotCommands } from "./support/pivot.ts"

type Event = Events.Event
const pinOf = (messageId: string, tokens: number, partId?: string): Pins.Pin => ({
  messageId: Ids.unsafe.message(messageId),
  ...(partId === undefined ? {} : { partId: Ids.unsafe.part(partId) }),
  by: "user",
  tokens,
  at: 0,
})

/** The reference of the budget rule: drop the oldest pin of another message while the distinct sizes exceed it. */
const referenceFit = (
  pins: ReadonlyArray<{ readonly m: string; readonly t: number }>,
  incoming: { readonly m: string; readonly t: number },
  limit: number,
): ReadonlyArray<number> | "refused" => {
  if (incoming.t > limit) return "refused"
  const live = pins.map((p, i) => ({ ...p, i }))
  const evicted: Array<number> = []
  const size = () => {
    const by = new Map<string, number>()
    for (const p of [...live, incoming]) by.set(p.m, p.t)
    return [...by.values()].reduce((a, b) => a + b, 0)
  }
  while (size() > limit) {
    const k = live.findIndex((p) => p.m !== incoming.m)
    if (k < 0) break
    evicted.push(live[k]!.i)
    live.splice(k, 1)
  }
  return evicted
}

describe("Pins.fit (the budget rule)", () => {
  const pins = [pinOf("msg_a", 40), pinOf("msg_b", 30)]
  it("a pin that lands exactly on the budget evicts nothing; one token more evicts the oldest; the incoming alone may take the whole budget", () => {
    expect(Pins.fit(pins, { messageId: id("msg_c"), tokens: 30 }, 100)).toEqual({ fits: true, evicted: [] })
    expect(Pins.fit(pins, { messageId: id("msg_c"), tokens: 29 }, 100)).toEqual({ fits: true, evicted: [] })
    expect(Pins.fit(pins, { messageId: id("msg_c"), tokens: 31 }, 100)).toEqual({ fits: true, evicted: [pins[0]] })
    expect(Pins.fit(pins, { messageId: id("msg_c"), tokens: 100 }, 100)).toEqual({ fits: true, evicted: pins })
    expect(Pins.fit(pins, { messageId: id("msg_c"), tokens: 101 }, 100)).toEqual({
      fits: false,
      tokens: 101,
      budget: 100,
    })
  })

  it("a second pin on an already pinned message costs nothing more", () => {
    expect(Pins.fit(pins, { messageId: id("msg_a"), tokens: 40 }, 70)).toEqual({ fits: true, evicted: [] })
    expect(Pins.pinnedTokens([...pins, pinOf("msg_a", 40, "prt_a")])).toBe(70)
  })

  it("property: fit equals the reference model for any pins, incoming pin and budget", () => {
    const names = fc.constantFrom("msg_a", "msg_b", "msg_c", "msg_d")
    fc.assert(
      fc.property(
        fc.array(fc.record({ m: names, t: fc.integer({ min: 0, max: 50 }) }), { maxLength: 6 }),
        fc.record({ m: names, t: fc.integer({ min: 0, max: 120 }) }),
        fc.integer({ min: 0, max: 150 }),
        (raw, incoming, limit) => {
          // One size per message, as the log records it (a message's size does not change).
          const sizeOf = new Map<string, number>()
          for (const p of [incoming, ...raw]) if (!sizeOf.has(p.m)) sizeOf.set(p.m, p.t)
          const list = raw.map((p) => ({ m: p.m, t: sizeOf.get(p.m)! }))
          const pinList = list.map((p, i) => pinOf(p.m, p.t, `prt_${i}`))
          const got = Pins.fit(pinList, { messageId: id(incoming.m), tokens: incoming.t }, limit)
          const want = referenceFit(list, incoming, limit)
          if (want === "refused") expect(got.fits).toBe(false)
          else expect(got).toEqual({ fits: true, evicted: want.map((i) => pinList[i]) })
        },
      ),
    )
  })

  it("the budget is pin_share of the usable window, 10 % by default", () => {
    const limits = { context: 200_000, output: 32_000 }
    // usable = context − output = 168_000 (no input limit)
    expect(Pins.budget({}, limits)).toBe(16_800)
    expect(Pins.budget({ pin_share: 0.25 }, limits)).toBe(42_000)
    expect(Pins.budget({}, { ...limits, input: 100_001 })).toBe(8_000)
    expect(Pins.budget({ pin_share: 0 }, limits)).toBe(0)
  })
})

const first = user(
  "p1",
  "Task: port the parser to Rust. Constraints: no unsafe, keep the public API, tests stay green.",
)
const base: ReadonlyArray<Event> = [started(), first, assistant("p1a", "p1", "on it")]
const pinCmd = (messageId: string, budget: number, extra: Partial<Commands.Command> = {}): Commands.Command =>
  ({ _tag: "Pin", at: 100, messageId: id(messageId), by: "user", budget, ...extra }) as Commands.Command

describe("Session.decide Pin / Unpin", () => {
  const size = Pins.sizeOfMessage(Session.message(Session.fold(base), id("msg_p1"))!)

  it("pins a message: ContextPinned with its size and the budget; again: nothing", () => {
    given(...base)
      .when(pinCmd("msg_p1", 1000))
      .then({ _tag: "ContextPinned", at: 100, messageId: id("msg_p1"), by: "user", tokens: size, budget: 1000 })
  })

  it("refuses an unknown message, a marker, a summary and a part the message does not have", () => {
    given(...base)
      .when(pinCmd("msg_nope", 1000))
      .thenFails("UnknownMessage", "no message msg_nope in this session")
    const withPivot = [...base, marker("pm"), summaryFinished("pm", "ps")]
    given(...withPivot)
      .when(pinCmd("msg_pm", 1000))
      .thenFails("NotPinnable", "message msg_pm cannot be pinned: it is a compaction marker")
    given(...withPivot)
      .when(pinCmd("msg_ps", 1000))
      .thenFails("NotPinnable")
    given(...base)
      .when(pinCmd("msg_p1", 1000, { partId: part("prt_zz") } as never))
      .thenFails("NotPinnable", "message msg_p1 cannot be pinned: it has no part prt_zz")
  })

  it("a message one token over the budget is refused for the user and silently not pinned by default; at the budget it is pinned", () => {
    given(...base)
      .when(pinCmd("msg_p1", size - 1))
      .thenFails("PinOverBudget")
    given(...base)
      .when(pinCmd("msg_p1", size - 1, { by: "default" } as never))
      .thenNothing()
    given(...base)
      .when(pinCmd("msg_p1", size))
      .thenMatch((events) => expect(events.map((e) => e._tag)).toEqual(["ContextPinned"]))
  })

  it("a pin over the budget unpins the oldest pin first, recorded with reason budget", () => {
    const events = [...base, user("p2", "second message of about the same size as the first one, more or less")]
    const state = Session.fold(events)
    const s1 = Pins.sizeOfMessage(Session.message(state, id("msg_p1"))!)
    const s2 = Pins.sizeOfMessage(Session.message(state, id("msg_p2"))!)
    const pinned = given(...events)
      .when(pinCmd("msg_p1", s1 + s2 - 1))
      .events()
    given(...events, ...pinned)
      .when(pinCmd("msg_p2", s1 + s2 - 1))
      .thenMatch((out) => {
        expect(out[0]).toEqual({
          _tag: "ContextUnpinned",
          at: 100,
          messageId: id("msg_p1"),
          reason: "budget",
          for: "msg_p2",
        })
        expect(out[1]?._tag).toBe("ContextPinned")
      })
    // With room for both, nothing is unpinned.
    given(...events, ...pinned)
      .when(pinCmd("msg_p2", s1 + s2))
      .thenMatch((out) => expect(out.map((e) => e._tag)).toEqual(["ContextPinned"]))
  })

  it("unpin removes every pin of the message (or only the named part's); unpinning what is not pinned adds nothing", () => {
    const pinned = [
      ...base,
      ...given(...base)
        .when(pinCmd("msg_p1", 1000))
        .events(),
      ...given(...base)
        .when(pinCmd("msg_p1", 1000, { partId: part("prt_p1") } as never))
        .events(),
    ]
    given(...pinned)
      .when({ _tag: "Unpin", at: 5, messageId: id("msg_p1"), by: "model" })
      .thenMatch((out) => expect(out.map((e) => e._tag === "ContextUnpinned" && e.reason)).toEqual(["model", "model"]))
    given(...pinned)
      .when({ _tag: "Unpin", at: 5, messageId: id("msg_p1"), partId: part("prt_p1"), by: "user" })
      .then({ _tag: "ContextUnpinned", at: 5, messageId: id("msg_p1"), partId: part("prt_p1"), reason: "user" })
    given(...base)
      .when({ _tag: "Unpin", at: 5, messageId: id("msg_p1"), by: "user" })
      .thenNothing()
  })
})

/** Drives the Decider through commands, as the runtime does, failing on any refusal. */
const run = (state: Session.State, ...commands: ReadonlyArray<Commands.Command>): Session.State => {
  let s = state
  for (const command of commands) {
    const decided = Session.decide(command, s)
    if (Result.isFailure(decided)) throw new Error(`${command._tag}: ${decided.failure.message}`)
    s = Session.fold(decided.success, s)
  }
  return s
}

const LIMITS = { context: 200_000, output: 32_000 }
const CONFIG = { tail_turns: 1, preserve_recent_tokens: 2_000 }
const turn = (state: Session.State, n: number): Session.State => {
  const u = userMessage(`t${n}`, `turn ${n}: ${"work ".repeat(40)}`)
  const a = assistantMessage(`t${n}a`, `t${n}`, `done ${n} ${"result ".repeat(40)}`)
  return run(state, { _tag: "AddUserMessage", message: u }, { _tag: "RecordAssistantStep", message: a })
}
const pivot = (state: Session.State, n: number): Session.State => run(state, ...pivotCommands(n, LIMITS, CONFIG))

/** Six pivots over a session whose first message states the task; `pinned` decides whether it is pinned. */
const sixPivots = (pinned: boolean): ReadonlyArray<Session.State> => {
  const task = userMessage(
    "task",
    "Task: migrate the store to PostgreSQL. Constraints: no downtime, keep SQLite working.",
  )
  let state = run(Session.initialState, { _tag: "StartSession", sessionId: Ids.unsafe.session("ses_pins"), at: 0 })
  state = run(state, { _tag: "AddUserMessage", message: task })
  if (pinned)
    state = run(state, { _tag: "Pin", at: 0, messageId: task.id, by: "default", budget: Pins.budget({}, LIMITS) })
  const windows: Array<Session.State> = []
  for (let p = 1; p <= 6; p++) {
    for (let t = 0; t < 3; t++) state = turn(state, p * 10 + t)
    state = pivot(state, p)
    windows.push(state)
  }
  return windows
}

describe("the window keeps pinned messages (scripted session of 6 pivots)", () => {
  it("with the default pin, every window after every pivot holds the first message verbatim, right after the summary", () => {
    const states = sixPivots(true)
    const task = Session.message(states[0]!, id("msg_task"))!
    for (const state of states) {
      const shown = Window.messages(state.window)
      expect(shown[2]).toStrictEqual(task)
      expect(ValidWindow.orderViolations(state.window)).toEqual([])
    }
  })

  it("without it, no window after the first pivot holds it (the test can fail)", () => {
    for (const state of sixPivots(false))
      expect(Window.messages(state.window).some((m) => m.id === id("msg_task"))).toBe(false)
  })

  it("a bounded live state (Retention.retain) keeps the pinned message and gives the same windows", () => {
    let full = Session.fold([])
    let live = Session.fold([])
    const task = userMessage("task2", "Task: keep this.")
    const step = (commands: ReadonlyArray<Commands.Command>) => {
      full = run(full, ...commands)
      live = Retention.retain(run(live, ...commands))
    }
    step([{ _tag: "StartSession", sessionId: Ids.unsafe.session("ses_pins2"), at: 0 }])
    step([
      { _tag: "AddUserMessage", message: task },
      { _tag: "Pin", at: 0, messageId: task.id, by: "user", budget: 9_999 },
    ])
    for (let p = 1; p <= 4; p++) {
      for (let t = 0; t < 3; t++) {
        const n = 100 + p * 10 + t
        const u = userMessage(`r${n}`, `turn ${n} ${"x ".repeat(30)}`)
        step([
          { _tag: "AddUserMessage", message: u },
          { _tag: "RecordAssistantStep", message: assistantMessage(`r${n}a`, `r${n}`) },
        ])
      }
      const before = live
      full = pivot(full, 100 + p)
      live = Retention.retain(pivot(before, 100 + p))
      expect(Window.messages(live.window)).toStrictEqual(Window.messages(full.window))
    }
    expect(Retention.retiredCount(live)).toBeGreaterThan(0)
    expect(Window.messages(live.window)[2]?.id).toBe(task.id)
  })

  it("a pinned message's tool outputs are never pruned", () => {
    const tool = (n: string) =>
      assistant(`${n}`, "p1", [
        {
          type: "tool",
          id: part(`prt_${n}`),
          callId: `c_${n}`,
          tool: "bash",
          state: { status: "completed", input: {}, output: "y".repeat(200_000), title: "bash" },
        },
      ])
    const events = [...base, tool("big1"), tool("big2"), user("p9", "later"), user("p10", "later"), user("p11", "x")]
    const prune = { _tag: "Prune", at: 1 } as const
    const without = given(...events)
      .when(prune)
      .events()
    expect(without.filter((e) => e._tag === "PartCompacted").length).toBe(2)
    const pinned = given(...events)
      .when(pinCmd("msg_big1", 999_999))
      .events()
    const withPin = given(...events, ...pinned)
      .when(prune)
      .events()
    expect(withPin.map((e) => (e._tag === "PartCompacted" ? e.partId : undefined))).toEqual([part("prt_big2")])
  })
})
