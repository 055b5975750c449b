// Drive mode: OpenCode's messages rewritten to pivot's window. The reference for "what the model sees" is pivot's own
// render of its window with recall ids; the rewritten messages are rendered as OpenCode would (through the importer,
// the one mapping of OpenCode's messages onto pivot's), and both must say the same.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { type Events, Facts, Ids, Message, Prompt, Render, Session, Window } from "@pivot/core"
import { Hud, Pins } from "@pivot/runtime"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import * as Drive from "../src/Drive.ts"
import type { Client, Hooks, MessageWithParts } from "../src/OpenCode.ts"
import * as Plugin from "../src/Plugin.ts"
import * as Thread from "../src/Thread.ts"
import { storedEvents } from "./support/Compare.ts"
import { importOf, pivots, sent } from "./support/Driven.ts"

const fixture = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures/pruned.json")

interface Exported {
  info: { id: string }
  messages: Array<MessageWithParts>
}

const load = (): Exported => JSON.parse(Fs.readFileSync(fixture, "utf8")) as Exported

const toolParts = (messages: ReadonlyArray<MessageWithParts>) =>
  messages.flatMap((m) => m.parts).filter((p) => p.type === "tool") as unknown as Array<{
    id: string
    state: { output: string; time: { compacted?: number } }
  }>

describe("Drive.withHud", () => {
  it("adds the HUD as one user message after all others, shaped as the newest user message; changes nothing else", () => {
    const { messages } = load()
    const before = JSON.stringify(messages)
    const out = Drive.withHud(messages, "[pivot context status]\nhud")
    expect(JSON.stringify(messages)).toBe(before)
    expect(out.slice(0, -1)).toEqual(messages)
    for (const [i, m] of messages.entries()) expect(out[i]).toBe(m)
    const hud = out.at(-1)!
    const user = messages.findLast((m) => m.info.role === "user")!
    expect(hud.info).toMatchObject({ role: "user", sessionID: user.info.sessionID, agent: user.info.agent })
    expect([...out.map((m) => m.info.id)].sort()).toEqual(out.map((m) => m.info.id))
    expect(hud.parts).toEqual([
      expect.objectContaining({
        type: "text",
        text: "[pivot context status]\nhud",
        synthetic: true,
        messageID: hud.info.id,
      }),
    ])
  })

  it("adds nothing to messages without a user message", () => {
    const { messages } = load()
    expect(Drive.withHud([], "hud")).toEqual([])
    const assistants = messages.filter((m) => m.info.role !== "user")
    expect(Drive.withHud(assistants, "hud")).toEqual(assistants)
  })
})

describe("Drive.forSummariser", () => {
  const tool = (id: string, input: Record<string, unknown>) =>
    ({ id, type: "tool", tool: "write", state: { status: "completed", input, output: "ok" } }) as never
  const withInput = (input: Record<string, unknown>): MessageWithParts => ({
    info: { id: "msg_1", sessionID: "ses_1", role: "assistant" },
    parts: [{ id: "prt_0", type: "text", text: "x".repeat(5_000) } as never, tool("prt_1", input)],
  })
  const inputOf = (messages: ReadonlyArray<MessageWithParts>) =>
    (messages[0]!.parts[1] as unknown as { state: { input: Record<string, unknown> } }).state.input

  it("cuts a tool input's string values longer than OpenCode's 2,000-character cap, with the recall id, and no other", () => {
    const at = (length: number) =>
      inputOf(Drive.forSummariser([withInput({ filePath: "a.ts", content: "y".repeat(length) })]))
    // 1,999 and 2,000 characters are read whole, as OpenCode reads an output of that length.
    expect(at(1_999)).toEqual({ filePath: "a.ts", content: "y".repeat(1_999) })
    expect(at(2_000)).toEqual({ filePath: "a.ts", content: "y".repeat(2_000) })
    expect(at(2_001)).toEqual({
      filePath: "a.ts",
      content: `${"y".repeat(2_000)}\n[Tool input truncated for compaction: omitted 1 chars — recall id: ${Render.inputRecallId("prt_1")}]`,
    })
  })

  it("leaves the messages it is given unchanged, text parts whole, and a message without a long input the same object", () => {
    const long = withInput({ content: "z".repeat(10_000), n: 3 })
    const short = withInput({ content: "short" })
    const before = JSON.stringify([long, short])
    const out = Drive.forSummariser([long, short])
    expect(JSON.stringify([long, short])).toBe(before)
    expect(out[1]).toBe(short)
    expect(out[0]!.parts[0]).toBe(long.parts[0])
    expect(inputOf(out).n).toBe(3)
    expect((inputOf(out).content as string).length).toBeLessThan(2_200)
  })
})

describe("Drive.rewrite", () => {
  it("gives OpenCode's pruned outputs pivot's placeholder with the recall id: the model sees pivot's window", () => {
    const exported = load()
    const events = importOf(exported)
    const before = JSON.stringify(exported.messages)
    const driven = Drive.rewrite(exported.messages, Window.messages(Session.fold(events).window))
    expect(JSON.stringify(exported.messages)).toBe(before)
    expect(sent(exported.info, driven)).toEqual(pivots(events))
    const pruned = toolParts(exported.messages).filter((p) => p.state.time.compacted !== undefined)
    expect(pruned.length).toBe(2)
    for (const part of pruned)
      expect(toolParts(driven).find((p) => p.id === part.id)!.state.output).toBe(Render.clearedText(part.id))
  })

  it("prunes what pivot pruned and OpenCode did not, and leaves what neither pruned as OpenCode has it", () => {
    const exported = load()
    const kept = toolParts(exported.messages).filter((p) => p.state.time.compacted === undefined)
    expect(kept.length).toBeGreaterThan(0)
    const mine = kept[0]
    const message = exported.messages.find((m) => m.parts.some((p) => p.id === mine!.id))!
    const events = [
      ...importOf(exported),
      {
        _tag: "PartCompacted" as const,
        at: 1,
        messageId: Ids.unsafe.message(message.info.id),
        partId: Ids.unsafe.part(mine!.id),
        tokens: 10,
      },
    ]
    const driven = Drive.rewrite(exported.messages, Window.messages(Session.fold(events).window))
    expect(sent(exported.info, driven)).toEqual(pivots(events))
    expect(toolParts(driven).find((p) => p.id === mine!.id)!.state.output).toBe(Render.clearedText(mine!.id))
    // Every part no one pruned is OpenCode's, as it was.
    const prunedIds = new Set([
      mine!.id,
      ...toolParts(exported.messages)
        .filter((p) => p.state.time.compacted !== undefined)
        .map((p) => p.id),
    ])
    const untouched = (messages: ReadonlyArray<MessageWithParts>) =>
      messages.flatMap((m) => m.parts).filter((p) => !prunedIds.has(String(p.id)))
    expect(untouched(driven)).toEqual(untouched(exported.messages))
  })

  it("gives a tool input pivot cleared pivot's cleared input (ADR 0030), its output and the rest as OpenCode has them", () => {
    const exported = load()
    // The bash call of the fixture, with an input long enough to clear.
    const bash = exported.messages.flatMap((m) => m.parts).find((p) => p.id === "prt_05_11")! as unknown as {
      state: { input: Record<string, unknown>; output: string }
    }
    const input = { command: "npm test", description: "run the tests ".repeat(30) }
    bash.state.input = input
    const events = [
      ...importOf(exported),
      {
        _tag: "PartCompacted" as const,
        at: 1,
        messageId: Ids.unsafe.message("msg_05"),
        partId: Ids.unsafe.part("prt_05_11"),
        tokens: Render.inputShed(input),
        rule: "errored-inputs",
        reason: "test",
        target: "input" as const,
      },
    ]
    const before = JSON.stringify(exported.messages)
    const driven = Drive.rewrite(exported.messages, Window.messages(Session.fold(events).window))
    expect(JSON.stringify(exported.messages)).toBe(before)
    expect(sent(exported.info, driven)).toEqual(pivots(events))
    const part = toolParts(driven).find((p) => p.id === "prt_05_11")! as unknown as typeof bash
    expect(part.state.input).toEqual({
      command: "npm test",
      description: "[Old tool input cleared — recall id: prt_05_11-input]",
    })
    expect(part.state.output).toBe(bash.state.output)
    // Every other part is OpenCode's, as it was (the fixture's two pruned outputs get pivot's placeholder, as above).
    const others = (messages: ReadonlyArray<MessageWithParts>) =>
      messages.flatMap((m) => m.parts).filter((p) => p.id !== "prt_05_11" && p.type !== "tool")
    expect(others(driven)).toEqual(others(exported.messages))
  })

  it("leaves out what pivot's window does not show, and keeps what is newer than all it shows", () => {
    const exported = load()
    const events = importOf(exported)
    const all = Window.messages(Session.fold(events).window)
    expect(all.length).toBeGreaterThan(4)
    // Pivot pivoted past the first two, hides the fourth, and has not seen the last yet.
    const window = [...all.slice(2, 3), ...all.slice(4, -1)]
    const ids = exported.messages.map((m) => m.info.id)
    expect(Drive.rewrite(exported.messages, window).map((m) => m.info.id)).toEqual([
      ...ids.slice(2, 3),
      ...ids.slice(4),
    ])
    // Nothing shown: nothing to go by, OpenCode's messages stay.
    expect(Drive.rewrite(exported.messages, []).map((m) => m.info.id)).toEqual(ids)
  })
})

const folders: Array<string> = []
const disposers: Array<Hooks> = []
afterEach(async () => {
  for (const hooks of disposers.splice(0)) await hooks.dispose()
  for (const folder of folders.splice(0)) Fs.rmSync(folder, { recursive: true, force: true })
})

/**
 * Whether `hooksOver` serves the hooks through Thread.ts's two ends (option `worker`, ADR 0073), over a port pair in
 * this process: every scenario below runs both ways, and what OpenCode's objects hold after each call must not differ.
 */
let threaded = false
const THREADS = [
  ["on OpenCode's thread", false],
  ["through a worker's port", true],
] as const
const serveThrough = async (input: Parameters<typeof Plugin.make>[0], options: Plugin.Options) => {
  const { port1, port2 } = new MessageChannel()
  Thread.serve(port2, (served, given) => Plugin.make(served, given, {}))
  const remote = Thread.connect(port1, input, options, {
    ref: () => undefined,
    unref: () => undefined,
    close: () => {
      port1.close()
      port2.close()
    },
  })
  await remote.ready
  return remote.hooks
}

const hooksOver = async (data: Exported, options: Plugin.Options, config?: Client["config"]) => {
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-drive-"))
  folders.push(directory)
  const client: Client = {
    session: {
      get: async () => ({ data: data.info }),
      messages: async () => ({ data: data.messages }),
      summarize: async () => ({ data: true }),
    },
    ...(config === undefined ? {} : { config }),
  }
  const hooks = threaded
    ? await serveThrough({ client, directory }, options)
    : await Plugin.make({ client, directory }, options, {})
  disposers.push(hooks)
  directories.set(hooks, directory)
  return hooks
}

const directories = new WeakMap<Hooks, string>()
const directoryOf = (hooks: Hooks): string => directories.get(hooks)!
const MODEL = { id: "claude-sonnet-4", providerID: "anthropic", limit: { context: 20_000, output: 4_000 } }

describe.each(THREADS)("the messages transform, %s", (_, through) => {
  beforeAll(() => {
    threaded = through
  })
  afterAll(() => {
    threaded = false
  })
  it("with drive on, hands OpenCode pivot's window in the array it passed, as copies of its messages", async () => {
    const data = load()
    const hooks = await hooksOver(data, { drive: true, hud: false })
    const passed = structuredClone(data.messages)
    const originals = [...passed]
    const before = JSON.stringify(passed)
    const output = { messages: passed }
    await hooks["experimental.chat.messages.transform"]({}, output)
    expect(output.messages).toBe(passed)
    expect(JSON.stringify(originals)).toBe(before)
    expect(sent(data.info, output.messages)).toEqual(pivots(importOf(data)))
    expect(sent(data.info, output.messages)).not.toEqual(sent(data.info, originals))
  })

  it("with drive on, shows the HUD as the last message, recorded as HudShown; nothing of it in the system prompt", async () => {
    const data = load()
    const hooks = await hooksOver(data, { drive: true })
    const output = { messages: structuredClone(data.messages) }
    await hooks["experimental.chat.messages.transform"]({}, output)
    const system = { system: ["You are opencode."] }
    await hooks["experimental.chat.system.transform"]({ sessionID: data.info.id, model: MODEL }, system)
    expect(system.system).toEqual(["You are opencode."])
    const hud = output.messages.at(-1)!
    expect(hud.info.role).toBe("user")
    expect(hud.info.id > data.messages.at(-1)!.info.id).toBe(true)
    expect(hud.parts).toHaveLength(1)
    const text = (hud.parts[0] as unknown as { text: string }).text
    expect(text.startsWith(Hud.HEADER)).toBe(true)
    // Everything before it is pivot's window, as without the HUD.
    expect(sent(data.info, output.messages.slice(0, -1))).toEqual(pivots(importOf(data)))
    const shown = (await storedEvents(Path.join(directoryOf(hooks), ".pivot/opencode.db"), data.info.id)).filter(
      (e) => e._tag === "HudShown",
    )
    expect(shown.map((e) => (e as { text: string }).text)).toEqual([text])
    // Recorded as the request's last message: the ledger's prefix estimate puts it after the conversation.
    expect(shown.map((e) => (e as { last?: boolean }).last)).toEqual([true])
  })

  it("with drive on, shows in a process's first HUD the model's limits from OpenCode's configuration, not pivot's fallback", async () => {
    // A continued session's first call in a new process: OpenCode names the model (chat.message) and builds the
    // messages before it gives the model whole (the system transform), so the HUD's limits come from its config.
    const data = load()
    let asked = 0
    const hooks = await hooksOver(
      data,
      { drive: true },
      {
        providers: async () => {
          asked++
          return { data: { providers: [{ id: "anthropic", models: { "claude-sonnet-4": MODEL } }] } }
        },
      },
    )
    const hudOf = async () => {
      const output = { messages: structuredClone(data.messages) }
      await hooks["experimental.chat.messages.transform"]({}, output)
      return (output.messages.at(-1)!.parts[0] as unknown as { text: string }).text
    }
    const ref = { providerID: "anthropic", modelID: "claude-sonnet-4" }
    await hooks["chat.message"]({ sessionID: data.info.id, model: ref }, { parts: [] })
    expect(await hudOf()).toContain(" / 16,000 tokens")
    // A session named later reads the answer already given: OpenCode is asked once per process.
    await hooks["chat.message"]({ sessionID: "ses_other", model: ref }, { parts: [] })
    expect(asked).toBe(1)
  })

  it("with drive on, chat.message does not ask OpenCode's configuration; the call's messages transform does, and waits for an answer that comes late", async () => {
    // Asked while OpenCode still loads its providers (~2 s into a first run), the question held chat.message up (it
    // waited there) or cost OpenCode CPU beside its own start (asked there, waited for later): docs/benchmarks.md.
    const data = load()
    let asked = 0
    const hooks = await hooksOver(
      data,
      { drive: true },
      {
        providers: () => {
          asked++
          return new Promise((resolve) =>
            setTimeout(
              () => resolve({ data: { providers: [{ id: "anthropic", models: { "claude-sonnet-4": MODEL } }] } }),
              50,
            ),
          )
        },
      },
    )
    const ref = { providerID: "anthropic", modelID: "claude-sonnet-4" }
    await hooks["chat.message"]({ sessionID: data.info.id, model: ref }, { parts: [] })
    expect(asked).toBe(0)
    const output = { messages: structuredClone(data.messages) }
    await hooks["experimental.chat.messages.transform"]({}, output)
    expect(asked).toBe(1)
    expect((output.messages.at(-1)!.parts[0] as unknown as { text: string }).text).toContain(" / 16,000 tokens")
  })

  it("with drive on, a configuration OpenCode never answers holds the call's transform CONFIG_WAIT_MS at most, then pivot's fallback limits, and no later call", async () => {
    const data = load()
    const hooks = await hooksOver(data, { drive: true }, { providers: () => new Promise(() => {}) })
    const ref = { providerID: "anthropic", modelID: "claude-sonnet-4" }
    await hooks["chat.message"]({ sessionID: data.info.id, model: ref }, { parts: [] })
    // Only the wait's timer is faked: the transform's own work (effect's scheduler: setImmediate) runs as usual.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] })
    try {
      let done = false
      const output = { messages: structuredClone(data.messages) }
      const transform = hooks["experimental.chat.messages.transform"]({}, output).then(() => {
        done = true
      })
      await vi.advanceTimersByTimeAsync(Plugin.CONFIG_WAIT_MS - 1)
      expect(done).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      await transform
      const text = (output.messages.at(-1)!.parts[0] as unknown as { text: string }).text
      expect(text.startsWith(Hud.HEADER)).toBe(true)
      expect(text).not.toContain(" / 16,000 tokens")
      // Another session named later does not wait again: its transform ends without the clock moving.
      await hooks["chat.message"]({ sessionID: "ses_other", model: ref }, { parts: [] })
      const other = {
        messages: structuredClone(data.messages).map((m) => ({ ...m, info: { ...m.info, sessionID: "ses_other" } })),
      }
      await hooks["experimental.chat.messages.transform"]({}, other)
    } finally {
      vi.useRealTimers()
    }
  })

  it("with drive on, the call's transform takes the session's model whole from a helper call that had the same model, without waiting", async () => {
    const data = load()
    const hooks = await hooksOver(data, { drive: true }, { providers: () => new Promise(() => {}) })
    await hooks["chat.message"](
      { sessionID: data.info.id, model: { providerID: "anthropic", modelID: "claude-sonnet-4" } },
      { parts: [] },
    )
    // OpenCode's title call, on the session's own model, given whole before the agent's call is built.
    await hooks["experimental.chat.system.transform"](
      { sessionID: data.info.id, model: MODEL },
      { system: [`${Plugin.HELPER_PROMPTS[0]} Write a title.`] },
    )
    const output = { messages: structuredClone(data.messages) }
    await hooks["experimental.chat.messages.transform"]({}, output)
    expect((output.messages.at(-1)!.parts[0] as unknown as { text: string }).text).toContain(" / 16,000 tokens")
  })

  it("with drive on, a helper call's model (the title's) does not stand for the session's in the HUD", async () => {
    const data = load()
    const hooks = await hooksOver(data, { drive: true })
    const small = { id: "small-model", providerID: "anthropic", limit: { context: 8_000, output: 1_000 } }
    // The agent's model as OpenCode gives it whole (an earlier call in this process), then the title's call.
    await hooks["experimental.chat.system.transform"](
      { sessionID: data.info.id, model: MODEL },
      { system: ["You are opencode."] },
    )
    await hooks["experimental.chat.system.transform"](
      { sessionID: data.info.id, model: small },
      { system: [`${Plugin.HELPER_PROMPTS[0]} Write a title.`] },
    )
    const output = { messages: structuredClone(data.messages) }
    await hooks["experimental.chat.messages.transform"]({}, output)
    expect((output.messages.at(-1)!.parts[0] as unknown as { text: string }).text).toContain(" / 16,000 tokens")
  })

  it("with drive on, gives OpenCode's summariser history no HUD, and the agent call after it one again", async () => {
    const data = load()
    const hooks = await hooksOver(data, { drive: true })
    await hooks["experimental.session.compacting"]({ sessionID: data.info.id }, { context: [] })
    const history = { messages: structuredClone(data.messages) }
    await hooks["experimental.chat.messages.transform"]({}, history)
    expect(history.messages.map((m) => m.info.id)).toEqual(data.messages.map((m) => m.info.id))
    const next = { messages: structuredClone(data.messages) }
    await hooks["experimental.chat.messages.transform"]({}, next)
    expect(next.messages).toHaveLength(data.messages.length + 1)
  })

  it("with drive on, cuts the long tool inputs of the summariser's history only, not of an agent call", async () => {
    const data = load()
    const hooks = await hooksOver(data, { drive: true, hud: false })
    const long = "w".repeat(3_000)
    const withLong = () => {
      const messages = structuredClone(data.messages)
      const part = messages.flatMap((m) => m.parts).find((p) => p.type === "tool") as unknown as {
        state: { input: Record<string, unknown> }
      }
      part.state.input = { ...part.state.input, content: long }
      return messages
    }
    const contents = (messages: ReadonlyArray<MessageWithParts>) =>
      messages
        .flatMap((m) => m.parts)
        .flatMap((p) =>
          p.type === "tool" ? [(p as unknown as { state: { input: { content?: unknown } } }).state.input.content] : [],
        )
        .filter((c) => c !== undefined)
    const agent = { messages: withLong() }
    await hooks["experimental.chat.messages.transform"]({}, agent)
    expect(contents(agent.messages)).toEqual([long])
    await hooks["experimental.session.compacting"]({ sessionID: data.info.id }, { context: [] })
    const history = { messages: withLong() }
    await hooks["experimental.chat.messages.transform"]({}, history)
    const [cut] = contents(history.messages) as Array<string>
    expect(cut!.startsWith(`${"w".repeat(2_000)}\n[Tool input truncated for compaction: omitted 1000 chars`)).toBe(true)
  })

  it("with drive on and hud off, adds no message", async () => {
    const data = load()
    const hooks = await hooksOver(data, { drive: true, hud: false })
    const output = { messages: structuredClone(data.messages) }
    await hooks["experimental.chat.messages.transform"]({}, output)
    expect(output.messages.map((m) => m.info.id)).toEqual(data.messages.map((m) => m.info.id))
  })

  it("with drive off (the default), leaves OpenCode's messages alone", async () => {
    const data = load()
    const hooks = await hooksOver(data, {})
    const passed = structuredClone(data.messages)
    const originals = [...passed]
    await hooks["experimental.chat.messages.transform"]({}, { messages: passed })
    expect(passed).toEqual(originals)
    for (const [i, message] of passed.entries()) expect(message).toBe(originals[i])
  })
  it("with drive on, gives OpenCode's summariser pivot's prompt, anchored on pivot's previous summary, with the facts", async () => {
    const data = JSON.parse(
      Fs.readFileSync(Path.join(Path.dirname(fixture), "compaction-tail.json"), "utf8"),
    ) as Exported
    const events = importOf(data)
    const previous = Window.messages(Session.fold(events).window).findLast(Message.isFinishedSummary)!
    const output: { context: Array<string>; prompt?: string } = { context: [] }
    // Without the default pin, whose line would follow the facts (the pins' own tests check it).
    await (await hooksOver(data, { drive: true, pinFirstMessage: false }))["experimental.session.compacting"](
      { sessionID: data.info.id },
      output,
    )
    expect(output.context).toEqual([])
    expect(output.prompt!.startsWith(Prompt.anchor(Message.summaryText(previous)!))).toBe(true)
    expect(output.prompt).toContain(Prompt.TEMPLATE)
    expect(output.prompt!.slice(output.prompt!.indexOf("## Facts (from the log)"))).toBe(
      Facts.factsBlock(
        Facts.merge(
          Facts.parse(Message.summaryText(previous)!),
          Facts.facts(Window.messages(Session.fold(events).window)),
        ),
      ),
    )
  })
})

const compactionTail = (): Exported =>
  JSON.parse(Fs.readFileSync(Path.join(Path.dirname(fixture), "compaction-tail.json"), "utf8")) as Exported

/**
 * What OpenCode passes the transform after its compaction: its window ([marker, summary, kept tail, later messages],
 * spec §2.11), which is the importer's window of what it did (no pins: OpenCode has none).
 */
const openCodePasses = (data: Exported): Array<MessageWithParts> =>
  Window.messages(Session.fold(importOf(data)).window).map((w) => data.messages.find((m) => m.info.id === w.id)!)

/** The text parts of a message, as the model reads them. */
const texts = (message: MessageWithParts) =>
  message.parts.flatMap((p) => (p.type === "text" ? [(p as unknown as { text: string }).text] : []))

describe("Drive.rewrite of pinned messages", () => {
  it("puts a pinned message OpenCode no longer passes back where pivot's window has it, verbatim", () => {
    const data = compactionTail()
    const events = importOf(data)
    const first = events.findIndex((e) => e._tag === "UserMessageAdded")
    const firstId = data.messages[0]!.info.id
    const pin: Events.Event = {
      _tag: "ContextPinned",
      at: 1,
      messageId: Ids.unsafe.message(firstId),
      by: "default",
      tokens: 10,
      budget: 1_000,
    }
    const pinnedEvents = [...events.slice(0, first + 1), pin, ...events.slice(first + 1)]
    const passed = openCodePasses(data)
    expect(passed.map((m) => m.info.id)).not.toContain(firstId)
    const window = Window.messages(Session.fold(pinnedEvents).window)
    const driven = Drive.rewrite(passed, window)
    expect(driven.map((m) => m.info.id)).toEqual(window.map((m) => String(m.id)))
    // Right after the summary (and before the kept tail), as pivot's window has it.
    const summaryAt = driven.findIndex((m) => m.info.summary === true)
    expect(driven[summaryAt + 1]!.info.id).toBe(firstId)
    // Verbatim: the text OpenCode stored for it, in OpenCode's shape, with the session's ids.
    expect(texts(driven[summaryAt + 1]!)).toEqual(texts(data.messages[0]!))
    expect(driven[summaryAt + 1]!.info.sessionID).toBe(data.info.id)
    // The messages OpenCode passed are its own, copied.
    for (const message of passed) expect(driven.find((m) => m.info.id === message.info.id)).toEqual(message)
    // Without the pin, the rewrite is OpenCode's window, unchanged.
    expect(Drive.rewrite(passed, Window.messages(Session.fold(events).window))).toEqual(passed)
  })

  it("a message put back carries pivot's placeholder for an output pivot pruned", () => {
    const data = load()
    const events = importOf(data)
    const window = Window.messages(Session.fold(events).window)
    const pruned = toolParts(data.messages).find((p) => p.state.time.compacted !== undefined)!
    const holder = data.messages.find((m) => m.parts.some((p) => p.id === pruned.id))!
    const driven = Drive.rewrite(
      data.messages.filter((m) => m !== holder),
      window,
    )
    expect(driven.map((m) => m.info.id)).toEqual(window.map((m) => String(m.id)))
    expect(toolParts(driven).find((p) => p.id === pruned.id)!.state.output).toBe(Render.clearedText(pruned.id))
    expect(sent(data.info, driven)).toEqual(pivots(events))
  })
})

describe.each(THREADS)("the default pin of the first message, %s", (_, through) => {
  beforeAll(() => {
    threaded = through
  })
  afterAll(() => {
    threaded = false
  })
  const MODEL = { id: "claude-sonnet-4", providerID: "anthropic", limit: { context: 200_000, output: 4_000 } }

  const run = async (options: Plugin.Options) => {
    const full = compactionTail()
    // OpenCode has only the first message when the first call is built; the rest comes later.
    const data: Exported = { info: full.info, messages: full.messages.slice(0, 1) }
    const hooks = await hooksOver(data, options)
    // The first call as OpenCode (1.18) builds it: its messages (the transform), then its system prompt.
    await hooks["experimental.chat.messages.transform"]({}, { messages: structuredClone(data.messages) })
    await hooks["experimental.chat.system.transform"](
      { sessionID: full.info.id, model: MODEL },
      { system: ["You are opencode."] },
    )
    data.messages = full.messages
    const passed = openCodePasses(full)
    const output = { messages: structuredClone(passed) }
    await hooks["experimental.chat.messages.transform"]({}, output)
    const system = { system: ["You are opencode."] }
    await hooks["experimental.chat.system.transform"]({ sessionID: full.info.id, model: MODEL }, system)
    const db = Path.join(folders.at(-1)!, ".pivot/opencode.db")
    const pins = (await storedEvents(db, full.info.id)).filter((e) => e._tag === "ContextPinned")
    return { full, passed, sent: output.messages, system: system.system, pins }
  }

  it("is on under drive: recorded with the first message, and the message comes back after OpenCode's compaction", async () => {
    const { full, sent, system, pins } = await run({ drive: true })
    expect(pins).toEqual([expect.objectContaining({ messageId: full.messages[0]!.info.id, by: "default" })])
    const summaryAt = sent.findIndex((m) => m.info.summary === true)
    expect(sent[summaryAt + 1]!.info.id).toBe(full.messages[0]!.info.id)
    expect(texts(sent[summaryAt + 1]!)).toEqual(texts(full.messages[0]!))
    // In the messages, so not in the system prompt as well.
    expect(system.some((s) => s.startsWith(Pins.BLOCK_HEADER))).toBe(false)
  })

  it("is off without drive, and under drive with pinFirstMessage: false", async () => {
    for (const options of [{}, { drive: true, pinFirstMessage: false, hud: false }]) {
      const { passed, sent, pins } = await run(options)
      expect(pins).toEqual([])
      expect(sent.map((m) => m.info.id)).toEqual(passed.map((m) => m.info.id))
    }
  })

  it("is made without drive when pinFirstMessage is on: the message comes back in the system prompt", async () => {
    const { full, system, pins } = await run({ pinFirstMessage: true })
    expect(pins.map((e) => (e as { by: string }).by)).toEqual(["default"])
    expect(system.find((s) => s.startsWith(Pins.BLOCK_HEADER))).toContain(texts(full.messages[0]!)[0])
  })
})
