// The HUD's estimate under drive mode in the real OpenCode (npm opencode-ai 1.18.33), on the calls no usage has
// measured yet, where the HUD counts the window and what the request carries besides it (system prompt, tools):
// the call right after a compaction, a new session's first call in a new OpenCode process, and a continued session's
// first call in a new process. Drive renders the HUD in the messages transform, before OpenCode builds its system
// prompt, so the last two have only what the store measured (ADR 0052). The scripted model reports as prompt tokens
// pivot's estimate of the request it received (4 characters a token over its messages and tools), so the HUD's figure
// can be checked against the request itself. Every agent request is also pivot's window at a version of the store.
import { Tokens } from "@pivot/core"
import { Hud } from "@pivot/runtime"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { drivenVersions, storedEvents } from "./support/Compare.ts"
import { storeOf } from "./support/Exported.ts"
import * as OpenCode from "./support/OpenCode.ts"
import { isSummariser, lastUser } from "./support/Requests.ts"
import { type Captured, type Reply, type ScriptedModel, textOf } from "./support/ScriptedModel.ts"

/** The request's size as pivot estimates it: what the scripted model reports as its prompt tokens. */
const sentOf = (request: Captured): number =>
  Tokens.estimate(JSON.stringify({ messages: request.body.messages, tools: request.body.tools }))

/** The count the request's HUD (its last message under drive) shows. */
const shownIn = (request: Captured): number => {
  const text = textOf(request.body.messages.at(-1)!)
  expect(text.startsWith(Hud.HEADER)).toBe(true)
  return Number(/context: ([\d,]+) \//.exec(text)![1]!.replaceAll(",", ""))
}

/** How far the HUD's estimate may be from the request's own size. */
const TOLERANCE = 0.1

const CONTINUE = "Continue if you have next steps"

const script = (request: Captured): Reply => {
  if (isSummariser(request))
    return { text: "## Goal\nSay hello.\n\n## Progress\nSaid it.", promptTokens: sentOf(request) }
  if (request.kind === "other") return { text: "Scripted" }
  // Fills the context: OpenCode compacts once this step ends, then continues.
  if (lastUser(request).includes("fill the context")) return { text: "The context is full now.", promptTokens: 199_000 }
  return { text: "Noted.", promptTokens: sentOf(request) }
}

describe("the HUD's estimate under drive mode, in the real OpenCode", () => {
  let oc: OpenCode.Running
  let model: ScriptedModel
  let project: OpenCode.Project
  let first: string
  let second: string

  beforeAll(async () => {
    oc = await OpenCode.running({ script, plugin: { drive: true } })
    ;({ model, project } = oc)
    first = OpenCode.sessionOf(await oc.turn("Hello."))
    // OpenCode compacts; killed while the call after the compaction is on the wire: no usage measured that window.
    const dying = oc.server
    model.onRequest = (request) => {
      if (request.kind === "agent" && lastUser(request).startsWith(CONTINUE)) dying.kill()
    }
    await OpenCode.opencode(project, OpenCode.turnArgs("Now fill the context.", { session: first, attach: dying.url }))
    await dying.stop()
    model.onRequest = undefined
    // A new OpenCode process: a new session, then the first one continued.
    await oc.restart()
    second = OpenCode.sessionOf(await oc.turn("Hello again."))
    await oc.turn("Go on.", first)
  }, 1_500_000)

  afterAll(() => oc?.stop())

  it("reports each checked call's estimate against the request (the project's first call has no measurement)", () => {
    const rows = agentCalls().map((r) => `${lastUser(r).slice(0, 20)}: shown ${shownIn(r)}, sent ${sentOf(r)}`)
    console.info(`HUD estimates:\n${rows.join("\n")}`)
    expect(rows.length).toBeGreaterThan(3)
  })

  const agentCalls = () => model.requests.filter((r) => r.kind === "agent" && !isSummariser(r))
  const callOf = (prompt: (text: string) => boolean) => agentCalls().find((r) => prompt(lastUser(r)))!

  const within = (request: Captured) => {
    const sent = sentOf(request)
    expect(sent).toBeGreaterThan(1_000)
    expect(Math.abs(shownIn(request) - sent)).toBeLessThanOrEqual(sent * TOLERANCE)
  }

  it("estimates the call right after a compaction within 10% of the request", () => {
    within(callOf((text) => text.startsWith(CONTINUE)))
  })

  it("estimates a new session's first call in a new process within 10% (the project's measured prompt)", () => {
    within(callOf((text) => text.includes("Hello again.")))
  })

  it("estimates a continued session's first call in a new process within 10% (its own measured prompt)", () => {
    within(callOf((text) => text.includes("Go on.")))
  })

  it("shows every agent call the model's own usable window, a new process's first calls too (not pivot's fallback)", () => {
    // 200,000 of context less 4,000 of output, from opencode.json; pivot's fallback (200,000, 32,000) shows 168,000.
    for (const request of agentCalls())
      expect(textOf(request.body.messages.at(-1)!), lastUser(request).slice(0, 20)).toContain(" / 196,000 tokens")
  })

  it("sent, at every agent call, pivot's window at a version of the store with the recorded HUD", async () => {
    // The second session's only call is the one its prompt names; every other agent call is the first session's.
    const ofSecond = (r: Captured) => lastUser(r).includes("Hello again.")
    for (const [session, calls] of [
      [first, agentCalls().filter((r) => !ofSecond(r))],
      [second, agentCalls().filter(ofSecond)],
    ] as const) {
      const versions = drivenVersions(await storedEvents(storeOf(project), session), calls)
      expect(versions.length).toBeGreaterThan(0)
      for (const [i, version] of versions.entries()) expect(version, `${session} call ${i}`).toBeDefined()
    }
  })
})
