/** The viewer's pivot report names the pinned messages each pivot kept verbatim (issue 31). */
import { type Commands, type Events, Ids, type Message, Session } from "@pivot/core"
import type { SessionLog } from "@pivot/store"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { SessionView, WindowView } from "../src/index.ts"

const msg = Ids.unsafe.message
const prt = Ids.unsafe.part
const LIMITS = { context: 200_000, output: 32_000 }
const MODEL = { providerId: "x", modelId: "y" }

const user = (id: string, text: string): Message.UserMessage => ({
  role: "user",
  id: msg(id),
  createdAt: 1,
  parts: [{ type: "text", id: prt(`prt_${id.slice(4)}`), text }],
})
const step = (id: string, parent: string): Message.AssistantMessage => ({
  role: "assistant",
  id: msg(id),
  parentId: msg(parent),
  createdAt: 2,
  model: MODEL,
  tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
  finish: "stop",
  parts: [{ type: "text", id: prt(`prt_${id.slice(4)}`), text: `answer ${"x ".repeat(200)}` }],
})

/** A session whose first message is pinned, with two pivots; the log as the store gives it. */
const log = (pinned: boolean): ReadonlyArray<SessionLog.Logged> => {
  const events: Array<Events.Event> = []
  let state = Session.initialState
  const run = (...commands: ReadonlyArray<Commands.Command>) => {
    for (const command of commands) {
      const decided = Session.decide(command, state)
      if (Result.isFailure(decided)) throw new Error(decided.failure.message)
      events.push(...decided.success)
      state = Session.fold(decided.success, state)
    }
  }
  run({ _tag: "StartSession", sessionId: Ids.unsafe.session("ses_pins"), at: 0 })
  run({ _tag: "AddUserMessage", message: user("msg_task", "Task: keep the API stable.") })
  if (pinned) run({ _tag: "Pin", at: 1, messageId: msg("msg_task"), by: "default", budget: 10_000 })
  for (const p of [1, 2]) {
    for (const t of [1, 2, 3])
      run(
        { _tag: "AddUserMessage", message: user(`msg_u${p}${t}`, `turn ${p}.${t} ${"y ".repeat(200)}`) },
        { _tag: "RecordAssistantStep", message: step(`msg_a${p}${t}`, `msg_u${p}${t}`) },
      )
    run(
      { _tag: "CreateCompaction", at: 3, markerId: msg(`msg_m${p}`), partId: prt(`prt_m${p}`), auto: false },
      {
        _tag: "ProcessCompaction",
        at: 4,
        markerId: msg(`msg_m${p}`),
        summaryId: msg(`msg_s${p}`),
        model: MODEL,
        compactionLimits: LIMITS,
        config: { tail_turns: 1, preserve_recent_tokens: 2_000 },
      },
      {
        _tag: "FinishSummary",
        at: 5,
        markerId: msg(`msg_m${p}`),
        partId: prt(`prt_s${p}`),
        text: `summary ${p}`,
        tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      },
    )
  }
  return events.map((event, i) => ({ event, meta: { id: `evt_${i + 1}`, version: i + 1 } }))
}

const reports = (logged: ReadonlyArray<SessionLog.Logged>) => {
  const view = SessionView.make("ses_pins")
  for (const l of logged) SessionView.evolve(view, l.event, l.meta)
  const pivots = SessionView.pivots(view)
  return pivots.map((_, i) => WindowView.pivotReport(logged, pivots, i + 1)!)
}

describe("the pivot report's pins", () => {
  it("names the pinned first message at every pivot, and nothing when nothing is pinned", () => {
    const pinned = reports(log(true))
    expect(pinned).toHaveLength(2)
    for (const report of pinned) expect(report.pinned).toEqual(["msg_task"])
    for (const report of reports(log(false))) expect(report.pinned).toEqual([])
  })
})
