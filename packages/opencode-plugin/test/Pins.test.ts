// `context_pin` in the OpenCode plugin: the model pins a message by quoting it; after a pivot OpenCode's own
// compaction has dropped it, so it comes back verbatim in the system prompt; OpenCode's summariser is told.
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Recall } from "@pivot/core"
import { Pins } from "@pivot/runtime"
import { describe, expect, it } from "vitest"
import { PIN_DESCRIPTION, RECALL_DESCRIPTION, recallArgs } from "../src/Tools.ts"
import { storedEvents } from "./support/Compare.ts"
import { plugged, type Session } from "./support/Plugged.ts"

const fixtures = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures")
const MODEL = { id: "claude-sonnet-4", providerID: "anthropic", limit: { context: 200_000, output: 4_000 } }

const plug = plugged("pivot-plugin-pins-")

const setup = (fixture: string) => plug(Path.join(fixtures, fixture))

/** The first user text of a fixture (what the model quotes). */
const firstUserText = (data: Session): string => {
  const user = data.messages.find((m) => (m.info as { role: string }).role === "user")!
  return (user.parts.find((p) => p.type === "text") as unknown as { text: string }).text
}

describe("context_pin in the OpenCode plugin", () => {
  it("pins by quote (an event by the model), lists the pins, and answers a miss as text", async () => {
    const { hooks, data, db } = await setup("pruned.json")
    const context = { sessionID: data.info.id, messageID: "msg_99" }
    const text = firstUserText(data)
    const answer = await hooks.tool.context_pin!.execute({ quote: text.slice(0, 12) }, context)
    expect(answer).toMatch(/^Pinned: it stays verbatim in your context after every compaction/)
    const listed = await hooks.tool.context_pin!.execute({}, context)
    expect(listed).toContain("pinned by model")
    expect(await hooks.tool.context_pin!.execute({ quote: "words nobody wrote" }, context)).toBe(
      'Not pinned: no message of this session contains "words nobody wrote"',
    )
    const pinned = (await storedEvents(db, data.info.id)).filter((e) => e._tag === "ContextPinned")
    expect(pinned.map((e) => (e as { by: string }).by)).toEqual(["model"])
    // No pivot yet: the message is still in OpenCode's window, so the system prompt does not repeat it.
    const output = { system: ["You are opencode."] }
    await hooks["experimental.chat.system.transform"]({ sessionID: data.info.id, model: MODEL }, output)
    expect(output.system.some((s) => s.startsWith(Pins.BLOCK_HEADER))).toBe(false)
  })

  it("after a pivot, the pinned message comes back verbatim in the system prompt, and the summariser is told", async () => {
    const { hooks, data } = await setup("compaction-tail.json")
    const context = { sessionID: data.info.id, messageID: "msg_99" }
    const text = firstUserText(data)
    expect(await hooks.tool.context_pin!.execute({ quote: text }, context)).toMatch(/^Pinned/)
    const output = { system: ["You are opencode."] }
    await hooks["experimental.chat.system.transform"]({ sessionID: data.info.id, model: MODEL }, output)
    const block = output.system.find((s) => s.startsWith(Pins.BLOCK_HEADER))
    expect(block).toBeDefined()
    expect(block).toContain(`\n${text}`)
    const compacting: { context: Array<string>; prompt?: string } = { context: [] }
    await hooks["experimental.session.compacting"]({ sessionID: data.info.id }, compacting)
    expect(compacting.context.some((line) => line.startsWith("Pinned messages: these stay verbatim"))).toBe(true)
  })
})

describe("the entry's context_pin description", () => {
  it("is the runtime's, word for word (the entry repeats it so that it loads no runtime)", () => {
    expect(PIN_DESCRIPTION).toBe(Pins.TOOL_DESCRIPTION)
  })
})

describe("the entry's context_recall description and arguments", () => {
  it("are core's, word for word (the entry repeats them so that it loads nothing of pivot)", () => {
    expect(RECALL_DESCRIPTION).toBe(Recall.TOOL_DESCRIPTION)
    for (const [name, text] of Object.entries(Recall.ARG_DESCRIPTIONS))
      expect(recallArgs.shape[name as keyof typeof recallArgs.shape].description).toBe(text)
    expect(Object.keys(recallArgs.shape).sort()).toEqual(Object.keys(Recall.ARG_DESCRIPTIONS).sort())
  })
})
