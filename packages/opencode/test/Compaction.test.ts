import { Prompt, Session, ValidWindow, Window } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { filterCompacted } from "./support/filterCompacted.ts"
import { fixture, folded, imported, type RawExport, roundTrip, tags, windowIds } from "./support/fixtures.ts"

describe("compaction with tail_start_id and a finished summary (compaction-tail.json)", () => {
  const raw = fixture("compaction-tail.json")
  const result = imported(raw)

  it("given a marker, its summary and the continue message, then the compaction events come in OpenCode's order", () => {
    expect(tags(result)).toEqual([
      "SessionStarted",
      "UserMessageAdded",
      "AssistantStepRecorded",
      "UserMessageAdded",
      "AssistantStepRecorded",
      "AssistantStepRecorded",
      "UserMessageAdded",
      "AssistantStepRecorded",
      "CompactionRequested",
      "CompactionStarted",
      "SummaryFinished",
      "ContinueRequested",
      "AssistantStepRecorded",
      "UserMessageAdded",
      "AssistantStepRecorded",
    ])
  })

  it("the plan is reconstructed the OpenCode way: head before tail_start_id, tail from it up to the marker", () => {
    const started = result.events.find((e) => e._tag === "CompactionStarted")
    expect(started).toEqual({
      _tag: "CompactionStarted",
      at: 1760000008100,
      markerId: "msg_08",
      summaryId: "msg_09",
      model: { providerId: "anthropic", modelId: "claude-sonnet-4" },
      plan: {
        head: ["msg_01", "msg_02", "msg_03", "msg_04", "msg_05"],
        tail: ["msg_06", "msg_07"],
        tailStartId: "msg_06",
      },
      prompt: "",
    })
  })

  it("the prompt OpenCode did not record is reported as a warning, and nothing else is", () => {
    expect(result.report.warnings).toEqual([
      'compaction msg_08: OpenCode does not record the summariser prompt; CompactionStarted.prompt is ""',
    ])
  })

  it("the marker is requested without a tail start; the started compaction sets it (as pivot records it live)", () => {
    const requested = result.events.find((e) => e._tag === "CompactionRequested")
    expect(requested?._tag === "CompactionRequested" && requested.marker.parts).toEqual([
      { type: "compaction", id: raw.messages[7]!.parts[0]!.id, auto: true },
    ])
    const marker = Session.message(folded(result), "msg_08" as never)
    expect(marker?.parts[0]).toMatchObject({ type: "compaction", tailStartId: "msg_06" })
  })

  it("the window is marker, summary, tail, later — the same ids in the same order as OpenCode's filterCompacted", () => {
    expect(windowIds(result)).toEqual(["msg_08", "msg_09", "msg_06", "msg_07", "msg_10", "msg_11", "msg_12", "msg_13"])
    expect(windowIds(result)).toEqual(filterCompacted(raw.messages))
  })

  it("the session state settles: compaction continued, nothing pending, the summary is the pivot", () => {
    const state = folded(result)
    expect(Session.compaction(state, "msg_08" as never)?.status).toBe("continued")
    expect(state.pending).toBeUndefined()
    expect(state.window.pivot).toEqual({ markerId: "msg_08", summaryId: "msg_09" })
    // The report counts the pivoted window, not the whole conversation.
    expect(result.report.window).toBe(Window.messages(state.window).length)
    expect(result.report.window).toBeLessThan(result.report.messages)
  })

  it("the continue message is the synthetic text OpenCode wrote, and the window renders the marker's question", () => {
    const continued = result.events.find((e) => e._tag === "ContinueRequested")
    expect(continued?._tag === "ContinueRequested" && continued.message.parts[0]).toMatchObject({
      type: "text",
      text: Prompt.continueText(false),
      synthetic: true,
      metadata: { compaction_continue: true },
    })
    const first = Window.render(folded(result).window)[0]!
    expect(first).toEqual({
      sourceMessageId: "msg_08",
      message: { role: "user", content: [{ type: "text", text: "What did we do so far?" }] },
    })
  })

  it("every event survives a JSON round trip through Events.decode", () => {
    expect(roundTrip(result.events)).toEqual(result.events)
  })

  it("given a summary without finish (interrupted), then it is an assistant step, no pivot, the window as OpenCode's", () => {
    const interrupted = structuredClone(raw)
    const summary = interrupted.messages[8]!
    delete summary.info.finish
    delete summary.info.time.completed
    interrupted.messages.splice(9, 2) // no continue message (nor its answer) follows an interrupted summary
    delete interrupted.messages[7]!.parts[0]!.tail_start_id // a killed process never persisted it (spec §2.8 step 12)
    const r = imported(interrupted)
    expect(tags(r)).not.toContain("CompactionStarted")
    expect(tags(r)[9]).toBe("AssistantStepRecorded")
    expect(Session.compaction(folded(r), "msg_08" as never)?.status).toBe("requested")
    expect(windowIds(r)).toEqual(filterCompacted(interrupted.messages))
    expect(r.report.warnings).toEqual([
      "messages[8] (msg_09): summary without finish (interrupted); recorded as a step, it forms no pivot",
    ])
  })

  it("given a tail_start_id pointing at a marker-free tail that holds an older failed summary, then pivot keeps conversation only and warns", () => {
    // msg_04.5-ish: an earlier failed marker/summary pair inside the tail range.
    const edited = structuredClone(raw)
    const failedMarker = structuredClone(edited.messages[7]!)
    failedMarker.info.id = "msg_065"
    failedMarker.info.time.created = 1760000006500
    failedMarker.parts = [{ type: "compaction", id: "prt_065_01", auto: false }]
    const failedSummary = structuredClone(edited.messages[8]!)
    failedSummary.info.id = "msg_066"
    failedSummary.info.parentID = "msg_065"
    failedSummary.info.finish = "error"
    failedSummary.info.error = { name: "APIError", data: { message: "rate limited", isRetryable: false } }
    failedSummary.parts = []
    edited.messages.splice(6, 0, failedMarker, failedSummary)
    const r = imported(edited)
    const started = r.events.filter((e) => e._tag === "CompactionStarted")
    expect(started).toHaveLength(2)
    expect(started[1]?._tag === "CompactionStarted" && started[1].plan.tail).toEqual(["msg_06", "msg_07"])
    expect(r.report.warnings).toContain(
      "compaction msg_08: OpenCode's tail range also shows msg_065, msg_066; pivot does not keep them (markers, summaries, the replayed turn, or messages an earlier compaction hid)",
    )
    // OpenCode would show the older failed pair inside the tail; pivot's window does not.
    expect(filterCompacted(edited.messages)).toContain("msg_065")
    expect(windowIds(r)).not.toContain("msg_065")
  })
})

describe("a second compaction whose tail_start_id lies before the first marker (the C19 situation)", () => {
  const raw = fixture("compaction-tail.json")
  const second = structuredClone(raw.messages.slice(7, 9))
  second[0]!.info.id = "msg_14"
  second[0]!.info.time.created = 1760000013000
  second[0]!.parts = [{ type: "compaction", id: "prt_14_01", auto: false, tail_start_id: "msg_03" }]
  second[1]!.info.id = "msg_15"
  second[1]!.info.parentID = "msg_14"
  second[1]!.info.time = { created: 1760000013100, completed: 1760000014000 }
  second[1]!.parts = [{ type: "text", id: "prt_15_01", text: "## Objective\n- Configure the project, add a README" }]
  const edited = { ...raw, messages: [...raw.messages, ...second] }
  const result = imported(edited)

  it("OpenCode would show both summaries and the summarised turns again; pivot keeps the visible conversation after the tail start", () => {
    expect(filterCompacted(edited.messages)).toEqual([
      "msg_14",
      "msg_15",
      "msg_03",
      "msg_04",
      "msg_05",
      "msg_06",
      "msg_07",
      "msg_08",
      "msg_09",
      "msg_10",
      "msg_11",
      "msg_12",
      "msg_13",
    ])
    expect(windowIds(result)).toEqual(["msg_14", "msg_15", "msg_06", "msg_07", "msg_10", "msg_11", "msg_12", "msg_13"])
  })

  it("the plan updates the previous summary, and the warnings say what did not carry over", () => {
    const started = result.events.filter((e) => e._tag === "CompactionStarted")
    expect(started[1]?._tag === "CompactionStarted" && started[1].plan).toEqual({
      head: [],
      tail: ["msg_06", "msg_07", "msg_10", "msg_11", "msg_12", "msg_13"],
      tailStartId: "msg_06",
      previousSummary:
        "## Objective\n- Configure the project\n\n## Work State\n### Completed\n- package.json written; port read (8080)",
    })
    expect(result.report.warnings).toEqual([
      'compaction msg_08: OpenCode does not record the summariser prompt; CompactionStarted.prompt is ""',
      "compaction msg_14: tail_start_id msg_03 is not in the window pivot had then; the tail is taken from the visible messages after it",
      "compaction msg_14: OpenCode's tail range also shows msg_03, msg_04, msg_05, msg_08, msg_09; pivot does not keep them (markers, summaries, the replayed turn, or messages an earlier compaction hid)",
      'compaction msg_14: OpenCode does not record the summariser prompt; CompactionStarted.prompt is ""',
    ])
  })
})

describe("a failed summary (summary-failed.json)", () => {
  const raw = fixture("summary-failed.json")
  const result = imported(raw)

  it("given a summary with an error and finish 'error', then SummaryFailed follows CompactionStarted and no pivot forms", () => {
    expect(tags(result)).toEqual([
      "SessionStarted",
      "UserMessageAdded",
      "AssistantStepRecorded",
      "UserMessageAdded",
      "AssistantStepRecorded",
      "CompactionRequested",
      "CompactionStarted",
      "SummaryFailed",
      "UserMessageAdded",
      "AssistantStepRecorded",
    ])
    const failed = result.events.find((e) => e._tag === "SummaryFailed")
    expect(failed?._tag === "SummaryFailed" && failed.summary.error).toEqual({
      name: "ContextOverflowError",
      message: Prompt.TOO_LARGE,
      data: { message: Prompt.TOO_LARGE },
    })
    const state = folded(result)
    expect(state.window.pivot).toBeUndefined()
    expect(Session.compaction(state, "msg_05" as never)?.status).toBe("failed")
    expect(state.pending).toBeUndefined()
  })

  it("without a tail (none was persisted) the plan summarises the whole history", () => {
    const started = result.events.find((e) => e._tag === "CompactionStarted")
    expect(started?._tag === "CompactionStarted" && started.plan).toEqual({
      head: ["msg_01", "msg_02", "msg_03", "msg_04"],
      tail: [],
    })
  })

  it("the window keeps the whole history in order, as OpenCode's filterCompacted does, and the errored summary is not rendered", () => {
    expect(windowIds(result)).toEqual(raw.messages.map((m) => m.info.id))
    expect(windowIds(result)).toEqual(filterCompacted(raw.messages))
    const sources = Window.render(folded(result).window).map((r) => r.sourceMessageId)
    expect(sources).not.toContain("msg_06")
    expect(sources).toContain("msg_05")
  })

  it("given finish 'error' without an error object, then it is still a failure", () => {
    const edited = structuredClone(raw)
    delete edited.messages[5]!.info.error
    expect(tags(imported(edited))).toContain("SummaryFailed")
  })

  it("given a non-overflow failure that persisted tail_start_id, then pivot keeps the full history where OpenCode drops the head (documented deviation)", () => {
    const edited = structuredClone(raw)
    edited.messages[4]!.parts[0]!.tail_start_id = "msg_03"
    edited.messages[5]!.info.error = { name: "APIError", data: { message: "bad gateway", isRetryable: false } }
    const r = imported(edited)
    expect(filterCompacted(edited.messages)).toEqual(["msg_05", "msg_06", "msg_03", "msg_04", "msg_07", "msg_08"])
    expect(windowIds(r)).toEqual(edited.messages.map((m) => m.info.id))
  })
})

describe("an overflow compaction with a replayed turn (overflow-replay.json)", () => {
  const raw = fixture("overflow-replay.json")
  const result = imported(raw)

  it("the plan sets the overflowing turn aside for replay and summarises what came before it", () => {
    const started = result.events.find((e) => e._tag === "CompactionStarted")
    expect(started?._tag === "CompactionStarted" && started.plan).toEqual({
      head: ["msg_01", "msg_02"],
      tail: [],
      replayOf: "msg_03",
    })
  })

  it("the copy of the turn (media as a placeholder) is TurnReplayed, and the window matches OpenCode's", () => {
    const replayed = result.events.find((e) => e._tag === "TurnReplayed")
    expect(replayed).toMatchObject({ _tag: "TurnReplayed", markerId: "msg_05", replayOf: "msg_03" })
    expect(Session.compaction(folded(result), "msg_05" as never)?.status).toBe("continued")
    expect(windowIds(result)).toEqual(["msg_05", "msg_06", "msg_07", "msg_08"])
    expect(windowIds(result)).toEqual(filterCompacted(raw.messages))
  })

  it("given a different user message after the summary, then it is a plain user message", () => {
    const edited = structuredClone(raw)
    edited.messages[6]!.parts[0]!.text = "Forget the screenshot."
    const r = imported(edited)
    expect(tags(r)).not.toContain("TurnReplayed")
    expect(tags(r)[8]).toBe("UserMessageAdded")
  })
})

describe("issue 13: a tail start recorded after the marker (messages recorded while the compaction was pending)", () => {
  const T = 1_760_000_000_000
  const info = (id: string, role: "user" | "assistant", extra: Record<string, unknown> = {}) => ({
    id,
    sessionID: "ses_issue13",
    role,
    time: {
      created: T + Number(id.slice(4)) * 1000,
      ...(role === "assistant" ? { completed: T + Number(id.slice(4)) * 1000 + 500 } : {}),
    },
    ...(role === "user"
      ? { agent: "build", model: { providerID: "anthropic", modelID: "claude-sonnet-4" } }
      : {
          modelID: "claude-sonnet-4",
          providerID: "anthropic",
          mode: "build",
          agent: "build",
          path: { cwd: "/", root: "/" },
          cost: 0,
          tokens: { input: 10, output: 5, reasoning: 0, cache: { read: 0, write: 0 } },
          finish: "stop",
        }),
    ...extra,
  })
  const text = (id: string, value: string) => [{ id: `prt_${id.slice(4)}`, type: "text", text: value }]
  const raw = {
    info: { id: "ses_issue13", title: "issue 13", time: { created: T, updated: T + 10_000 } },
    messages: [
      { info: info("msg_01", "user"), parts: text("msg_01", "first question") },
      { info: info("msg_02", "assistant", { parentID: "msg_01" }), parts: text("msg_02", "first answer") },
      {
        info: info("msg_03", "user"),
        parts: [{ id: "prt_03", type: "compaction", auto: false, tail_start_id: "msg_05" }],
      },
      { info: info("msg_04", "user"), parts: text("msg_04", "second question") },
      { info: info("msg_05", "assistant", { parentID: "msg_04" }), parts: text("msg_05", "second answer") },
      {
        info: info("msg_06", "assistant", {
          parentID: "msg_03",
          summary: true,
          mode: "compaction",
          agent: "compaction",
        }),
        parts: text("msg_06", "## Objective\n- answer questions"),
      },
    ],
  } as RawExport
  const result = imported(raw)

  it("given the repro, then the window is in recorded order: marker, summary, then the question before its answer", () => {
    expect(windowIds(result)).toEqual(["msg_03", "msg_06", "msg_04", "msg_05"])
    expect(ValidWindow.violations(folded(result).window)).toEqual([])
  })

  it("OpenCode's walk never meets the tail start and ignores the compaction (all six in order); pivot keeps no tail and says so", () => {
    expect(filterCompacted(raw.messages)).toEqual(["msg_01", "msg_02", "msg_03", "msg_04", "msg_05", "msg_06"])
    const started = result.events.find((e) => e._tag === "CompactionStarted")
    expect(started?._tag === "CompactionStarted" && started.plan).toEqual({ head: ["msg_01", "msg_02"], tail: [] })
    expect(result.report.warnings).toContain(
      "compaction msg_03: tail_start_id msg_05 is not before its marker, so OpenCode's window never meets it and ignores this compaction; pivot keeps no tail: the window is the marker, the summary and the messages after the marker in recorded order",
    )
  })

  it("given the tail start at the marker itself, then no tail is kept and no warning is given (OpenCode's window stops at the marker too)", () => {
    const edited = structuredClone(raw)
    edited.messages[2]!.parts[0]!.tail_start_id = "msg_03"
    const r = imported(edited)
    expect(windowIds(r)).toEqual(["msg_03", "msg_06", "msg_04", "msg_05"])
    expect(filterCompacted(edited.messages)).toEqual(["msg_03", "msg_04", "msg_05", "msg_06"])
    expect(r.report.warnings.filter((w) => w.includes("tail_start_id"))).toEqual([])
  })

  it("given the tail start before the marker, then the tail is kept before the messages recorded while the compaction was pending", () => {
    const edited = structuredClone(raw)
    edited.messages[2]!.parts[0]!.tail_start_id = "msg_02"
    expect(windowIds(imported(edited))).toEqual(["msg_03", "msg_06", "msg_02", "msg_04", "msg_05"])
    // OpenCode puts the tail after the summary and the pending messages: the answer msg_02 after msg_05.
    expect(filterCompacted(edited.messages)).toEqual(["msg_03", "msg_04", "msg_05", "msg_06", "msg_02"])
  })
})

describe("issue 12 defect 6: an OpenCode summary with error set is never a pivot boundary", () => {
  const raw = fixture("compaction-tail.json")

  it.each(["stop", "length", undefined])(
    "given a summary with an error and finish %s, then SummaryFailed, no pivot, and the window keeps the whole history",
    (finish) => {
      const edited = structuredClone(raw)
      const summary = edited.messages[8]!
      summary.info.error = { name: "APIError", data: { message: "bad gateway", isRetryable: false } }
      if (finish === undefined) delete summary.info.finish
      else summary.info.finish = finish
      const r = imported(edited)
      expect(tags(r)).toContain("SummaryFailed")
      expect(tags(r)).not.toContain("SummaryFinished")
      const state = folded(r)
      expect(state.window.pivot).toBeUndefined()
      expect(Session.compaction(state, "msg_08" as never)?.status).not.toBe("finished")
      expect(windowIds(r).slice(0, 9)).toEqual(edited.messages.slice(0, 9).map((m) => m.info.id))
    },
  )
})
