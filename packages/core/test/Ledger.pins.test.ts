/**
 * The ledger's retention check with pins (issue 31 follow-up): a pinned message of a pivot's head is kept verbatim in
 * the window after the pivot, so what it names is *in view*, not merely recallable. The session is driven through the
 * Decider, as the runtime does; the window decides what a pivot kept.
 */
import { ArtifactCheck, type Commands, type Events, Ids, Ledger, Pins, Recall, Session, Window } from "@pivot/core"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { assistantMessage, id, part, userMessage } from "./support/events.ts"
import { pivotCommands } from "./support/pivot.ts"

type Event = Events.Event

const LIMITS = { context: 200_000, output: 32_000 }
const CONFIG = { tail_turns: 1, preserve_recent_tokens: 2_000 }
const TASK = "Task: migrate the store to PostgreSQL; the SQLite layer must stay as it is."

/** Drives the Decider through commands, failing on any refusal; answers every event decided. */
const drive = (commands: ReadonlyArray<Commands.Command>): ReadonlyArray<Event> => {
  let state = Session.initialState
  const events: Array<Event> = []
  for (const command of commands) {
    const decided = Session.decide(command, state)
    if (Result.isFailure(decided)) throw new Error(`${command._tag}: ${decided.failure.message}`)
    state = Session.fold(decided.success, state)
    events.push(...decided.success)
  }
  return events
}

const turn = (n: number): ReadonlyArray<Commands.Command> => [
  { _tag: "AddUserMessage", message: userMessage(`t${n}`, `turn ${n}: ${"work ".repeat(40)}`) },
  { _tag: "RecordAssistantStep", message: assistantMessage(`t${n}a`, `t${n}`, `done ${n} ${"result ".repeat(40)}`) },
]

const pivot = (n: number) => pivotCommands(n, LIMITS, CONFIG)

/** A session whose first message states the task (pinned or not), two turns, then a pivot whose summary omits it. */
const session = (pin: boolean, extra: ReadonlyArray<Commands.Command> = []) => {
  const task = userMessage("task", TASK)
  return drive([
    { _tag: "StartSession", sessionId: Ids.unsafe.session("ses_pinned"), at: 0 },
    { _tag: "AddUserMessage", message: task },
    ...(pin ? [{ _tag: "Pin", at: 0, messageId: task.id, by: "user", budget: Pins.budget({}, LIMITS) } as const] : []),
    ...extra,
    ...turn(1),
    ...turn(2),
    ...turn(3),
    ...pivot(1),
  ])
}

const retentionOf = (events: ReadonlyArray<Event>) => {
  const compactions = Ledger.entries(Ledger.fold(events)).filter((e) => e.kind === "compaction")
  expect(compactions).toHaveLength(1)
  return compactions[0]!.retention!
}

const taskArtifact = (artifacts: ReadonlyArray<ArtifactCheck.Checked>) =>
  artifacts.find((a) => a.kind === "request" && a.text === TASK)

describe("Ledger retention: a pinned message of the head is in view", () => {
  it("given the task pinned before a pivot whose summary omits it, then the window keeps it and it counts in view", () => {
    const events = session(true)
    // The window after the pivot holds the task verbatim (what makes it in view).
    const window = Window.messages(Window.fold(events))
    expect(window.some((m) => m.id === id("msg_task"))).toBe(true)
    const retention = retentionOf(events)
    const task = taskArtifact(retention.artifacts)
    expect(task).toEqual({ kind: "request", text: TASK, named: false, recallable: true, pinned: true })
    expect(ArtifactCheck.inView(task!)).toBe(true)
    const tally = ArtifactCheck.tally(retention.artifacts)
    expect(tally.byKind.request.named).toBe(0)
    expect(tally.byKind.request.inView).toBe(1)
    expect(tally.inView).toBe(tally.named + 1)
  })

  it("given the same session without the pin, then the task is recallable only (the test can fail)", () => {
    const events = session(false)
    expect(Window.messages(Window.fold(events)).some((m) => m.id === id("msg_task"))).toBe(false)
    const task = taskArtifact(retentionOf(events).artifacts)
    expect(task).toEqual({ kind: "request", text: TASK, named: false, recallable: true })
    expect(ArtifactCheck.inView(task!)).toBe(false)
    expect(ArtifactCheck.reachable(task!)).toBe(true)
  })

  it("given the pin removed before the pivot, then nothing of the head is kept by a pin: recallable only", () => {
    const events = session(true, [{ _tag: "Unpin", at: 0, messageId: id("msg_task"), by: "user" }])
    const task = taskArtifact(retentionOf(events).artifacts)
    expect(task).toEqual({ kind: "request", text: TASK, named: false, recallable: true })
  })

  it("given ArtifactsChecked recorded after the summary, then the recorded verdict keeps the pin's in-view mark", () => {
    const events = session(true)
    const finished = events.findIndex((e) => e._tag === "SummaryFinished")
    const recorded: Event = {
      _tag: "ArtifactsChecked",
      at: 4,
      markerId: id("msg_m1"),
      artifacts: [{ kind: "request", text: TASK, named: false }],
    }
    const withCheck = [...events.slice(0, finished + 1), recorded, ...events.slice(finished + 1)]
    expect(retentionOf(withCheck)).toEqual({
      recorded: true,
      artifacts: [{ kind: "request", text: TASK, named: false, recallable: true, pinned: true }],
    })
    // Once forgotten, nothing is in view by a pin nor recallable: only the recorded verdict stands.
    expect(retentionOf([...withCheck, { _tag: "SessionForgotten", at: 5 }]).artifacts).toEqual([
      { kind: "request", text: TASK, named: false, recallable: false, pinned: false },
    ])
  })
})

describe("Recall.shownDocumentsOf (a pinned message as the window shows it)", () => {
  const read = (compactedAt?: number, inputClearedAt?: number) =>
    assistantMessage("a1", "u1", [
      { type: "text", id: part("prt_text"), text: "reading the config" },
      {
        type: "tool",
        id: part("prt_read"),
        callId: "call_1",
        tool: "read",
        state: {
          status: "completed",
          input: { filePath: "src/config.ts" },
          output: "export const port = 4319",
          title: "read",
          ...(compactedAt === undefined ? {} : { compactedAt }),
          ...(inputClearedAt === undefined ? {} : { inputClearedAt }),
        },
      },
    ])

  it("gives every part as recall does, without the pivot; a cleared output or input is left out", () => {
    const all = Recall.shownDocumentsOf(read())
    expect(all.map((d) => [d.kind, d.id])).toEqual([
      ["assistant", "prt_text"],
      ["input", "prt_read-input"],
      ["output", "prt_read"],
    ])
    expect(all.every((d) => d.pivot === undefined)).toBe(true)
    expect(all).toEqual(Recall.documentsOf(read(), "msg_s1").map(({ pivot: _p, ...d }) => d))
    expect(Recall.shownDocumentsOf(read(5)).map((d) => d.id)).toEqual(["prt_text", "prt_read-input"])
    expect(Recall.shownDocumentsOf(read(undefined, 5)).map((d) => d.id)).toEqual(["prt_text", "prt_read"])
  })
})
