/**
 * `pivot inspect --pivot N`: what a pivot's summary replaced, the same list `context_recall` gives the model
 * (`Recall.droppedText`), read-only; a pivot the session lacks is a one-line error and a non-zero exit.
 */
import { Conversation, Recall, Session } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { fixture, importedEvents, pivot } from "./support/audit.ts"

describe("pivot inspect --pivot N", () => {
  it("given the pivot of an export, then it prints that pivot's list as context_recall gives it; 0 is the latest", async () => {
    const file = fixture("compaction-tail.json")
    const state = Session.fold(importedEvents(file))
    const [only] = Recall.sessionPivots(state)
    expect(only).toBeDefined()
    const want = Recall.droppedText(Recall.dropped(only!, (id) => Conversation.get(state.window.conversation, id)))
    const one = await pivot("inspect", file, "--pivot", "1")
    expect(one.code).toBe(0)
    expect(one.out.join("\n")).toBe(want)
    expect(one.out[0]).toMatch(/^Pivot #1 \(summary msg_\w+\) summarised \d+ messages?, /)
    const latest = await pivot("inspect", file, "--pivot", "0")
    expect(latest.out).toEqual(one.out)
    const json = await pivot("inspect", file, "--pivot", "1", "--format", "json")
    expect(JSON.parse(json.out.join("\n")).messages.map((m: { id: string }) => m.id)).toEqual(only!.head)
  })

  it("given a pivot the session does not have, then a one-line error and exit 1", async () => {
    const out = await pivot("inspect", fixture("compaction-tail.json"), "--pivot", "2")
    expect(out.code).not.toBe(0)
    expect(out.err.join("\n")).toContain("No pivot #2: the session has 1 pivot (1 to 1).")
  })
})
