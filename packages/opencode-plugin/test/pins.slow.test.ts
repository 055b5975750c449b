// Pins under drive mode in the real OpenCode (npm opencode-ai 1.18.33), driven by a scripted model over loopback (issue
// 31's "done means"): the session's first message states the task and its constraints; the model pins a later
// decision through `context_pin`; then six turns each fill the context, so OpenCode compacts six times. With drive on,
// the first message is pinned by default. Checked: six pivots were recorded; every agent request after the first
// holds the first message verbatim, and the pinned decision from the moment it was pinned, though OpenCode's own
// window had dropped them (the store's window without the pins lacks them); every agent request equals pivot's window
// at some version of the store, in order.
import type { Events } from "@pivot/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fromRequest, storedEvents, windows } from "./support/Compare.ts"
import { storeOf } from "./support/Exported.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { type Captured, lastUserText, type Reply, type ScriptedModel } from "./support/ScriptedModel.ts"

const TASK =
  "Task: port the billing service from callbacks to async/await. Constraints: never change the public API of " +
  "billing/index.ts, keep Node 18 support, and run `npm test` before every commit."
const DECISION = "Decision: invoices keep their integer cents; the port must not introduce floating point."
const PIVOTS = 6

const script = (request: Captured): Reply => {
  if (request.kind === "summary") return { text: "## Goal\nPort billing.\n\n## Progress\nGoing.", promptTokens: 5_000 }
  if (request.kind === "other") return { text: "Billing port" }
  const prompt = lastUserText(request)
  const after = request.body.messages.at(-1)!
  if (prompt.includes("Pin the decision"))
    return after.role === "user"
      ? { toolCalls: [{ name: "context_pin", args: { quote: "invoices keep their integer cents" } }] }
      : { text: "Pinned it.", promptTokens: 20_000 }
  if (prompt.includes("fill the context")) return { text: "The context is full now.", promptTokens: 199_000 }
  if (prompt.startsWith("Continue if you have next steps")) return { text: "Nothing left.", promptTokens: 6_000 }
  return { text: "Understood.", promptTokens: 10_000 }
}

describe("pins under drive mode in the real OpenCode", () => {
  let oc: OpenCode.Running
  let model: ScriptedModel
  let project: OpenCode.Project
  let session: string

  beforeAll(async () => {
    oc = await OpenCode.running({ script, plugin: { drive: true, hud: false } })
    ;({ model, project } = oc)
    const turn = oc.turn
    session = OpenCode.sessionOf(await turn(TASK))
    await turn(`${DECISION} Pin the decision so that it survives.`, session)
    for (let n = 1; n <= PIVOTS; n++) await turn(`Round ${n}: now fill the context.`, session)
    await turn("The last turn, nothing to do.", session)
  }, 1_800_000)

  afterAll(() => oc?.stop())

  const db = () => storeOf(project)
  const agentCalls = () => model.requests.filter((r) => r.kind === "agent")
  const userTexts = (request: Captured) =>
    fromRequest(request.body.messages).flatMap((m) => (m.role === "user" ? [m.text] : []))

  it("recorded six pivots, the default pin of the first message and the model's pin", async () => {
    const events = await storedEvents(db(), session)
    expect(events.filter((e) => e._tag === "SummaryFinished").length).toBe(PIVOTS)
    const pins = events.filter((e): e is Extract<Events.Event, { _tag: "ContextPinned" }> => e._tag === "ContextPinned")
    expect(pins.map((p) => p.by)).toEqual(["default", "model"])
  })

  /** The text of each pinned message, as the store recorded it from OpenCode: the task first, then the decision. */
  const pinnedTexts = async () => {
    const events = await storedEvents(db(), session)
    return events.flatMap((e) => {
      if (e._tag !== "ContextPinned") return []
      const added = events.find((a) => a._tag === "UserMessageAdded" && a.message.id === e.messageId)
      if (added?._tag !== "UserMessageAdded") return []
      return [added.message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("")]
    })
  }

  it("sent the first message verbatim in every agent request, and the pinned decision once pinned", async () => {
    const [task, decision] = await pinnedTexts()
    expect(task).toContain(TASK)
    expect(decision).toContain(DECISION)
    const calls = agentCalls()
    expect(calls.length).toBeGreaterThan(2 * PIVOTS)
    for (const [i, request] of calls.entries()) expect(userTexts(request), `agent call ${i}`).toContain(task)
    const pinnedFrom = calls.findIndex((r) => r.body.messages.some((m) => m.role === "tool"))
    expect(pinnedFrom).toBeGreaterThan(0)
    for (const [i, request] of calls.slice(pinnedFrom).entries())
      expect(userTexts(request), `agent call ${pinnedFrom + i}`).toContain(decision)
  })

  it("sent, at every agent call, pivot's window at a version of the store, in order — without the pins, not the task", async () => {
    const events = await storedEvents(db(), session)
    const byVersion = windows(events, { recallIds: true }).map(([v, items]) => [v, JSON.stringify(items)] as const)
    // The same log without the pins: OpenCode's own window (the import of what it did), by the version it follows.
    const isPin = (e: Events.Event) => e._tag === "ContextPinned"
    const unpinned = windows(
      events.filter((e) => !isPin(e)),
      { recallIds: true },
    ).map(([, items]) => JSON.stringify(items))
    const withoutPins = (version: number) => unpinned[version - events.slice(0, version).filter(isPin).length - 1] ?? ""
    const [task] = await pinnedTexts()
    let previous = 0
    let restored = 0
    for (const [i, request] of agentCalls().entries()) {
      const sent = JSON.stringify(fromRequest(request.body.messages))
      const version = byVersion.find(([v, window]) => v >= previous && window === sent)?.[0]
      expect(version, `agent call ${i}: no stored version has its window`).toBeDefined()
      previous = version!
      if (!withoutPins(version!).includes(JSON.stringify(task))) restored++
      else expect(sent).toContain(JSON.stringify(task))
    }
    // Only the pin kept the task in view after OpenCode's compactions had dropped it.
    expect(restored).toBeGreaterThan(PIVOTS)
  })
})
